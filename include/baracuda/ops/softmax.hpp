/// \file
/// \brief `SoftmaxPlan` and `SoftmaxBackwardPlan`: softmax and log-softmax along one dimension, with an
/// optional additive mask and a temperature — `torch.softmax(x / T + mask, dim)`,
/// `torch.log_softmax(x / T + mask, dim)` — and their gradients.
///
/// - **Forward.** `z = x / temperature + mask` (the mask, when present, broadcasts to x's shape: right-aligned,
///   extents 1 stretch); with `m = max_dim z` and `s = Σ_dim exp(z − m)` per slice along `dim`,
///   `Softmax`: `y = exp(z − m) / s`, `LogSoftmax`: `y = (z − m) − log s`. A slice whose z are all −inf (a
///   fully masked row), or that holds a NaN or +inf, gives NaN, as PyTorch.
/// - **Backward** (`SoftmaxBackwardPlan`, from dy and the forward's y): `Softmax`: `dx = y ⊙ (dy − Σ dy⊙y) / T`;
///   `LogSoftmax`: `dx = (dy − exp(y) · Σ dy) / T` (sums along `dim`). The mask has no gradient.
/// - **How.** On sim and cuda, a forward slice of up to 64 KiB (x; with a mask, z in f32/f64) takes one
///   kernel (variant `rows_warp` / `rows_block`): x (and the mask) read once into shared memory, the max and
///   then Σ exp(z − max) there, y written once; no workspace. Otherwise, and on the host, two passes over x:
///   the per-slice statistics by the segmented-reduction engine — the online softmax's running
///   (max, Σ exp(z − max)), so a slice of any length takes one read — into the workspace, then one
///   elementwise pass. The backward likewise: slices whose dy and y fit 64 KiB together take one kernel
///   (both read once, Σ then dx), others its sum then the elementwise dx. The paths may differ in the last
///   bit; each is deterministic.
/// - **Dtypes:** x, mask, y, dy, dx one kind: f16, bf16, f32, f64; statistics in f32 (f64 for f64).
/// - **Layout:** rank ≤ 8, any strides; the outputs no stride-0 dimension of extent > 1 and no overlap with
///   the inputs (y may not be x: the second pass reads x again).
/// - **Workspace:** `workspace_size()`, 256-byte aligned: none for the row kernels; otherwise the statistics
///   (two opmath values per slice) and the reduction's partials when a few long slices are split across blocks.
/// - **Determinism:** the same bits on every run (the reduction's order is fixed by shape and device).
#pragma once

#include <cstdint>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/hash.hpp"
#include "baracuda/core/plan.hpp"
#include "baracuda/core/sku.hpp"
#include "baracuda/core/stream.hpp"
#include "baracuda/core/tensor.hpp"
#include "baracuda/core/workspace.hpp"

namespace baracuda {

/// Which normalization.
enum class SoftmaxOp : uint8_t {
  Softmax = 0,
  LogSoftmax = 1,
};
std::string_view to_string(SoftmaxOp op);

/// The problem. A hashable value.
struct SoftmaxDescriptor {
  SoftmaxOp op = SoftmaxOp::Softmax;
  ElementKind element = ElementKind::F32;
  Shape shape;             ///< x's (and y's) shape
  int dim = -1;            ///< the dimension normalized (negative counts from the last)
  double temperature = 1;  ///< T > 0, finite
  bool has_mask = false;   ///< an additive mask of `mask_shape` (forward only)
  Shape mask_shape;        ///< broadcasts to `shape`

  SoftmaxDescriptor& with_op(SoftmaxOp o) { op = o; return *this; }
  SoftmaxDescriptor& with_element(ElementKind k) { element = k; return *this; }
  SoftmaxDescriptor& with_shape(const Shape& s) { shape = s; return *this; }
  SoftmaxDescriptor& along(int d) { dim = d; return *this; }
  SoftmaxDescriptor& with_temperature(double t) { temperature = t; return *this; }
  SoftmaxDescriptor& with_mask(const Shape& s) { has_mask = true; mask_shape = s; return *this; }
  friend bool operator==(const SoftmaxDescriptor&, const SoftmaxDescriptor&) = default;
  size_t hash() const { return detail::hash_fields(op, element, shape, dim, temperature, has_mask, mask_shape); }
};

namespace detail {
struct SoftmaxLaunch;
using SoftmaxFn = Status (*)(const ExecContext&, const SoftmaxLaunch&);
}  // namespace detail

namespace dynamic {

/// The operands of a SoftmaxPlan.
struct SoftmaxArgs {
  ConstDynTensor x;     ///< read: the descriptor's shape and kind
  ConstDynTensor mask;  ///< read: `mask_shape` when `has_mask`, else empty
  DynTensor y;          ///< written: x's shape and kind
};

/// The operands of a SoftmaxBackwardPlan.
struct SoftmaxBackwardArgs {
  ConstDynTensor dy;  ///< read: x's shape and kind
  ConstDynTensor y;   ///< read: the forward's output
  DynTensor dx;       ///< written: x's shape and kind
};

/// The dtype/rank-erased SoftmaxPlan.
class SoftmaxPlan : public detail::BoundFnPlan<SoftmaxDescriptor, detail::SoftmaxFn> {
  using BoundFnPlan::BoundFnPlan;

 public:
  using Args = SoftmaxArgs;
  SoftmaxPlan() = default;
  static Result<SoftmaxPlan> select(const Stream& stream, const SoftmaxDescriptor& desc, PlanPreference pref = {});
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return workspace_bytes_; }
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;

 private:
  size_t workspace_bytes_ = 0;
};

/// The dtype/rank-erased SoftmaxBackwardPlan (the descriptor's mask is ignored).
class SoftmaxBackwardPlan : public detail::BoundFnPlan<SoftmaxDescriptor, detail::SoftmaxFn> {
  using BoundFnPlan::BoundFnPlan;

 public:
  using Args = SoftmaxBackwardArgs;
  SoftmaxBackwardPlan() = default;
  static Result<SoftmaxBackwardPlan> select(const Stream& stream, const SoftmaxDescriptor& desc,
                                            PlanPreference pref = {});
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return workspace_bytes_; }
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;

 private:
  size_t workspace_bytes_ = 0;
};

}  // namespace dynamic
}  // namespace baracuda
