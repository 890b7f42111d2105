/// \file
/// \brief The __half / __nv_bfloat16 functions that cuda_fp16.h and cuda_bf16.h declare for device code only
/// (conversions, arithmetic, operators, comparisons and __hmax/__hmin are already host-usable there):
/// fused multiply-add (exactly rounded), the h* / h2* math functions, float-to-integer conversions with
/// rounding modes, and integer-to-bf16 conversions with directed rounding.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>

#include "math.hpp"

namespace baracuda::simt {
namespace detail {

inline float to_f(__half h) { return __half2float(h); }
inline float to_f(__nv_bfloat16 h) { return __bfloat162float(h); }
template <class H>
inline H from_f(float f) {
  if constexpr (std::is_same_v<H, __half>)
    return __float2half_rn(f);
  else
    return __float2bfloat16_rn(f);
}

// The float nearest to hi + lo (an exact double-double) with round-to-odd, so that a second rounding to
// 11 or 8 significant bits is correct (24 >= p + 2).
inline float round_odd_to_float(double hi, double lo) {
  float f = static_cast<float>(hi);
  if (std::isinf(f)) f = std::copysign(FLT_MAX, f);  // hi is finite here
  const double rest = (hi - static_cast<double>(f)) + lo;
  if (rest != 0 && (std::bit_cast<std::uint32_t>(f) & 1u) == 0)
    f = std::nextafter(f, rest > 0 ? INFINITY : -INFINITY);
  return f;
}

/// a * b + c with a single rounding. The product of two 16-bit floats is exact in double, the sum is kept
/// exactly as a double-double (TwoSum), then rounded to odd at float precision and to nearest-even at the
/// 16-bit precision.
template <class H>
inline H fma16(H a, H b, H c) {
  const double p = static_cast<double>(to_f(a)) * static_cast<double>(to_f(b));
  const double cc = to_f(c);
  const double s = p + cc;
  if (!std::isfinite(s)) return from_f<H>(static_cast<float>(s));
  const double bb = s - p;
  const double err = (p - (s - bb)) + (cc - bb);
  return from_f<H>(round_odd_to_float(s, err));
}

template <class H>
inline H relu16(H x) {
  const float f = to_f(x);
  if (std::isnan(f)) return from_f<H>(NAN);
  return f < 0 ? from_f<H>(0.0f) : x;
}

template <class H>
inline H sat16(H x) {
  const float f = to_f(x);
  return from_f<H>(f >= 1.0f ? 1.0f : (f > 0.0f ? f : 0.0f));  // NaN -> 0
}

inline __half lo16(__half2 v) { return __low2half(v); }
inline __half hi16(__half2 v) { return __high2half(v); }
inline __nv_bfloat16 lo16(__nv_bfloat162 v) { return __low2bfloat16(v); }
inline __nv_bfloat16 hi16(__nv_bfloat162 v) { return __high2bfloat16(v); }
inline __half2 pack16(__half lo, __half hi) { return __halves2half2(lo, hi); }
inline __nv_bfloat162 pack16(__nv_bfloat16 lo, __nv_bfloat16 hi) { return __halves2bfloat162(lo, hi); }

// Integer to bf16 (8 significant bits) with directed rounding.
template <class I>
inline __nv_bfloat16 int_to_bf16(I v, Rnd mode) {
  const bool neg = v < 0;
  std::uint64_t mag = neg ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
  if (mag == 0) return __float2bfloat16_rn(0.0f);
  const int msb = 63 - std::countl_zero(mag);
  if (msb > 7) {
    const int drop = msb - 7;
    const std::uint64_t rem = mag & ((std::uint64_t{1} << drop) - 1);
    mag >>= drop;
    if (rem != 0 && ((mode == Rnd::U && !neg) || (mode == Rnd::D && neg))) ++mag;
    mag <<= drop;
  }
  const float f = static_cast<float>(mag);  // at most 9 significant bits: exact
  return __float2bfloat16_rn(neg ? -f : f);
}

}  // namespace detail

namespace device_api {

// ---- fused multiply-add ----
#define BARACUDA_SIM_HFMA(H, H2)                                                                          \
  inline H __hfma(H a, H b, H c) { return detail::fma16(a, b, c); }                                      \
  inline H __hfma_sat(H a, H b, H c) { return detail::sat16(detail::fma16(a, b, c)); }                   \
  inline H __hfma_relu(H a, H b, H c) { return detail::relu16(detail::fma16(a, b, c)); }                 \
  inline H2 __hfma2(H2 a, H2 b, H2 c) {                                                                   \
    return detail::pack16(__hfma(detail::lo16(a), detail::lo16(b), detail::lo16(c)),                     \
                          __hfma(detail::hi16(a), detail::hi16(b), detail::hi16(c)));                    \
  }                                                                                                       \
  inline H2 __hfma2_sat(H2 a, H2 b, H2 c) {                                                               \
    return detail::pack16(__hfma_sat(detail::lo16(a), detail::lo16(b), detail::lo16(c)),                 \
                          __hfma_sat(detail::hi16(a), detail::hi16(b), detail::hi16(c)));                \
  }                                                                                                       \
  inline H2 __hfma2_relu(H2 a, H2 b, H2 c) {                                                              \
    return detail::pack16(__hfma_relu(detail::lo16(a), detail::lo16(b), detail::lo16(c)),                \
                          __hfma_relu(detail::hi16(a), detail::hi16(b), detail::hi16(c)));               \
  }                                                                                                       \
  /* complex a*b + c on (re, im) pairs, as two fused steps per component like the hardware */            \
  inline H2 __hcmadd(H2 a, H2 b, H2 c) {                                                                  \
    const H re = __hfma(__hneg(detail::hi16(a)), detail::hi16(b),                                         \
                        __hfma(detail::lo16(a), detail::lo16(b), detail::lo16(c)));                       \
    const H im = __hfma(detail::hi16(a), detail::lo16(b),                                                 \
                        __hfma(detail::lo16(a), detail::hi16(b), detail::hi16(c)));                       \
    return detail::pack16(re, im);                                                                        \
  }
BARACUDA_SIM_HFMA(__half, __half2)
BARACUDA_SIM_HFMA(__nv_bfloat16, __nv_bfloat162)
#undef BARACUDA_SIM_HFMA

// ---- math: computed in float, rounded once to the 16-bit type ----
#define BARACUDA_SIM_HMATH1(H, H2, name, name2, expr)                                   \
  inline H name(H h) {                                                                  \
    const float x = detail::to_f(h);                                                    \
    return detail::from_f<H>(expr);                                                     \
  }                                                                                     \
  inline H2 name2(H2 v) { return detail::pack16(name(detail::lo16(v)), name(detail::hi16(v))); }
#define BARACUDA_SIM_HMATH(H, H2)                                                      \
  BARACUDA_SIM_HMATH1(H, H2, hexp, h2exp, std::exp(x))                                 \
  BARACUDA_SIM_HMATH1(H, H2, hexp2, h2exp2, std::exp2(x))                              \
  BARACUDA_SIM_HMATH1(H, H2, hexp10, h2exp10, ::exp10f(x))                             \
  BARACUDA_SIM_HMATH1(H, H2, hlog, h2log, std::log(x))                                 \
  BARACUDA_SIM_HMATH1(H, H2, hlog2, h2log2, std::log2(x))                              \
  BARACUDA_SIM_HMATH1(H, H2, hlog10, h2log10, std::log10(x))                           \
  BARACUDA_SIM_HMATH1(H, H2, hsin, h2sin, std::sin(x))                                 \
  BARACUDA_SIM_HMATH1(H, H2, hcos, h2cos, std::cos(x))                                 \
  BARACUDA_SIM_HMATH1(H, H2, htanh, h2tanh, std::tanh(x))                              \
  BARACUDA_SIM_HMATH1(H, H2, htanh_approx, h2tanh_approx, std::tanh(x))                \
  BARACUDA_SIM_HMATH1(H, H2, hsqrt, h2sqrt, std::sqrt(x))                              \
  BARACUDA_SIM_HMATH1(H, H2, hrsqrt, h2rsqrt, static_cast<float>(1.0 / std::sqrt(static_cast<double>(x)))) \
  BARACUDA_SIM_HMATH1(H, H2, hrcp, h2rcp, 1.0f / x)                                    \
  BARACUDA_SIM_HMATH1(H, H2, hceil, h2ceil, std::ceil(x))                              \
  BARACUDA_SIM_HMATH1(H, H2, hfloor, h2floor, std::floor(x))                           \
  BARACUDA_SIM_HMATH1(H, H2, hrint, h2rint, std::nearbyint(x))                         \
  BARACUDA_SIM_HMATH1(H, H2, htrunc, h2trunc, std::trunc(x))
BARACUDA_SIM_HMATH(__half, __half2)
BARACUDA_SIM_HMATH(__nv_bfloat16, __nv_bfloat162)
#undef BARACUDA_SIM_HMATH
#undef BARACUDA_SIM_HMATH1

// ---- 16-bit float to integer with a rounding mode (the _rz variants exist in the CUDA headers) ----
#define BARACUDA_SIM_H2I(H, prefix, sfx, mode)                                                                   \
  inline int prefix##2int_##sfx(H h) { return detail::f2i<int>(detail::to_f(h), mode); }                        \
  inline unsigned int prefix##2uint_##sfx(H h) { return detail::f2i<unsigned int>(detail::to_f(h), mode); }     \
  inline long long prefix##2ll_##sfx(H h) { return detail::f2i<long long>(detail::to_f(h), mode); }             \
  inline unsigned long long prefix##2ull_##sfx(H h) {                                                           \
    return detail::f2i<unsigned long long>(detail::to_f(h), mode);                                              \
  }                                                                                                             \
  inline short prefix##2short_##sfx(H h) { return detail::f2i<short>(detail::to_f(h), mode); }                  \
  inline unsigned short prefix##2ushort_##sfx(H h) { return detail::f2i<unsigned short>(detail::to_f(h), mode); }
BARACUDA_SIM_H2I(__half, __half, rn, detail::Rnd::N)
BARACUDA_SIM_H2I(__half, __half, rd, detail::Rnd::D)
BARACUDA_SIM_H2I(__half, __half, ru, detail::Rnd::U)
BARACUDA_SIM_H2I(__nv_bfloat16, __bfloat16, rn, detail::Rnd::N)
BARACUDA_SIM_H2I(__nv_bfloat16, __bfloat16, rd, detail::Rnd::D)
BARACUDA_SIM_H2I(__nv_bfloat16, __bfloat16, ru, detail::Rnd::U)
#undef BARACUDA_SIM_H2I

// ---- integer to bf16 with directed rounding (the _rn variants exist in cuda_bf16.h) ----
#define BARACUDA_SIM_I2BF(I, name, sfx, mode) \
  inline __nv_bfloat16 name##2bfloat16_##sfx(I v) { return detail::int_to_bf16(v, mode); }
#define BARACUDA_SIM_I2BF_ALL(sfx, mode)                    \
  BARACUDA_SIM_I2BF(int, __int, sfx, mode)                  \
  BARACUDA_SIM_I2BF(unsigned int, __uint, sfx, mode)        \
  BARACUDA_SIM_I2BF(long long, __ll, sfx, mode)             \
  BARACUDA_SIM_I2BF(unsigned long long, __ull, sfx, mode)   \
  BARACUDA_SIM_I2BF(short, __short, sfx, mode)              \
  BARACUDA_SIM_I2BF(unsigned short, __ushort, sfx, mode)
BARACUDA_SIM_I2BF_ALL(rz, detail::Rnd::Z)
BARACUDA_SIM_I2BF_ALL(rd, detail::Rnd::D)
BARACUDA_SIM_I2BF_ALL(ru, detail::Rnd::U)
#undef BARACUDA_SIM_I2BF_ALL
#undef BARACUDA_SIM_I2BF

}  // namespace device_api
}  // namespace baracuda::simt
