/// \file
/// \brief The binary elementwise family: `BinaryPlan` (`out = op(a, b)`: add, sub, mul, div, pow, maximum,
/// minimum, atan2, fmod, remainder, copysign, hypot), `ComparePlan` (eq, ne, lt, le, gt, ge → Bool) and
/// `BinaryBackwardPlan` (dA and dB of a BinaryPlan in one pass), all with NumPy/PyTorch broadcasting.
///
/// The ops, their kinds and one-line semantics are listed once, in `binary_ops.def` (the catalog that
/// also generates the enums below); docs/ops/binary.md has the full table.
///
/// - **Operands:** each plan takes one argument struct, inputs then outputs: `dynamic::BinaryArgs{a, b, out}`,
///   `dynamic::CompareArgs{a, b, out}`, `dynamic::BinaryBackwardArgs{dy, a, b, da, db}` (read operands are
///   `ConstDynTensor`, written ones `DynTensor`); the typed `BinaryArgs<T, N>` etc. have the same fields.
/// - **Broadcasting:** the descriptor holds the shapes of `a` and `b`; the output has their broadcast
///   shape (`broadcast_shapes`: right-aligned, an extent 1 stretches, a missing leading dimension counts
///   as 1; e.g. [3, 1, 5] and [4, 1] give [3, 4, 5]). Shapes that do not broadcast are `InvalidProblem`
///   at `select`. `a` and `b` are passed with their own shapes and strides; the plan views them as
///   stride-0 tensors over the output shape.
/// - **Kinds:** a, b and out share one kind (no type promotion; ComparePlan writes Bool). f16, bf16, f32,
///   f64 for every op; s8, u8, s32, s64 also for add, sub, mul, maximum, minimum, fmod, remainder and
///   every comparison. Other (op, kind) pairs are `Unsupported`.
/// - **Math:** f16/bf16 load to f32, compute in f32 and round once to the element type; f32 computes in
///   f32; f64 in f64 (never through f32). Semantics are PyTorch's (`torch.add` … `torch.hypot`):
///   maximum/minimum propagate NaN; pow(x, 0) = 1 (also for NaN), a negative base with a non-integer
///   exponent is NaN; fmod has the sign of the dividend, remainder of the divisor, computed as PyTorch
///   does: `m = fmod(a, b); if (m != 0 && (b < 0) != (m < 0)) m += b` (so remainder(-1, inf) = inf and
///   remainder(-4, 2) = -0). Where PyTorch is unspecified, baracuda picks (and every device agrees):
///   maximum(-0, +0) = +0, minimum(-0, +0) = -0; a NaN result's sign and payload are unspecified.
/// - **Integers:** two's-complement wrap-around for add, sub, mul (as PyTorch). fmod truncates (sign of
///   the dividend), remainder floors (sign of the divisor). **Division by zero gives 0** for integer
///   fmod and remainder (PyTorch raises ZeroDivisionError on the CPU and is undefined on CUDA; baracuda
///   cannot raise from a kernel, and 0 is what NumPy returns), and `MIN fmod -1 = MIN remainder -1 = 0`
///   (the mathematical result; the C++ `%` is undefined there).
/// - **Comparisons** are exact (16-bit kinds compare their exact f32 values); NaN compares false except
///   for `ne`, which is true.
/// - **Layout:** rank ≤ 8 per operand, any strides (negative ones included); inputs may broadcast with
///   stride 0 themselves; the output may not have stride 0. **Aliasing:** in place when `out` is the same
///   view as `a` or `b` (same pointer and strides; the input then has the output's shape); other overlaps
///   are undefined. **Alignment:** pointers aligned to the element size.
/// - **Workspace:** none (the backward: see below). **Determinism:** bit-exact run to run; safe under
///   CUDA-graph capture.
///
/// **Backward (`BinaryBackwardPlan`, floating-point kinds):** given the output gradient `dy` (output
/// shape) and the forward inputs `a`, `b` (their own shapes), it writes `da` and `db` in one elementwise
/// pass, with PyTorch's formulas (derivatives.yaml), each **at the output (broadcast) shape or at its input's
/// own shape**, as the caller passes it. At the input's shape (where it differs from the output's) the pass
/// writes the full gradient to the workspace and a `ReduceToPlan` sums it down (f32 accumulation, f64 for
/// f64; deterministic): `workspace_size()` is what a run with both gradients at their inputs' shapes needs,
/// 256-byte aligned; a run with gradients at the output shape needs none.
///
/// | op | da | db |
/// |---|---|---|
/// | add / sub | dy | dy / −dy |
/// | mul | dy·b | dy·a |
/// | div | dy / b | −dy·((a / b) / b) |
/// | pow | 0 where b = 0, else dy·(b·a^(b−1)) | 0 where a = 0 and b ≥ 0, else dy·(y·log a) |
/// | maximum | dy where a > b, dy/2 where a = b, else 0 (NaN: dy) | dy where b > a, dy/2 where equal, else 0 (NaN: dy) |
/// | minimum | dy where a < b, dy/2 where a = b, else 0 (NaN: dy) | mirror of da |
/// | atan2 | dy·b / (a² + b²) | −dy·a / (a² + b²) |
/// | fmod / remainder | dy | −dy·trunc(a / b) / −dy·floor(a / b) (PyTorch's `div(rounding_mode=…)`) |
/// | copysign | dy·(y / a), 0 where a = 0 | 0 |
/// | hypot | dy·a / y | dy·b / y |
///
/// where y is the forward result, recomputed in registers from a and b and rounded to the element kind
/// (the value PyTorch saves; nothing extra is read). Intermediate values stay in f32 (f64 for f64) and
/// each gradient is rounded once, where PyTorch's 16-bit autograd rounds after every operation.
///
/// **Broadcast gradients are not reduced.** When `a` (or `b`) was broadcast, its true gradient is `da`
/// summed over the broadcast dimensions (PyTorch's `sum_to_size(a.shape)`). That reduction is left to
/// the caller until baracuda has a reduction family: `da`/`db` always have the output shape, and for an
/// input that was not broadcast they are its gradient as is.
///
/// Either output may be omitted: a `da` or `db` whose `data` is null is not computed (its kind, shape and
/// strides are ignored); at least one must be given unless the problem is empty. The same kernel serves
/// all three cases (when one output is omitted, the kernel writes the wanted gradient to both of its
/// output slots, which point at the same memory). `da`/`db` may be the same view as `dy`, `a` or `b`
/// (in place), but not the same memory as each other.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "baracuda/core/hash.hpp"
#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/plan.hpp"
#include "baracuda/core/sku.hpp"
#include "baracuda/core/stream.hpp"
#include "baracuda/core/tensor.hpp"
#include "baracuda/core/typed_plan.hpp"
#include "baracuda/core/workspace.hpp"
#include "baracuda/ops/reduce.hpp"

