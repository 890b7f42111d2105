/// \file
/// \brief `GatedActivationPlan` and `GatedActivationBackwardPlan`: the gated linear units of transformer MLPs
/// (GLU, ReGLU, SwiGLU, GeGLU with erf or tanh GELU, and gpt-oss's clamped SwiGLU) and their gradients.
///
/// **The op.** The input `x` is split along `split_dim` into a *gate* half `g` and a *linear* half `l`, and
/// `y = act(g) · lin(l)`, with `lin(l) = l` for every kind but `SwiGluClamped`. The output has the input's
/// shape with `split_dim` halved. Kinds (`GatedActivationKind`):
///
/// | kind | act(g) | lin(l) |
/// |---|---|---|
/// | `Glu` | σ(g) | l |
/// | `ReGlu` | max(g, 0) (NaN propagates) | l |
/// | `SwiGlu` | g·σ(g) (SiLU) | l |
/// | `GeGlu` | g·Φ(g) (GELU, erf form; `approximate='none'`) | l |
/// | `GeGluTanh` | 0.5·g·(1 + tanh(√(2/π)·(g + 0.044715·g³))) (`approximate='tanh'`) | l |
/// | `SwiGluClamped` | c·σ(α·c) with c = min(g, limit) | clamp(l, −limit, limit) + 1 |
///
/// `SwiGluClamped` is gpt-oss's activation (`gpt_oss/torch/model.py`, `swiglu`; TransformerEngine's
/// `ClampedSwiGLU`): `alpha` (default 1.702) and `limit` (default 7.0) come from the descriptor. Clamps
/// propagate NaN, as `torch.clamp` does.
///
/// **Which half gates** (`GateLayout`, along `split_dim` of extent 2H):
/// - `SecondHalf` (default): l = x[0, H), g = x[H, 2H): `y = a · act(b)` with a the first half, the order of
///   `torch.nn.functional.glu` and of baracuda's upstream.
/// - `FirstHalf`: g = x[0, H), l = x[H, 2H): `act(x1) · x2`, the order of vLLM's `silu_and_mul`,
///   TransformerEngine, Megatron and Llama checkpoints (`chunk(2)` then `silu(gate) · up`).
/// - `Interleaved`: g = x[0::2], l = x[1::2] (gate at even indices), gpt-oss's layout.
///
/// **Backward.** `GatedActivationBackwardPlan` takes the saved forward input `x` and the output gradient
/// `dy` (half size) and writes the full `dx` (`x`'s shape): with `up = dy · lin(l)`,
/// `dg = up · act'(g)` and `dl = dy · act(g) · lin'(l)`, where the kinks follow PyTorch's autograd:
/// ReGLU passes the gradient where `g > 0` or `g` is NaN (`threshold_backward` on the result), the clamps
/// of `SwiGluClamped` pass it where `g ≤ limit` and `−limit ≤ l ≤ limit` (boundaries included; NaN gets 0).
/// **In place:** `dx` may be `x` itself (`dx.data == x.data` with equal strides): each element's inputs are
/// read before its outputs are written, by the same thread, so the saved activation can be overwritten by
/// its gradient (Liger-Kernel's memory saving). `dx` over `x` with other strides, and `dy` at `dx`'s pointer,
/// are rejected; any other overlap between operands is undefined.
///
/// **Numerics.** f16/bf16/f32 compute in f32 (α and limit rounded to f32), f64 in f64; the activation,
/// the product and each gradient are rounded **once** to the element type. (PyTorch eager, vLLM and Liger
/// round `act(g)` to the element type before multiplying; for f16/bf16 that can differ from baracuda by one
/// unit in the last place. `F.glu` and f32/f64 results are unaffected.) σ uses the overflow-free two-branch
/// form and GELU's erf form uses erfc, so tails keep their relative precision; NaN and ±inf propagate as in
/// PyTorch (e.g. SwiGLU of g = −inf is NaN, since −inf·σ(−inf) = −inf·0). Results on every device agree
/// within the element type's tolerance; each device is deterministic and bit-stable.
///
/// **Descriptor rules** (`select`): element f16, bf16, f32 or f64 (others `Unsupported`); rank 1..8,
/// extents ≥ 0; `split_dim` in [−rank, rank) (negative counts from the end, as in PyTorch; default −1,
/// the last dimension); an even extent along `split_dim`; a valid kind and layout; `alpha` finite and > 0,
/// `limit` > 0 and not NaN (+inf disables the clamps); violations are `InvalidProblem`.
///
/// **Layout:** any strides (negative ones included); inputs may broadcast (stride 0), outputs may not.
/// **Alignment:** pointers aligned to the element size. **Workspace:** none. Safe under CUDA-graph capture.
#pragma once

