/// \file
/// \brief The ternary elementwise family: `TernaryPlan` (`out = op(a, b, c)`: clamp, lerp, addcmul, addcdiv,
/// fma), `TernaryBackwardPlan` (da, db, dc in one pass), `WherePlan` (`out = cond ? a : b`) and
/// `WhereBackwardPlan` (da, db from dy), all with NumPy/PyTorch broadcasting over the three operands.
///
/// The ops are listed once, in `BARACUDA_TERNARY_OPS` below (the catalog that generates `TernaryOp`, the
/// dispatch tables, the test sweeps and the profiler's scenarios); docs/ops/ternary.md has the full table.
///
/// | op | out | PyTorch | kinds |
/// |---|---|---|---|
/// | clamp | min(max(a, b), c); NaN when b or c is NaN | `torch.clamp(a, min=b, max=c)` | f16 bf16 f32 f64 s8 u8 s32 s64 |
/// | lerp | \|c\| < 0.5 ? fma(c, b − a, a) : fma(−(b − a), 1 − c, b) | `torch.lerp(a, b, c)` | float kinds |
/// | addcmul | fma(value, b·c, a) | `torch.addcmul(a, b, c, value=value)` | float kinds |
/// | addcdiv | fma(value, b / c, a) | `torch.addcdiv(a, b, c, value=value)` | float kinds |
/// | fma | a·b + c rounded once | (`torch.addcmul(c, a, b)` rounds twice) | float kinds |
///
/// - **Operands:** each plan takes one argument struct, inputs then outputs: `dynamic::TernaryArgs{a, b, c, out}`,
///   `dynamic::TernaryBackwardArgs{dy, a, b, c, da, db, dc}`, `dynamic::WhereArgs{cond, a, b, out}`,
///   `dynamic::WhereBackwardArgs{cond, dy, da, db}` (read operands are `ConstDynTensor`, written ones
///   `DynTensor`); the typed `TernaryArgs<T, N>` etc. have the same fields.
/// - **Broadcasting:** the descriptor holds the shapes of a, b and c; the output has their broadcast shape
///   (`broadcast_shapes` applied twice). Shapes that do not broadcast are `InvalidProblem` at `select`.
/// - **Kinds:** a, b, c and out share one kind (no type promotion). Other (op, kind) pairs are
///   `Unsupported`.
/// - **Math:** f16/bf16 load to f32, compute in f32 and round once to the element type; f32 in f32; f64 in
///   f64. Each formula is PyTorch's CUDA kernel's (aten/src/ATen/native/cuda/{Lerp,PointwiseOps}Kernel.cu)
///   with the products that nvcc contracts written as explicit fused multiply-adds, so that every device
///   (host, sim, cuda) computes the same IEEE operations and agrees **bit for bit**. `value` (addcmul,
///   addcdiv) is rounded to the compute type first, as PyTorch does; it must be 1 for the other ops.
///   clamp is PyTorch's: `std::min(std::max(a, b), c)` (so a NaN `a` propagates, max(−0, +0) is −0, and when
///   b > c the result is c), NaN when b or c is NaN. A NaN result's sign and payload are unspecified.
/// - **Layout:** rank ≤ 8 per operand, any strides (negative and 0 included for inputs); the output may not
///   have stride 0. **Aliasing:** in place when `out` is the same view as an input of the output's shape;
///   other overlaps are undefined. **Alignment:** pointers aligned to the element size.
/// - **Workspace:** none. **Determinism:** bit-exact run to run; safe under CUDA-graph capture.
///
/// **Backward (`TernaryBackwardPlan`, float kinds; PyTorch's derivatives.yaml):**
///
/// | op | da | db | dc |
/// |---|---|---|---|
/// | clamp | dy where b ≤ a ≤ c, else 0 | dy where a < b and b < c, else 0 | dy where a > c or c < b, else 0 |
/// | lerp | dy·(1 − c) | dy·c | dy·(b − a) |
/// | addcmul | dy | dy·(c·value) | dy·(b·value) |
/// | addcdiv | dy | dy·(value / c) | −dy·value·b / (c·c) |
/// | fma | dy·b | dy·a | dy |
///
/// Intermediates are in the compute type and each gradient is rounded once. **Broadcast gradients are not
/// reduced:** da, db, dc have the output shape (see binary.hpp; sum over the broadcast dimensions to get an
/// input's gradient). Any of the three may be omitted (null data; at least one must be given unless the
/// problem is empty); the given ones must not overlap each other, and may be the same view as an input.
///
/// **Where:** `cond` is Bool, a, b and out share any byte-stored kind (every kind but s4/u4); out is a bit
/// copy of the chosen input (NaN payloads and −0 kept). `WhereBackwardPlan` (float kinds) writes
/// `da = cond ? dy : 0` and `db = cond ? 0 : dy` at the output shape; either may be omitted.
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