namespace baracuda {

/// The kinds every comparison and the integer-capable binary ops accept: f16, bf16, f32, f64, s8, u8, s32, s64.
using BinaryNumericTypes = type_list<__half, __nv_bfloat16, float, double, int8_t, uint8_t, int32_t, int64_t>;

/// The arithmetic ops of `BinaryPlan` / `BinaryBackwardPlan` (generated from binary_ops.def).
enum class BinaryOp : uint8_t {
#define BARACUDA_BINARY_OP(Enum, name, types, backward, doc) Enum,
#include "baracuda/ops/binary_ops.def"
#undef BARACUDA_BINARY_OP
};
/// The comparisons of `ComparePlan` (generated from binary_ops.def).
enum class CompareOp : uint8_t {
#define BARACUDA_COMPARE_OP(Enum, name, types, doc) Enum,
#include "baracuda/ops/binary_ops.def"
#undef BARACUDA_COMPARE_OP
};

inline constexpr size_t kNumBinaryOps = 0
#define BARACUDA_BINARY_OP(Enum, name, types, backward, doc) +1
#include "baracuda/ops/binary_ops.def"
#undef BARACUDA_BINARY_OP
    ;
inline constexpr size_t kNumCompareOps = 0
#define BARACUDA_COMPARE_OP(Enum, name, types, doc) +1
#include "baracuda/ops/binary_ops.def"
#undef BARACUDA_COMPARE_OP
    ;

/// The catalog name ("add", "remainder", ...).
constexpr std::string_view to_string(BinaryOp op) {
  switch (op) {
#define BARACUDA_BINARY_OP(Enum, name, types, backward, doc)                            \
  case BinaryOp::Enum:                                                                  \
    return #name;
#include "baracuda/ops/binary_ops.def"
#undef BARACUDA_BINARY_OP
  }
  return "?";
}
/// The catalog name ("eq", "lt", ...).
constexpr std::string_view to_string(CompareOp op) {
  switch (op) {
#define BARACUDA_COMPARE_OP(Enum, name, types, doc) \
  case CompareOp::Enum:                             \
    return #name;
#include "baracuda/ops/binary_ops.def"
#undef BARACUDA_COMPARE_OP
  }
  return "?";
}
/// Parses a catalog name; false when unknown.
bool parse_binary_op(std::string_view name, BinaryOp* out);
bool parse_compare_op(std::string_view name, CompareOp* out);

/// The broadcast of two shapes (NumPy/PyTorch rules: right-aligned; equal extents, or one of them 1; a
/// missing leading dimension counts as 1). `InvalidProblem` when they do not broadcast or a shape is
/// invalid (rank above kMaxRank, a negative extent).
Result<Shape> broadcast_shapes(const Shape& a, const Shape& b);

/// The problem of a BinaryPlan (and of its BinaryBackwardPlan): the op, the element kind, and the shapes
/// of a and b (the output shape is their broadcast).
struct BinaryDescriptor {
  BinaryOp op = BinaryOp::Add;
  ElementKind element = ElementKind::F32;
  Shape a_shape;
  Shape b_shape;

