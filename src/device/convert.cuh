/// \file
/// \brief Element conversions of `CastPlan` (and of `FillPlan`'s select-time value conversion), as
/// `__host__ __device__` functions: one rounding from the exact source value, PyTorch's fp8 overflow rules
/// or saturation, truncating and saturating float → integer, wrapping integer → integer.
///
/// The rules are those of `include/baracuda/ops/cast.hpp`; how each is obtained:
/// - f16/bf16/fp8/f32 sources load to f32 exactly; f64 sources stay double. Narrowing from f64 rounds
///   once from the double (`__double2half`, `__double2bfloat16`, `__nv_cvt_double_to_fp8`), never through f32.
/// - integer → f16/bf16/fp8 first rounds the integer to f32 *to odd* (exact below 2^24; otherwise the
///   truncated 24-bit significand with its last bit set when bits were dropped), then rounds once to
///   nearest-even. Round-to-odd into a format with ≥ p + 2 bits makes the second rounding exact, so
///   s64 → bf16 is correctly rounded. integer → f32/f64 is the hardware's correctly rounded conversion.
/// - float → integer truncates toward zero, NaN → 0, out of range → the target's min/max.
/// - integer → integer is two's-complement wrap-around; bool is 0/1 in, `x != 0` out.
/// - same kind → the value unchanged, bit for bit (NaN payloads included).
///
/// Namespace: the functions are compiled by nvcc (cuda kernels), by the host compiler against the
/// emulator (sim kernels) and by the host compiler in plain C++ (plan code). Each compilation gets its own
/// inline namespace (`device_cuda`, `device_sim` from `sim/compat.cuh`, or `device_host` when that header
/// was not included first), so the three never meet at link time.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(BARACUDA_DEVICE_NAMESPACE_BEGIN)
BARACUDA_DEVICE_NAMESPACE_BEGIN
#else
namespace baracuda {
inline namespace device_host {
#endif
namespace convert {

// ---------------------------------------------------------------------------------------------------
// Type classes
// ---------------------------------------------------------------------------------------------------

template <class T>
inline constexpr bool is_fp8_v = std::is_same_v<T, __nv_fp8_e4m3> || std::is_same_v<T, __nv_fp8_e5m2>;
/// Floating types narrower than f32 (loaded to f32 exactly).
template <class T>
inline constexpr bool is_narrow_float_v = std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16> || is_fp8_v<T>;
template <class T>
inline constexpr bool is_float_v = is_narrow_float_v<T> || std::is_same_v<T, float> || std::is_same_v<T, double>;
template <class T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

/// The type arithmetic on T is carried out in: f32 for f16/bf16/fp8 and f32, f64 for f64.
template <class T>
using opmath_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// ---------------------------------------------------------------------------------------------------
// Loads into f32 / f64
// ---------------------------------------------------------------------------------------------------

__host__ __device__ inline float to_float(float x) { return x; }
__host__ __device__ inline float to_float(__half x) { return __half2float(x); }
__host__ __device__ inline float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
__host__ __device__ inline float to_float(__nv_fp8_e4m3 x) {
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(x.__x, __NV_E4M3)));
}
__host__ __device__ inline float to_float(__nv_fp8_e5m2 x) {
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(x.__x, __NV_E5M2)));
}

/// A code of a quantized KV cache or operand (f16, bf16, FP8, or int8 read as an integer) as f32, exactly.
template <class C>
__host__ __device__ inline float code_to_float(C x) {
  if constexpr (std::is_same_v<C, int8_t>)
    return static_cast<float>(x);
  else
    return to_float(x);
}

/// x in its opmath type (exact).
template <class T>
__host__ __device__ inline opmath_t<T> to_opmath(T x) {
  if constexpr (std::is_same_v<T, double>)
    return x;
  else
    return to_float(x);
}

// ---------------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------------

