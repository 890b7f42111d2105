/// \file
/// \brief Shifts by a run-time amount that give PTX's result for every amount. A C++ shift by the width of the
/// promoted operand or more is undefined, and the two devices differ there: PTX shl/shr clamp the amount to the
/// width (shl and shr.u give 0, shr.s the sign fill), x86-64 masks it (x << 33 is x << 1 for 32 bits). These are
/// plain C++, the same on the cuda and sim devices; tools/lint/kernel_lint.py accepts shifts by a non-constant
/// amount in kernel code only here or where a comment shows the amount is below the width.
#pragma once

#include "sim/compat.cuh"

#include <type_traits>

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace shift {

/// x << n, and 0 for n >= the width of T (PTX shl). T: a 32- or 64-bit integer; a negative signed x shifts its
/// two's-complement bits.
template <class T>
__host__ __device__ __forceinline__ T left(T x, unsigned n) {
  static_assert(std::is_integral_v<T> && sizeof(T) >= 4, "a 32- or 64-bit integer (narrower ones promote to int)");
  using U = std::make_unsigned_t<T>;
  return n < sizeof(T) * 8 ? static_cast<T>(static_cast<U>(x) << n) : T(0);
}

/// x >> n, and for n >= the width of T the sign fill (PTX shr.s: -1 for a negative x, else 0) or 0 (shr.u).
template <class T>
__host__ __device__ __forceinline__ T right(T x, unsigned n) {
  static_assert(std::is_integral_v<T> && sizeof(T) >= 4, "a 32- or 64-bit integer (narrower ones promote to int)");
  if (n < sizeof(T) * 8) return x >> n;
  if constexpr (std::is_signed_v<T>)
    return x < 0 ? T(-1) : T(0);
  else
    return T(0);
}

}  // namespace shift
BARACUDA_DEVICE_NAMESPACE_END