  BinaryDescriptor& with_op(BinaryOp o) { op = o; return *this; }
  BinaryDescriptor& with_element(ElementKind k) { element = k; return *this; }
  /// The shapes of a and b.
  BinaryDescriptor& with_shapes(const Shape& a, const Shape& b) { a_shape = a; b_shape = b; return *this; }
  /// a and b of the same shape.
  BinaryDescriptor& with_shape(const Shape& s) { return with_shapes(s, s); }
  friend bool operator==(const BinaryDescriptor&, const BinaryDescriptor&) = default;
  size_t hash() const { return detail::hash_fields(op, element, a_shape, b_shape); }
};

/// The problem of a ComparePlan: the comparison, the kind of a and b, and their shapes.
struct CompareDescriptor {
  CompareOp op = CompareOp::Eq;
  ElementKind element = ElementKind::F32;
  Shape a_shape;
  Shape b_shape;

  CompareDescriptor& with_op(CompareOp o) { op = o; return *this; }
  CompareDescriptor& with_element(ElementKind k) { element = k; return *this; }
  CompareDescriptor& with_shapes(const Shape& a, const Shape& b) { a_shape = a; b_shape = b; return *this; }
  CompareDescriptor& with_shape(const Shape& s) { return with_shapes(s, s); }
  friend bool operator==(const CompareDescriptor&, const CompareDescriptor&) = default;
  size_t hash() const { return detail::hash_fields(op, element, a_shape, b_shape); }
};

namespace detail {
struct BinaryLaunch;
struct BinaryBackwardLaunch;
using BinaryFn = Status (*)(const ExecContext&, const BinaryLaunch&);
using CompareFn = Status (*)(const ExecContext&, const BinaryLaunch&);
using BinaryBackwardFn = Status (*)(const ExecContext&, const BinaryBackwardLaunch&);
}  // namespace detail

namespace dynamic {

/// The operands of a BinaryPlan: inputs, then the output.
struct BinaryArgs {
  ConstDynTensor a;  ///< read: the descriptor's a shape and kind, any strides
  ConstDynTensor b;  ///< read: the descriptor's b shape and kind, any strides
  DynTensor out;     ///< written: `output_shape()`, the descriptor's kind; may be the same view as a or b
};

/// The operands of a ComparePlan: inputs, then the output.
struct CompareArgs {
  ConstDynTensor a;  ///< read: the descriptor's a shape and kind, any strides
  ConstDynTensor b;  ///< read: the descriptor's b shape and kind, any strides
  DynTensor out;     ///< written: `output_shape()`, Bool
};

/// The operands of a BinaryBackwardPlan: inputs, then the gradients (each may be empty: not computed).
struct BinaryBackwardArgs {
  ConstDynTensor dy;  ///< read: the output gradient, `output_shape()`, the descriptor's kind
  ConstDynTensor a;   ///< read: the forward a, the descriptor's a shape and kind
  ConstDynTensor b;   ///< read: the forward b, the descriptor's b shape and kind
  DynTensor da;  ///< written: dA at `output_shape()` or at a's shape (summed); empty (null data) = not computed
  DynTensor db;  ///< written: dB at `output_shape()` or at b's shape (summed); empty (null data) = not computed
};

/// The dtype/rank-erased BinaryPlan: `out = op(a, b)` with broadcasting.
class BinaryPlan : public detail::BoundPlan<BinaryDescriptor> {
  using BoundPlan::BoundPlan;

