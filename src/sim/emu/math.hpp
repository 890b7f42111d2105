/// \file
/// \brief CUDA device math and integer intrinsics that a host compiler lacks, plus CUDA's global min/max overloads
/// and the cache-hinted loads/stores. Only names the CUDA headers do not already define for a host
/// compiler are defined here.
///
/// Numerics: the fast-math intrinsics (__expf, __sinf, ...) call the full-precision host functions, so
/// they are more accurate than the GPU's approximations; compare with tolerances. Correctly rounded
/// operations (__fadd_rn, __fsqrt_rn, __frcp_rn, directed-rounding variants, conversions) are exact.
/// Float-to-integer conversions saturate and map NaN to 0, as PTX cvt does.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>  // vector types

#include <bit>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <math.h>

namespace baracuda::simt {
namespace detail {

// Stops the compiler from contracting a separately rounded product and sum into an fma.
template <class T>
inline T opaque(T v) {
#if defined(__x86_64__) || defined(__i386__)
  asm("" : "+x"(v));
#else
  asm("" : "+r"(v));
#endif
  return v;
}

enum class Rnd { N, Z, D, U };

// Directed rounding of an operation whose round-to-nearest result is `rn` and whose exact result is
// rn + err (err of any wider type; only its sign matters). Overflow of finite operands is handled by the
// callers.
template <class T, class E>
inline T directed(T rn, E err, Rnd mode) {
  if (!(err < 0 || err > 0) || mode == Rnd::N) return rn;  // exact (or an inf/NaN operation)
  const T inf = std::numeric_limits<T>::infinity();
  switch (mode) {
    case Rnd::Z: return ((err > 0) != (rn > 0)) ? std::nextafter(rn, T(0)) : rn;
    case Rnd::D: return err < 0 ? std::nextafter(rn, -inf) : rn;
    case Rnd::U: return err > 0 ? std::nextafter(rn, inf) : rn;
    default: return rn;
  }
}

template <class T>
inline T overflowed(T rn, Rnd mode) {  // the exact result is beyond the finite range, with the sign of rn
  const T big = std::numeric_limits<T>::max();
  const bool pos = rn > 0;
  switch (mode) {
    case Rnd::Z: return pos ? big : -big;
    case Rnd::D: return pos ? big : rn;
    case Rnd::U: return pos ? rn : -big;
    default: return rn;
  }
}

// The error terms: exact for float (through double) and for double (TwoSum, fma) except that double
// products and quotients in the subnormal range may round the wrong way.
template <class T>
inline T add_r(T a, T b, Rnd mode) {
  const T s = opaque(a + b);
  if (mode == Rnd::N) return s;
  if (s == 0 && mode == Rnd::D)  // an exact zero sum is -0 when rounding down, unless both are +0
    return (a == 0 && b == 0 && !std::signbit(a) && !std::signbit(b)) ? T(0) : -T(0);
  if (std::isinf(s) && std::isfinite(a) && std::isfinite(b)) return overflowed(s, mode);
  if (!std::isfinite(s)) return s;
  const T bb = opaque(s - a);
  const T err = (a - (s - bb)) + (b - bb);  // TwoSum: a + b == s + err exactly
  return directed(s, err, mode);
}

inline float mul_r(float a, float b, Rnd mode) {
  const float p = opaque(a * b);
  if (mode == Rnd::N) return p;
  const double exact = static_cast<double>(a) * static_cast<double>(b);
  if (std::isinf(p) && std::isfinite(exact)) return overflowed(p, mode);
  return directed(p, exact - static_cast<double>(p), mode);
}
inline double mul_r(double a, double b, Rnd mode) {
  const double p = opaque(a * b);
  if (mode == Rnd::N) return p;
  if (std::isinf(p) && std::isfinite(a) && std::isfinite(b)) return overflowed(p, mode);
  return directed(p, std::fma(a, b, -p), mode);
}

template <class T, class W>
inline T div_r_impl(T a, T b, Rnd mode) {
  const T q = opaque(a / b);
  if (mode == Rnd::N || std::isinf(a) || std::isinf(b) || std::isnan(q)) return q;
  if (std::isinf(q)) return b == 0 ? q : overflowed(q, mode);
  W r;  // a - q*b
  if constexpr (std::is_same_v<T, W>)
    r = -std::fma(q, b, -a);
  else
    r = static_cast<W>(a) - static_cast<W>(q) * static_cast<W>(b);
  return directed(q, b > 0 ? r : -r, mode);
}
inline float div_r(float a, float b, Rnd mode) { return div_r_impl<float, double>(a, b, mode); }
inline double div_r(double a, double b, Rnd mode) { return div_r_impl<double, double>(a, b, mode); }

inline float sqrt_r(float a, Rnd mode) {
  const float s = std::sqrt(a);
  if (mode == Rnd::N || !std::isfinite(s) || s == 0) return s;
  return directed(s, static_cast<double>(a) - static_cast<double>(s) * static_cast<double>(s), mode);
}
inline double sqrt_r(double a, Rnd mode) {
  const double s = std::sqrt(a);
  if (mode == Rnd::N || !std::isfinite(s) || s == 0) return s;
  return directed(s, -std::fma(s, s, -a), mode);
}

// Saturating float-to-integer conversion (PTX cvt): NaN -> 0, out of range -> the nearest bound.
template <class I, class F>
inline I f2i(F v, Rnd mode) {
  if (std::isnan(v)) return 0;
  F r;
  switch (mode) {
    case Rnd::N: r = std::nearbyint(v); break;
    case Rnd::Z: r = std::trunc(v); break;
    case Rnd::D: r = std::floor(v); break;
    default: r = std::ceil(v); break;
  }
  constexpr long double lo = static_cast<long double>(std::numeric_limits<I>::min());
  constexpr long double hi = static_cast<long double>(std::numeric_limits<I>::max());
  if (static_cast<long double>(r) <= lo) return std::numeric_limits<I>::min();
  if (static_cast<long double>(r) >= hi) return std::numeric_limits<I>::max();
  return static_cast<I>(r);
}

// Integer (or double) to float with directed rounding, through an exact long double.
template <class V>
inline float to_float_r(V v, Rnd mode) {
  const long double x = static_cast<long double>(v);
  const float f = static_cast<float>(x);
  if (mode == Rnd::N) return f;
  if (std::isinf(f) && std::isfinite(x)) return overflowed(f, mode);
  return directed(f, x - static_cast<long double>(f), mode);
}

template <class V>
inline double to_double_r(V v, Rnd mode) {
  const long double x = static_cast<long double>(v);
  const double d = static_cast<double>(x);
  if (mode == Rnd::N) return d;
  return directed(d, x - static_cast<long double>(d), mode);
}

// sin(πx) and cos(πx) as IEEE 754-2008 9.2.1 sinPi and cosPi: x = r/2 + t with r = round(2x) and
// |t| <= 1/4, both exact, so integers and half-integers give exact ±0 and ±1 (sinPi(±n) = ±0, cosPi(n + 1/2) =
// +0), and the rest is sin or cos of π|t| in long double (M_PI * x would lose the argument near the zeros).
template <class T>
inline void sincos_pi(T x, T* s, T* c) {
  if (!std::isfinite(x)) {
    *s = *c = x - x;  // NaN
    return;
  }
  if (std::fabs(x) >= T(1) / std::numeric_limits<T>::epsilon() * 2) {  // an even integer
    *s = std::copysign(T(0), x), *c = T(1);
    return;
  }
  const T r = std::round(x + x);  // x + x is exact here; round() ignores the rounding mode
  const T t = x - r / 2;          // exact, in [-1/4, 1/4]
  const unsigned quadrant = static_cast<unsigned>(static_cast<long long>(r) & 3);
  T st, ct;  // sin(πt), cos(πt)
  if (t == 0) {
    st = 0, ct = 1;
  } else {
    constexpr long double kPi = 3.141592653589793238462643383279502884L;
    st = static_cast<T>(std::sin(kPi * t)), ct = static_cast<T>(std::cos(kPi * t));
  }
  switch (quadrant) {  // x = t + quadrant/2 (mod 2)
    case 0: *s = st, *c = ct; break;
    case 1: *s = ct, *c = -st; break;
    case 2: *s = -st, *c = -ct; break;
    default: *s = -ct, *c = st; break;
  }
  if (t == 0) {
    if (quadrant % 2 == 0)
      *s = std::copysign(T(0), x);  // an integer
    else
      *c = T(0);  // a half-integer
  }
}

template <class T>
inline T sin_pi(T x) {
  T s, c;
  sincos_pi(x, &s, &c);
  return s;
}
template <class T>
inline T cos_pi(T x) {
  T s, c;
  sincos_pi(x, &s, &c);
  return c;
}

}  // namespace detail

namespace device_api {

// ---- fast-math intrinsics (host-precision; __expf & co. are defined below, at global scope) ----
/// The CUDA Math API and the Programming Guide ("Intrinsic Functions"): for 2^126 < |y| < 2^128, __fdividef(x, y)
/// is 0 for finite x and NaN for infinite x (x times an approximate 1/y that flushes to zero there).
inline float __fdividef(float x, float y) {
  if (std::isfinite(y) && std::fabs(y) > 0x1p126f) return x * std::copysign(0.0f, y);
  return x / y;
}
/// fdividef is the division operator (CUDA makes it __fdividef only under -use_fast_math, which baracuda does not use).
inline float fdividef(float x, float y) { return x / y; }
/// Clamps to [+0, 1]; NaN -> 0.
inline float __saturatef(float x) { return x >= 1.0f ? 1.0f : (x > 0.0f ? x : 0.0f); }

// ---- CUDA math functions missing from the C library ----
inline float rsqrtf(float x) { return static_cast<float>(1.0 / std::sqrt(static_cast<double>(x))); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float rcbrtf(float x) { return static_cast<float>(1.0 / std::cbrt(static_cast<double>(x))); }
inline double rcbrt(double x) { return 1.0 / std::cbrt(x); }
inline double sinpi(double x) { return detail::sin_pi(x); }
inline double cospi(double x) { return detail::cos_pi(x); }
inline float sinpif(float x) { return detail::sin_pi(x); }
inline float cospif(float x) { return detail::cos_pi(x); }
inline void sincospif(float x, float* s, float* c) { detail::sincos_pi(x, s, c); }
inline void sincospi(double x, double* s, double* c) { detail::sincos_pi(x, s, c); }
inline double normcdf(double x) { return 0.5 * std::erfc(-x * M_SQRT1_2); }
inline float normcdff(float x) { return static_cast<float>(normcdf(x)); }

// ---- correctly rounded arithmetic and conversions with an explicit rounding mode ----
#define BARACUDA_SIM_ROUNDED_ARITH(T, p, suffix, mode)                          \
  inline T __##p##add_##suffix(T a, T b) { return detail::add_r(a, b, mode); }  \
  inline T __##p##sub_##suffix(T a, T b) { return detail::add_r(a, -b, mode); } \
  inline T __##p##mul_##suffix(T a, T b) { return detail::mul_r(a, b, mode); }  \
  inline T __##p##div_##suffix(T a, T b) { return detail::div_r(a, b, mode); }  \
  inline T __##p##rcp_##suffix(T a) { return detail::div_r(T(1), a, mode); }    \
  inline T __##p##sqrt_##suffix(T a) { return detail::sqrt_r(a, mode); }
#define BARACUDA_SIM_ROUNDED_TO_INT(From, from, suffix, mode)                                                    \
  inline int __##from##2int_##suffix(From x) { return detail::f2i<int>(x, mode); }                               \
  inline unsigned int __##from##2uint_##suffix(From x) { return detail::f2i<unsigned int>(x, mode); }            \
  inline long long __##from##2ll_##suffix(From x) { return detail::f2i<long long>(x, mode); }                    \
  inline unsigned long long __##from##2ull_##suffix(From x) { return detail::f2i<unsigned long long>(x, mode); }
#define BARACUDA_SIM_ROUNDED(suffix, mode)                                                           \
  BARACUDA_SIM_ROUNDED_ARITH(float, f, suffix, mode)                                                 \
  BARACUDA_SIM_ROUNDED_ARITH(double, d, suffix, mode)                                                \
  BARACUDA_SIM_ROUNDED_TO_INT(float, float, suffix, mode)                                            \
  BARACUDA_SIM_ROUNDED_TO_INT(double, double, suffix, mode)                                          \
  inline float __int2float_##suffix(int x) { return detail::to_float_r(x, mode); }                   \
  inline float __uint2float_##suffix(unsigned int x) { return detail::to_float_r(x, mode); }         \
  inline float __ll2float_##suffix(long long x) { return detail::to_float_r(x, mode); }              \
  inline float __ull2float_##suffix(unsigned long long x) { return detail::to_float_r(x, mode); }    \
  inline float __double2float_##suffix(double x) { return detail::to_float_r(x, mode); }             \
  inline double __ll2double_##suffix(long long x) { return detail::to_double_r(x, mode); }           \
  inline double __ull2double_##suffix(unsigned long long x) { return detail::to_double_r(x, mode); }
BARACUDA_SIM_ROUNDED(rn, detail::Rnd::N)
BARACUDA_SIM_ROUNDED(rz, detail::Rnd::Z)
BARACUDA_SIM_ROUNDED(rd, detail::Rnd::D)
BARACUDA_SIM_ROUNDED(ru, detail::Rnd::U)
#undef BARACUDA_SIM_ROUNDED
#undef BARACUDA_SIM_ROUNDED_ARITH
#undef BARACUDA_SIM_ROUNDED_TO_INT
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline double __fma_rn(double a, double b, double c) { return std::fma(a, b, c); }
inline double __int2double_rn(int x) { return x; }
inline double __uint2double_rn(unsigned int x) { return x; }

// ---- bit reinterpretation ----
inline float __int_as_float(int x) { return std::bit_cast<float>(x); }
inline int __float_as_int(float x) { return std::bit_cast<int>(x); }
inline float __uint_as_float(unsigned int x) { return std::bit_cast<float>(x); }
inline unsigned int __float_as_uint(float x) { return std::bit_cast<unsigned int>(x); }
inline long long __double_as_longlong(double x) { return std::bit_cast<long long>(x); }
inline double __longlong_as_double(long long x) { return std::bit_cast<double>(x); }
inline int __double2hiint(double x) { return static_cast<int>(std::bit_cast<unsigned long long>(x) >> 32); }
inline int __double2loint(double x) { return static_cast<int>(std::bit_cast<unsigned long long>(x) & 0xffffffffu); }
inline double __hiloint2double(int hi, int lo) {
  return std::bit_cast<double>((static_cast<unsigned long long>(static_cast<unsigned>(hi)) << 32) |
                               static_cast<unsigned>(lo));
}

// ---- integer intrinsics ----
inline int __popc(unsigned int x) { return std::popcount(x); }
inline int __popcll(unsigned long long x) { return std::popcount(x); }
inline int __clz(int x) { return std::countl_zero(static_cast<unsigned int>(x)); }
inline int __clzll(long long x) { return std::countl_zero(static_cast<unsigned long long>(x)); }
inline int __ffs(int x) { return x == 0 ? 0 : std::countr_zero(static_cast<unsigned int>(x)) + 1; }
inline int __ffsll(long long x) { return x == 0 ? 0 : std::countr_zero(static_cast<unsigned long long>(x)) + 1; }
inline unsigned int __brev(unsigned int x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  return __builtin_bswap32(x);
}
inline unsigned long long __brevll(unsigned long long x) {
  return (static_cast<unsigned long long>(__brev(static_cast<unsigned>(x))) << 32) | __brev(static_cast<unsigned>(x >> 32));
}
/// Byte i of the result is byte s[4i+2:4i] of the 8-byte value {y, x} (x = bytes 0-3).
inline unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s) {
  const unsigned long long v = (static_cast<unsigned long long>(y) << 32) | x;
  unsigned int r = 0;
  for (int i = 0; i < 4; ++i) r |= static_cast<unsigned int>((v >> (8 * ((s >> (4 * i)) & 7u))) & 0xffu) << (8 * i);
  return r;
}
/// High 32 bits of ({hi, lo} << (shift & 31)); _lc clamps the shift to 32 instead.
inline unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int shift) {
  const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned int>((v << (shift & 31u)) >> 32);
}
inline unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi, unsigned int shift) {
  const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned int>((v << (shift < 32u ? shift : 32u)) >> 32);
}
/// Low 32 bits of ({hi, lo} >> (shift & 31)); _rc clamps the shift to 32 instead.
inline unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int shift) {
  const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned int>(v >> (shift & 31u));
}
inline unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi, unsigned int shift) {
  const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned int>(v >> (shift < 32u ? shift : 32u));
}
inline unsigned int __umulhi(unsigned int x, unsigned int y) {
  return static_cast<unsigned int>((static_cast<unsigned long long>(x) * y) >> 32);
}
inline int __mulhi(int x, int y) { return static_cast<int>((static_cast<long long>(x) * y) >> 32); }
inline unsigned long long __umul64hi(unsigned long long x, unsigned long long y) {
  return static_cast<unsigned long long>((static_cast<unsigned __int128>(x) * y) >> 64);
}
inline long long __mul64hi(long long x, long long y) {
  return static_cast<long long>((static_cast<__int128>(x) * y) >> 64);
}
inline int __mul24(int x, int y) {
  const long long a = static_cast<long long>(static_cast<int>(static_cast<unsigned>(x) << 8) >> 8);
  const long long b = static_cast<long long>(static_cast<int>(static_cast<unsigned>(y) << 8) >> 8);
  return static_cast<int>(static_cast<unsigned int>(a * b));
}
inline unsigned int __umul24(unsigned int x, unsigned int y) { return (x & 0xffffffu) * (y & 0xffffffu); }
inline unsigned int __sad(int x, int y, unsigned int z) {
  return z + static_cast<unsigned int>(x > y ? static_cast<long long>(x) - y : static_cast<long long>(y) - x);
}
inline unsigned int __usad(unsigned int x, unsigned int y, unsigned int z) { return z + (x > y ? x - y : y - x); }
inline int __hadd(int x, int y) { return static_cast<int>((static_cast<long long>(x) + y) >> 1); }
inline int __rhadd(int x, int y) { return static_cast<int>((static_cast<long long>(x) + y + 1) >> 1); }
inline unsigned int __uhadd(unsigned int x, unsigned int y) {
  return static_cast<unsigned int>((static_cast<unsigned long long>(x) + y) >> 1);
}
inline unsigned int __urhadd(unsigned int x, unsigned int y) {
  return static_cast<unsigned int>((static_cast<unsigned long long>(x) + y + 1) >> 1);
}