#include <cstdint>
#include <string_view>

#include "baracuda/core/hash.hpp"
#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/plan.hpp"
#include "baracuda/core/sku.hpp"
#include "baracuda/core/stream.hpp"
#include "baracuda/core/tensor.hpp"
#include "baracuda/core/typed_plan.hpp"
#include "baracuda/core/workspace.hpp"

namespace baracuda {

/// The gated activations (see the file comment for their formulas). The values are stable.
enum class GatedActivationKind : uint8_t {
  Glu = 0,            ///< σ(g)·l
  ReGlu = 1,          ///< relu(g)·l
  SwiGlu = 2,         ///< silu(g)·l
  GeGlu = 3,          ///< gelu(g)·l, erf form
  GeGluTanh = 4,      ///< gelu(g)·l, tanh approximation
  SwiGluClamped = 5,  ///< gpt-oss: c·σ(α·c)·(clamp(l, −limit, limit) + 1), c = min(g, limit)
};
/// Number of `GatedActivationKind` values.
inline constexpr size_t kNumGatedActivationKinds = 6;
/// "glu", "reglu", "swiglu", "geglu", "geglu_tanh", "swiglu_clamped" ("?" for an invalid value).
std::string_view to_string(GatedActivationKind k);

/// Where the gate half lies along `split_dim` (extent 2H).
enum class GateLayout : uint8_t {
  SecondHalf = 0,   ///< gate = x[H, 2H), linear = x[0, H): `F.glu`'s order (the default)
  FirstHalf = 1,    ///< gate = x[0, H), linear = x[H, 2H): vLLM / TransformerEngine / Llama
  Interleaved = 2,  ///< gate = x[0::2], linear = x[1::2]: gpt-oss
};
/// "second_half", "first_half", "interleaved" ("?" for an invalid value).
std::string_view to_string(GateLayout l);

/// The problem of both plans: the forward's input shape (the backward's `x` and `dx`), the split, the kind.
struct GatedActivationDescriptor {
  GatedActivationKind kind = GatedActivationKind::SwiGlu;
  Shape input_shape;
  int split_dim = -1;  ///< in [−rank, rank); negative counts from the end
  ElementKind element = ElementKind::F32;
  GateLayout layout = GateLayout::SecondHalf;
  double alpha = 1.702;  ///< SwiGluClamped: σ(α·c)
  double limit = 7.0;    ///< SwiGluClamped: the clamp bound

  GatedActivationDescriptor& with_kind(GatedActivationKind k) { kind = k; return *this; }
  GatedActivationDescriptor& with_input_shape(const Shape& s) { input_shape = s; return *this; }
  GatedActivationDescriptor& with_split_dim(int d) { split_dim = d; return *this; }
  GatedActivationDescriptor& with_element(ElementKind k) { element = k; return *this; }
  GatedActivationDescriptor& with_layout(GateLayout l) { layout = l; return *this; }
  GatedActivationDescriptor& with_alpha(double a) { alpha = a; return *this; }
  GatedActivationDescriptor& with_limit(double l) { limit = l; return *this; }
  friend bool operator==(const GatedActivationDescriptor&, const GatedActivationDescriptor&) = default;
  size_t hash() const { return detail::hash_fields(kind, input_shape, split_dim, element, layout, alpha, limit); }

  /// `split_dim` in [0, rank) (valid only when `split_dim` is in range).
  int normalized_split_dim() const { return split_dim < 0 ? split_dim + input_shape.rank : split_dim; }
  /// The output's (and `dy`'s) shape: `input_shape` with `split_dim` halved (`input_shape` unchanged when
  /// `split_dim` is out of range: such a descriptor is `InvalidProblem` at select).
  Shape output_shape() const;};
/// The backward plan is described by its forward's descriptor.
using GatedActivationBackwardDescriptor = GatedActivationDescriptor;

namespace detail {
struct GatedForwardLaunch;
struct GatedBackwardLaunch;
using GatedForwardFn = Status (*)(const ExecContext&, const GatedForwardLaunch&);
using GatedBackwardFn = Status (*)(const ExecContext&, const GatedBackwardLaunch&);
}  // namespace detail

namespace dynamic {

/// The operands of a GatedActivationPlan (`y = act(g) · lin(l)`, g and l the halves of `x`).
struct GatedActivationArgs {
  ConstDynTensor x;  ///< read: the descriptor's kind, `input_shape`; may broadcast (stride 0)
  DynTensor y;       ///< written: the descriptor's kind, `output_shape()`
};

/// The operands of a GatedActivationBackwardPlan (`dx` from `dy` and the saved `x`).
struct GatedActivationBackwardArgs {
  ConstDynTensor dy;  ///< read: the descriptor's kind, `output_shape()`; may broadcast (stride 0)
  ConstDynTensor x;   ///< read: the saved forward input, the descriptor's kind, `input_shape`
  DynTensor dx;       ///< written: the descriptor's kind, `input_shape`; may be `x` (same pointer and strides)
};

/// The dtype/rank-erased GatedActivationPlan: `y = act(g) · lin(l)`.
class GatedActivationPlan : public detail::BoundFnPlan<GatedActivationDescriptor, detail::GatedForwardFn> {
  using BoundFnPlan::BoundFnPlan;

