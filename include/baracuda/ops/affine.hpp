/// \file
/// \brief `AffinePlan`: `out = α·in + β` elementwise.
///
/// - **Dtypes:** f16, bf16, f32, f64 (input and output of the same kind). Other kinds: `Unsupported`.
/// - **Math:** one fused multiply-add, rounded once: f16/bf16 load to f32, α and β are rounded to f32, the
///   result is `fmaf(α, in, β)` rounded to the element type; f64 uses `fma` in double throughout.
///   NaN and ±inf propagate as IEEE arithmetic does (a NaN result's sign and payload are unspecified).
///   Every device computes the same correctly rounded fma, so results are bit-identical across devices.
/// - **Layout:** same shape in and out, rank ≤ 8, any strides (negative ones included); the input may
///   broadcast (stride 0), the output may not. **Aliasing:** in place when `out.data == in.data` with equal
///   strides; other overlaps are undefined. **Alignment:** pointers aligned to the element size.
/// - **Workspace:** none. **Determinism:** bit-exact; safe under CUDA-graph capture.
#pragma once

#include "baracuda/core/hash.hpp"
#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/plan.hpp"
#include "baracuda/core/sku.hpp"
#include "baracuda/core/stream.hpp"
#include "baracuda/core/tensor.hpp"
#include "baracuda/core/typed_plan.hpp"
#include "baracuda/core/workspace.hpp"

namespace baracuda {

/// The problem: the element kind, the shape, α and β. A hashable value.
struct AffineDescriptor {
  ElementKind element = ElementKind::F32;
  Shape shape;
  double alpha = 1.0;
  double beta = 0.0;

  AffineDescriptor& with_element(ElementKind k) { element = k; return *this; }
  AffineDescriptor& with_shape(const Shape& s) { shape = s; return *this; }
  AffineDescriptor& with_alpha(double a) { alpha = a; return *this; }
  AffineDescriptor& with_beta(double b) { beta = b; return *this; }
  friend bool operator==(const AffineDescriptor&, const AffineDescriptor&) = default;
  size_t hash() const { return detail::hash_fields(element, shape, alpha, beta); }
};

namespace detail {
struct AffineLaunch;
using AffineFn = Status (*)(const ExecContext&, const AffineLaunch&);
}  // namespace detail

namespace dynamic {

/// The operands of an AffinePlan (`out = α·in + β`).
struct AffineArgs {
  ConstDynTensor in;  ///< read: the descriptor's kind and shape; may broadcast (stride 0)
  DynTensor out;      ///< written: the descriptor's kind and shape; may be `in` (same view)
};

/// The dtype/rank-erased AffinePlan.
class AffinePlan : public detail::BoundFnPlan<AffineDescriptor, detail::AffineFn> {
  using BoundFnPlan::BoundFnPlan;

 public:
  using Args = AffineArgs;

  static Result<AffinePlan> select(const Stream& stream, const AffineDescriptor& desc, PlanPreference pref = {});
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return 0; }
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;

 private:
};

}  // namespace dynamic

/// Arguments of a typed AffinePlan.
template <class T, size_t N>
struct AffineArgs {
  TensorRef<T, N> in;   ///< read: the descriptor's shape
  TensorMut<T, N> out;  ///< written: the descriptor's shape
  dynamic::AffineArgs erased() const { return {ConstDynTensor::of(in), DynTensor::of(out)}; }
};

/// Typed AffinePlan; see the file comment for the contract.
template <class T, size_t N>
class AffinePlan : public detail::TypedPlan<dynamic::AffinePlan, AffineArgs<T, N>> {
  using Base = detail::TypedPlan<dynamic::AffinePlan, AffineArgs<T, N>>;
  friend Base;
  using Base::Base;

 public:
  static Result<AffinePlan> select(const Stream& stream, const AffineDescriptor& desc, PlanPreference pref = {}) {
    return Base::template checked_select<AffinePlan, T, N>("AffinePlan", "in/out", desc.element, {desc.shape}, [&] {
      return dynamic::AffinePlan::select(stream, desc, pref);
    });
  }
};

}  // namespace baracuda