 public:
  using Args = BinaryArgs;
  BinaryPlan() = default;
  static Result<BinaryPlan> select(const Stream& stream, const BinaryDescriptor& desc, PlanPreference pref = {});
  /// a and b with the descriptor's shapes, out with `output_shape()`, all of the descriptor's kind.
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return 0; }
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;
  /// The broadcast of the descriptor's shapes.
  const Shape& output_shape() const { return out_shape_; }

 private:
  BinaryPlan(const BinaryDescriptor& d, const detail::PlanBinding& b, const Shape& out, detail::BinaryFn f)
      : BoundPlan(d, b), out_shape_(out), fn_(f) {}
  Shape out_shape_;
  detail::BinaryFn fn_ = nullptr;
};

/// The dtype/rank-erased ComparePlan: `out = a <op> b` (Bool) with broadcasting.
class ComparePlan : public detail::BoundPlan<CompareDescriptor> {
  using BoundPlan::BoundPlan;

 public:
  using Args = CompareArgs;
  ComparePlan() = default;
  static Result<ComparePlan> select(const Stream& stream, const CompareDescriptor& desc, PlanPreference pref = {});
  /// a and b with the descriptor's shapes and kind, out Bool with `output_shape()`.
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return 0; }
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;
  const Shape& output_shape() const { return out_shape_; }

 private:
  ComparePlan(const CompareDescriptor& d, const detail::PlanBinding& b, const Shape& out, detail::CompareFn f)
      : BoundPlan(d, b), out_shape_(out), fn_(f) {}
  Shape out_shape_;
  detail::CompareFn fn_ = nullptr;
};

/// The dtype/rank-erased BinaryBackwardPlan for the BinaryPlan of the same descriptor (floating kinds).
class BinaryBackwardPlan : public detail::BoundFnPlan<BinaryDescriptor, detail::BinaryBackwardFn> {
  using BoundFnPlan::BoundFnPlan;

 public:
  using Args = BinaryBackwardArgs;
  static Result<BinaryBackwardPlan> select(const Stream& stream, const BinaryDescriptor& desc,
                                           PlanPreference pref = {});
  /// dy with `output_shape()`, a and b with the descriptor's shapes; da and db (each omitted when its
  /// data is null) with `output_shape()` or their input's shape. All of the descriptor's kind.
  Status can_implement(const Args& args) const;
  /// What a run with da and db at their inputs' shapes needs (0 when neither input broadcasts).
  size_t workspace_size() const { return workspace_bytes_; }
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;
  /// The shape of dy (and of da and db when not summed): the broadcast of the descriptor's shapes.
  const Shape& output_shape() const { return out_shape_; }

 private:
  /// The elementwise pass, every gradient given at the output shape.
  Status launch(const detail::ExecContext& ctx, const Args& args) const;
  Shape out_shape_;
  std::optional<ReduceToPlan> to_a_, to_b_;  ///< where a's / b's shape is not the output's
  size_t workspace_bytes_ = 0;
};

}  // namespace dynamic

