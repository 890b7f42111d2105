// Math and integer intrinsics of the emulator against independent references: bit loops for the integer
// intrinsics, the FPU's rounding modes (fesetround) for directed rounding, exact integer arithmetic for
// the 16-bit fused multiply-add. Compiled with -frounding-math.
#include <gtest/gtest.h>

#include <cfenv>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <limits>
#include <random>
#include <vector>

#include "selftest_kernels.hpp"

namespace {

// ---------------------------------------------------------------------------------------------------
// Integer intrinsics
// ---------------------------------------------------------------------------------------------------

std::uint64_t bitcount(std::uint64_t v) {
  std::uint64_t n = 0;
  for (; v; v >>= 1) n += v & 1;
  return n;
}
std::uint64_t leading_zeros(std::uint64_t v, int bits) {
  std::uint64_t n = 0;
  for (int b = bits - 1; b >= 0 && ((v >> b) & 1) == 0; --b) ++n;
  return n;
}
std::uint64_t first_set(std::uint64_t v, int bits) {
  for (int b = 0; b < bits; ++b)
    if ((v >> b) & 1) return static_cast<std::uint64_t>(b + 1);
  return 0;
}
std::uint64_t reverse(std::uint64_t v, int bits) {
  std::uint64_t r = 0;
  for (int b = 0; b < bits; ++b)
    if ((v >> b) & 1) r |= std::uint64_t{1} << (bits - 1 - b);
  return r;
}
// 64x64 -> high 64 bits from four 32x32 products.
std::uint64_t mul_high(std::uint64_t a, std::uint64_t b) {
  const std::uint64_t al = a & 0xffffffffu, ah = a >> 32, bl = b & 0xffffffffu, bh = b >> 32;
  const std::uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
  const std::uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
  return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}

TEST(SimMath, IntegerIntrinsics) {
  std::mt19937 rng(8);
  std::vector<unsigned> a, b, s;
  const unsigned specials[] = {0u, 1u, 0xffffffffu, 0x80000000u, 0x7fffffffu, 0x00800000u, 0xff800000u, 12345u};
  for (unsigned x : specials)
    for (unsigned y : specials) {
      a.push_back(x);
      b.push_back(y);
      s.push_back(static_cast<unsigned>(rng() % 40));
    }
  for (int i = 0; i < 2000; ++i) {
    a.push_back(static_cast<unsigned>(rng()));
    b.push_back(static_cast<unsigned>(rng()));
    s.push_back(i % 2 ? static_cast<unsigned>(rng()) : static_cast<unsigned>(rng() % 40));
  }
  const int n = static_cast<int>(a.size());
  std::vector<unsigned long long> out(static_cast<std::size_t>(n) * simtest::kIntOps);
  const auto err = simtest::int_intrinsics(a.data(), b.data(), s.data(), out.data(), n);
  ASSERT_FALSE(err.failed) << err.message;
  for (int i = 0; i < n; ++i) {
    const std::uint32_t x = a[i], y = b[i], z = s[i];
    const std::uint64_t xy = (std::uint64_t{x} << 32) | y, yz = (std::uint64_t{y} << 32) | z;
    const std::int64_t sx = static_cast<std::int32_t>(x), sy = static_cast<std::int32_t>(y);
    std::uint64_t e[simtest::kIntOps];
    e[0] = bitcount(x);
    e[1] = bitcount(xy);
    e[2] = leading_zeros(x, 32);
    e[3] = leading_zeros(xy, 64);
    e[4] = first_set(x, 32);
    e[5] = first_set(xy, 64);
    e[6] = reverse(x, 32);
    e[7] = reverse(xy, 64);
    {  // __byte_perm: result byte k is byte (z >> 4k) & 7 of {y, x}
      std::uint32_t r = 0;
      for (int k = 0; k < 4; ++k) {
        const unsigned sel = (z >> (4 * k)) & 7u;
        const std::uint32_t byte = sel < 4 ? (x >> (8 * sel)) & 0xffu : (y >> (8 * (sel - 4))) & 0xffu;
        r |= byte << (8 * k);
      }
      e[8] = r;
    }
    const std::uint64_t hilo = (std::uint64_t{y} << 32) | x;  // __funnelshift_*(lo = x, hi = y, shift = z)
    e[9] = static_cast<std::uint32_t>((hilo << (z & 31)) >> 32);
    e[10] = static_cast<std::uint32_t>(z >= 32 ? x : static_cast<std::uint32_t>((hilo << z) >> 32));
    e[11] = static_cast<std::uint32_t>(hilo >> (z & 31));
    e[12] = static_cast<std::uint32_t>(z >= 32 ? y : static_cast<std::uint32_t>(hilo >> z));
    e[13] = static_cast<std::uint32_t>((std::uint64_t{x} * y) >> 32);
    e[14] = static_cast<std::uint32_t>(static_cast<std::uint64_t>(sx * sy) >> 32);
    e[15] = mul_high(xy, yz);
    e[16] = std::min(x, y);
    e[17] = static_cast<std::uint32_t>(std::max(sx, sy));
    e[18] = static_cast<std::uint32_t>(z + static_cast<std::uint32_t>(sx > sy ? sx - sy : sy - sx));
    {
      const std::int64_t x24 = static_cast<std::int64_t>(static_cast<std::int32_t>(x << 8) >> 8);
      const std::int64_t y24 = static_cast<std::int64_t>(static_cast<std::int32_t>(y << 8) >> 8);
      e[19] = static_cast<std::uint32_t>(static_cast<std::uint64_t>(x24 * y24));
    }
    for (int k = 0; k < simtest::kIntOps; ++k)
      ASSERT_EQ(out[static_cast<std::size_t>(i) * simtest::kIntOps + k], e[k])
          << "op " << k << " x " << std::hex << x << " y " << y << " z " << z;
  }
}

// ---------------------------------------------------------------------------------------------------
// Float conversions and directed rounding
// ---------------------------------------------------------------------------------------------------

template <class F>
double rounded(int mode, F f) {
  const int old = std::fegetround();
  std::fesetround(mode);
  const volatile double r = f();
  std::fesetround(old);
  return r;
}

template <class I>
double cvt(float x, int mode) {  // PTX cvt: round, saturate, NaN -> 0
  if (std::isnan(x)) return 0;
  const double r = rounded(mode, [&] {
    volatile double v = x;
    return std::nearbyint(v);
  });
  if (r <= static_cast<double>(std::numeric_limits<I>::min())) return static_cast<double>(std::numeric_limits<I>::min());
  if (r >= static_cast<double>(std::numeric_limits<I>::max())) return static_cast<double>(std::numeric_limits<I>::max());
  return static_cast<double>(static_cast<long long>(r));  // an integer: no -0
}

bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b)); }

