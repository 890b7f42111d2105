/// \file
/// \brief The binary family's op functors: one struct per catalog line (binary_ops.def), named like its
/// enumerator, with `__host__ __device__` static members
///   - `apply(M a, M b) -> M`            the forward op in opmath M (float for f16/bf16/f32, double for f64);
///   - `apply_int(I a, I b) -> I`        the forward op on an integer storage type (integer-capable ops only);
///   - `grad<T>(M dy, M a, M b) -> Grad` dA and dB in M (PyTorch's derivatives.yaml formulas); ops whose
///                                       formula uses the forward result y recompute it and round it to T,
///                                       the value PyTorch's autograd saves;
/// and one struct per comparison with `apply(V a, V b) -> bool`.
/// The host reference (host.cpp) does not use these: it is written separately in long double.
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <type_traits>

#include "baracuda/ops/binary.hpp"
#include "device/convert.cuh"
#include "device/precise_math.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace binary {

// ---------------------------------------------------------------------------------------------------
// Math in M (float: the f-suffixed functions; double: the double ones; never a fast-math intrinsic)
// ---------------------------------------------------------------------------------------------------

namespace math {
using namespace pmath;  // fmod, pow, atan2, hypot, copysign, log, floor, trunc: precise_math.cuh


/// The forward result as autograd saves it: rounded to the element type T, back in opmath.
template <class T, class M>
__host__ __device__ __forceinline__ M saved(M y) {
  return convert::to_opmath(convert::from_opmath<T>(y));
}

/// PyTorch's `div(a, b, rounding_mode="floor")` for floats (c10's div_floor_floating): the floor of the
/// exact quotient, from the exact fmod, with IEEE a / b when b == 0.
template <class M>
__host__ __device__ __forceinline__ M div_floor(M a, M b) {
  if (b == M(0)) return a / b;
  const M mod = pmath::fmod(a, b);
  M div = (a - mod) / b;
  if (mod != M(0) && ((b < M(0)) != (mod < M(0)))) div -= M(1);
  if (div == M(0)) return pmath::copysign(M(0), a / b);
  M floordiv = pmath::floor(div);
  if (div - floordiv > M(0.5)) floordiv += M(1);
  return floordiv;
}

// Integer arithmetic that wraps around: computed in the unsigned type of the promoted operands (so no
// signed overflow, which C++ leaves undefined) and converted back modulo 2^bits (defined since C++20).
template <class I>
using wrap_t = std::make_unsigned_t<decltype(I() + I())>;
template <class I>
__host__ __device__ __forceinline__ I wrap_add(I a, I b) {
  return static_cast<I>(static_cast<wrap_t<I>>(a) + static_cast<wrap_t<I>>(b));
}
template <class I>
__host__ __device__ __forceinline__ I wrap_sub(I a, I b) {
  return static_cast<I>(static_cast<wrap_t<I>>(a) - static_cast<wrap_t<I>>(b));
}
template <class I>
__host__ __device__ __forceinline__ I wrap_mul(I a, I b) {
  return static_cast<I>(static_cast<wrap_t<I>>(a) * static_cast<wrap_t<I>>(b));
}
/// a - trunc(a / b)·b; 0 when b == 0 (baracuda's choice) and for MIN / -1 (where `%` is undefined).
template <class I>
__host__ __device__ __forceinline__ I int_fmod(I a, I b) {
  if (b == I(0)) return I(0);
  if constexpr (std::is_signed_v<I>)
    if (b == I(-1)) return I(0);
  return static_cast<I>(a % b);
}
}  // namespace math

/// The two gradients of a binary op, in opmath.
template <class M>
struct Grad {
  M da;
  M db;
};

