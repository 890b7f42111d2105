/// \file
/// \brief The gated activations' device math, one functor per catalog line, built on the shared
/// activation math (device/activation_math.cuh). Each functor works in the opmath type M (float for
/// f16/bf16/f32, double for f64) and provides
///   `M forward(M g, M l, const Params<M>&)`                        y = act(g) · lin(l)
///   `void backward(M g, M l, M dy, const Params<M>&, M& dg, M& dl)`  the gradients of Σ dy·y
/// The kernels (kernels.cuh) load, call one of these and round once. The gradients follow PyTorch's autograd
/// of the same expression, including its kinks (see include/baracuda/ops/gated_activation.hpp).
#pragma once

#include "sim/compat.cuh"

#include "device/activation_math.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace gated {

/// The descriptor's parameters, rounded to M (only SwiGluClamped reads them).
template <class M>
struct Params {
  M alpha;
  M limit;
};

/// y = σ(g)·l (torch.nn.functional.glu). σ'(g) = σ·(1 − σ), as PyTorch computes it: for g ≫ 0 the factor
/// 1 − σ cancels (absolute error about ulp(1)·|dy·l|), and where σ rounds to 1 it is exactly 0, so
/// l = ±inf gives NaN there as in PyTorch. (σ(g)·σ(−g) would be more accurate but give ±inf instead.)
struct Glu {
  template <class M>
  __host__ __device__ __forceinline__ static M forward(M g, M l, const Params<M>&) {
    return l * activation::sigmoid(g);
  }
  template <class M>
  __host__ __device__ __forceinline__ static void backward(M g, M l, M dy, const Params<M>&, M& dg, M& dl) {
    const M s = activation::sigmoid(g);
    dl = dy * s;
    dg = (dy * l) * activation::sigmoid_grad_from_output(s);
  }
};

/// y = relu(g)·l. The gradient through relu passes where g > 0 and where g is NaN, as PyTorch's
/// `threshold_backward(grad, relu(g), 0)` (which zeroes only where relu(g) <= 0).
struct ReGlu {
  template <class M>
  __host__ __device__ __forceinline__ static M forward(M g, M l, const Params<M>&) {
    return l * activation::relu(g);
  }
  template <class M>
  __host__ __device__ __forceinline__ static void backward(M g, M l, M dy, const Params<M>&, M& dg, M& dl) {
    dl = dy * activation::relu(g);
    dg = g <= M(0) ? M(0) : dy * l;
  }
};

/// y = act(g)·l for an activation of device/activation_math.cuh: dl = dy·act(g), dg = dy·l·act'(g).
template <class A>
struct GatedBy {
  template <class M>
  __host__ __device__ __forceinline__ static M forward(M g, M l, const Params<M>&) {
    return l * A::value(g);
  }
  template <class M>
  __host__ __device__ __forceinline__ static void backward(M g, M l, M dy, const Params<M>&, M& dg, M& dl) {
    dl = dy * A::value(g);
    dg = (dy * l) * A::grad(g);
  }
};
struct SwiGlu : GatedBy<activation::Silu> {};        ///< y = silu(g)·l
struct GeGlu : GatedBy<activation::GeluErf> {};      ///< y = gelu(g)·l, erf form
struct GeGluTanh : GatedBy<activation::GeluTanh> {};  ///< y = gelu_tanh(g)·l

/// gpt-oss: c = min(g, limit), y = c·σ(α·c) · (clamp(l, −limit, limit) + 1). The clamps propagate NaN
/// (torch.clamp); their gradients pass on the closed interval and are 0 outside it and for NaN.
/// d/dc [c·σ(α·c)] = σ(α·c)·(1 + α·c·(1 − σ(α·c))) = silu'(α·c).
struct SwiGluClamped {
  template <class M>
  __host__ __device__ __forceinline__ static M clamp_gate(M g, const Params<M>& p) {
    return g > p.limit ? p.limit : g;
  }
  template <class M>
  __host__ __device__ __forceinline__ static M clamp_linear(M l, const Params<M>& p) {
    return l > p.limit ? p.limit : (l < -p.limit ? -p.limit : l);
  }
  template <class M>
  __host__ __device__ __forceinline__ static M forward(M g, M l, const Params<M>& p) {
    const M c = clamp_gate(g, p);
    return (c * activation::sigmoid(p.alpha * c)) * (clamp_linear(l, p) + M(1));
  }
  template <class M>
  __host__ __device__ __forceinline__ static void backward(M g, M l, M dy, const Params<M>& p, M& dg, M& dl) {
    const M c = clamp_gate(g, p);
    const M lin = clamp_linear(l, p) + M(1);
    dg = g <= p.limit ? (dy * lin) * activation::Silu::grad(p.alpha * c) : M(0);
    dl = (l >= -p.limit && l <= p.limit) ? dy * (c * activation::sigmoid(p.alpha * c)) : M(0);
  }
};

#include "ops/gated_activation/gate_of.inc"  // GateOf<kind>::type, the functors above

}  // namespace gated
BARACUDA_DEVICE_NAMESPACE_END
