/// \file
/// \brief `AffinePlan`: `y = α·x + β` elementwise.
///
/// - **Dtypes:** f16, bf16, f32, f64 (input and output of the same kind). Other kinds: `Unsupported`.
/// - **Math:** one fused multiply-add, rounded once: f16/bf16 load to f32, α and β are rounded to f32, the
///   result is `fmaf(α, x, β)` rounded to the element type; f64 uses `fma` in double throughout.
///   NaN and ±inf propagate as IEEE arithmetic does (a NaN result's sign and payload are unspecified).
///   Every device computes the same correctly rounded fma, so results are bit-identical across devices.
/// - **Layout:** same shape in and out, rank ≤ 8, any strides (negative ones included); the input may
///   broadcast (stride 0), the output may not. **Aliasing:** in place when `out.data == in.data` with equal strides; other overlaps
///   are undefined. **Alignment:** pointers aligned to the element size.
/// - **Workspace:** none. **Determinism:** bit-exact; safe under CUDA-graph capture.
#pragma once

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/plan.hpp"
#include "baracuda/core/sku.hpp"
#include "baracuda/core/stream.hpp"
#include "baracuda/core/tensor.hpp"
#include "baracuda/core/workspace.hpp"

namespace baracuda {

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
  size_t hash() const;
};

namespace detail {
struct AffineLaunch;
using AffineFn = Status (*)(const ExecContext&, const AffineLaunch&);
}  // namespace detail

namespace dynamic {
/// The dtype/rank-erased AffinePlan.
class AffinePlan {
 public:
  static Result<AffinePlan> select(const Stream& stream, const AffineDescriptor& desc, PlanPreference pref = {});
  Status can_implement(const DynTensor& in, const DynTensor& out) const;
  size_t workspace_size() const { return 0; }
  KernelSku sku() const { return binding_.sku; }
  PrecisionGuarantee precision_guarantee() const;
  Status run(const Stream& stream, Workspace workspace, const DynTensor& in, const DynTensor& out) const;
  const AffineDescriptor& descriptor() const { return desc_; }

 private:
  AffineDescriptor desc_;
  detail::PlanBinding binding_;
  detail::AffineFn fn_ = nullptr;
};
}  // namespace dynamic

template <class T, size_t N>
struct AffineArgs {
  TensorRef<T, N> in;
  TensorMut<T, N> out;
};

/// Typed AffinePlan; see the file comment for the contract.
template <class T, size_t N>
class AffinePlan {
 public:
  static Result<AffinePlan> select(const Stream& stream, const AffineDescriptor& desc, PlanPreference pref = {}) {
    BARACUDA_TRY(detail::check_typed_element("AffinePlan", "in/out", desc.element, kind_of<T>));
    BARACUDA_TRY(detail::check_typed_rank("AffinePlan", desc.shape.rank, static_cast<int>(N)));
    auto p = dynamic::AffinePlan::select(stream, desc, pref);
    if (!p) return p.error();
    return AffinePlan(std::move(p).value());
  }
  Status can_implement(const AffineArgs<T, N>& a) const {
    return plan_.can_implement(DynTensor::of(a.in), DynTensor::of(a.out));
  }
  size_t workspace_size() const { return plan_.workspace_size(); }
  KernelSku sku() const { return plan_.sku(); }
  PrecisionGuarantee precision_guarantee() const { return plan_.precision_guarantee(); }
  Status run(const Stream& stream, Workspace ws, const AffineArgs<T, N>& a) const {
    return plan_.run(stream, ws, DynTensor::of(a.in), DynTensor::of(a.out));
  }
  const dynamic::AffinePlan& erased() const { return plan_; }

 private:
  explicit AffinePlan(dynamic::AffinePlan p) : plan_(std::move(p)) {}
  dynamic::AffinePlan plan_;
};

}  // namespace baracuda
