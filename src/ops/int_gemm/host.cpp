// The int_gemm family's host reference — the oracle the int8 tensor-core kernel is compared with bit for
// bit. Written for clarity: a plain triple loop reading every operand through its strides, the integer sum
// in int64 (exact; select's K bound guarantees it fits the s32 result; the asymmetric correction then in
// wrap-around s32, as int_gemm.hpp's step 1 says), and the epilogue of int_gemm.hpp one
// IEEE operation per line in the opmath type M, with std::fma for the bias step, then one rounding to the
// output type (core/reference_formats.hpp).
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/reference_activation.hpp"
#include "core/reference_formats.hpp"
#include "device/host_loop.hpp"
#include "ops/int_gemm/tables.hpp"

namespace baracuda::reference {
namespace {

using detail::at2;
using detail::IntGemmLaunch;
using detail::LinearLaunch;

template <class T>
const T& at1(const ConstDynTensor& t, int64_t i) {
  return static_cast<const T*>(t.data)[i * t.stride[0]];
}

/// Σ_k a[m, k] · b[n, k], exactly.
template <class TA, class TB>
int64_t dot(const ConstDynTensor& a, const ConstDynTensor& b, int64_t m, int64_t n, int64_t k) {
  int64_t acc = 0;
  for (int64_t i = 0; i < k; ++i) acc += int64_t{at2<TA>(a, m, i)} * int64_t{at2<TB>(b, n, i)};
  return acc;
}

template <class TA, class TB>
Status int_gemm(const detail::ExecContext&, const IntGemmLaunch& l) {
  for (int64_t m = 0; m < l.m; ++m)
    for (int64_t n = 0; n < l.n; ++n) {
      const int64_t acc = dot<TA, TB>(l.a, l.b, m, n, l.k);
      if (acc < std::numeric_limits<int32_t>::min() || acc > std::numeric_limits<int32_t>::max())
        return Error::internal("IntGemmPlan: the s32 accumulator overflowed (select's K bound should prevent it)");
      static_cast<int32_t*>(l.c.data)[m * l.c.stride[0] + n * l.c.stride[1]] = static_cast<int32_t>(acc);
    }
  return {};
}

/// The W8A8 epilogue of int_gemm.hpp over A kind TA (s8/u8), weight s8, output T.
template <class TA, class T>
Status linear(const detail::ExecContext&, const LinearLaunch& l) {
  using M = std::conditional_t<std::is_same_v<T, double>, double, float>;
  for (int64_t n = 0; n < l.n; ++n) {
    // Σ_k w[n, k], for the asymmetric correction.
    int64_t colsum = 0;
    if (l.a_zero_point.data != nullptr)
      for (int64_t i = 0; i < l.k; ++i) colsum += at2<int8_t>(l.w, n, i);
    const M sw = at1<M>(l.w_scale, l.w_scale.shape.dims[0] == l.n ? n : 0);
    const bool has_bias = l.bias.data != nullptr;
    const M b = has_bias ? static_cast<M>(value_of(at1<T>(l.bias, n))) : M(0);
    for (int64_t m = 0; m < l.m; ++m) {
      int64_t acc = dot<TA, int8_t>(l.a, l.w, m, n, l.k);                               // step 1
      if (acc < std::numeric_limits<int32_t>::min() || acc > std::numeric_limits<int32_t>::max())
        return Error::internal("QuantizedLinear: the s32 accumulator overflowed (select's K bound should prevent it)");
      // The zero-point correction in wrap-around s32, as the kernels compute it: exact whenever |q − zp| ≤ 255
      // (select's K bound); the Vllm convention's unclamped zero point can take it past s32, where it wraps.
      if (l.a_zero_point.data != nullptr) {
        const auto zp = static_cast<uint32_t>(at1<int32_t>(l.a_zero_point, m));
        acc = static_cast<int32_t>(static_cast<uint32_t>(acc) - zp * static_cast<uint32_t>(colsum));
      }
      const M sa = l.a_scale.data != nullptr ? at1<M>(l.a_scale, m) : static_cast<M>(l.a_scale_scalar);
      const M t = sw * static_cast<M>(acc);                                               // step 2
      M v = has_bias ? std::fma(sa, t, b) : sa * t;                                       // step 3
      v = activate(l.activation, v);                                                      // step 4
      T* y = static_cast<T*>(l.y.data) + m * l.y.stride[0] + n * l.y.stride[1];
      *y = store<T>(static_cast<long double>(v));                                         // step 5
    }
  }
  return {};
}

constexpr detail::IntGemmTables make_tables() {
  detail::IntGemmTables t{};
  using detail::IntGemmOperandTypes, detail::LinearOutputTypes;
  detail::add_kind_pair_fns(t.int_gemm, IntGemmOperandTypes{}, IntGemmOperandTypes{},
                            []<class TA, class TB>(std::type_identity<TA>, std::type_identity<TB>) {
                              return &int_gemm<TA, TB>;
                            });
  detail::add_kind_pair_fns(t.linear, IntGemmOperandTypes{}, LinearOutputTypes{},
                            []<class TA, class T>(std::type_identity<TA>, std::type_identity<T>) {
                              return &linear<TA, T>;
                            });
  return t;
}

}  // namespace

BARACUDA_DEFINE_TABLE(detail::IntGemmTables, int_gemm_tables, make_tables())

}  // namespace baracuda::reference
