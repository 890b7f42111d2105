// Numerics probes: CUDA math functions whose results the CUDA documentation and IEEE 754 pin down, checked on the
// emulator against independent references (exact values, or long double with an exact argument reduction).
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "numerics_kernels.hpp"

namespace {

// The exact sin(πx) and cos(πx) at an integer or half-integer x.
struct Exact {
  double sin, cos;
};

// IEEE 754-2008, 9.2.1 ("Special values"): sinPi(+n) is +0 and sinPi(-n) is -0 for positive integers n (and
// sinPi(±0) is ±0, which the CUDA Math API also states); cosPi(n) is (-1)^n.
Exact at_integer(double n) { return {std::copysign(0.0, n), std::fmod(n, 2.0) == 0 ? 1.0 : -1.0}; }

// IEEE 754-2008, 9.2.1: cosPi(n + 1/2) is +0 for any integer n; sin(π(k + 1/2)) = cos(πk) = (-1)^k.
Exact at_half(double h) {
  const double k = std::floor(h);
  return {std::fmod(k, 2.0) == 0 ? 1.0 : -1.0, 0.0};
}

bool identical(double got, double want) { return got == want && std::signbit(got) == std::signbit(want); }

std::vector<double> integers() {
  return {0.0, -0.0, 1, -1, 2, -2, 3, -3, 4, -5, 17, 1000, -1001, 123456, 0x1p22, 0x1p22 + 1, -0x1p23 - 1, 0x1p24,
          -0x1p24 - 2, 0x1p30, 0x1p100};
}
std::vector<double> half_integers() {
  return {0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, 1000.5, -1001.5, 0x1p22 + 0.5, -(0x1p23 - 0.5)};
}

// sinpif(1), cospif(0.5), sinpi(3), ...: zeros are exactly ±0 with IEEE 754's sign, and ±1 exactly ±1. The CUDA
// Math API (sinpi, cospi and their f and sincos variants) cites IEEE 754 for these functions; a sin(M_PI * x)
// gives 1.2e-16 at x = 1, 6.1e-17 for cospi(0.5).
TEST(SimNumerics, PiTrigIsExactAtIntegersAndHalfIntegers) {
  std::vector<double> xd, want_s, want_c;
  auto add = [&](double x, Exact e) {
    xd.push_back(x);
    want_s.push_back(e.sin);
    want_c.push_back(e.cos);
  };
  for (double n : integers()) add(n, at_integer(n));
  for (double h : half_integers()) add(h, at_half(h));
  for (double n : {FLT_MAX, -FLT_MAX}) add(n, at_integer(n));
  const std::size_t n_float = xd.size();  // the cases so far are floats too
  for (double n : {0x1p52 + 1, 0x1p53, -0x1p53 - 2, 0x1p1000, DBL_MAX, -DBL_MAX}) add(n, at_integer(n));
  for (double h : {0x1p51 + 0.5, -(0x1p52 - 0.5)}) add(h, at_half(h));

  std::vector<float> xf(xd.begin(), xd.begin() + static_cast<long>(n_float));
  std::vector<float> of(xf.size() * simtest::kPiTrigOps);
  auto err = simtest::pi_trig_float(xf.data(), of.data(), static_cast<int>(xf.size()));
  ASSERT_FALSE(err.failed) << err.message;
  const char* names_f[] = {"sinpif", "cospif", "sincospif (sin)", "sincospif (cos)"};
  for (std::size_t i = 0; i < xf.size(); ++i)
    for (int k = 0; k < simtest::kPiTrigOps; ++k) {
      const double want = k % 2 == 0 ? want_s[i] : want_c[i];
      const double got = of[i * simtest::kPiTrigOps + k];
      EXPECT_TRUE(identical(got, want)) << names_f[k] << "(" << xf[i] << ") = " << got << ", want " << want;
    }

  std::vector<double> od(xd.size() * simtest::kPiTrigOps);
  err = simtest::pi_trig_double(xd.data(), od.data(), static_cast<int>(xd.size()));
  ASSERT_FALSE(err.failed) << err.message;
  const char* names_d[] = {"sinpi", "cospi", "sincospi (sin)", "sincospi (cos)"};
  for (std::size_t i = 0; i < xd.size(); ++i)
    for (int k = 0; k < simtest::kPiTrigOps; ++k) {
      const double want = k % 2 == 0 ? want_s[i] : want_c[i];
      const double got = od[i * simtest::kPiTrigOps + k];
      EXPECT_TRUE(identical(got, want)) << names_d[k] << "(" << xd[i] << ") = " << got << ", want " << want;
    }
}

// The CUDA Math API: sinpi(±inf) and cospi(±inf) are NaN, as are the functions of NaN.
TEST(SimNumerics, PiTrigOfInfinityIsNaN) {
  const std::vector<double> xd = {INFINITY, -INFINITY, NAN};
  const std::vector<float> xf(xd.begin(), xd.end());
  std::vector<float> of(xf.size() * simtest::kPiTrigOps);
  std::vector<double> od(xd.size() * simtest::kPiTrigOps);
  ASSERT_FALSE(simtest::pi_trig_float(xf.data(), of.data(), static_cast<int>(xf.size())).failed);
  ASSERT_FALSE(simtest::pi_trig_double(xd.data(), od.data(), static_cast<int>(xd.size())).failed);
  for (float v : of) EXPECT_TRUE(std::isnan(v));
  for (double v : od) EXPECT_TRUE(std::isnan(v));
}

constexpr long double kPiL = 3.141592653589793238462643383279502884L;

struct ExactL {
  long double sin, cos;
};

// sin(πx) and cos(πx) in long double with an exact reduction x = n + d (n an integer, |d| <= 1/2): the product
// π·|d| (or π·(1/2 - |d|)) is then accurate to long double precision relative to the result, also next to the
// zeros of sin and cos.
ExactL reference(long double x) {
  const long double n = std::round(x);
  const long double d = x - n;  // exact
  const long double ad = std::fabs(d);
  long double s, c;  // sin(π|d|), cos(π|d|)
  if (ad <= 0.25L) {
    s = std::sin(kPiL * ad), c = std::cos(kPiL * ad);
  } else {
    const long double r = 0.5L - ad;  // exact
    s = std::cos(kPiL * r), c = std::sin(kPiL * r);
  }
  const long double sign = std::fmod(n, 2.0L) == 0 ? 1.0L : -1.0L;
  return {sign * std::copysign(s, d), sign * c};
}

// |got - want| in units of the last place of T at want.
template <class T>
double ulp_error(T got, long double want) {
  const int e = std::max(std::ilogb(want), std::numeric_limits<T>::min_exponent - 1);
  const long double ulp = std::ldexp(1.0L, e - (std::numeric_limits<T>::digits - 1));
  return static_cast<double>(std::fabs(static_cast<long double>(got) - want) / ulp);
}

// Arguments away from the exact points: random ones, and the floating-point neighbours of integers and
// half-integers, where sin(M_PI * x) loses the most.
template <class T>
std::vector<T> inexact_arguments() {
  std::vector<T> xs;
  std::mt19937 rng(15);
  std::uniform_real_distribution<T> uni(T(-8), T(8));
  for (int i = 0; i < 2000; ++i) xs.push_back(uni(rng));
  for (T base : {T(1), T(2), T(3), T(-1), T(-4), T(0.5), T(1.5), T(-0.5), T(-2.5), T(1000), T(1000.5), T(0x1p20)})
    for (T dir : {std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity()}) {
      T x = base;
      for (int k = 0; k < 4; ++k) xs.push_back(x = std::nextafter(x, dir));
    }
  for (T tiny : {std::numeric_limits<T>::denorm_min(), std::numeric_limits<T>::min(), T(1e-20)})
    xs.insert(xs.end(), {tiny, -tiny});
  xs.erase(std::remove_if(xs.begin(), xs.end(), [](T x) { return T(2) * x == std::floor(T(2) * x); }), xs.end());
  return xs;
}

// The largest error of each of the kPiTrigOps results over `xs`, in ulps, and an argument where it occurs.
template <class T>
void expect_pi_trig_within(const std::vector<T>& xs, const std::vector<T>& out, double bound, const char* type) {
  for (int k = 0; k < simtest::kPiTrigOps; ++k) {
    double worst = 0;
    T worst_x = 0, worst_got = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const ExactL want = reference(xs[i]);
      const T got = out[i * simtest::kPiTrigOps + k];
      const double e = ulp_error(got, k % 2 == 0 ? want.sin : want.cos);
      if (!(e <= worst)) worst = e, worst_x = xs[i], worst_got = got;
    }
    EXPECT_LE(worst, bound) << type << " op " << k << " (sin, cos, sincos's sin, sincos's cos): worst at x = "
                            << std::hexfloat << worst_x << ", got " << worst_got;
  }
}