// ---- CUDA's global min/max overloads (mixed signed/unsigned compare as unsigned, like CUDA) ----
#define BARACUDA_SIM_MINMAX(R, A, B)                                                                  \
  inline R min(A a, B b) { return static_cast<R>(a) < static_cast<R>(b) ? static_cast<R>(a) : static_cast<R>(b); } \
  inline R max(A a, B b) { return static_cast<R>(a) > static_cast<R>(b) ? static_cast<R>(a) : static_cast<R>(b); }
BARACUDA_SIM_MINMAX(int, int, int)
BARACUDA_SIM_MINMAX(unsigned int, unsigned int, unsigned int)
BARACUDA_SIM_MINMAX(unsigned int, int, unsigned int)
BARACUDA_SIM_MINMAX(unsigned int, unsigned int, int)
BARACUDA_SIM_MINMAX(long, long, long)
BARACUDA_SIM_MINMAX(unsigned long, unsigned long, unsigned long)
BARACUDA_SIM_MINMAX(unsigned long, long, unsigned long)
BARACUDA_SIM_MINMAX(unsigned long, unsigned long, long)
BARACUDA_SIM_MINMAX(long long, long long, long long)
BARACUDA_SIM_MINMAX(unsigned long long, unsigned long long, unsigned long long)
BARACUDA_SIM_MINMAX(unsigned long long, long long, unsigned long long)
BARACUDA_SIM_MINMAX(unsigned long long, unsigned long long, long long)
#undef BARACUDA_SIM_MINMAX
inline float min(float a, float b) { return std::fmin(a, b); }
inline float max(float a, float b) { return std::fmax(a, b); }
inline double min(double a, double b) { return std::fmin(a, b); }
inline double max(double a, double b) { return std::fmax(a, b); }
inline double min(float a, double b) { return std::fmin(static_cast<double>(a), b); }
inline double max(float a, double b) { return std::fmax(static_cast<double>(a), b); }
inline double min(double a, float b) { return std::fmin(a, static_cast<double>(b)); }
inline double max(double a, float b) { return std::fmax(a, static_cast<double>(b)); }
inline unsigned int umin(unsigned int a, unsigned int b) { return a < b ? a : b; }
inline unsigned int umax(unsigned int a, unsigned int b) { return a > b ? a : b; }
inline long long llmin(long long a, long long b) { return a < b ? a : b; }
inline long long llmax(long long a, long long b) { return a > b ? a : b; }
inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return a > b ? a : b; }