 public:
  using Args = GatedActivationArgs;

  static Result<GatedActivationPlan> select(const Stream& stream, const GatedActivationDescriptor& desc,
                                            PlanPreference pref = {});
  /// `x`: the descriptor's input shape; `y`: its output shape.
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return 0; }
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;

 private:
};

/// The dtype/rank-erased GatedActivationBackwardPlan: `dx = ∂(Σ dy·y)/∂x` from the saved `x`.
class GatedActivationBackwardPlan : public detail::BoundFnPlan<GatedActivationDescriptor, detail::GatedBackwardFn> {
  using BoundFnPlan::BoundFnPlan;

 public:
  using Args = GatedActivationBackwardArgs;

  static Result<GatedActivationBackwardPlan> select(const Stream& stream, const GatedActivationDescriptor& desc,
                                                    PlanPreference pref = {});
  /// `dy`: the output shape; `x`, `dx`: the input shape. `dx` may be `x` (same pointer, same strides).
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return 0; }
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;

 private:
};

}  // namespace dynamic

/// Arguments of a typed GatedActivationPlan.
template <class T, size_t N>
struct GatedActivationArgs {
  TensorRef<T, N> x;  ///< the input, `desc.input_shape`
  TensorMut<T, N> y;  ///< the output, `desc.output_shape()`
  dynamic::GatedActivationArgs erased() const { return {ConstDynTensor::of(x), DynTensor::of(y)}; }
};

/// Arguments of a typed GatedActivationBackwardPlan.
template <class T, size_t N>
struct GatedActivationBackwardArgs {
  TensorRef<T, N> dy;  ///< the output gradient, `desc.output_shape()`
  TensorRef<T, N> x;   ///< the saved forward input, `desc.input_shape`
  TensorMut<T, N> dx;  ///< the input gradient, `desc.input_shape`; may be `x` itself (same strides)
  dynamic::GatedActivationBackwardArgs erased() const {
    return {ConstDynTensor::of(dy), ConstDynTensor::of(x), DynTensor::of(dx)};
  }
};

/// Typed GatedActivationPlan; see the file comment for the contract.
template <class T, size_t N>
class GatedActivationPlan : public detail::TypedPlan<dynamic::GatedActivationPlan, GatedActivationArgs<T, N>> {
  using Base = detail::TypedPlan<dynamic::GatedActivationPlan, GatedActivationArgs<T, N>>;
  friend Base;
  using Base::Base;

 public:
  static Result<GatedActivationPlan> select(const Stream& stream, const GatedActivationDescriptor& desc,
                                            PlanPreference pref = {}) {
    return Base::template checked_select<GatedActivationPlan, T, N>(
        "GatedActivationPlan", "element", desc.element, {desc.input_shape},
        [&] { return dynamic::GatedActivationPlan::select(stream, desc, pref); });
  }
};

/// Typed GatedActivationBackwardPlan; see the file comment for the contract.
template <class T, size_t N>
class GatedActivationBackwardPlan
    : public detail::TypedPlan<dynamic::GatedActivationBackwardPlan, GatedActivationBackwardArgs<T, N>> {
  using Base = detail::TypedPlan<dynamic::GatedActivationBackwardPlan, GatedActivationBackwardArgs<T, N>>;
  friend Base;
  using Base::Base;

 public:
  static Result<GatedActivationBackwardPlan> select(const Stream& stream, const GatedActivationDescriptor& desc,
                                                    PlanPreference pref = {}) {
    return Base::template checked_select<GatedActivationBackwardPlan, T, N>(
        "GatedActivationBackwardPlan", "element", desc.element, {desc.input_shape},
        [&] { return dynamic::GatedActivationBackwardPlan::select(stream, desc, pref); });
  }
};

}  // namespace baracuda
