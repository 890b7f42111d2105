/// \file
/// \brief The unary ops' device math: one struct per catalog line, named like its `UnaryKind` enumerator,
/// with `__host__ __device__` static functions in the compute type M (float for f16/bf16/f32, double for
/// f64):
///
///   static M forward(M x, const UnaryParams<M>& p);
///   static M backward(M dy, M saved, const UnaryParams<M>& p);   // saved = x (Input) or y (Output)
///   static M backward(M dy, const UnaryParams<M>& p);            // saved None
///   static constexpr bool zero_gradient = true;                  // saved None, dx = 0 (no backward())
///
/// The formulas are PyTorch's (ATen's scalar and CUDA kernels, derivatives.yaml); the branch structure
/// fixes the behaviour at kinks and NaN inputs (a NaN fails every comparison). Where a formula is
/// rewritten for accuracy it is said so. The activation functions shared with the gated family come from
/// device/activation_math.cuh.
#pragma once

#include "sim/compat.cuh"  // first: the device namespace and device API

#include <cmath>
#include <limits>
#include <type_traits>

#include "device/activation_math.cuh"
#include "device/precise_math.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace unary {

/// The parameters, rounded to the compute type once per launch.
template <class M>
struct UnaryParams {
  M negative_slope, alpha, beta, threshold, value, lambd, min_val, max_val, eps;
};

// ---------------------------------------------------------------------------------------------------
// Math in M: the precise libm of precise_math.cuh, and the helpers the functors share.
// ---------------------------------------------------------------------------------------------------
namespace math {

using namespace pmath;  // sqrt, log1p, sinpi, hypot, copysign, ...: precise_math.cuh

template <class M>
__host__ __device__ __forceinline__ M quiet_nan() {
  return std::numeric_limits<M>::quiet_NaN();
}
template <class M>
__host__ __device__ __forceinline__ M infinity() {
  return std::numeric_limits<M>::infinity();
}

template <class M>
inline constexpr M kPi = M(3.14159265358979323846264338327950288);
template <class M>
inline constexpr M kLn2 = M(0.69314718055994530941723212145817657);
template <class M>
inline constexpr M kLn10 = M(2.30258509299404568401799145468436421);
template <class M>
inline constexpr M k2OverSqrtPi = M(1.12837916709551257389615890312154517);

/// ψ(x) = d/dx ln Γ(x): the reflection ψ(x) = ψ(1-x) - π·cot(πx) below 0, the recurrence
/// ψ(x) = ψ(x+1) - 1/x up to x ≥ 10, then the asymptotic series ln x - 1/(2x) - Σ B₂ₖ/(2k·x²ᵏ).
/// ψ(±0) = ∓inf, NaN at the poles (negative integers and -inf), as PyTorch's calc_digamma.
template <class M>
__host__ __device__ inline M digamma(M x) {
  if (x == M(0)) return pmath::copysign(infinity<M>(), -x);
  M result = 0;
  if (x < M(0)) {
    if (x == pmath::floor(x)) return quiet_nan<M>();
    result = -kPi<M> * pmath::cospi(x) / pmath::sinpi(x);
    x = M(1) - x;
  }
  while (x < M(10)) {  // NaN fails the test and propagates below
    result -= M(1) / x;
    x += M(1);
  }
  const M z = M(1) / (x * x);
  const M series =
      z * (M(1) / M(12) -
           z * (M(1) / M(120) -
                z * (M(1) / M(252) - z * (M(1) / M(240) - z * (M(1) / M(132) - z * (M(691) / M(32760) - z / M(12)))))));
  return result + pmath::log(x) - M(0.5) / x - series;
}

/// -1, 0 or 1 (0 for ±0 and NaN).
template <class M>
__host__ __device__ __forceinline__ M sgn(M x) {
  return M(static_cast<int>(x > M(0)) - static_cast<int>(x < M(0)));
}

}  // namespace math

template <class M>
using P = UnaryParams<M>;

// ---------------------------------------------------------------------------------------------------
// Math
// ---------------------------------------------------------------------------------------------------

