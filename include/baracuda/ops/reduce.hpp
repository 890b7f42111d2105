/// \file
/// \brief `ReducePlan`: reductions of a tensor over any set of its dimensions — sum, mean, prod, max, min,
/// argmax, argmin, var, std, vector norms, logsumexp, any, all — with PyTorch's semantics; and
/// `ReduceToPlan`, a sum down to a broadcast shape (the gradient of a broadcast operand).
///
/// - **Problem.** `x` of `shape` (rank ≤ 8) is reduced over the dimensions whose bit is set in `dims` (bit
///   d = dimension d, outermost first; `dims == 0` reduces every dimension, as PyTorch's `dim=None`). The
///   output has the kept dimensions in order (`output_shape()`), or with `keepdim` the input's rank with
///   the reduced dimensions of extent 1. Argmax and argmin take one dimension, or every dimension (then the
///   index is into the row-major flattened tensor, as `torch.argmax(x)`).
/// - **Ops** (`ReduceOp`) and the output's kind (`output_kind()`), as PyTorch:
///   | op | result | input kinds | output kind |
///   |---|---|---|---|
///   | `Sum`, `Prod` | Σ x, Π x | every kind but fp8 and 4-bit | the float kind; s64 for integers and bool |
///   | `Mean` | Σ x / n | f16, bf16, f32, f64 | x's |
///   | `Max`, `Min` | the largest / smallest value; NaN if any is NaN | every kind but fp8 and 4-bit | x's |
///   | `Argmax`, `Argmin` | the index of the first max / min (the first NaN if any) | floats, s8, u8, s32, s64 | s64 |
///   | `Var`, `Std` | Σ (x − mean)² / max(0, n − correction), its square root | floats | x's |
///   | `NormL1`, `NormL2`, `NormLinf`, `NormP` | Σ\|x\|, √Σx², max\|x\| (NaN if any), (Σ\|x\|ᵖ)^(1/p) | floats | x's |
///   | `LogSumExp` | log Σ exp(x), stable (max subtracted) | floats | x's |
///   | `Any`, `All` | whether any / every element is nonzero (NaN is nonzero) | every kind but fp8 and 4-bit | bool |
///   `NormP` with p = 0 counts the nonzero elements.
/// - **Empty reductions** (a reduced extent of 0): sum 0, prod 1, mean/var/std NaN, norms 0, logsumexp −inf,
///   any false, all true; max, min, argmax, argmin and the L∞ norm have no identity: `select` returns
///   `InvalidProblem` (PyTorch raises too).
/// - **Math.** Floats accumulate in f32 (f64 for f64) and round once to the output kind; integer sums and
///   products in s64, wrapping on overflow as PyTorch's. Var/std: Welford's running (count, mean, M2),
///   merged by Chan's formula. LogSumExp: a running (max, Σ exp(x − max)).
/// - **Layout:** x any strides (negative and 0 included); y the output shape, any strides, no stride-0
///   dimension of extent > 1; x and y may not overlap.
/// - **Workspace:** `workspace_size()` (0 on host; on sim and cuda, when a few long segments are split
///   across blocks, one partial per piece), 256-byte aligned.
/// - **Determinism:** the combine order is fixed by the shape and the device: the same bits on every run.
///   The devices may differ from each other, and from the host reference (which sums in long double), by
///   the rounding of the f32 sums.
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

/// The reduction (see the file comment's table).
enum class ReduceOp : uint8_t {
  Sum,
  Mean,
  Prod,
  Max,
  Min,
  Argmax,
  Argmin,
  Var,
  Std,
  NormL1,
  NormL2,
  NormLinf,
  NormP,
  LogSumExp,
  Any,
  All,
};
inline constexpr int kNumReduceOps = 16;
std::string_view to_string(ReduceOp op);

/// The problem. A hashable value.
struct ReduceDescriptor {
  ReduceOp op = ReduceOp::Sum;
  ElementKind element = ElementKind::F32;  ///< x's kind
  Shape shape;                             ///< x's shape
  uint32_t dims = 0;                       ///< bit d: reduce dimension d; 0: every dimension
  bool keepdim = false;                    ///< keep reduced dimensions as extent 1
  double correction = 1;                   ///< Var, Std: the divisor is max(0, n − correction) (≥ 0)
  double p = 2;                            ///< NormP: the order (finite, ≥ 0)

