/// \file
/// \brief `CastPlan`: converts every element of a tensor to another element kind (`Tensor.to(dtype)`).
///
/// **Kinds:** every pair of the byte-sized kinds (f16, bf16, f32, f64, s8, u8, s32, s64, bool, u32,
/// fp8 E4M3, fp8 E5M2), the same kind included (a strided copy). Packed S4/U4 are not cast here (the
/// quantization family packs and unpacks them): `Unsupported`.
///
/// **Conversion rules** (one rounding, from the exact source value):
/// - float → float: round to nearest, ties to even; NaN → NaN; ±inf → ±inf; finite overflow → ±inf.
///   To fp8 the `saturate_fp8` flag chooses between PyTorch's behaviour (false, the default: E4M3 has no
///   infinity, so overflow and ±inf give NaN; E5M2 overflow gives ±inf) and saturation (true: finite
///   overflow and ±inf clamp to ±max finite, 448 or 57344; NaN stays NaN).
/// - integer → float: correctly rounded (no double rounding, also for s64 → bf16); overflow as above.
/// - float → integer: truncate toward zero (as C++ and PyTorch); values outside the target's range clamp
///   to its min/max and NaN gives 0 (PyTorch leaves these undefined; this is CUDA's `cvt.rzi` behaviour).
/// - integer → integer: two's-complement wrap-around (as C++ and PyTorch).
/// - anything → bool: `x != 0` (NaN → true); bool → anything: 0 or 1 (bool inputs must hold 0 or 1).
/// - same kind → a copy: the bits are unchanged (NaN payloads included). Otherwise a NaN result is some
///   NaN of the output kind; its sign and payload are unspecified.
///
/// **Layout:** same shape in and out, rank ≤ 8, any strides (negative ones included); the input may
/// broadcast (stride 0), the output may not. **Aliasing:** in place (`out.data == in.data`) only with equal
/// strides and equal element sizes; other overlaps are undefined. **Alignment:** each pointer aligned to its
/// element size. **Workspace:** none. **Determinism:** bit-exact; safe under CUDA-graph capture.
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

/// The problem: the input and output kinds, the shape, the fp8 overflow rule. A hashable value.
struct CastDescriptor {
  ElementKind input = ElementKind::F32;
  ElementKind output = ElementKind::F32;
  Shape shape;
  /// fp8 outputs only: clamp finite overflow and ±inf to ±max finite instead of PyTorch's NaN/inf.
  bool saturate_fp8 = false;

  CastDescriptor& with_input(ElementKind k) { input = k; return *this; }
  CastDescriptor& with_output(ElementKind k) { output = k; return *this; }
  CastDescriptor& with_shape(const Shape& s) { shape = s; return *this; }
  CastDescriptor& with_saturate_fp8(bool s) { saturate_fp8 = s; return *this; }
  friend bool operator==(const CastDescriptor&, const CastDescriptor&) = default;
  size_t hash() const { return detail::hash_fields(input, output, shape, saturate_fp8); }
};

namespace detail {
struct CastLaunch;
using CastFn = Status (*)(const ExecContext&, const CastLaunch&);
}  // namespace detail

namespace dynamic {

/// The operands of a CastPlan.
struct CastArgs {
  ConstDynTensor in;  ///< read: the descriptor's shape, of kind `input`; may broadcast (stride 0)
  DynTensor out;      ///< written: the descriptor's shape, of kind `output`; may be `in` (see Aliasing)
};

/// The dtype/rank-erased CastPlan.
class CastPlan : public detail::BoundFnPlan<CastDescriptor, detail::CastFn> {
  using BoundFnPlan::BoundFnPlan;

 public:
  using Args = CastArgs;

  static Result<CastPlan> select(const Stream& stream, const CastDescriptor& desc, PlanPreference pref = {});
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return 0; }
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;

 private:
};

}  // namespace dynamic

/// Arguments of a typed CastPlan.
template <class TIn, class TOut, size_t N>
struct CastArgs {
  TensorRef<TIn, N> in;   ///< read: the descriptor's shape
  TensorMut<TOut, N> out;  ///< written: the descriptor's shape
  dynamic::CastArgs erased() const { return {ConstDynTensor::of(in), DynTensor::of(out)}; }
};

/// Typed CastPlan; see the file comment for the contract.
template <class TIn, class TOut, size_t N>
class CastPlan : public detail::TypedPlan<dynamic::CastPlan, CastArgs<TIn, TOut, N>> {
  using Base = detail::TypedPlan<dynamic::CastPlan, CastArgs<TIn, TOut, N>>;
  friend Base;
  using Base::Base;

 public:
  static Result<CastPlan> select(const Stream& stream, const CastDescriptor& desc, PlanPreference pref = {}) {
    BARACUDA_TRY(detail::check_typed_element("CastPlan", "in", desc.input, kind_of<TIn>));
    return Base::template checked_select<CastPlan, TOut, N>(
        "CastPlan", "out", desc.output, {desc.shape}, [&] { return dynamic::CastPlan::select(stream, desc, pref); });
  }
};

}  // namespace baracuda