/// Arguments of a typed BinaryPlan: a and b of rank N (extent 1 where they broadcast), out of rank N.
template <class T, size_t N>
struct BinaryArgs {
  TensorRef<T, N> a;
  TensorRef<T, N> b;
  TensorMut<T, N> out;
  dynamic::BinaryArgs erased() const { return {ConstDynTensor::of(a), ConstDynTensor::of(b), DynTensor::of(out)}; }
};

/// Typed BinaryPlan; the descriptor's a and b shapes must both have rank N. See the file comment.
template <class T, size_t N>
class BinaryPlan : public detail::TypedPlan<dynamic::BinaryPlan, BinaryArgs<T, N>> {
  using Base = detail::TypedPlan<dynamic::BinaryPlan, BinaryArgs<T, N>>;
  friend Base;
  using Base::Base;

 public:
  static Result<BinaryPlan> select(const Stream& stream, const BinaryDescriptor& desc, PlanPreference pref = {}) {
    return Base::template checked_select<BinaryPlan, T, N>(
        "BinaryPlan", "a/b/out", desc.element, {desc.a_shape, desc.b_shape},
        [&] { return dynamic::BinaryPlan::select(stream, desc, pref); });
  }
};

/// Arguments of a typed ComparePlan: a and b of rank N, a Bool out of rank N.
template <class T, size_t N>
struct CompareArgs {
  TensorRef<T, N> a;
  TensorRef<T, N> b;
  TensorMut<bool, N> out;
  dynamic::CompareArgs erased() const { return {ConstDynTensor::of(a), ConstDynTensor::of(b), DynTensor::of(out)}; }
};

/// Typed ComparePlan; the descriptor's a and b shapes must both have rank N.
template <class T, size_t N>
class ComparePlan : public detail::TypedPlan<dynamic::ComparePlan, CompareArgs<T, N>> {
  using Base = detail::TypedPlan<dynamic::ComparePlan, CompareArgs<T, N>>;
  friend Base;
  using Base::Base;

 public:
  static Result<ComparePlan> select(const Stream& stream, const CompareDescriptor& desc, PlanPreference pref = {}) {
    return Base::template checked_select<ComparePlan, T, N>(
        "ComparePlan", "a/b", desc.element, {desc.a_shape, desc.b_shape},
        [&] { return dynamic::ComparePlan::select(stream, desc, pref); });
  }
};

/// Arguments of a typed BinaryBackwardPlan: dy, da, db of rank N with the output shape; a and b of rank N.
/// Leave `da` or `db` default-constructed (null data) to skip it.
template <class T, size_t N>
struct BinaryBackwardArgs {
  TensorRef<T, N> dy;
  TensorRef<T, N> a;
  TensorRef<T, N> b;
  TensorMut<T, N> da;
  TensorMut<T, N> db;
  dynamic::BinaryBackwardArgs erased() const {
    return {ConstDynTensor::of(dy), ConstDynTensor::of(a), ConstDynTensor::of(b), DynTensor::of(da),
            DynTensor::of(db)};
  }
};

/// Typed BinaryBackwardPlan; the descriptor's a and b shapes must both have rank N.
template <class T, size_t N>
class BinaryBackwardPlan : public detail::TypedPlan<dynamic::BinaryBackwardPlan, BinaryBackwardArgs<T, N>> {
  using Base = detail::TypedPlan<dynamic::BinaryBackwardPlan, BinaryBackwardArgs<T, N>>;
  friend Base;
  using Base::Base;

 public:
  static Result<BinaryBackwardPlan> select(const Stream& stream, const BinaryDescriptor& desc,
                                           PlanPreference pref = {}) {
    return Base::template checked_select<BinaryBackwardPlan, T, N>(
        "BinaryBackwardPlan", "dy/a/b/da/db", desc.element, {desc.a_shape, desc.b_shape},
        [&] { return dynamic::BinaryBackwardPlan::select(stream, desc, pref); });
  }
};

}  // namespace baracuda