struct Neg {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return -x; }
  template <class M> __host__ __device__ static M backward(M dy, const P<M>&) { return -dy; }
};
struct Abs {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return math::fabs(x); }
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>&) { return dy * math::sgn(x); }
};
struct Sign {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return math::sgn(x); }
  static constexpr bool zero_gradient = true;
};
struct Reciprocal {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return M(1) / x; }
  template <class M> __host__ __device__ static M backward(M dy, M y, const P<M>&) { return -dy * (y * y); }
};
struct Square {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return x * x; }
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>&) { return dy * (M(2) * x); }
};
struct Sqrt {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return math::sqrt(x); }
  template <class M> __host__ __device__ static M backward(M dy, M y, const P<M>&) { return dy / (M(2) * y); }
};
struct Rsqrt {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return math::rsqrt(x); }
  template <class M> __host__ __device__ static M backward(M dy, M y, const P<M>&) {
    return M(-0.5) * dy * (y * y * y);
  }
};
struct Cbrt {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return math::cbrt(x); }
  template <class M> __host__ __device__ static M backward(M dy, M y, const P<M>&) { return dy / (M(3) * (y * y)); }
};
struct Exp {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return pmath::exp(x); }
  template <class M> __host__ __device__ static M backward(M dy, M y, const P<M>&) { return dy * y; }
};
struct Exp2 {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return math::exp2(x); }
  template <class M> __host__ __device__ static M backward(M dy, M y, const P<M>&) { return dy * y * math::kLn2<M>; }
};
struct Expm1 {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return math::expm1(x); }
  template <class M> __host__ __device__ static M backward(M dy, M y, const P<M>&) { return dy * (y + M(1)); }
};
struct Log {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return math::log(x); }
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>&) { return dy / x; }
};
struct Log2 {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return math::log2(x); }
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>&) { return dy / (x * math::kLn2<M>); }
};
struct Log10 {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return math::log10(x); }
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>&) {
    return dy / (x * math::kLn10<M>);
  }
};
struct Log1p {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return math::log1p(x); }
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>&) { return dy / (x + M(1)); }
};

// ---------------------------------------------------------------------------------------------------
// Trigonometric and hyperbolic. 1 - x² is computed as (1 - x)(1 + x), exact where it matters (|x| → 1).
// ---------------------------------------------------------------------------------------------------

struct Sin {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return math::sin(x); }
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>&) { return dy * math::cos(x); }
};
struct Cos {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return math::cos(x); }
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>&) { return -dy * math::sin(x); }
};
struct Tan {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return math::tan(x); }
  template <class M> __host__ __device__ static M backward(M dy, M y, const P<M>&) { return dy * (M(1) + y * y); }
};
struct Asin {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return math::asin(x); }
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>&) {
    return dy / math::sqrt((M(1) - x) * (M(1) + x));
  }
};
struct Acos {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return math::acos(x); }
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>&) {
    return -dy / math::sqrt((M(1) - x) * (M(1) + x));
  }
};
struct Atan {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return math::atan(x); }
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>&) { return dy / (M(1) + x * x); }
};
struct Sinh {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return math::sinh(x); }
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>&) { return dy * math::cosh(x); }
};
struct Cosh {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return math::cosh(x); }
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>&) { return dy * math::sinh(x); }
};
struct Tanh {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return pmath::tanh(x); }
  template <class M> __host__ __device__ static M backward(M dy, M y, const P<M>&) {
    return dy * ((M(1) - y) * (M(1) + y));
  }
};
struct Asinh {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return math::asinh(x); }
  /// dy/√(x²+1) as dy/hypot(x, 1): no overflow of x² for huge |x|.
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>&) {
    return dy / math::hypot(x, M(1));
  }
};
struct Acosh {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return math::acosh(x); }
  /// dy/√(x²-1) as dy/√((|x|-1)(|x|+1)): exact near |x| = 1, +inf at x = -1 as PyTorch.
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>&) {
    const M a = math::fabs(x);
    return dy / math::sqrt((a - M(1)) * (a + M(1)));
  }
};
struct Atanh {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return math::atanh(x); }
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>&) {
    return dy / ((M(1) - x) * (M(1) + x));
  }
};

