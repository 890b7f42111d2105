/// \file
/// \brief `GroupNormPlan`, `BatchNormPlan` and their backward plans: the per-channel norms of `[N, C, *]`
/// activations (convolutional nets, diffusion U-Nets), with PyTorch's semantics. InstanceNorm is GroupNorm
/// with one channel per group (`groups == C`).
///
/// - **GroupNorm** (`F.group_norm(x, G, weight, bias, eps)`): x `[N, C, *]` (rank 2 to 7), G divides C.
///   Per (n, g), over the C/G channels of group g and every spatial position: `mean`, the biased variance
///   `var`, `rstd = 1 / sqrt(var + eps)`; `y = (x − mean) · rstd · w[c] + b[c]`. The saved `mean` and `rstd`
///   are `[N, G]` (optional outputs). InstanceNorm (`F.instance_norm` without running statistics) is
///   `groups = C`, its statistics `[N, C]`.
/// - **BatchNorm** (`F.batch_norm`): x `[N, C, *]` (rank 2 to 8). Training: per channel, over N and every
///   spatial position (`n = N · spatial` values, at least 2), `mean`, the biased `var`, `rstd` as above,
///   `y = (x − mean) · rstd · w[c] + b[c]`; `mean`, `rstd` `[C]` optionally written for the backward; with
///   running statistics (`has_running_stats`), `running_mean` and `running_var` `[C]` are updated in place:
///   `running = (1 − momentum) · running + momentum · stat`, with the unbiased `var · n / (n − 1)` for
///   running_var (PyTorch's rule). Inference (`training = false`): running_mean and running_var are required
///   and read only, `y = (x − running_mean) / sqrt(running_var + eps) · w + b`; no mean or rstd is written.
/// - **Backward.** `g = dy · w` (w = 1 without a weight), `x̂ = (x − mean) · rstd` per statistics segment
///   (GroupNorm: (n, g); BatchNorm: the channel) of `m` values: `dx = rstd · (g − Σg/m − x̂ · Σ(g·x̂)/m)`;
///   `dweight[c] = Σ dy · x̂`, `dbias[c] = Σ dy` over every (n, spatial) of the channel (PyTorch's
///   native_group_norm_backward and batch_norm_backward). BatchNorm's backward in inference mode
///   (`training = false`; PyTorch's eval-mode backward) reads running_mean and running_var instead of the
///   saved statistics: `rstd = 1 / sqrt(running_var + eps)`, `dx = dy · w · rstd`, `dweight = Σ dy · (x −
///   running_mean) · rstd`, `dbias = Σ dy`. dx, dweight and dbias are each optional (at least one).
/// - **Dtypes:** x, y, dy, dx, weight, bias, dweight, dbias and BatchNorm's running_mean and running_var one
///   kind: f16, bf16, f32 or f64 (PyTorch's CPU kernels take weight and running statistics in x's kind for
///   these). The saved mean and rstd, and every accumulation, are f32 (f64 for f64 x); the running
///   statistics are updated in f32 (f64) and rounded once to their kind.
/// - **Layout:** any strides on every operand; weight, bias, running statistics `[C]`; mean and rstd `[N, G]`
///   (GroupNorm) or `[C]` (BatchNorm), any strides; outputs no stride-0 dimension of extent > 1.
/// - **Aliasing:** y may be exactly x (same data and strides; the statistics are complete before y is
///   written); no other overlap between any two operands (running_mean and running_var are read-write
///   operands: they overlap nothing else).
/// - **Workspace:** `workspace_size()`, 256-byte aligned: the statistics the caller does not keep (forward),
///   three coefficients per statistics segment (backward), and the segmented reductions' partials (none for
///   GroupNorm's single-pass forward).
/// - **Execution and determinism.** GroupNorm's forward on sim and cuda, for groups ((C/G)·S elements) of up
///   to 64 KiB: one single-pass kernel (SKU variant `rows_warp` / `rows_block`): a warp (groups ≤ 4 KiB) or a
///   block owns a group, reads it once into shared memory (16-byte loads where the group is one unit-stride
///   run, as in a dense x, and aligned), reduces the mean and then Σ(x − mean)² there, and writes y once.
///   Otherwise (longer groups, BatchNorm, the host): the statistics by one segmented reduction (Welford's
///   merge), y by one elementwise pass; the two paths may differ in the last bits. The backward: one
///   segmented reduction for the per-segment sums (BatchNorm's also finishes dweight and dbias), one
///   elementwise pass for dx, and (GroupNorm) one more reduction for dweight and dbias. Every sum is combined in an order fixed by the shape and the device:
///   the same bits on every run, no atomics.
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

