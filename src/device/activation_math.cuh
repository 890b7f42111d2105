/// \file
/// \brief Scalar activation math shared by the unary and gated-activation families: one definition of
/// each activation and its derivative, in the opmath type M (float for f16/bf16/f32, double for f64).
///
/// Numerics (why the forms below):
/// - sigmoid uses the two-branch form, so exp never overflows and σ(x) for x ≪ 0 keeps its relative precision;
/// - GELU (erf) uses erfc, 0.5·x·erfc(−x/√2): 1 + erf(x/√2) cancels catastrophically for x ≪ 0;
/// - derivatives are written in the same forms, so forward and backward agree where both are tiny.
#pragma once

#include "sim/compat.cuh"

#include <cmath>
#include <type_traits>

#include "device/precise_math.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace activation {

template <class M>
inline constexpr M kSqrt1_2 = M(0.70710678118654752440084436210484903928);   // 1/√2
template <class M>
inline constexpr M kInvSqrt2Pi = M(0.39894228040143267793994605993438186848);  // 1/√(2π)
template <class M>
inline constexpr M kSqrt2OverPi = M(0.79788456080286535587989211986876373695);  // √(2/π)
template <class M>
inline constexpr M kGeluTanhCoeff = M(0.044715);

/// σ(x) = 1 / (1 + e^−x).
template <class M>
__host__ __device__ __forceinline__ M sigmoid(M x) {
  if (x >= M(0)) return M(1) / (M(1) + pmath::exp(-x));
  const M e = pmath::exp(x);  // NaN takes this branch and propagates
  return e / (M(1) + e);
}
/// dσ/dx from σ itself: σ·(1 − σ).
template <class M>
__host__ __device__ __forceinline__ M sigmoid_grad_from_output(M s) {
  return s * (M(1) - s);
}

// The smooth activations both the unary and the gated families apply, as types: `value(x)` and
// `grad(x)` = d value/dx, so that each family wraps all of them with one template.

/// SiLU (swish): x·σ(x); d silu/dx = σ(x)·(1 + x·(1 − σ(x))).
struct Silu {
  template <class M>
  __host__ __device__ __forceinline__ static M value(M x) {
    return x * sigmoid(x);
  }
  template <class M>
  __host__ __device__ __forceinline__ static M grad(M x) {
    const M s = sigmoid(x);
    return s * (M(1) + x * (M(1) - s));
  }
};

/// GELU, exact form: x·Φ(x) = 0.5·x·erfc(−x/√2); d gelu/dx = Φ(x) + x·φ(x).
struct GeluErf {
  template <class M>
  __host__ __device__ __forceinline__ static M value(M x) {
    return M(0.5) * x * pmath::erfc(-x * kSqrt1_2<M>);
  }
  template <class M>
  __host__ __device__ __forceinline__ static M grad(M x) {
    const M cdf = M(0.5) * pmath::erfc(-x * kSqrt1_2<M>);
    const M pdf = kInvSqrt2Pi<M> * pmath::exp(M(-0.5) * x * x);
    return cdf + x * pdf;
  }
};

/// GELU, tanh approximation (PyTorch approximate='tanh'): 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))); its
/// derivative 0.5·(1 + t) + 0.5·x·(1 − t²)·√(2/π)·(1 + 3·0.044715·x²).
struct GeluTanh {
  template <class M>
  __host__ __device__ __forceinline__ static M value(M x) {
    return M(0.5) * x * (M(1) + inner_tanh(x));
  }
  template <class M>
  __host__ __device__ __forceinline__ static M grad(M x) {
    const M t = inner_tanh(x);
    const M dinner = kSqrt2OverPi<M> * (M(1) + M(3) * kGeluTanhCoeff<M> * x * x);
    return M(0.5) * (M(1) + t) + M(0.5) * x * (M(1) - t * t) * dinner;
  }

 private:
  template <class M>
  __host__ __device__ __forceinline__ static M inner_tanh(M x) {
    return pmath::tanh(kSqrt2OverPi<M> * (x + kGeluTanhCoeff<M> * x * x * x));
  }
};

/// ReLU that propagates NaN (as PyTorch; `fmax(x, 0)` would drop it).
template <class M>
__host__ __device__ __forceinline__ M relu(M x) {
  return x > M(0) ? x : (x != x ? x : M(0));
}

}  // namespace activation
BARACUDA_DEVICE_NAMESPACE_END