// The Guide, "Mathematical Functions" appendix: maximum error 1 ulp for sinpif, cospif and sincospif
// ("Single-Precision Floating-Point Functions"), 2 ulp for sinpi, cospi and sincospi ("Double-Precision").
TEST(SimNumerics, PiTrigIsWithinTheGuidesErrorBounds) {
  const auto xf = inexact_arguments<float>();
  std::vector<float> of(xf.size() * simtest::kPiTrigOps);
  auto err = simtest::pi_trig_float(xf.data(), of.data(), static_cast<int>(xf.size()));
  ASSERT_FALSE(err.failed) << err.message;
  expect_pi_trig_within(xf, of, 1.0, "float");
  const auto xd = inexact_arguments<double>();
  std::vector<double> od(xd.size() * simtest::kPiTrigOps);
  err = simtest::pi_trig_double(xd.data(), od.data(), static_cast<int>(xd.size()));
  ASSERT_FALSE(err.failed) << err.message;
  expect_pi_trig_within(xd, od, 2.0, "double");
}

// __fdividef: the Programming Guide ("Intrinsic Functions") and the CUDA Math API: for 2^126 < |y| < 2^128,
// __fdividef(x, y) delivers 0 for finite x and NaN for x = ±inf (x times an approximate reciprocal of y that
// is flushed to zero there), where x / y gives a subnormal or infinity. For |y| in [2^-126, 2^126] it is x / y
// within 2 ulp.
TEST(SimNumerics, FastDivideByHugeDivisors) {
  const float huge_y[] = {0x1.000002p126f, -0x1.000002p126f, 0x1p127f, -0x1p127f, 3e38f, FLT_MAX, -FLT_MAX};
  const float finite_x[] = {1.0f, -1.0f, 0.0f, -0.0f, 1e30f, -3e38f, FLT_MAX, 1e-45f, 0x1p126f};
  std::vector<float> x, y;
  for (float b : huge_y) {
    for (float a : finite_x) x.push_back(a), y.push_back(b);
    for (float a : {INFINITY, -INFINITY}) x.push_back(a), y.push_back(b);
  }
  const std::size_t n_special = x.size();
  // Outside that range __fdividef is the quotient (here computed correctly rounded).
  const float other_y[] = {0x1p126f, -0x1p126f, 1e10f, -3.0f, 0x1p-126f, INFINITY, -INFINITY};
  for (float b : other_y)
    for (float a : {1.0f, -7.5f, 3e38f, 0.0f, INFINITY}) x.push_back(a), y.push_back(b);

  std::vector<float> out(x.size());
  const auto err = simtest::fast_divide(x.data(), y.data(), out.data(), static_cast<int>(x.size()));
  ASSERT_FALSE(err.failed) << err.message;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double q = static_cast<double>(x[i]) / static_cast<double>(y[i]);  // exact enough: a double quotient
    const float qf = static_cast<float>(q);
    if (i < n_special) {
      if (std::isinf(x[i]))
        EXPECT_TRUE(std::isnan(out[i])) << "__fdividef(" << x[i] << ", " << y[i] << ") = " << out[i];
      else
        EXPECT_EQ(out[i], 0.0f) << "__fdividef(" << x[i] << ", " << y[i] << ")";
    } else if (std::isnan(q)) {
      EXPECT_TRUE(std::isnan(out[i])) << "__fdividef(" << x[i] << ", " << y[i] << ") = " << out[i];
    } else if (std::isinf(qf) || qf == 0) {  // an infinite or zero quotient, or one that overflows float
      EXPECT_EQ(out[i], qf) << "__fdividef(" << x[i] << ", " << y[i] << ")";
    } else {
      EXPECT_LE(ulp_error(out[i], q), 2.0) << "__fdividef(" << x[i] << ", " << y[i] << ") = " << out[i];
    }
  }
}