__host__ __device__ inline __nv_fp8_storage_t fp8_from_float(float f, bool saturate, __nv_fp8_interpretation_t k) {
  return __nv_cvt_float_to_fp8(f, saturate ? __NV_SATFINITE : __NV_NOSAT, k);
}
__host__ __device__ inline __nv_fp8_storage_t fp8_from_double(double d, bool saturate, __nv_fp8_interpretation_t k) {
  return __nv_cvt_double_to_fp8(d, saturate ? __NV_SATFINITE : __NV_NOSAT, k);
}
template <class T>
__host__ __device__ inline T fp8_of_storage(__nv_fp8_storage_t s) {
  T r;
  r.__x = s;
  return r;
}

/// Number of significant bits of m (0 for 0).
__host__ __device__ inline int bit_length(uint64_t m) {
  int n = 0;
  if (m >> 32) {
    n += 32;
    m >>= 32;
  }
  if (m >> 16) {
    n += 16;
    m >>= 16;
  }
  if (m >> 8) {
    n += 8;
    m >>= 8;
  }
  if (m >> 4) {
    n += 4;
    m >>= 4;
  }
  if (m >> 2) {
    n += 2;
    m >>= 2;
  }
  if (m >> 1) {
    n += 1;
    m >>= 1;
  }
  return n + static_cast<int>(m);
}

/// x rounded to f32 *to odd*: exact when |x| < 2^24, else the truncated 24-bit significand with its lowest
/// bit forced to 1 when any dropped bit was 1. The result is exact arithmetic (no hardware rounding).
__host__ __device__ inline float int_to_float_round_odd(int64_t x) {
  const bool neg = x < 0;
  uint64_t m = neg ? uint64_t{0} - static_cast<uint64_t>(x) : static_cast<uint64_t>(x);
  float f;
  const int len = bit_length(m);
  if (len <= 24) {
    f = static_cast<float>(m);  // exact
  } else {
    const int shift = len - 24;  // in [1, 40]: 24 < len <= 64
    const uint64_t dropped = m & ((uint64_t{1} << shift) - 1);      // lint: shift < width: shift <= 40
    const uint64_t kept = (m >> shift) | (dropped != 0 ? 1u : 0u);  // lint: shift < width: shift <= 40
    // Both factors exact, and so the product. lint: shift < width: shift <= 40
    f = static_cast<float>(kept) * static_cast<float>(uint64_t{1} << shift);
  }
  return neg ? -f : f;
}

/// Truncation toward zero with saturation; NaN → 0. F is float or double.
template <class I, class F>
__host__ __device__ inline I float_to_int(F v) {
  static_assert(is_int_v<I>, "integer target expected");
  constexpr int bits = static_cast<int>(sizeof(I) * 8);
  constexpr bool is_signed = std::is_signed_v<I>;
  // Exact powers of two: lo = min(I), hi = max(I) + 1.
  constexpr F lo = is_signed ? -static_cast<F>(uint64_t{1} << (bits - 1)) : F(0);
  constexpr F hi = is_signed ? static_cast<F>(uint64_t{1} << (bits - 1))
                             : (bits == 64 ? F(18446744073709551616.0) : static_cast<F>(uint64_t{1} << bits));
  constexpr I min_v = is_signed ? static_cast<I>(uint64_t{1} << (bits - 1)) : I(0);
  constexpr I max_v = static_cast<I>(is_signed ? (uint64_t{1} << (bits - 1)) - 1 : ~uint64_t{0});
  if (v != v) return I(0);
  if (v <= lo) return min_v;
  if (v >= hi) return max_v;
  return static_cast<I>(v);  // in (lo, hi): truncates toward zero into range
}

// ---------------------------------------------------------------------------------------------------
// From f32 / f64 / int64 to every byte-sized kind
// ---------------------------------------------------------------------------------------------------