/// A GroupNorm (InstanceNorm with `groups` = C) problem. A hashable value.
struct GroupNormDescriptor {
  ElementKind element = ElementKind::F32;
  Shape shape;             ///< x's shape `[N, C, *]`, rank 2 to 7
  int64_t groups = 1;      ///< ≥ 1, divides C (C = 0: 1)
  double eps = 1e-5;       ///< ≥ 0, finite
  bool has_weight = true;  ///< w `[C]`
  bool has_bias = true;    ///< b `[C]`

  GroupNormDescriptor& with_element(ElementKind k) { element = k; return *this; }
  GroupNormDescriptor& with_shape(const Shape& s) { shape = s; return *this; }
  GroupNormDescriptor& with_groups(int64_t g) { groups = g; return *this; }
  GroupNormDescriptor& with_eps(double e) { eps = e; return *this; }
  GroupNormDescriptor& with_weight(bool w) { has_weight = w; return *this; }
  GroupNormDescriptor& with_bias(bool b) { has_bias = b; return *this; }
  friend bool operator==(const GroupNormDescriptor&, const GroupNormDescriptor&) = default;
  size_t hash() const { return detail::hash_fields(element, shape, groups, eps, has_weight, has_bias); }
};

/// A BatchNorm problem. A hashable value.
struct BatchNormDescriptor {
  ElementKind element = ElementKind::F32;
  Shape shape;                    ///< x's shape `[N, C, *]`, rank ≥ 2
  double eps = 1e-5;              ///< ≥ 0, finite
  double momentum = 0.1;          ///< in [0, 1] (PyTorch's cumulative average, momentum None, is not offered)
  bool training = true;           ///< batch statistics (else the running statistics: inference)
  bool has_running_stats = true;  ///< running_mean and running_var (required in inference)
  bool has_weight = true;         ///< w `[C]`
  bool has_bias = true;           ///< b `[C]`

  BatchNormDescriptor& with_element(ElementKind k) { element = k; return *this; }
  BatchNormDescriptor& with_shape(const Shape& s) { shape = s; return *this; }
  BatchNormDescriptor& with_eps(double e) { eps = e; return *this; }
  BatchNormDescriptor& with_momentum(double m) { momentum = m; return *this; }
  BatchNormDescriptor& with_training(bool t) { training = t; return *this; }
  BatchNormDescriptor& with_running_stats(bool r) { has_running_stats = r; return *this; }
  BatchNormDescriptor& with_weight(bool w) { has_weight = w; return *this; }
  BatchNormDescriptor& with_bias(bool b) { has_bias = b; return *this; }
  friend bool operator==(const BatchNormDescriptor&, const BatchNormDescriptor&) = default;
  size_t hash() const {
    return detail::hash_fields(element, shape, eps, momentum, training, has_running_stats, has_weight, has_bias);
  }
};

namespace detail {
struct ChannelNormLaunch;
using ChannelNormFn = Status (*)(const ExecContext&, const ChannelNormLaunch&);
}  // namespace detail

namespace dynamic {

/// The operands of a GroupNormPlan.
struct GroupNormArgs {
  ConstDynTensor x;       ///< read: the descriptor's shape and kind
  ConstDynTensor weight;  ///< read: `[C]` when `has_weight`, else empty
  ConstDynTensor bias;    ///< read: `[C]` when `has_bias`, else empty
  DynTensor y;            ///< written: x's shape and kind
  DynTensor mean;         ///< written (optional): `[N, G]`, `stats_kind()`
  DynTensor rstd;         ///< written (optional): `[N, G]`, `stats_kind()`
};

/// The operands of a GroupNormBackwardPlan.
struct GroupNormBackwardArgs {
  ConstDynTensor dy;      ///< read: x's shape and kind
  ConstDynTensor x;       ///< read: the forward's x
  ConstDynTensor weight;  ///< read: `[C]` when `has_weight`, else empty
  ConstDynTensor mean;    ///< read: the forward's mean `[N, G]`
  ConstDynTensor rstd;    ///< read: the forward's rstd `[N, G]`
  DynTensor dx;           ///< written (optional): x's shape
  DynTensor dweight;      ///< written (optional, with a weight): `[C]`
  DynTensor dbias;        ///< written (optional, with a bias): `[C]`
};

/// The operands of a BatchNormPlan.
struct BatchNormArgs {
  ConstDynTensor x;        ///< read: the descriptor's shape and kind
  ConstDynTensor weight;   ///< read: `[C]` when `has_weight`, else empty
  ConstDynTensor bias;     ///< read: `[C]` when `has_bias`, else empty
  DynTensor y;             ///< written: x's shape and kind
  DynTensor mean;          ///< written (optional, training only): `[C]`, `stats_kind()`
  DynTensor rstd;          ///< written (optional, training only): `[C]`, `stats_kind()`
  DynTensor running_mean;  ///< `has_running_stats`: `[C]`, x's kind; training: read and written, else read
  DynTensor running_var;   ///< likewise
};

/// The operands of a BatchNormBackwardPlan.
struct BatchNormBackwardArgs {
  ConstDynTensor dy;            ///< read: x's shape and kind
  ConstDynTensor x;             ///< read: the forward's x
  ConstDynTensor weight;        ///< read: `[C]` when `has_weight`, else empty
  ConstDynTensor mean;          ///< read (training): the forward's mean `[C]`; inference: empty
  ConstDynTensor rstd;          ///< read (training): the forward's rstd `[C]`; inference: empty
  ConstDynTensor running_mean;  ///< read (inference): `[C]`, x's kind; training: empty
  ConstDynTensor running_var;   ///< read (inference): `[C]`, x's kind; training: empty
  DynTensor dx;                 ///< written (optional): x's shape
  DynTensor dweight;            ///< written (optional, with a weight): `[C]`
  DynTensor dbias;              ///< written (optional, with a bias): `[C]`
};

/// The dtype/rank-erased GroupNormPlan.
class GroupNormPlan : public detail::BoundFnPlan<GroupNormDescriptor, detail::ChannelNormFn> {
  using BoundFnPlan::BoundFnPlan;