// PTX ISA, "Logic and Shift Instructions" (shl, shr): shift amounts greater than the register width N are clamped
// to N; shl and unsigned shr fill with 0, signed shr with the sign bit. The reference shifts one bit at a time.
std::uint64_t ptx_shift(std::uint64_t v, unsigned amount, int width, bool left, bool fill_sign) {
  const std::uint64_t mask = width == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width) - 1;
  const std::uint64_t top = std::uint64_t{1} << (width - 1);
  v &= mask;
  for (unsigned k = 0; k < std::min<unsigned>(amount, static_cast<unsigned>(width)); ++k)
    v = left ? (v << 1) & mask : (v >> 1) | (fill_sign ? v & top : 0);
  return v;
}

TEST(SimNumerics, ShiftHelpersClampTheAmountLikePtx) {
  std::vector<unsigned long long> x;
  std::vector<unsigned> amount;
  for (unsigned long long v : {0x0ull, 0x1ull, 0x80000001ull, 0xdeadbeefcafef00dull, 0x7fffffffffffffffull,
                               0xffffffffffffffffull, 0x123456789ull})
    for (unsigned s : {0u, 1u, 4u, 31u, 32u, 33u, 40u, 63u, 64u, 65u, 100u, 0x80000000u, 0xffffffffu}) {
      x.push_back(v);
      amount.push_back(s);
    }
  std::vector<unsigned long long> out(x.size() * simtest::kShiftOps);
  const auto err = simtest::shifts(x.data(), amount.data(), out.data(), static_cast<int>(x.size()));
  ASSERT_FALSE(err.failed) << err.message;
  const char* names[] = {"left u32", "right u32", "left s32", "right s32",
                         "left u64", "right u64", "left s64", "right s64"};
  for (std::size_t i = 0; i < x.size(); ++i)
    for (int k = 0; k < simtest::kShiftOps; ++k) {
      const int width = k < 4 ? 32 : 64;
      const bool left = k % 2 == 0, fill_sign = k == 3 || k == 7;
      EXPECT_EQ(out[i * simtest::kShiftOps + k], ptx_shift(x[i], amount[i], width, left, fill_sign))
          << names[k] << " of " << std::hex << x[i] << " by " << std::dec << amount[i];
    }
}

}  // namespace