/// The kinds clamp accepts: the float kinds and s8, u8, s32, s64.
using ClampTypes = type_list<__half, __nv_bfloat16, float, double, int8_t, uint8_t, int32_t, int64_t>;

/// The catalog: X(Enum, name, forward kinds, summary). Every op has a backward on the float kinds.
#define BARACUDA_TERNARY_OPS(X)                                                  \
  X(Clamp, clamp, ClampTypes, "min(max(a, b), c): a clamped to [b, c]")          \
  X(Lerp, lerp, FloatTypes, "a + c·(b - a): from a to b by weight c")            \
  X(Addcmul, addcmul, FloatTypes, "a + value·(b·c)")                             \
  X(Addcdiv, addcdiv, FloatTypes, "a + value·(b / c)")                           \
  X(Fma, fma, FloatTypes, "a·b + c rounded once")

/// The ops of `TernaryPlan` / `TernaryBackwardPlan`.
enum class TernaryOp : uint8_t {
#define BARACUDA_TERNARY_ENUM(Enum, name, types, doc) Enum,
  BARACUDA_TERNARY_OPS(BARACUDA_TERNARY_ENUM)
#undef BARACUDA_TERNARY_ENUM
};
inline constexpr size_t kNumTernaryOps = 0
#define BARACUDA_TERNARY_COUNT(Enum, name, types, doc) +1
    BARACUDA_TERNARY_OPS(BARACUDA_TERNARY_COUNT)
#undef BARACUDA_TERNARY_COUNT
    ;

/// The catalog name ("clamp", "lerp", ...).
std::string_view to_string(TernaryOp op);
/// Parses a catalog name; false when unknown.
bool parse_ternary_op(std::string_view name, TernaryOp* out);

/// The problem of a TernaryPlan (and of its TernaryBackwardPlan): the op, the element kind, the shapes of
/// a, b and c (the output shape is their broadcast), and addcmul's/addcdiv's `value`.
struct TernaryDescriptor {
  TernaryOp op = TernaryOp::Clamp;
  ElementKind element = ElementKind::F32;
  Shape a_shape;
  Shape b_shape;
  Shape c_shape;
  double value = 1.0;

  TernaryDescriptor& with_op(TernaryOp o) { op = o; return *this; }
  TernaryDescriptor& with_element(ElementKind k) { element = k; return *this; }
  TernaryDescriptor& with_shapes(const Shape& a, const Shape& b, const Shape& c) {
    a_shape = a; b_shape = b; c_shape = c; return *this;
  }
  /// a, b and c of the same shape.
  TernaryDescriptor& with_shape(const Shape& s) { return with_shapes(s, s, s); }
  TernaryDescriptor& with_value(double v) { value = v; return *this; }
  friend bool operator==(const TernaryDescriptor&, const TernaryDescriptor&) = default;
  size_t hash() const { return detail::hash_fields(op, element, a_shape, b_shape, c_shape, value); }
};

/// The problem of a WherePlan (and of its WhereBackwardPlan): the kind of a, b and out, and the shapes of
/// cond, a and b (the output shape is their broadcast).
struct WhereDescriptor {
  ElementKind element = ElementKind::F32;
  Shape cond_shape;
  Shape a_shape;
  Shape b_shape;

  WhereDescriptor& with_element(ElementKind k) { element = k; return *this; }
  WhereDescriptor& with_shapes(const Shape& cond, const Shape& a, const Shape& b) {
    cond_shape = cond; a_shape = a; b_shape = b; return *this;
  }
  WhereDescriptor& with_shape(const Shape& s) { return with_shapes(s, s, s); }
  friend bool operator==(const WhereDescriptor&, const WhereDescriptor&) = default;
  size_t hash() const { return detail::hash_fields(element, cond_shape, a_shape, b_shape); }
};