  ReduceDescriptor& with_op(ReduceOp o) { op = o; return *this; }
  ReduceDescriptor& with_element(ElementKind k) { element = k; return *this; }
  ReduceDescriptor& with_shape(const Shape& s) { shape = s; return *this; }
  /// Reduces dimension `d` too (negative counts from the last, as PyTorch's).
  ReduceDescriptor& over(int d) {
    dims |= 1u << (d < 0 ? d + shape.rank : d);
    return *this;
  }
  ReduceDescriptor& with_keepdim(bool k = true) { keepdim = k; return *this; }
  ReduceDescriptor& with_correction(double c) { correction = c; return *this; }
  ReduceDescriptor& with_p(double order) { p = order; return *this; }
  friend bool operator==(const ReduceDescriptor&, const ReduceDescriptor&) = default;
  size_t hash() const { return detail::hash_fields(op, element, shape, dims, keepdim, correction, p); }
};

/// The problem of a ReduceToPlan: a tensor of shape `from` summed down to `to`, a shape that broadcasts to
/// `from` (right-aligned; each extent of `to` equals `from`'s or is 1; `to` may have fewer dimensions) — the
/// gradient of a broadcast input from its output's gradient. A hashable value.
struct ReduceToDescriptor {
  ElementKind element = ElementKind::F32;  ///< f16, bf16, f32, f64
  Shape from;
  Shape to;
  friend bool operator==(const ReduceToDescriptor&, const ReduceToDescriptor&) = default;
  size_t hash() const { return detail::hash_fields(element, from, to); }
};

namespace detail {
struct ReduceLaunch;
using ReduceFn = Status (*)(const ExecContext&, const ReduceLaunch&);
}  // namespace detail

namespace dynamic {

/// The operands of a ReducePlan.
struct ReduceArgs {
  ConstDynTensor x;  ///< read: the descriptor's kind and shape
  DynTensor y;       ///< written: `output_kind()`, `output_shape()`
};

/// The dtype/rank-erased ReducePlan.
class ReducePlan : public detail::BoundFnPlan<ReduceDescriptor, detail::ReduceFn> {
  using BoundFnPlan::BoundFnPlan;

 public:
  using Args = ReduceArgs;
  ReducePlan() = default;

  static Result<ReducePlan> select(const Stream& stream, const ReduceDescriptor& desc, PlanPreference pref = {});
  /// Checks x and y against the descriptor, and that they do not overlap.
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return workspace_bytes_; }
  PrecisionGuarantee precision_guarantee() const;
  /// Re-validates (and the workspace), then launches (nothing when y is empty).
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;
  /// y's shape.
  const Shape& output_shape() const { return out_shape_; }
  /// y's kind.
  ElementKind output_kind() const { return out_kind_; }
  /// The reduced dimensions as a mask (the descriptor's, with 0 made explicit).
  uint32_t reduced_mask() const { return mask_; }

 private:
  Shape out_shape_;
  ElementKind out_kind_ = ElementKind::F32;
  uint32_t mask_ = 0;
  size_t workspace_bytes_ = 0;
};

/// The operands of a ReduceToPlan.
struct ReduceToArgs {
  ConstDynTensor x;  ///< read: `from`
  DynTensor y;       ///< written: `to`
};

/// `y = x` summed over the dimensions `to` broadcasts (PyTorch's `sum_to_size`): a ReducePlan `Sum` with
/// keepdim over those dimensions (f32 accumulation, f64 for f64; deterministic), or a copy when there are
/// none. Layouts, overlap and workspace as ReducePlan's.
class ReduceToPlan {
 public:
  using Args = ReduceToArgs;
  ReduceToPlan() = default;
  static Result<ReduceToPlan> select(const Stream& stream, const ReduceToDescriptor& desc, PlanPreference pref = {});
  KernelSku sku() const { return sum_.sku(); }
  const ReduceToDescriptor& descriptor() const { return desc_; }
  /// Checks x and y against the descriptor, and that they do not overlap.
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return sum_.workspace_size(); }
  PrecisionGuarantee precision_guarantee() const { return sum_.precision_guarantee(); }
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;

 private:
  ReduceToDescriptor desc_;
  ReducePlan sum_;  ///< over `from` with a leading extent-1 dimension, which it always reduces
};

}  // namespace dynamic
}  // namespace baracuda