namespace fn {

// ---------------------------------------------------------------------------------------------------
// Arithmetic ops (BinaryPlan, BinaryBackwardPlan)
// ---------------------------------------------------------------------------------------------------

struct Add {
  template <class M>
  __host__ __device__ static M apply(M a, M b) { return a + b; }
  template <class I>
  __host__ __device__ static I apply_int(I a, I b) { return math::wrap_add(a, b); }
  template <class T, class M>
  __host__ __device__ static Grad<M> grad(M dy, M, M) { return {dy, dy}; }
};

struct Sub {
  template <class M>
  __host__ __device__ static M apply(M a, M b) { return a - b; }
  template <class I>
  __host__ __device__ static I apply_int(I a, I b) { return math::wrap_sub(a, b); }
  template <class T, class M>
  __host__ __device__ static Grad<M> grad(M dy, M, M) { return {dy, -dy}; }
};

struct Mul {
  template <class M>
  __host__ __device__ static M apply(M a, M b) { return a * b; }
  template <class I>
  __host__ __device__ static I apply_int(I a, I b) { return math::wrap_mul(a, b); }
  template <class T, class M>
  __host__ __device__ static Grad<M> grad(M dy, M a, M b) { return {dy * b, dy * a}; }
};

struct Div {
  template <class M>
  __host__ __device__ static M apply(M a, M b) { return a / b; }
  template <class T, class M>
  __host__ __device__ static Grad<M> grad(M dy, M a, M b) { return {dy / b, -dy * ((a / b) / b)}; }
};

struct Pow {
  template <class M>
  __host__ __device__ static M apply(M a, M b) { return math::pow(a, b); }
  // pow_backward_self: 0 where b == 0; pow_backward_exponent: dy·(y·log a), with 0 in place of y·log a
  // where a == 0 and b >= 0.
  template <class T, class M>
  __host__ __device__ static Grad<M> grad(M dy, M a, M b) {
    const M da = b == M(0) ? M(0) : dy * (b * math::pow(a, b - M(1)));
    const M y = math::saved<T>(math::pow(a, b));
    const M dexp = (a == M(0) && b >= M(0)) ? M(0) : y * math::log(a);
    return {da, dy * dexp};
  }
};

struct Maximum {
  template <class M>
  __host__ __device__ static M apply(M a, M b) {
    if (a != a) return a;
    if (b != b) return b;
    if (a == b) return a == M(0) ? a + b : a;  // -0 + +0 = +0: max(-0, +0) = +0
    return a > b ? a : b;
  }
  template <class I>
  __host__ __device__ static I apply_int(I a, I b) { return a > b ? a : b; }
  // where(a == b, dy/2, dy), masked to 0 where a < b (for da) or a > b (for db); NaN: dy to both.
  template <class T, class M>
  __host__ __device__ static Grad<M> grad(M dy, M a, M b) {
    const M g = a == b ? dy / M(2) : dy;
    return {a < b ? M(0) : g, a > b ? M(0) : g};
  }
};

struct Minimum {
  template <class M>
  __host__ __device__ static M apply(M a, M b) {
    if (a != a) return a;
    if (b != b) return b;
    if (a == b) return a == M(0) ? -(-a - b) : a;  // -(+0 + -0) = -0: min(-0, +0) = -0
    return a < b ? a : b;
  }
  template <class I>
  __host__ __device__ static I apply_int(I a, I b) { return a < b ? a : b; }
  template <class T, class M>
  __host__ __device__ static Grad<M> grad(M dy, M a, M b) {
    const M g = a == b ? dy / M(2) : dy;
    return {a > b ? M(0) : g, a < b ? M(0) : g};
  }
};

struct Atan2 {
  template <class M>
  __host__ __device__ static M apply(M a, M b) { return math::atan2(a, b); }
  template <class T, class M>
  __host__ __device__ static Grad<M> grad(M dy, M a, M b) {
    const M recip = M(1) / (a * a + b * b);
    return {dy * b * recip, dy * -a * recip};
  }
};

struct Fmod {
  template <class M>
  __host__ __device__ static M apply(M a, M b) { return math::fmod(a, b); }
  template <class I>
  __host__ __device__ static I apply_int(I a, I b) { return math::int_fmod(a, b); }
  template <class T, class M>
  __host__ __device__ static Grad<M> grad(M dy, M a, M b) { return {dy, -dy * math::trunc(a / b)}; }
};

struct Remainder {
  template <class M>
  __host__ __device__ static M apply(M a, M b) {
    M m = math::fmod(a, b);
    if (m != M(0) && ((b < M(0)) != (m < M(0)))) m += b;
    return m;
  }
  template <class I>
  __host__ __device__ static I apply_int(I a, I b) {
    I r = math::int_fmod(a, b);
    if constexpr (std::is_signed_v<I>)
      if (r != I(0) && ((r < I(0)) != (b < I(0)))) r = static_cast<I>(r + b);  // opposite signs: no overflow
    return r;
  }
  template <class T, class M>
  __host__ __device__ static Grad<M> grad(M dy, M a, M b) { return {dy, -dy * math::div_floor(a, b)}; }
};

struct Copysign {
  template <class M>
  __host__ __device__ static M apply(M a, M b) { return math::copysign(a, b); }
  // copysign_tensor_self_backward: dy·(y / a), the ratio 0 where a == 0; db = zeros.
  template <class T, class M>
  __host__ __device__ static Grad<M> grad(M dy, M a, M b) {
    const M y = math::saved<T>(math::copysign(a, b));
    return {dy * (a == M(0) ? M(0) : y / a), M(0)};
  }
};

struct Hypot {
  template <class M>
  __host__ __device__ static M apply(M a, M b) { return math::hypot(a, b); }
  template <class T, class M>
  __host__ __device__ static Grad<M> grad(M dy, M a, M b) {
    const M y = math::saved<T>(math::hypot(a, b));
    return {dy * a / y, dy * b / y};
  }
};

// ---------------------------------------------------------------------------------------------------
// Comparisons (ComparePlan): on the exact values (16-bit floats in f32, integers as they are)
// ---------------------------------------------------------------------------------------------------

struct Eq {
  template <class V>
  __host__ __device__ static bool apply(V a, V b) { return a == b; }
};
struct Ne {
  template <class V>
  __host__ __device__ static bool apply(V a, V b) { return a != b; }
};
struct Lt {
  template <class V>
  __host__ __device__ static bool apply(V a, V b) { return a < b; }
};
struct Le {
  template <class V>
  __host__ __device__ static bool apply(V a, V b) { return a <= b; }
};
struct Gt {
  template <class V>
  __host__ __device__ static bool apply(V a, V b) { return a > b; }
};
struct Ge {
  template <class V>
  __host__ __device__ static bool apply(V a, V b) { return a >= b; }
};

}  // namespace fn

/// The functor of a catalog op.
template <::baracuda::BinaryOp Op>
struct BinaryFunctor;
template <::baracuda::CompareOp Op>
struct CompareFunctor;
#define BARACUDA_BINARY_OP(Enum, name, types, backward, doc)                            \
  template <>                                                                           \
  struct BinaryFunctor<::baracuda::BinaryOp::Enum> {                                    \
    using type = fn::Enum;                                                              \
  };
#define BARACUDA_COMPARE_OP(Enum, name, types, doc) \
  template <>                                       \
  struct CompareFunctor<::baracuda::CompareOp::Enum> { \
    using type = fn::Enum;                          \
  };
#include "baracuda/ops/binary_ops.def"
#undef BARACUDA_BINARY_OP
#undef BARACUDA_COMPARE_OP

}  // namespace binary
BARACUDA_DEVICE_NAMESPACE_END