namespace detail {
struct TernaryLaunch;
struct TernaryBackwardLaunch;
using TernaryFn = Status (*)(const ExecContext&, const TernaryLaunch&);
using TernaryBackwardFn = Status (*)(const ExecContext&, const TernaryBackwardLaunch&);
}  // namespace detail

namespace dynamic {

/// The operands of a TernaryPlan: inputs, then the output.
struct TernaryArgs {
  ConstDynTensor a;  ///< read: the descriptor's a shape and kind, any strides
  ConstDynTensor b;  ///< read: the descriptor's b shape and kind (clamp's min)
  ConstDynTensor c;  ///< read: the descriptor's c shape and kind (clamp's max, lerp's weight)
  DynTensor out;     ///< written: `output_shape()`, the descriptor's kind; may be the same view as an input
};

/// The operands of a TernaryBackwardPlan: inputs, then the gradients (each may be empty: not computed).
struct TernaryBackwardArgs {
  ConstDynTensor dy;  ///< read: the output gradient, `output_shape()`, the descriptor's kind
  ConstDynTensor a;   ///< read: the forward a, the descriptor's a shape and kind
  ConstDynTensor b;   ///< read: the forward b, the descriptor's b shape and kind
  ConstDynTensor c;   ///< read: the forward c, the descriptor's c shape and kind
  DynTensor da;       ///< written: dA at `output_shape()` (not reduced); empty (null data) = not computed
  DynTensor db;       ///< written: dB at `output_shape()` (not reduced); empty = not computed
  DynTensor dc;       ///< written: dC at `output_shape()` (not reduced); empty = not computed
};

/// The operands of a WherePlan: inputs, then the output.
struct WhereArgs {
  ConstDynTensor cond;  ///< read: Bool, the descriptor's cond shape
  ConstDynTensor a;     ///< read: the descriptor's a shape and kind (taken where cond is true)
  ConstDynTensor b;     ///< read: the descriptor's b shape and kind (taken where cond is false)
  DynTensor out;        ///< written: `output_shape()`, the descriptor's kind; may be the same view as a or b
};

/// The operands of a WhereBackwardPlan: inputs, then the gradients (either may be empty: not computed).
struct WhereBackwardArgs {
  ConstDynTensor cond;  ///< read: Bool, the descriptor's cond shape
  ConstDynTensor dy;    ///< read: the output gradient, `output_shape()`, the descriptor's kind
  DynTensor da;         ///< written: cond ? dy : 0 at `output_shape()`; empty (null data) = not computed
  DynTensor db;         ///< written: cond ? 0 : dy at `output_shape()`; empty = not computed
};

/// The dtype/rank-erased TernaryPlan: `out = op(a, b, c)` with broadcasting.
class TernaryPlan : public detail::BoundPlan<TernaryDescriptor> {
  using BoundPlan::BoundPlan;

 public:
  using Args = TernaryArgs;
  TernaryPlan() = default;
  static Result<TernaryPlan> select(const Stream& stream, const TernaryDescriptor& desc, PlanPreference pref = {});
  /// a, b, c with the descriptor's shapes, out with `output_shape()`, all of the descriptor's kind.
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return 0; }
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;
  /// The broadcast of the descriptor's shapes.
  const Shape& output_shape() const { return out_shape_; }

 private:
  TernaryPlan(const TernaryDescriptor& d, const Shape& out, const detail::PlanBinding& b, detail::TernaryFn f)
      : BoundPlan(d, b), out_shape_(out), fn_(f) {}
  Shape out_shape_;
  detail::TernaryFn fn_ = nullptr;
};

/// The dtype/rank-erased TernaryBackwardPlan for the TernaryPlan of the same descriptor (float kinds).
class TernaryBackwardPlan : public detail::BoundPlan<TernaryDescriptor> {
  using BoundPlan::BoundPlan;