TEST(SimMath, FloatConversionsAndDirectedRounding) {
  std::mt19937 rng(9);
  const float specials[] = {0.0f, -0.0f, 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 1e-45f, -1e-45f, 1e30f, -1e30f,
                            3e9f, -3e9f, 2147483520.0f, 2147483648.0f, 4294967296.0f, INFINITY, -INFINITY, NAN,
                            FLT_MAX, -FLT_MAX, FLT_MIN, 1.0f / 3.0f, 1e-20f};
  std::vector<float> xs, ys;
  for (float x : specials)
    for (float y : {1.0f, -3.0f, 0.1f, 7.0f, FLT_MAX, 1e-30f, 0.0f, 3e-39f}) {
      xs.push_back(x);
      ys.push_back(y);
    }
  std::uniform_real_distribution<float> uni(-1000.0f, 1000.0f);
  for (int i = 0; i < 3000; ++i) {
    std::uint32_t bits = static_cast<std::uint32_t>(rng());
    float x;
    std::memcpy(&x, &bits, 4);
    xs.push_back(i % 3 == 0 ? x : uni(rng));
    bits = static_cast<std::uint32_t>(rng());
    std::memcpy(&x, &bits, 4);
    ys.push_back(i % 5 == 0 ? x : uni(rng));
  }
  const int n = static_cast<int>(xs.size());
  std::vector<double> out(static_cast<std::size_t>(n) * simtest::kFloatOps);
  const auto err = simtest::float_intrinsics(xs.data(), ys.data(), out.data(), n);
  ASSERT_FALSE(err.failed) << err.message;
  for (int i = 0; i < n; ++i) {
    const float x = xs[i], y = ys[i];
    const double* o = &out[static_cast<std::size_t>(i) * simtest::kFloatOps];
    auto op = [&](int mode, auto f) { return rounded(mode, f); };
    auto fx = [&] { volatile float v = x; return v; };
    auto fy = [&] { volatile float v = y; return v; };
    double e[simtest::kFloatOps];
    e[0] = cvt<int>(x, FE_TONEAREST);
    e[1] = cvt<int>(x, FE_TOWARDZERO);
    e[2] = cvt<int>(x, FE_DOWNWARD);
    e[3] = cvt<int>(x, FE_UPWARD);
    e[4] = cvt<unsigned>(x, FE_TONEAREST);
    e[5] = cvt<long long>(x, FE_TONEAREST);
    e[6] = op(FE_TONEAREST, [&] { return static_cast<double>(static_cast<float>(fx() + fy())); });
    e[7] = op(FE_TOWARDZERO, [&] { return static_cast<double>(static_cast<float>(fx() + fy())); });
    e[8] = op(FE_DOWNWARD, [&] { return static_cast<double>(static_cast<float>(fx() + fy())); });
    e[9] = op(FE_UPWARD, [&] { return static_cast<double>(static_cast<float>(fx() + fy())); });
    e[10] = op(FE_TOWARDZERO, [&] { return static_cast<double>(static_cast<float>(fx() * fy())); });
    e[11] = op(FE_DOWNWARD, [&] { return static_cast<double>(static_cast<float>(fx() * fy())); });
    e[12] = op(FE_UPWARD, [&] { return static_cast<double>(static_cast<float>(fx() * fy())); });
    e[13] = op(FE_TOWARDZERO, [&] { return static_cast<double>(static_cast<float>(fx() / fy())); });
    e[14] = op(FE_UPWARD, [&] { return static_cast<double>(static_cast<float>(fx() / fy())); });
    e[15] = op(FE_DOWNWARD, [&] { return static_cast<double>(std::sqrt(std::fabs(fx()))); });
    e[16] = op(FE_UPWARD, [&] { return static_cast<double>(static_cast<float>(1.0f / fx())); });
    {
      std::int32_t bits;
      std::memcpy(&bits, &x, 4);
      e[17] = op(FE_TOWARDZERO, [&] { volatile std::int32_t v = bits; return static_cast<double>(static_cast<float>(v)); });
    }
    {
      volatile double d = static_cast<double>(x) * 1.1;  // rounded to nearest, as in the kernel (volatile: not
                                                          // moved past fesetround)
      e[18] = op(FE_DOWNWARD, [&] {
        const double v = d;
        return static_cast<double>(static_cast<float>(v));
      });
    }
    e[19] = std::isnan(x) ? 0.0 : std::fmin(std::fmax(static_cast<double>(x), 0.0), 1.0);
    e[20] = 1.0 / std::sqrt(std::fabs(static_cast<double>(x)));
    {
      std::uint32_t bits;
      std::memcpy(&bits, &x, 4);
      e[21] = bits;
    }
    e[22] = std::exp(std::fmin(std::fmax(static_cast<double>(x), -80.0), 80.0));
    e[23] = std::fmaf(x, y, 1.0f);
    for (int k = 0; k < simtest::kFloatOps; ++k) {
      if (k == 20 || k == 22) {  // approximate functions: relative tolerance (the GPU's are coarser still)
        if (!std::isnan(x) && std::isfinite(e[k]) && e[k] > 1e-37 && e[k] < 1e37) {
          EXPECT_NEAR(o[k] / e[k], 1.0, 1e-6) << std::setprecision(17) << "op " << k << " x " << x << " got " << o[k] << " expected " << e[k];
        }
        continue;
      }
      ASSERT_TRUE(same(o[k], e[k])) << std::setprecision(17) << "op " << k << " x " << x << " y " << y << ": got " << o[k] << " expected "
                                   << e[k];
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// 16-bit fused multiply-add, against exact integer arithmetic
// ---------------------------------------------------------------------------------------------------

// A finite binary value m * 2^e with integer m.
struct Exact {
  std::int64_t m;
  int e;
};
Exact decompose(float f) {
  int e = 0;
  const double fr = std::frexp(static_cast<double>(f), &e);  // f = fr * 2^e, |fr| in [0.5, 1)
  Exact x{static_cast<std::int64_t>(std::ldexp(fr, 40)), e - 40};
  while (x.m != 0 && (x.m & 1) == 0) {  // keep the significand small: few bits, large exponent
    x.m /= 2;
    ++x.e;
  }
  return x;
}

// Rounds the exact value s * 2^unit to a float with `p` significant bits (round to nearest even), the
// exponent of its last bit at least `emin` (subnormals), giving +-inf beyond `max_finite`.
float round_exact(__int128 s, int unit, int p, int emin, double max_finite) {
  if (s == 0) return 0.0f;
  const bool neg = s < 0;
  unsigned __int128 mag = neg ? static_cast<unsigned __int128>(-s) : static_cast<unsigned __int128>(s);
  int msb = 127;
  while (((mag >> msb) & 1) == 0) --msb;
  int lsb_exp = msb + unit - (p - 1);  // exponent of the last kept bit
  if (lsb_exp < emin) lsb_exp = emin;
  const int drop = lsb_exp - unit;
  unsigned __int128 q = mag;
  if (drop > 0) {
    const unsigned __int128 rem = mag & ((static_cast<unsigned __int128>(1) << drop) - 1);
    const unsigned __int128 half = static_cast<unsigned __int128>(1) << (drop - 1);
    q = mag >> drop;
    if (rem > half || (rem == half && (q & 1))) ++q;
  } else {  // exact
    lsb_exp = unit;
  }
  const double v = std::ldexp(static_cast<double>(static_cast<std::uint64_t>(q)), lsb_exp);
  if (v > max_finite) return neg ? -INFINITY : INFINITY;
  return static_cast<float>(neg ? -v : v);
}

float exact_fma(float a, float b, float c, int p, int emin, double max_finite) {
  const Exact ea = decompose(a), eb = decompose(b), ec = decompose(c);
  const int unit = std::min(ea.e + eb.e, ec.e);
  const __int128 prod = static_cast<__int128>(ea.m) * eb.m;
  const __int128 s = (prod << (ea.e + eb.e - unit)) + (static_cast<__int128>(ec.m) << (ec.e - unit));
  return round_exact(s, unit, p, emin, max_finite);
}

TEST(SimMath, HalfAndBfloat16FmaRoundOnce) {
  std::mt19937 rng(10);
  const int n = 40000;
  std::vector<__half> a(n), b(n), c(n), out(n);
  std::vector<__nv_bfloat16> ab(n), bb(n), cb(n), outb(n);
  auto random_half = [&] {
    std::uint16_t bits;
    do bits = static_cast<std::uint16_t>(rng());
    while ((bits & 0x7c00u) == 0x7c00u);  // finite only
    return __ushort_as_half(bits);
  };
  auto random_bf16 = [&] {  // moderate exponents, so that the exact reference fits in 128 bits
    const float mant = 1.0f + static_cast<float>(rng() % 128) / 128.0f;
    const float v = std::ldexp(mant, static_cast<int>(rng() % 40) - 20) * (rng() % 2 ? 1.0f : -1.0f);
    return __float2bfloat16_rz(v);
  };
  for (int i = 0; i < n; ++i) {
    a[i] = random_half();
    b[i] = random_half();
    c[i] = random_half();
    if (i % 4 == 0) {  // near-cancellation: c = -round(a*b) (+- a few ulps)
      const __half cancel = __float2half(-__half2float(a[i]) * __half2float(b[i]));
      if (!__hisinf(cancel)) c[i] = cancel;
    }
    ab[i] = random_bf16();
    bb[i] = random_bf16();
    cb[i] = i % 4 == 0 ? __float2bfloat16(-__bfloat162float(ab[i]) * __bfloat162float(bb[i])) : random_bf16();
  }
  const auto err = simtest::half_fma(a.data(), b.data(), c.data(), out.data(), ab.data(), bb.data(), cb.data(),
                                     outb.data(), n);
  ASSERT_FALSE(err.failed) << err.message;
  int checked = 0;
  for (int i = 0; i < n; ++i) {
    const float fa = __half2float(a[i]), fb = __half2float(b[i]), fc = __half2float(c[i]);
    const float ref = exact_fma(fa, fb, fc, 11, -24, 65519.999);
    const __half expect = __float2half_rn(ref);  // exact: ref already has half precision
    ASSERT_EQ(__half_as_ushort(out[i]) & (ref == 0 ? 0x7fffu : 0xffffu),
              __half_as_ushort(expect) & (ref == 0 ? 0x7fffu : 0xffffu))
        << "__hfma(" << fa << ", " << fb << ", " << fc << ")";
    const float ga = __bfloat162float(ab[i]), gb = __bfloat162float(bb[i]), gc = __bfloat162float(cb[i]);
    const float refb = exact_fma(ga, gb, gc, 8, -133, 3.4e38);
    const __nv_bfloat16 expectb = __float2bfloat16_rn(refb);
    ASSERT_EQ(__bfloat16_as_ushort(outb[i]) & (refb == 0 ? 0x7fffu : 0xffffu),
              __bfloat16_as_ushort(expectb) & (refb == 0 ? 0x7fffu : 0xffffu))
        << "bf16 __hfma(" << ga << ", " << gb << ", " << gc << ")";
    ++checked;
  }
  EXPECT_GT(checked, n / 2);
}

TEST(SimMath, HalfMathAndConversions) {
  std::mt19937 rng(11);
  const int n = 3000;
  std::vector<__half> h(n);
  std::vector<__nv_bfloat16> bf(n);
  std::uniform_real_distribution<float> uni(-12.0f, 12.0f);
  for (int i = 0; i < n; ++i) {
    h[i] = __float2half(i < 8 ? static_cast<float>(i) - 3.5f : uni(rng));
    bf[i] = __float2bfloat16(uni(rng));
  }
  std::vector<float> out(static_cast<std::size_t>(n) * simtest::kHalfOps);
  const auto err = simtest::half_math(h.data(), bf.data(), out.data(), n);
  ASSERT_FALSE(err.failed) << err.message;
  auto to_half = [](double v) { return __half2float(__float2half_rn(static_cast<float>(v))); };
  auto to_bf16 = [](double v) { return __bfloat162float(__float2bfloat16_rn(static_cast<float>(v))); };
  for (int i = 0; i < n; ++i) {
    const double x = __half2float(h[i]), ax = std::fabs(x), y = __bfloat162float(bf[i]);
    const float* o = &out[static_cast<std::size_t>(i) * simtest::kHalfOps];
    auto near = [&](float got, double want, double rel) {
      if (std::isinf(want) || std::isnan(want)) return;
      EXPECT_NEAR(got, want, std::fabs(want) * rel + 1e-7) << "x " << x << " y " << y;
    };
    near(o[0], to_half(std::exp(x)), 1.0 / 1024);  // within one half ulp of the rounded value
    if (ax > 0) near(o[1], to_half(std::log(ax)), 1.0 / 1024);
    EXPECT_EQ(o[2], to_half(std::sqrt(ax))) << x;
    if (x != 0) {
      EXPECT_EQ(o[3], to_half(1.0 / x)) << x;
    }
    if (ax > 0) near(o[4], to_half(1.0 / std::sqrt(ax)), 1.0 / 1024);
    EXPECT_EQ(o[5], std::floor(x));
    EXPECT_EQ(o[6], std::ceil(x));
    EXPECT_EQ(o[7], std::nearbyint(x));
    EXPECT_EQ(o[8], std::trunc(x));
    EXPECT_EQ(o[9], std::nearbyint(x));
    EXPECT_EQ(o[10], std::floor(x));
    EXPECT_EQ(o[11], std::ceil(x));
    near(o[12], to_bf16(std::exp(y)), 1.0 / 128);
    EXPECT_EQ(o[13], std::nearbyint(y));
    {  // integer -> bf16 with directed rounding; k is exact in float, so CUDA's float -> bf16 is the reference
      const int k = static_cast<int>(static_cast<float>(y) * 1000.0f);
      EXPECT_EQ(o[14], __bfloat162float(__float2bfloat16_rz(static_cast<float>(k)))) << k;
      EXPECT_EQ(o[15], __bfloat162float(__float2bfloat16_ru(static_cast<float>(k)))) << k;
    }
  }
}

}  // namespace
