/// \file
/// \brief `SequencePlan`: a 1-D tensor of evenly spaced values written on the device — `torch.arange(start,
/// end, step)` and `torch.linspace(start, end, steps)` (positions for rotary embeddings, index tensors,
/// grids) — without a host round trip.
///
/// - **Ops** (`SequenceOp`):
///   - `Arange`: `y[i] = start + i · step` for `0 ≤ i < count`, `count = ceil((end − start) / step)` (0 when
///     the range is empty); `step ≠ 0`, and `end − start` may not have the opposite sign of `step`
///     (`InvalidProblem`, as PyTorch: "upper bound and larger bound inconsistent with step sign").
///   - `Linspace`: `count = steps` values from `start` to `end` inclusive; `d = (end − start) / (steps − 1)`;
///     `y[i] = start + i · d` for `i < steps / 2` and `y[i] = end − (steps − 1 − i) · d` otherwise (PyTorch's
///     two-sided formula, so both end points are exact); `steps = 1` gives `[start]`, `steps = 0` an empty y.
/// - **Dtypes:** y f16, bf16, f32, f64, s8, u8, s32, s64.
/// - **Math.** Float kinds: every value is computed in f64 — `i` exactly (`count ≤ 2^53`), one fused
///   multiply-add `fma(step, i, start)` (linspace: `fma(d, i, start)`, `fma(−d, steps − 1 − i, end)`, with
///   `d` one correctly rounded f64 division), then one rounding to y's kind (to nearest even). PyTorch
///   computes f16/bf16/f32 in f32 on CUDA, so its results may differ from these in the last bit of f32 (they
///   are never less accurate here). Integer kinds: `Arange` takes integral `start`, `end` and `step` (within
///   ±2^53) and computes `start + i · step` in s64 exactly; `Linspace` computes as for floats and truncates
///   toward zero (as PyTorch's cast). Every value must fit y's kind: `select` checks the end values
///   (`InvalidProblem` otherwise); a non-finite start, end or step is `InvalidProblem`.
/// - **Layout:** y is 1-D `[count()]`, any stride (negative included), not 0 unless `count() ≤ 1`.
/// - **Alignment:** `y.data` aligned to the element size.
/// - **Workspace:** none. **Determinism:** bit-exact, the same on every device; safe under CUDA-graph capture.
#pragma once

#include <cstdint>

#include "baracuda/core/hash.hpp"
#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/plan.hpp"
#include "baracuda/core/sku.hpp"
#include "baracuda/core/stream.hpp"
#include "baracuda/core/tensor.hpp"
#include "baracuda/core/typed_plan.hpp"
#include "baracuda/core/workspace.hpp"

namespace baracuda {

/// Which sequence (see the file comment).
enum class SequenceOp : uint8_t {
  Arange = 0,    ///< `torch.arange(start, end, step)`
  Linspace = 1,  ///< `torch.linspace(start, end, steps)`
};
std::string_view to_string(SequenceOp op);

/// The problem: op, kind and the op's parameters. A hashable value.
struct SequenceDescriptor {
  SequenceOp op = SequenceOp::Arange;
  ElementKind element = ElementKind::F32;  ///< y: f16, bf16, f32, f64, s8, u8, s32, s64
  double start = 0;
  double end = 0;      ///< Arange: the exclusive bound; Linspace: the last value
  double step = 1;     ///< Arange only
  int64_t steps = 0;   ///< Linspace only: the number of values (≥ 0)

  SequenceDescriptor& with_element(ElementKind k) { element = k; return *this; }
  /// `torch.arange(start, end, step)`.
  SequenceDescriptor& arange(double start_, double end_, double step_ = 1) {
    op = SequenceOp::Arange, start = start_, end = end_, step = step_;
    return *this;
  }
  /// `torch.linspace(start, end, steps)`.
  SequenceDescriptor& linspace(double start_, double end_, int64_t steps_) {
    op = SequenceOp::Linspace, start = start_, end = end_, steps = steps_;
    return *this;
  }
  friend bool operator==(const SequenceDescriptor&, const SequenceDescriptor&) = default;
  size_t hash() const { return detail::hash_fields(op, element, start, end, step, steps); }
};

namespace detail {
/// The values' formula, fixed at select (src/ops/sequence/dispatch.hpp says how it is read).
struct SequenceFormula {
  bool exact_int = false;
  int64_t int_start = 0, int_step = 0;
  double start = 0, step = 0, end = 0;
  int64_t half = 0, last = 0;
};
struct SequenceLaunch;
using SequenceFn = Status (*)(const ExecContext&, const SequenceLaunch&);
}  // namespace detail

namespace dynamic {

/// The operands of a SequencePlan.
struct SequenceArgs {
  DynTensor y;  ///< written: the descriptor's kind, shape `[count()]`
};

/// The dtype-erased SequencePlan.
class SequencePlan : public detail::BoundFnPlan<SequenceDescriptor, detail::SequenceFn> {
  using BoundFnPlan::BoundFnPlan;

 public:
  using Args = SequenceArgs;

  static Result<SequencePlan> select(const Stream& stream, const SequenceDescriptor& desc, PlanPreference pref = {});
  /// Checks `y` against the descriptor: kind, shape `[count()]`, stride, alignment, non-null data.
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return 0; }
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  /// Re-validates, then launches (nothing for an empty y).
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;
  /// y's length: computed from the descriptor at `select`.
  int64_t count() const { return count_; }

 private:
  int64_t count_ = 0;
  detail::SequenceFormula formula_;
};

}  // namespace dynamic

/// Arguments of a typed SequencePlan.
template <class T>
struct SequenceArgs {
  TensorMut<T, 1> y;  ///< written: `[count()]`
  dynamic::SequenceArgs erased() const { return {DynTensor::of(y)}; }
};

/// Typed SequencePlan over `TensorMut<T, 1>`; see the file comment for the contract.
template <class T>
class SequencePlan : public detail::TypedPlan<dynamic::SequencePlan, SequenceArgs<T>> {
  using Base = detail::TypedPlan<dynamic::SequencePlan, SequenceArgs<T>>;
  friend Base;
  using Base::Base;

 public:
  /// The erased plan's select, after checking that T is the descriptor's element kind.
  static Result<SequencePlan> select(const Stream& stream, const SequenceDescriptor& desc, PlanPreference pref = {}) {
    return Base::template checked_select<SequencePlan, T, 1>("SequencePlan", "y", desc.element, {Shape{1}}, [&] {
      return dynamic::SequencePlan::select(stream, desc, pref);
    });
  }
  int64_t count() const { return this->erased().count(); }
};

}  // namespace baracuda