 public:
  using Args = GroupNormArgs;
  GroupNormPlan() = default;
  static Result<GroupNormPlan> select(const Stream& stream, const GroupNormDescriptor& desc,
                                      PlanPreference pref = {});
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return workspace_bytes_; }
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;
  /// `[N, G]`.
  Shape stats_shape() const { return Shape{desc_.shape.dims[0], desc_.groups}; }
  /// f32, or f64 for f64 x.
  ElementKind stats_kind() const { return desc_.element == ElementKind::F64 ? ElementKind::F64 : ElementKind::F32; }

 private:
  size_t workspace_bytes_ = 0;
};

/// The dtype/rank-erased GroupNormBackwardPlan.
class GroupNormBackwardPlan : public detail::BoundFnPlan<GroupNormDescriptor, detail::ChannelNormFn> {
  using BoundFnPlan::BoundFnPlan;

 public:
  using Args = GroupNormBackwardArgs;
  GroupNormBackwardPlan() = default;
  static Result<GroupNormBackwardPlan> select(const Stream& stream, const GroupNormDescriptor& desc,
                                              PlanPreference pref = {});
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return workspace_bytes_; }
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;
  Shape stats_shape() const { return Shape{desc_.shape.dims[0], desc_.groups}; }
  ElementKind stats_kind() const { return desc_.element == ElementKind::F64 ? ElementKind::F64 : ElementKind::F32; }

 private:
  size_t workspace_bytes_ = 0;
};

/// The dtype/rank-erased BatchNormPlan.
class BatchNormPlan : public detail::BoundFnPlan<BatchNormDescriptor, detail::ChannelNormFn> {
  using BoundFnPlan::BoundFnPlan;

 public:
  using Args = BatchNormArgs;
  BatchNormPlan() = default;
  static Result<BatchNormPlan> select(const Stream& stream, const BatchNormDescriptor& desc,
                                      PlanPreference pref = {});
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return workspace_bytes_; }
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;
  /// `[C]`.
  Shape stats_shape() const { return Shape{desc_.shape.dims[1]}; }
  ElementKind stats_kind() const { return desc_.element == ElementKind::F64 ? ElementKind::F64 : ElementKind::F32; }

 private:
  size_t workspace_bytes_ = 0;
};

/// The dtype/rank-erased BatchNormBackwardPlan.
class BatchNormBackwardPlan : public detail::BoundFnPlan<BatchNormDescriptor, detail::ChannelNormFn> {
  using BoundFnPlan::BoundFnPlan;

 public:
  using Args = BatchNormBackwardArgs;
  BatchNormBackwardPlan() = default;
  static Result<BatchNormBackwardPlan> select(const Stream& stream, const BatchNormDescriptor& desc,
                                              PlanPreference pref = {});
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return workspace_bytes_; }
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;
  Shape stats_shape() const { return Shape{desc_.shape.dims[1]}; }
  ElementKind stats_kind() const { return desc_.element == ElementKind::F64 ? ElementKind::F64 : ElementKind::F32; }

 private:
  size_t workspace_bytes_ = 0;
};

}  // namespace dynamic
}  // namespace baracuda
