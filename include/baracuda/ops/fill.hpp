/// \file
/// \brief `FillPlan`: writes one constant into every element of a tensor (`torch.Tensor.fill_`).
///
/// - **Dtypes:** every `ElementKind`, including fp8 and packed 4-bit (S4/U4).
/// - **Value:** a `Scalar`, converted once at `select` with `CastPlan`'s rules (round to nearest even;
///   float → integer truncates toward zero). A value the element type cannot hold (overflow, NaN or ±inf
///   into an integer type, ±inf into fp8 E4M3) is rejected with `InvalidProblem`, as PyTorch's `fill_` does.
///   For floating kinds "overflow" means a finite value that rounds to ±inf (or to NaN in E4M3): 65519 fills
///   f16 with 65504, 65520 is rejected; values that underflow to ±0 and NaN are accepted. Integer kinds accept
///   exactly the values whose truncation lies in range (S4: −8..7, U4: 0..15); bool accepts any value (≠ 0).
/// - **Layout:** any rank ≤ 8, any strides for byte-sized kinds (negative ones included); a stride-0
///   dimension of extent > 1 is rejected (the output would alias itself); other self-overlapping strides
///   are undefined. Packed S4/U4 outputs must be contiguous; when the element
///   count is odd the unused high nibble of the last byte is set to 0.
/// - **Alignment:** `out.data` aligned to the element size.
/// - **Workspace:** none. **Determinism:** bit-exact; safe under CUDA-graph capture.
#pragma once

#include "baracuda/core/hash.hpp"
#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/plan.hpp"
#include "baracuda/core/scalar.hpp"
#include "baracuda/core/sku.hpp"
#include "baracuda/core/stream.hpp"
#include "baracuda/core/tensor.hpp"
#include "baracuda/core/typed_plan.hpp"
#include "baracuda/core/workspace.hpp"

namespace baracuda {

/// The problem: which kind, which shape, which value. A hashable value.
struct FillDescriptor {
  ElementKind element = ElementKind::F32;
  Shape shape;
  Scalar value;

  FillDescriptor& with_element(ElementKind k) { element = k; return *this; }
  FillDescriptor& with_shape(const Shape& s) { shape = s; return *this; }
  FillDescriptor& with_value(Scalar v) { value = v; return *this; }
  friend bool operator==(const FillDescriptor&, const FillDescriptor&) = default;
  size_t hash() const { return detail::hash_fields(element, shape, value); }
};

namespace detail {
struct FillLaunch;
using FillFn = Status (*)(const ExecContext&, const FillLaunch&);
}  // namespace detail

namespace dynamic {

/// The operands of a FillPlan.
struct FillArgs {
  DynTensor out;  ///< written: the descriptor's kind and shape (packed S4/U4: contiguous)
};

/// The dtype/rank-erased FillPlan.
class FillPlan : public detail::BoundFnPlan<FillDescriptor, detail::FillFn> {
  using BoundFnPlan::BoundFnPlan;

 public:
  using Args = FillArgs;

  static Result<FillPlan> select(const Stream& stream, const FillDescriptor& desc, PlanPreference pref = {});
  /// Checks `out` against the descriptor: kind, shape, strides, alignment, non-null data.
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return 0; }
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  /// Re-validates, then launches (nothing for an empty tensor).
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;

 private:
  uint64_t bits_ = 0;  // the converted value's bit pattern (a full byte for S4/U4)
};

}  // namespace dynamic

/// Arguments of a typed FillPlan.
template <class T, size_t N>
struct FillArgs {
  TensorMut<T, N> out;  ///< written: the descriptor's shape
  dynamic::FillArgs erased() const { return {DynTensor::of(out)}; }
};

/// Typed FillPlan over `TensorMut<T, N>`; see the file comment for the contract.
template <class T, size_t N>
class FillPlan : public detail::TypedPlan<dynamic::FillPlan, FillArgs<T, N>> {
  using Base = detail::TypedPlan<dynamic::FillPlan, FillArgs<T, N>>;
  friend Base;
  using Base::Base;

 public:
  static Result<FillPlan> select(const Stream& stream, const FillDescriptor& desc, PlanPreference pref = {}) {
    return Base::template checked_select<FillPlan, T, N>("FillPlan", "out", desc.element, {desc.shape},
                                                         [&] { return dynamic::FillPlan::select(stream, desc, pref); });
  }
};

}  // namespace baracuda