 public:
  using Args = TernaryBackwardArgs;
  TernaryBackwardPlan() = default;
  static Result<TernaryBackwardPlan> select(const Stream& stream, const TernaryDescriptor& desc,
                                            PlanPreference pref = {});
  /// dy with `output_shape()`; a, b, c with the descriptor's shapes; da, db, dc (each omitted when its data
  /// is null) with `output_shape()`. All of the descriptor's kind.
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return 0; }
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;
  const Shape& output_shape() const { return out_shape_; }

 private:
  TernaryBackwardPlan(const TernaryDescriptor& d, const Shape& out, const detail::PlanBinding& b,
                      detail::TernaryBackwardFn f)
      : BoundPlan(d, b), out_shape_(out), fn_(f) {}
  Shape out_shape_;
  detail::TernaryBackwardFn fn_ = nullptr;
};

/// The dtype/rank-erased WherePlan: `out = cond ? a : b` with broadcasting.
class WherePlan : public detail::BoundPlan<WhereDescriptor> {
  using BoundPlan::BoundPlan;

 public:
  using Args = WhereArgs;
  WherePlan() = default;
  static Result<WherePlan> select(const Stream& stream, const WhereDescriptor& desc, PlanPreference pref = {});
  /// cond Bool, a and b of the descriptor's kind, each with its shape; out with `output_shape()`.
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return 0; }
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;
  const Shape& output_shape() const { return out_shape_; }

 private:
  WherePlan(const WhereDescriptor& d, const Shape& out, const detail::PlanBinding& b, detail::TernaryFn f)
      : BoundPlan(d, b), out_shape_(out), fn_(f) {}
  Shape out_shape_;
  detail::TernaryFn fn_ = nullptr;
};

/// The dtype/rank-erased WhereBackwardPlan (float kinds): da, db from cond and dy.
class WhereBackwardPlan : public detail::BoundPlan<WhereDescriptor> {
  using BoundPlan::BoundPlan;

 public:
  using Args = WhereBackwardArgs;
  WhereBackwardPlan() = default;
  static Result<WhereBackwardPlan> select(const Stream& stream, const WhereDescriptor& desc,
                                          PlanPreference pref = {});
  /// cond Bool with its shape; dy, da, db (each of da, db omitted when its data is null) with
  /// `output_shape()`, of the descriptor's kind.
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return 0; }
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;
  const Shape& output_shape() const { return out_shape_; }

 private:
  WhereBackwardPlan(const WhereDescriptor& d, const Shape& out, const detail::PlanBinding& b,
                    detail::TernaryBackwardFn f)
      : BoundPlan(d, b), out_shape_(out), fn_(f) {}
  Shape out_shape_;
  detail::TernaryBackwardFn fn_ = nullptr;
};

}  // namespace dynamic

/// Arguments of a typed TernaryPlan: a, b, c of rank N (extent 1 where they broadcast), out of rank N.
template <class T, size_t N>
struct TernaryArgs {
  TensorRef<T, N> a;
  TensorRef<T, N> b;
  TensorRef<T, N> c;
  TensorMut<T, N> out;
  dynamic::TernaryArgs erased() const {
    return {ConstDynTensor::of(a), ConstDynTensor::of(b), ConstDynTensor::of(c), DynTensor::of(out)};
  }
};

/// Arguments of a typed TernaryBackwardPlan: dy and the gradients with the output shape (leave a gradient
/// default-constructed to skip it), a, b, c of rank N.
template <class T, size_t N>
struct TernaryBackwardArgs {
  TensorRef<T, N> dy;
  TensorRef<T, N> a;
  TensorRef<T, N> b;
  TensorRef<T, N> c;
  TensorMut<T, N> da;
  TensorMut<T, N> db;
  TensorMut<T, N> dc;
  dynamic::TernaryBackwardArgs erased() const {
    return {ConstDynTensor::of(dy), ConstDynTensor::of(a), ConstDynTensor::of(b), ConstDynTensor::of(c),
            DynTensor::of(da),      DynTensor::of(db),     DynTensor::of(dc)};
  }
};