// ---- cache-hinted loads and stores (plain accesses here), for CUDA's list of types ----
#define BARACUDA_SIM_LDST(T)                                     \
  inline T __ldg(const T* p) { return *p; }                      \
  inline T __ldcg(const T* p) { return *p; }                     \
  inline T __ldca(const T* p) { return *p; }                     \
  inline T __ldcs(const T* p) { return *p; }                     \
  inline T __ldlu(const T* p) { return *p; }                     \
  inline T __ldcv(const T* p) { return *p; }                     \
  inline void __stwb(T* p, T v) { *p = v; }                      \
  inline void __stcg(T* p, T v) { *p = v; }                      \
  inline void __stcs(T* p, T v) { *p = v; }                      \
  inline void __stwt(T* p, T v) { *p = v; }
BARACUDA_SIM_LDST(char)
BARACUDA_SIM_LDST(signed char)
BARACUDA_SIM_LDST(short)
BARACUDA_SIM_LDST(int)
BARACUDA_SIM_LDST(long)
BARACUDA_SIM_LDST(long long)
BARACUDA_SIM_LDST(unsigned char)
BARACUDA_SIM_LDST(unsigned short)
BARACUDA_SIM_LDST(unsigned int)
BARACUDA_SIM_LDST(unsigned long)
BARACUDA_SIM_LDST(unsigned long long)
BARACUDA_SIM_LDST(char2)
BARACUDA_SIM_LDST(char4)
BARACUDA_SIM_LDST(short2)
BARACUDA_SIM_LDST(short4)
BARACUDA_SIM_LDST(int2)
BARACUDA_SIM_LDST(int4)
BARACUDA_SIM_LDST(longlong2)
BARACUDA_SIM_LDST(uchar2)
BARACUDA_SIM_LDST(uchar4)
BARACUDA_SIM_LDST(ushort2)
BARACUDA_SIM_LDST(ushort4)
BARACUDA_SIM_LDST(uint2)
BARACUDA_SIM_LDST(uint4)
BARACUDA_SIM_LDST(ulonglong2)
BARACUDA_SIM_LDST(float)
BARACUDA_SIM_LDST(float2)
BARACUDA_SIM_LDST(float4)
BARACUDA_SIM_LDST(double)
BARACUDA_SIM_LDST(double2)
BARACUDA_SIM_LDST(__half)
BARACUDA_SIM_LDST(__half2)
BARACUDA_SIM_LDST(__nv_bfloat16)
BARACUDA_SIM_LDST(__nv_bfloat162)
#undef BARACUDA_SIM_LDST

}  // namespace device_api
}  // namespace baracuda::simt

// glibc's <math.h> declares (but does not export) C functions named like these CUDA intrinsics, so they
// are defined here with C linkage, matching those declarations, instead of in device_api.
extern "C" {
inline float __expf(float x) noexcept { return ::expf(x); }
inline float __exp10f(float x) noexcept { return ::exp10f(x); }
inline float __logf(float x) noexcept { return ::logf(x); }
inline float __log2f(float x) noexcept { return ::log2f(x); }
inline float __log10f(float x) noexcept { return ::log10f(x); }
inline float __sinf(float x) noexcept { return ::sinf(x); }
inline float __cosf(float x) noexcept { return ::cosf(x); }
inline float __tanf(float x) noexcept { return ::tanf(x); }
inline void __sincosf(float x, float* s, float* c) noexcept { ::sincosf(x, s, c); }
inline float __powf(float x, float y) noexcept { return ::powf(x, y); }
}
