// The W4A16 GEMM kernel at each candidate block shape (src/ops/int4_gemm/tuning.hpp), for the sim device
// (int4_gemm_configs_kernels.hpp). Compiled as C++ only (tests/ops/CMakeLists.txt): nvcc never builds it.
#include "ops/int4_gemm/kernels.cuh"

#include <array>
#include <iterator>
#include <utility>

#include "int4_gemm_configs_kernels.hpp"

namespace baracuda::test {
namespace {

namespace i4 = ::baracuda::device_sim::int4_gemm;
using detail::kInt4GemmCandidates;
using Fn = Status (*)(const detail::ExecContext&, const detail::Int4GemmLaunch&);

template <class T, size_t... I>
constexpr auto table(std::index_sequence<I...>) {
  return std::array<Fn, sizeof...(I)>{&i4::gemm_with_config<T, kInt4GemmCandidates[I]>...};
}
constexpr auto kF16 = table<__half>(std::make_index_sequence<std::size(kInt4GemmCandidates)>{});
constexpr auto kBf16 = table<__nv_bfloat16>(std::make_index_sequence<std::size(kInt4GemmCandidates)>{});

}  // namespace

Status int4_gemm_with_config(size_t index, const detail::ExecContext& ctx, const detail::Int4GemmLaunch& l) {
  if (index >= std::size(kInt4GemmCandidates)) return Error::invalid("int4_gemm_with_config: no such candidate");
  if (l.a.kind == ElementKind::F16) return kF16[index](ctx, l);
  if (l.a.kind == ElementKind::Bf16) return kBf16[index](ctx, l);
  return Error::unsupported("int4_gemm_with_config: f16 or bf16");
}

}  // namespace baracuda::test