/// From an f32 or f64 value (`F`), rounded once to To: to nearest even for the floating kinds (fp8 saturating
/// or not, per `saturate_fp8`), float_to_int's rules for the integers, `!= 0` for bool.
template <class To, class F>
__host__ __device__ inline To from_wide(F v, bool saturate_fp8) {
  static_assert(std::is_same_v<F, float> || std::is_same_v<F, double>, "from f32 or f64");
  constexpr bool kF32 = std::is_same_v<F, float>;
  if constexpr (std::is_same_v<To, float> || std::is_same_v<To, double>) {
    return static_cast<To>(v);
  } else if constexpr (std::is_same_v<To, __half>) {
    if constexpr (kF32) return __float2half_rn(v);
    else return __double2half(v);
  } else if constexpr (std::is_same_v<To, __nv_bfloat16>) {
    if constexpr (kF32) return __float2bfloat16_rn(v);
    else return __double2bfloat16(v);
  } else if constexpr (std::is_same_v<To, __nv_fp8_e4m3> || std::is_same_v<To, __nv_fp8_e5m2>) {
    constexpr auto kFormat = std::is_same_v<To, __nv_fp8_e4m3> ? __NV_E4M3 : __NV_E5M2;
    if constexpr (kF32) return fp8_of_storage<To>(fp8_from_float(v, saturate_fp8, kFormat));
    else return fp8_of_storage<To>(fp8_from_double(v, saturate_fp8, kFormat));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != F(0);
  } else {
    return float_to_int<To>(v);
  }
}
template <class To>
__host__ __device__ inline To from_float(float f, bool saturate_fp8) {
  return from_wide<To>(f, saturate_fp8);
}
template <class To>
__host__ __device__ inline To from_double(double d, bool saturate_fp8) {
  return from_wide<To>(d, saturate_fp8);
}

/// From any integer value (every integer kind fits in int64).
template <class To>
__host__ __device__ inline To from_int(int64_t x, bool saturate_fp8) {
  if constexpr (std::is_same_v<To, float>) {
    return static_cast<float>(x);  // correctly rounded (cvt.rn.f32.s64; cvtsi2ss on x86-64)
  } else if constexpr (std::is_same_v<To, double>) {
    return static_cast<double>(x);
  } else if constexpr (is_narrow_float_v<To>) {
    return from_float<To>(int_to_float_round_odd(x), saturate_fp8);
  } else if constexpr (std::is_same_v<To, bool>) {
    return x != 0;
  } else {
    return static_cast<To>(x);  // modular (C++20)
  }
}

// ---------------------------------------------------------------------------------------------------
// The conversion
// ---------------------------------------------------------------------------------------------------

/// Converts x to To following CastPlan's rules. `saturate_fp8` only matters for fp8 targets.
template <class To, class From>
__host__ __device__ inline To cast(From x, bool saturate_fp8) {
  if constexpr (std::is_same_v<To, From>) {
    return x;
  } else if constexpr (std::is_same_v<From, double>) {
    return from_double<To>(x, saturate_fp8);
  } else if constexpr (is_float_v<From>) {
    return from_float<To>(to_float(x), saturate_fp8);
  } else if constexpr (std::is_same_v<From, bool>) {
    return from_int<To>(x ? 1 : 0, saturate_fp8);
  } else {
    static_assert(is_int_v<From>, "unsupported source type");
    return from_int<To>(static_cast<int64_t>(x), saturate_fp8);
  }
}

/// Rounds an opmath value to T (round to nearest even; IEEE overflow to ±inf, NaN for E4M3).
template <class T>
__host__ __device__ inline T from_opmath(opmath_t<T> v) {
  if constexpr (std::is_same_v<T, double>)
    return v;
  else
    return from_float<T>(v, false);
}

}  // namespace convert
#if defined(BARACUDA_DEVICE_NAMESPACE_BEGIN)
BARACUDA_DEVICE_NAMESPACE_END
#else
}  // namespace device_host
}  // namespace baracuda
#endif
