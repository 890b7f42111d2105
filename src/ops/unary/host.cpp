// The unary family's host reference: every op written again, independently of the device functors, in
// long double with std:: math (x87 extended precision: every f64 input is exact and most results are
// correct to well below an f64 ulp), then rounded once to the element type by the cast family's reference
// formats. It follows the same documented conventions (branches at kinks and NaN, the parameters rounded
// to the compute type first) but none of the device code or CUDA math. The ops that are one IEEE
// operation (reciprocal, square, sqrt) compute f64 data in double, whose operation is correctly rounded,
// where long double and a rounding to double would round twice (the f64 policy of docs/testing.md).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "device/host_loop.hpp"
#include "core/reference_formats.hpp"
#include "ops/unary/dispatch.hpp"

namespace baracuda::reference {
namespace {

using LD = long double;

/// The parameters, already rounded to the compute type (f32, or f64 for f64 elements).
struct RP {
  LD negative_slope, alpha, beta, threshold, value, lambd, min_val, max_val, eps;
  bool f64;  ///< the compute type is f64
  /// A value derived from the parameters, rounded to the compute type as the devices compute it.
  LD compute_type(LD v) const { return f64 ? static_cast<LD>(static_cast<double>(v)) : static_cast<LD>(static_cast<float>(v)); }
};

template <class T>
RP rounded_params(const detail::UnaryParamValues& v) {
  constexpr bool f64 = std::is_same_v<T, double>;
  auto r = [&](UnaryParam p) {
    const double d = v[static_cast<size_t>(p)];
    return f64 ? static_cast<LD>(d) : static_cast<LD>(static_cast<float>(d));
  };
  return {r(UnaryParam::NegativeSlope), r(UnaryParam::Alpha),  r(UnaryParam::Beta),
          r(UnaryParam::Threshold),     r(UnaryParam::Value),  r(UnaryParam::Lambd),
          r(UnaryParam::MinVal),        r(UnaryParam::MaxVal), r(UnaryParam::Eps), f64};
}

constexpr LD kNaN = std::numeric_limits<LD>::quiet_NaN();
constexpr LD kInf = std::numeric_limits<LD>::infinity();
constexpr LD kPi = 3.141592653589793238462643383279502884L;
constexpr LD kSqrt2 = 1.414213562373095048801688724209698079L;
constexpr LD kSqrt2Pi = 2.506628274631000502415765284811045253L;  // √(2π)
constexpr LD kSqrtPi = 1.772453850905516027298167483341145183L;

LD sigmoid(LD x) { return 1 / (1 + std::exp(-x)); }
LD sgn(LD x) { return x > 0 ? 1 : (x < 0 ? -1 : 0); }
LD clamp(LD x, LD lo, LD hi) { return x < lo ? lo : (x > hi ? hi : x); }

/// ψ(x): reflection ψ(x) = ψ(1-x) - π/tan(πx) below 0, the recurrence up to x ≥ 20, then the
/// asymptotic series with the Bernoulli numbers B₂…B₁₆. ψ(±0) = ∓inf, NaN at the poles (PyTorch).
LD digamma(LD x) {
  if (x == 0) return std::copysign(kInf, -x);
  if (std::isnan(x)) return x;
  if (x < 0) {
    if (x == std::floor(x)) return kNaN;
    return digamma(1 - x) - kPi / std::tan(kPi * (x - std::nearbyint(x)));
  }
  LD acc = 0;
  while (x < 20) {
    acc -= 1 / x;
    x += 1;
  }
  static const LD b2k[] = {1.0L / 6, -1.0L / 30, 1.0L / 42, -1.0L / 30, 5.0L / 66, -691.0L / 2730, 7.0L / 6,
                           -3617.0L / 510};
  const LD z = 1 / (x * x);
  LD zk = z, series = 0;
  for (int k = 1; k <= 8; ++k, zk *= z) series += b2k[k - 1] / (2 * k) * zk;
  return acc + std::log(x) - 1 / (2 * x) - series;
}

// ---------------------------------------------------------------------------------------------------
// One struct per catalog line, named like its UnaryKind enumerator. forward(x); backward(dy, saved) or
// backward(dy) as the catalog's `saved` says; `zero_gradient` ops write zeros.
// ---------------------------------------------------------------------------------------------------
namespace unary_ref {

struct Neg {
  static LD forward(LD x, const RP&) { return -x; }
  static LD backward(LD dy, const RP&) { return -dy; }
};
struct Abs {
  static LD forward(LD x, const RP&) { return std::fabs(x); }
  static LD backward(LD dy, LD x, const RP&) { return dy * sgn(x); }
};
struct Sign {
  static LD forward(LD x, const RP&) { return sgn(x); }
  static constexpr bool zero_gradient = true;
};
struct Reciprocal {
  static LD forward(LD x, const RP&) { return 1 / x; }
  static double forward_f64(double x) { return 1 / x; }
  static LD backward(LD dy, LD y, const RP&) { return -dy * y * y; }
};
struct Square {
  static LD forward(LD x, const RP&) { return x * x; }
  static double forward_f64(double x) { return x * x; }
  static LD backward(LD dy, LD x, const RP&) { return 2 * x * dy; }
};
struct Sqrt {
  static LD forward(LD x, const RP&) { return std::sqrt(x); }
  static double forward_f64(double x) { return std::sqrt(x); }
  static LD backward(LD dy, LD y, const RP&) { return dy / (2 * y); }
};
struct Rsqrt {
  static LD forward(LD x, const RP&) { return 1 / std::sqrt(x); }
  static LD backward(LD dy, LD y, const RP&) { return -dy * y * y * y / 2; }
};
struct Cbrt {
  static LD forward(LD x, const RP&) { return std::cbrt(x); }
  static LD backward(LD dy, LD y, const RP&) { return dy / (3 * y * y); }
};
struct Exp {
  static LD forward(LD x, const RP&) { return std::exp(x); }
  static LD backward(LD dy, LD y, const RP&) { return dy * y; }
};
struct Exp2 {
  static LD forward(LD x, const RP&) { return std::exp2(x); }
  static LD backward(LD dy, LD y, const RP&) { return dy * y * std::log(2.0L); }
};
struct Expm1 {
  static LD forward(LD x, const RP&) { return std::expm1(x); }
  static LD backward(LD dy, LD y, const RP&) { return dy * (1 + y); }
};
struct Log {
  static LD forward(LD x, const RP&) { return std::log(x); }
  static LD backward(LD dy, LD x, const RP&) { return dy / x; }
};
struct Log2 {
  static LD forward(LD x, const RP&) { return std::log2(x); }
  static LD backward(LD dy, LD x, const RP&) { return dy / (x * std::log(2.0L)); }
};
struct Log10 {
  static LD forward(LD x, const RP&) { return std::log10(x); }
  static LD backward(LD dy, LD x, const RP&) { return dy / (x * std::log(10.0L)); }
};
struct Log1p {
  static LD forward(LD x, const RP&) { return std::log1p(x); }
  static LD backward(LD dy, LD x, const RP&) { return dy / (1 + x); }
};

struct Sin {
  static LD forward(LD x, const RP&) { return std::sin(x); }
  static LD backward(LD dy, LD x, const RP&) { return dy * std::cos(x); }
};
struct Cos {
  static LD forward(LD x, const RP&) { return std::cos(x); }
  static LD backward(LD dy, LD x, const RP&) { return -dy * std::sin(x); }
};
struct Tan {
  static LD forward(LD x, const RP&) { return std::tan(x); }
  static LD backward(LD dy, LD y, const RP&) { return dy * (1 + y * y); }
};
struct Asin {
  static LD forward(LD x, const RP&) { return std::asin(x); }
  static LD backward(LD dy, LD x, const RP&) { return dy / std::sqrt(1 - x * x); }
};
struct Acos {
  static LD forward(LD x, const RP&) { return std::acos(x); }
  static LD backward(LD dy, LD x, const RP&) { return -dy / std::sqrt(1 - x * x); }
};
struct Atan {
  static LD forward(LD x, const RP&) { return std::atan(x); }
  static LD backward(LD dy, LD x, const RP&) { return dy / (1 + x * x); }
};
struct Sinh {
  static LD forward(LD x, const RP&) { return std::sinh(x); }
  static LD backward(LD dy, LD x, const RP&) { return dy * std::cosh(x); }
};
struct Cosh {
  static LD forward(LD x, const RP&) { return std::cosh(x); }
  static LD backward(LD dy, LD x, const RP&) { return dy * std::sinh(x); }
};
struct Tanh {
  static LD forward(LD x, const RP&) { return std::tanh(x); }
  static LD backward(LD dy, LD y, const RP&) { return dy * (1 - y * y); }
};
struct Asinh {
  static LD forward(LD x, const RP&) { return std::asinh(x); }
  static LD backward(LD dy, LD x, const RP&) { return dy / std::sqrt(x * x + 1); }
};
struct Acosh {
  static LD forward(LD x, const RP&) { return std::acosh(x); }
  static LD backward(LD dy, LD x, const RP&) { return dy / std::sqrt(x * x - 1); }
};
struct Atanh {
  static LD forward(LD x, const RP&) { return std::atanh(x); }
  static LD backward(LD dy, LD x, const RP&) { return dy / (1 - x * x); }
};

struct Floor {
  static LD forward(LD x, const RP&) { return std::floor(x); }
  static constexpr bool zero_gradient = true;
};
struct Ceil {
  static LD forward(LD x, const RP&) { return std::ceil(x); }
  static constexpr bool zero_gradient = true;
};
struct Round {
  static LD forward(LD x, const RP&) { return std::nearbyint(x); }  // the default mode: ties to even
  static constexpr bool zero_gradient = true;
};
struct Trunc {
  static LD forward(LD x, const RP&) { return std::trunc(x); }
  static constexpr bool zero_gradient = true;
};
struct Frac {
  static LD forward(LD x, const RP&) { return x - std::trunc(x); }
  static LD backward(LD dy, const RP&) { return dy; }
};

struct Erf {
  static LD forward(LD x, const RP&) { return std::erf(x); }
  static LD backward(LD dy, LD x, const RP&) { return dy * 2 / kSqrtPi * std::exp(-x * x); }
};
struct Erfc {
  static LD forward(LD x, const RP&) { return std::erfc(x); }
  static LD backward(LD dy, LD x, const RP&) { return -dy * 2 / kSqrtPi * std::exp(-x * x); }
};
struct Lgamma {
  static LD forward(LD x, const RP&) { return std::lgamma(x); }
  static LD backward(LD dy, LD x, const RP&) { return dy * digamma(x); }
};

struct Relu {
  static LD forward(LD x, const RP&) { return std::isnan(x) ? x : (x > 0 ? x : 0); }
  static LD backward(LD dy, LD y, const RP&) { return y <= 0 ? 0 : dy; }
};
struct Relu6 {
  static LD forward(LD x, const RP&) { return clamp(x, 0, 6); }
  static LD backward(LD dy, LD x, const RP&) { return (x <= 0 || x >= 6) ? 0 : dy; }
};
struct LeakyRelu {
  static LD forward(LD x, const RP& p) { return x > 0 ? x : p.negative_slope * x; }
  static LD backward(LD dy, LD x, const RP& p) { return x > 0 ? dy : p.negative_slope * dy; }
};
struct Elu {
  static LD forward(LD x, const RP& p) { return x > 0 ? x : p.alpha * std::expm1(x); }
  static LD backward(LD dy, LD x, const RP& p) { return x <= 0 ? dy * p.alpha * std::exp(x) : dy; }
};
struct Selu {
  static constexpr LD kAlpha = 1.6732632423543772848170429916717L;
  static constexpr LD kScale = 1.0507009873554804934193349852946L;
  static LD forward(LD x, const RP&) { return kScale * (x > 0 ? x : kAlpha * std::expm1(x)); }
  static LD backward(LD dy, LD x, const RP&) { return x <= 0 ? dy * kScale * kAlpha * std::exp(x) : dy * kScale; }
};
struct Celu {
  static LD forward(LD x, const RP& p) { return x > 0 ? x : p.alpha * std::expm1(x / p.alpha); }
  static LD backward(LD dy, LD x, const RP& p) { return x <= 0 ? dy * std::exp(x / p.alpha) : dy; }
};
struct Gelu {
  static LD forward(LD x, const RP&) { return x / 2 * std::erfc(-x / kSqrt2); }
  static LD backward(LD dy, LD x, const RP&) {
    return dy * (std::erfc(-x / kSqrt2) / 2 + x * std::exp(-x * x / 2) / kSqrt2Pi);
  }
};
struct GeluTanh {
  static constexpr LD kC = 0.044715L;
  static LD inner(LD x) { return std::sqrt(2 / kPi) * (x + kC * x * x * x); }
  static LD forward(LD x, const RP&) { return x / 2 * (1 + std::tanh(inner(x))); }
  /// x² as the compute type holds it: where it overflows, the gradient is NaN (inf·0), as on the devices
  /// and in PyTorch.
  static LD backward(LD dy, LD x, const RP& p) {
    const LD t = std::tanh(inner(x));
    return dy * ((1 + t) / 2 + x / 2 * (1 - t * t) * std::sqrt(2 / kPi) * (1 + 3 * kC * p.compute_type(x * x)));
  }
};
struct Silu {
  static LD forward(LD x, const RP&) { return x * sigmoid(x); }
  static LD backward(LD dy, LD x, const RP&) {
    const LD s = sigmoid(x);
    return dy * s * (1 + x * (1 - s));
  }
};
struct Mish {
  static LD forward(LD x, const RP&) { return x * std::tanh(std::log1p(std::exp(x))); }
  static LD backward(LD dy, LD x, const RP&) {
    const LD t = std::tanh(std::log1p(std::exp(x)));
    return dy * (t + x * sigmoid(x) * (1 - t * t));
  }
};
struct Sigmoid {
  static LD forward(LD x, const RP&) { return sigmoid(x); }
  static LD backward(LD dy, LD y, const RP&) { return dy * y * (1 - y); }
};
struct Logit {
  static LD forward(LD x, const RP& p) {
    const LD z = p.eps < 0 ? x : clamp(x, p.eps, p.compute_type(1 - p.eps));
    return std::log(z / (1 - z));
  }
  static LD backward(LD dy, LD x, const RP& p) {
    if (p.eps < 0) {
      if (x < 0 || x > 1) return kNaN;
      return (x == 0 || x == 1) ? dy * kInf : dy / (x * (1 - x));
    }
    return (x < p.eps || x > p.compute_type(1 - p.eps)) ? 0 : dy / (x * (1 - x));
  }
};
struct Softplus {
  static LD forward(LD x, const RP& p) {
    const LD z = p.beta * x;
    return z > p.threshold ? x : (std::max(z, 0.0L) + std::log1p(std::exp(-std::fabs(z)))) / p.beta;
  }
  static LD backward(LD dy, LD x, const RP& p) {
    const LD z = p.beta * x;
    return z > p.threshold ? dy : dy * sigmoid(z);
  }
};
struct Softsign {
  static LD forward(LD x, const RP&) { return x / (1 + std::fabs(x)); }
  static LD backward(LD dy, LD x, const RP&) { return dy / ((1 + std::fabs(x)) * (1 + std::fabs(x))); }
};
struct Tanhshrink {
  static LD forward(LD x, const RP&) { return x - std::tanh(x); }
  static LD backward(LD dy, LD x, const RP&) { return dy * std::tanh(x) * std::tanh(x); }
};
struct Hardswish {
  static LD forward(LD x, const RP&) { return x * clamp(x + 3, 0, 6) / 6; }
  static LD backward(LD dy, LD x, const RP&) { return x < -3 ? 0 : (x <= 3 ? dy * (x / 3 + 0.5L) : dy); }
};
struct Hardsigmoid {
  static LD forward(LD x, const RP&) { return clamp(x + 3, 0, 6) / 6; }
  static LD backward(LD dy, LD x, const RP&) { return (x > -3 && x < 3) ? dy / 6 : 0; }
};
struct Hardtanh {
  static LD forward(LD x, const RP& p) { return clamp(x, p.min_val, p.max_val); }
  static LD backward(LD dy, LD x, const RP& p) { return (x <= p.min_val || x >= p.max_val) ? 0 : dy; }
};
struct Hardshrink {
  static LD forward(LD x, const RP& p) { return std::fabs(x) <= p.lambd ? 0 : x; }
  static LD backward(LD dy, LD x, const RP& p) { return std::fabs(x) <= p.lambd ? 0 : dy; }
};
struct Softshrink {
  static LD forward(LD x, const RP& p) {
    if (x > p.lambd) return x - p.lambd;
    if (x < -p.lambd) return x + p.lambd;
    return 0;  // NaN included
  }
  static LD backward(LD dy, LD x, const RP& p) { return std::fabs(x) <= p.lambd ? 0 : dy; }
};
struct Threshold {
  static LD forward(LD x, const RP& p) { return x <= p.threshold ? p.value : x; }
  static LD backward(LD dy, LD x, const RP& p) { return x <= p.threshold ? 0 : dy; }
};

}  // namespace unary_ref

// ---------------------------------------------------------------------------------------------------
// The loops and the table
// ---------------------------------------------------------------------------------------------------

/// An op that is one IEEE operation, evaluated in double for f64 data (the file comment).
template <class Ref>
concept HostSingleOperation = requires(double x) { Ref::forward_f64(x); };

template <class Ref, class T>
Status host_forward(const detail::ExecContext&, const detail::UnaryLaunch& a) {
  const RP p = rounded_params<T>(a.params);
  const auto* in = static_cast<const T*>(a.in.data);
  auto* out = static_cast<T*>(a.out.data);
  detail::for_each_strided<2>(a.out.shape, {a.out.stride.data(), a.in.stride.data()},
                              [&](const std::array<int64_t, 2>& off) {
                                if constexpr (std::is_same_v<T, double> && HostSingleOperation<Ref>)
                                  out[off[0]] = Ref::forward_f64(in[off[1]]);
                                else
                                  out[off[0]] = store<T>(Ref::forward(value_of(in[off[1]]), p));
                              });
  return {};
}

template <class Ref>
concept HostZeroGradient = Ref::zero_gradient;

template <class Ref, class T, UnarySaved S>
Status host_backward(const detail::ExecContext&, const detail::UnaryBackwardLaunch& a) {
  const RP p = rounded_params<T>(a.params);
  const auto* dy = static_cast<const T*>(a.dy.data);
  auto* dx = static_cast<T*>(a.dx.data);
  if constexpr (HostZeroGradient<Ref>) {
    detail::for_each_strided<1>(a.dx.shape, {a.dx.stride.data()},
                                [&](const std::array<int64_t, 1>& off) { dx[off[0]] = store<T>(0); });
  } else if constexpr (S == UnarySaved::None) {
    detail::for_each_strided<2>(a.dx.shape, {a.dx.stride.data(), a.dy.stride.data()},
                                [&](const std::array<int64_t, 2>& off) {
                                  dx[off[0]] = store<T>(Ref::backward(value_of(dy[off[1]]), p));
                                });
  } else {
    const auto* saved = static_cast<const T*>(a.saved.data);
    detail::for_each_strided<3>(
        a.dx.shape, {a.dx.stride.data(), a.dy.stride.data(), a.saved.stride.data()},
        [&](const std::array<int64_t, 3>& off) {
          dx[off[0]] = store<T>(Ref::backward(value_of(dy[off[1]]), value_of(saved[off[2]]), p));
        });
  }
  return {};
}

}  // namespace

const detail::UnaryTables& unary_tables() {
  static constexpr detail::UnaryTables table = [] {
    detail::UnaryTables t{};
#define BARACUDA_UNARY_OP(name, Enum, params, saved, types, doc)                                     \
  for_each_type(types{}, [&]<class T>() {                                                            \
    t.forward[detail::unary_index(UnaryKind::Enum)][detail::kind_index(kind_of<T>)] =                \
        &host_forward<unary_ref::Enum, T>;                                                           \
    t.backward[detail::unary_index(UnaryKind::Enum)][detail::kind_index(kind_of<T>)] =               \
        &host_backward<unary_ref::Enum, T, UnarySaved::saved>;                                       \
  });
#include "baracuda/ops/unary_ops.def"
#undef BARACUDA_UNARY_OP
    return t;
  }();
  return table;
}

}  // namespace baracuda::reference