// ---------------------------------------------------------------------------------------------------
// Rounding: exact in any compute type. The gradient is zero wherever it exists (frac's is 1).
// ---------------------------------------------------------------------------------------------------

struct Floor {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return math::floor(x); }
  static constexpr bool zero_gradient = true;
};
struct Ceil {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return math::ceil(x); }
  static constexpr bool zero_gradient = true;
};
struct Round {
  /// rint in the default rounding mode: ties to even.
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return math::rint(x); }
  static constexpr bool zero_gradient = true;
};
struct Trunc {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return math::trunc(x); }
  static constexpr bool zero_gradient = true;
};
struct Frac {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return x - math::trunc(x); }
  template <class M> __host__ __device__ static M backward(M dy, const P<M>&) { return dy; }
};

// ---------------------------------------------------------------------------------------------------
// Special functions
// ---------------------------------------------------------------------------------------------------

struct Erf {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return math::erf(x); }
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>&) {
    return dy * math::k2OverSqrtPi<M> * pmath::exp(-x * x);
  }
};
struct Erfc {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return pmath::erfc(x); }
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>&) {
    return -dy * math::k2OverSqrtPi<M> * pmath::exp(-x * x);
  }
};
struct Lgamma {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return math::lgamma(x); }
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>&) { return dy * math::digamma(x); }
};

// ---------------------------------------------------------------------------------------------------
// Activations
// ---------------------------------------------------------------------------------------------------

