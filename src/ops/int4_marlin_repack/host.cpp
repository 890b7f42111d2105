// The int4_marlin_repack family's host reference: the host converters of include/baracuda/ops/int4_weights.hpp
// (gptq_unpack / awq_unpack, then marlin_from_int4 on the rows in Marlin order) over host-memory tensors —
// code independent of the gather kernel, which the tests compare it with byte for byte.
#include <algorithm>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "baracuda/ops/int4_weights.hpp"
#include "ops/int4_marlin_repack/tables.hpp"

namespace baracuda {
namespace {

template <class T>
std::span<const T> span_of(const ConstDynTensor& t) {
  return {static_cast<const T*>(t.data), static_cast<size_t>(t.numel())};
}

template <class TS>
Status repack_host(const detail::ExecContext&, const detail::Int4RepackLaunch& l) {
  const int64_t K = l.k, N = l.n;
  const Int4Shape shape{K, N, l.groups == 1 ? -1 : K / l.groups};  // one group: -1 and K are the same
  Result<Int4Weights> w = l.awq ? awq_unpack({span_of<int32_t>(l.qweight), span_of<int32_t>(l.qzeros),
                                              span_of<__half>(l.scales)},
                                             shape)
                                : gptq_unpack({span_of<int32_t>(l.qweight), {}, span_of<__half>(l.scales), {}},
                                              shape, Int4Scheme::Symmetric);
  if (!w) return w.error();
  if (l.perm.data != nullptr) {  // Marlin row i = checkpoint row perm[i], a permutation (the plan checked it)
    const auto perm = span_of<int32_t>(l.perm);
    std::vector<uint8_t> sorted(w->q.size());
    for (int64_t i = 0; i < K; ++i) std::copy_n(w->q.begin() + perm[i] * N, N, sorted.begin() + i * N);
    w->q = std::move(sorted);
  }
  auto m = marlin_from_int4(w.value(), false);
  if (!m) return m.error();
  std::memcpy(l.out_qweight.data, m->qweight.data(), m->qweight.size() * sizeof(int32_t));
  auto* out_scales = static_cast<TS*>(l.out_scales.data);
  for (size_t i = 0; i < m->scales.size(); ++i) {  // f16 → f32 is exact: one rounding to bf16
    if constexpr (std::is_same_v<TS, __half>)
      out_scales[i] = m->scales[i];
    else
      out_scales[i] = __float2bfloat16_rn(__half2float(m->scales[i]));
  }
  if (l.awq) std::memcpy(l.out_zeros.data, m->zeros.data(), m->zeros.size() * sizeof(int32_t));
  return {};
}

}  // namespace

namespace reference {
BARACUDA_DEFINE_TABLE(detail::Int4RepackTables, int4_marlin_repack_tables,
    detail::make_int4_repack_tables([]<class T>(std::type_identity<T>) { return &repack_host<T>; }))
}  // namespace reference
}  // namespace baracuda