/// Arguments of a typed WherePlan: a Bool cond, a and b of rank N, out of rank N.
template <class T, size_t N>
struct WhereArgs {
  TensorRef<bool, N> cond;
  TensorRef<T, N> a;
  TensorRef<T, N> b;
  TensorMut<T, N> out;
  dynamic::WhereArgs erased() const {
    return {ConstDynTensor::of(cond), ConstDynTensor::of(a), ConstDynTensor::of(b), DynTensor::of(out)};
  }
};

/// Arguments of a typed WhereBackwardPlan: cond of rank N, dy, da, db with the output shape.
template <class T, size_t N>
struct WhereBackwardArgs {
  TensorRef<bool, N> cond;
  TensorRef<T, N> dy;
  TensorMut<T, N> da;
  TensorMut<T, N> db;
  dynamic::WhereBackwardArgs erased() const {
    return {ConstDynTensor::of(cond), ConstDynTensor::of(dy), DynTensor::of(da), DynTensor::of(db)};
  }
};

/// Typed TernaryPlan; the descriptor's shapes must all have rank N. See the file comment.
template <class T, size_t N>
class TernaryPlan : public detail::TypedPlan<dynamic::TernaryPlan, TernaryArgs<T, N>> {
  using Base = detail::TypedPlan<dynamic::TernaryPlan, TernaryArgs<T, N>>;
  friend Base;
  using Base::Base;

 public:
  static Result<TernaryPlan> select(const Stream& stream, const TernaryDescriptor& desc, PlanPreference pref = {}) {
    return Base::template checked_select<TernaryPlan, T, N>(
        "TernaryPlan", "a/b/c/out", desc.element, {desc.a_shape, desc.b_shape, desc.c_shape},
        [&] { return dynamic::TernaryPlan::select(stream, desc, pref); });
  }
};

/// Typed TernaryBackwardPlan; the descriptor's shapes must all have rank N.
template <class T, size_t N>
class TernaryBackwardPlan : public detail::TypedPlan<dynamic::TernaryBackwardPlan, TernaryBackwardArgs<T, N>> {
  using Base = detail::TypedPlan<dynamic::TernaryBackwardPlan, TernaryBackwardArgs<T, N>>;
  friend Base;
  using Base::Base;

 public:
  static Result<TernaryBackwardPlan> select(const Stream& stream, const TernaryDescriptor& desc,
                                            PlanPreference pref = {}) {
    return Base::template checked_select<TernaryBackwardPlan, T, N>(
        "TernaryBackwardPlan", "dy/a/b/c/da/db/dc", desc.element, {desc.a_shape, desc.b_shape, desc.c_shape},
        [&] { return dynamic::TernaryBackwardPlan::select(stream, desc, pref); });
  }
};

/// Typed WherePlan; the descriptor's shapes must all have rank N.
template <class T, size_t N>
class WherePlan : public detail::TypedPlan<dynamic::WherePlan, WhereArgs<T, N>> {
  using Base = detail::TypedPlan<dynamic::WherePlan, WhereArgs<T, N>>;
  friend Base;
  using Base::Base;

 public:
  static Result<WherePlan> select(const Stream& stream, const WhereDescriptor& desc, PlanPreference pref = {}) {
    return Base::template checked_select<WherePlan, T, N>(
        "WherePlan", "a/b/out", desc.element, {desc.cond_shape, desc.a_shape, desc.b_shape},
        [&] { return dynamic::WherePlan::select(stream, desc, pref); });
  }
};

/// Typed WhereBackwardPlan; the descriptor's shapes must all have rank N.
template <class T, size_t N>
class WhereBackwardPlan : public detail::TypedPlan<dynamic::WhereBackwardPlan, WhereBackwardArgs<T, N>> {
  using Base = detail::TypedPlan<dynamic::WhereBackwardPlan, WhereBackwardArgs<T, N>>;
  friend Base;
  using Base::Base;

 public:
  static Result<WhereBackwardPlan> select(const Stream& stream, const WhereDescriptor& desc,
                                          PlanPreference pref = {}) {
    return Base::template checked_select<WhereBackwardPlan, T, N>(
        "WhereBackwardPlan", "dy/da/db", desc.element, {desc.cond_shape, desc.a_shape, desc.b_shape},
        [&] { return dynamic::WhereBackwardPlan::select(stream, desc, pref); });
  }
};

}  // namespace baracuda
