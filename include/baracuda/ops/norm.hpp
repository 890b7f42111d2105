/// \file
/// \brief `NormPlan` and `NormBackwardPlan`: RMSNorm and LayerNorm over the last dimension, with optional
/// weight and bias, the saved statistics for the backward, and the backward's dx, dweight and dbias.
///
/// - **Forward** over rows of the last dimension (H elements; every other dimension indexes rows):
///   `RmsNorm`: `rstd = 1 / sqrt(mean(x²) + eps)`, `y = x · rstd · w` (HF's LlamaRMSNorm, with the product
///   rounded once: Llama rounds x·rstd to the activation kind before the multiply by w, so its 16-bit results
///   may differ from these in the last bit); `LayerNorm`: `mean = mean(x)`, `rstd = 1 / sqrt(var(x) + eps)`
///   (biased variance), `y = (x − mean) · rstd · w + b` (`F.layer_norm`). Without a weight w = 1, without a
///   bias b = 0 (RmsNorm takes no bias). `mean` (LayerNorm) and `rstd` may be written out, `[rows]` of the
///   statistics' kind (f32; f64 for f64 x), for the backward.
/// - **Backward** from dy, x, w and the saved statistics, with `g = dy · w`: `RmsNorm`:
///   `dx = rstd · g − rstd³ · mean(g·x) · x`; `LayerNorm`: `x̂ = (x − mean) · rstd`,
///   `dx = rstd · (g − mean(g) − x̂ · mean(g·x̂))`; `dweight = Σ_rows dy · x̂` (RmsNorm: `dy · x · rstd`),
///   `dbias = Σ_rows dy`. Each may be omitted (empty tensor); dweight and dbias are reduced in a fixed order
///   (no atomics): the same bits on every run.
/// - **Dtypes:** x, w, b, y, dy, dx, dweight, dbias one kind (f16, bf16, f32, f64); statistics and
///   accumulation in f32 (f64 for f64).
/// - **Layout:** x rank ≥ 1, any strides; w and b `[H]`; outputs no stride-0 dimension of extent > 1 and no
///   overlap with the inputs.
/// - **Workspace:** `workspace_size()`, 256-byte aligned (per-row values and the reductions' partials).
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
enum class NormOp : uint8_t {
  RmsNorm = 0,
  LayerNorm = 1,
};
std::string_view to_string(NormOp op);

/// The problem. A hashable value.
struct NormDescriptor {
  NormOp op = NormOp::RmsNorm;
  ElementKind element = ElementKind::F32;
  Shape shape;              ///< x's shape; the last dimension is normalized
  double eps = 1e-6;        ///< ≥ 0, finite
  bool has_weight = true;   ///< w `[H]`
  bool has_bias = false;    ///< b `[H]` (LayerNorm only)

  NormDescriptor& with_op(NormOp o) { op = o; return *this; }
  NormDescriptor& with_element(ElementKind k) { element = k; return *this; }
  NormDescriptor& with_shape(const Shape& s) { shape = s; return *this; }
  NormDescriptor& with_eps(double e) { eps = e; return *this; }
  NormDescriptor& with_weight(bool w) { has_weight = w; return *this; }
  NormDescriptor& with_bias(bool b) { has_bias = b; return *this; }
  friend bool operator==(const NormDescriptor&, const NormDescriptor&) = default;
  size_t hash() const { return detail::hash_fields(op, element, shape, eps, has_weight, has_bias); }
};

namespace detail {
struct NormLaunch;
using NormFn = Status (*)(const ExecContext&, const NormLaunch&);
}  // namespace detail

namespace dynamic {

/// The operands of a NormPlan.
struct NormArgs {
  ConstDynTensor x;       ///< read: the descriptor's shape and kind
  ConstDynTensor weight;  ///< read: `[H]` when `has_weight`, else empty
  ConstDynTensor bias;    ///< read: `[H]` when `has_bias`, else empty
  DynTensor y;            ///< written: x's shape and kind
  DynTensor mean;         ///< written (optional, LayerNorm only): `[rows]`, `stats_kind()`
  DynTensor rstd;         ///< written (optional): `[rows]`, `stats_kind()`
};

/// The operands of a NormBackwardPlan.
struct NormBackwardArgs {
  ConstDynTensor dy;      ///< read: x's shape and kind
  ConstDynTensor x;       ///< read: the forward's x
  ConstDynTensor weight;  ///< read: `[H]` when `has_weight`, else empty
  ConstDynTensor mean;    ///< read: the forward's mean (LayerNorm), else empty
  ConstDynTensor rstd;    ///< read: the forward's rstd
  DynTensor dx;           ///< written (optional): x's shape
  DynTensor dweight;      ///< written (optional, with a weight): `[H]`
  DynTensor dbias;        ///< written (optional, with a bias): `[H]`
};

/// The dtype/rank-erased NormPlan.
class NormPlan : public detail::BoundFnPlan<NormDescriptor, detail::NormFn> {
  using BoundFnPlan::BoundFnPlan;

 public:
  using Args = NormArgs;
  NormPlan() = default;
  static Result<NormPlan> select(const Stream& stream, const NormDescriptor& desc, PlanPreference pref = {});
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return workspace_bytes_; }
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;
  /// The statistics' shape, `[rows]` (x's shape without its last dimension).
  const Shape& stats_shape() const { return stats_shape_; }
  /// The statistics' kind: f32, or f64 for f64 x.
  ElementKind stats_kind() const { return desc_.element == ElementKind::F64 ? ElementKind::F64 : ElementKind::F32; }

 private:
  Shape stats_shape_;
  size_t workspace_bytes_ = 0;
};

/// The dtype/rank-erased NormBackwardPlan.
class NormBackwardPlan : public detail::BoundFnPlan<NormDescriptor, detail::NormFn> {
  using BoundFnPlan::BoundFnPlan;

 public:
  using Args = NormBackwardArgs;
  NormBackwardPlan() = default;
  static Result<NormBackwardPlan> select(const Stream& stream, const NormDescriptor& desc, PlanPreference pref = {});
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return workspace_bytes_; }
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;
  const Shape& stats_shape() const { return stats_shape_; }
  ElementKind stats_kind() const { return desc_.element == ElementKind::F64 ? ElementKind::F64 : ElementKind::F32; }

 private:
  Shape stats_shape_;
  size_t workspace_bytes_ = 0;
};

}  // namespace dynamic
}  // namespace baracuda