struct Relu {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return activation::relu(x); }
  /// threshold_backward(dy, y, 0): a NaN y passes dy.
  template <class M> __host__ __device__ static M backward(M dy, M y, const P<M>&) { return y <= M(0) ? M(0) : dy; }
};
struct Relu6 {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) {
    return x < M(0) ? M(0) : (x > M(6) ? M(6) : x);
  }
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>&) {
    return (x <= M(0) || x >= M(6)) ? M(0) : dy;
  }
};
struct LeakyRelu {
  template <class M> __host__ __device__ static M forward(M x, const P<M>& p) { return x > M(0) ? x : x * p.negative_slope; }
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>& p) {
    return x > M(0) ? dy : dy * p.negative_slope;
  }
};
/// expm1 instead of PyTorch CPU's exp(x) - 1 (its CUDA kernel uses expm1 too).
struct Elu {
  template <class M> __host__ __device__ static M forward(M x, const P<M>& p) {
    return x > M(0) ? x : p.alpha * math::expm1(x);
  }
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>& p) {
    return x <= M(0) ? dy * p.alpha * pmath::exp(x) : dy;
  }
};
struct Selu {
  template <class M>
  static constexpr M kScale = M(1.0507009873554804934193349852946);
  template <class M>
  static constexpr M kAlphaScale = M(1.7580993408473768599402175208123);  // alpha·scale
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) {
    return x > M(0) ? x * kScale<M> : math::expm1(x) * kAlphaScale<M>;
  }
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>&) {
    return x <= M(0) ? dy * kAlphaScale<M> * pmath::exp(x) : dy * kScale<M>;
  }
};
struct Celu {
  template <class M> __host__ __device__ static M forward(M x, const P<M>& p) {
    return x > M(0) ? x : p.alpha * math::expm1(x / p.alpha);
  }
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>& p) {
    return x <= M(0) ? dy * pmath::exp(x / p.alpha) : dy;
  }
};
/// An activation the gated family shares (device/activation_math.cuh): f = A::value, f' = A::grad.
template <class A>
struct SharedActivation {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return A::value(x); }
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>&) { return dy * A::grad(x); }
};
struct Gelu : SharedActivation<activation::GeluErf> {};
struct GeluTanh : SharedActivation<activation::GeluTanh> {};
struct Silu : SharedActivation<activation::Silu> {};
struct Mish {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) {
    return x * pmath::tanh(math::log1p(pmath::exp(x)));
  }
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>&) {
    const M t = pmath::tanh(math::log1p(pmath::exp(x)));
    return dy * (t + x * activation::sigmoid(x) * (M(1) - t * t));
  }
};
struct Sigmoid {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return activation::sigmoid(x); }
  template <class M> __host__ __device__ static M backward(M dy, M y, const P<M>&) {
    return dy * activation::sigmoid_grad_from_output(y);
  }
};
/// eps < 0: no clamp. Otherwise x is clamped to [eps, 1 - eps] (1 - eps rounded to M). The backward is
/// PyTorch's: without eps NaN outside [0, 1] and dy·inf at 0 and 1; with eps 0 outside [eps, 1 - eps].
struct Logit {
  template <class M> __host__ __device__ static M forward(M x, const P<M>& p) {
    M z = x;
    if (p.eps >= M(0)) {
      const M hi = M(1) - p.eps;
      z = x < p.eps ? p.eps : (x > hi ? hi : x);
    }
    return math::log(z / (M(1) - z));
  }
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>& p) {
    if (p.eps < M(0)) {
      if (x < M(0) || x > M(1)) return math::quiet_nan<M>();
      return (x == M(0) || x == M(1)) ? dy * math::infinity<M>() : dy / (x * (M(1) - x));
    }
    return (x < p.eps || x > M(1) - p.eps) ? M(0) : dy / (x * (M(1) - x));
  }
};
/// PyTorch's log1p(exp(z))/beta, z = beta·x, computed as (max(z, 0) + log1p(exp(-|z|)))/beta, and its
/// backward's e/(e+1), e = exp(z), as σ(z): equal, and neither overflows when `threshold` is large.
struct Softplus {
  template <class M> __host__ __device__ static M forward(M x, const P<M>& p) {
    const M z = p.beta * x;
    if (z > p.threshold) return x;
    return (z > M(0) ? z + math::log1p(pmath::exp(-z)) : math::log1p(pmath::exp(z))) / p.beta;
  }
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>& p) {
    const M z = p.beta * x;
    return z > p.threshold ? dy : dy * activation::sigmoid(z);
  }
};
struct Softsign {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return x / (M(1) + math::fabs(x)); }
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>&) {
    const M d = M(1) + math::fabs(x);
    return dy / (d * d);
  }
};
struct Tanhshrink {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) { return x - pmath::tanh(x); }
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>&) {
    const M t = pmath::tanh(x);
    return dy * (t * t);
  }
};
struct Hardswish {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) {
    const M c = x + M(3);
    return x * (c < M(0) ? M(0) : (c > M(6) ? M(6) : c)) / M(6);
  }
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>&) {
    return x < M(-3) ? M(0) : (x <= M(3) ? dy * (x / M(3) + M(0.5)) : dy);
  }
};
struct Hardsigmoid {
  template <class M> __host__ __device__ static M forward(M x, const P<M>&) {
    const M c = x + M(3);
    return (c < M(0) ? M(0) : (c > M(6) ? M(6) : c)) / M(6);
  }
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>&) {
    return (x > M(-3) && x < M(3)) ? dy / M(6) : M(0);
  }
};
struct Hardtanh {
  template <class M> __host__ __device__ static M forward(M x, const P<M>& p) {
    return x < p.min_val ? p.min_val : (x > p.max_val ? p.max_val : x);
  }
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>& p) {
    return (x <= p.min_val || x >= p.max_val) ? M(0) : dy;
  }
};
struct Hardshrink {
  template <class M> __host__ __device__ static M forward(M x, const P<M>& p) {
    return (x >= -p.lambd && x <= p.lambd) ? M(0) : x;
  }
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>& p) {
    return (x >= -p.lambd && x <= p.lambd) ? M(0) : dy;
  }
};
struct Softshrink {
  template <class M> __host__ __device__ static M forward(M x, const P<M>& p) {
    return x > p.lambd ? x - p.lambd : (x < -p.lambd ? x + p.lambd : M(0));
  }
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>& p) {
    return (x >= -p.lambd && x <= p.lambd) ? M(0) : dy;
  }
};
struct Threshold {
  template <class M> __host__ __device__ static M forward(M x, const P<M>& p) { return x <= p.threshold ? p.value : x; }
  template <class M> __host__ __device__ static M backward(M dy, M x, const P<M>& p) {
    return x <= p.threshold ? M(0) : dy;
  }
};

}  // namespace unary
BARACUDA_DEVICE_NAMESPACE_END
