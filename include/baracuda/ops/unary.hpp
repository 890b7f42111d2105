/// \file
/// \brief `UnaryPlan` (`y = f(x)` elementwise) and `UnaryBackwardPlan` (`dx = dy·f'(…)`) for the ops of
/// `UnaryKind`: math, trigonometric and hyperbolic functions, rounding, erf/erfc/lgamma and the activation
/// functions of `torch.nn.functional`. The op list, each op's parameters and what its backward reads come
/// from one catalog, `baracuda/ops/unary_ops.def` (see docs/ops/unary.md for the table).
///
/// - **Dtypes:** f16, bf16, f32, f64; every operand of a plan has the descriptor's kind. Other kinds:
///   `Unsupported`.
/// - **Math:** f16/bf16 load to f32 exactly, f32 computes in f32, f64 in f64 (never through f32); the
///   result is rounded once to the element type. The op's parameters are rounded to that compute type
///   (f32 or f64) once, at launch, and every comparison with them happens there. Transcendental functions
///   are the device's (CUDA's math library on `cuda`, the C library on `sim`; the `host` reference computes
///   in long double): results can differ between devices by a few units in the last place of the compute
///   type. The ops that involve no rounded function (neg, abs, sign, the rounding ops, relu, relu6,
///   hardtanh, hardshrink, threshold, …; the `exact` column of docs/ops/unary.md) give the same bits on
///   every device.
/// - **Layout:** every operand has the descriptor's shape, rank ≤ 8, any strides (negative ones included);
///   inputs (`in`; `dy`, `saved`) may broadcast with stride 0, outputs may not. **Aliasing:** an output may
///   be an input when it is the same view (same pointer, equal strides): `out == in`, and `dx == dy` or
///   `dx == saved`; other overlaps are undefined. **Alignment:** pointers aligned to the element size.
/// - **Workspace:** none. **Determinism:** bit-exact run to run; safe under CUDA-graph capture.
///
/// **Parameters** (PyTorch's names and defaults; each op takes the ones its catalog line lists, setting
/// any other is `InvalidProblem`; every value must be finite):
///
/// | op | parameters | rule |
/// |---|---|---|
/// | leaky_relu | `negative_slope` = 0.01 | |
/// | elu | `alpha` = 1 | |
/// | celu | `alpha` = 1 | alpha ≠ 0 (PyTorch raises too) |
/// | softplus | `beta` = 1, `threshold` = 20 | beta ≠ 0 |
/// | logit | `eps` = -1 | eps ≤ 0.5; eps < 0 means no clamping (PyTorch's `eps=None`) |
/// | hardtanh | `min_val` = -1, `max_val` = 1 | min_val ≤ max_val |
/// | hardshrink, softshrink | `lambd` = 0.5 | lambd ≥ 0 |
/// | threshold | `threshold`, `value` (required) | |
///
/// **Backward:** `dx = dy · f'` where the catalog's `saved` field says which tensor the formula reads,
/// exactly as PyTorch's derivatives.yaml does: `Input` (x), `Output` (y = f(x): reciprocal, sqrt, rsqrt,
/// cbrt, exp, exp2, expm1, tan, tanh, sigmoid, relu) or `None` (dy only: neg, frac, and the ops whose
/// derivative is zero wherever it exists — sign, floor, ceil, round, trunc — whose backward writes zeros,
/// as PyTorch's does). For `None` the `saved` operand is not read and may be empty (or null); one given
/// with data is still checked (kind, shape, alignment) like a read operand.
/// Every op has a backward. At kinks and NaN inputs the gradient follows PyTorch's scalar (and CUDA)
/// kernels: relu at 0 → 0 (via `threshold_backward` on y, so a NaN y passes dy); abs at 0 → 0;
/// leaky_relu at 0 → negative_slope·dy; hardtanh/relu6 at the bounds → 0 and at NaN → dy; hardshrink and
/// softshrink at ±lambd → 0; threshold at x = threshold → 0; hardswish at -3 → -dy/2 and at 3 → 1.5·dy;
/// hardsigmoid at ±3 → 0; elu/selu/celu at 0 → the left derivative and at NaN → dy; logit without eps →
/// NaN outside [0, 1] and dy·inf at 0 and 1, with eps ≥ 0 → 0 outside [eps, 1-eps].
///
/// **Where results deliberately differ from PyTorch** (values are equal; see docs/ops/unary.md):
/// relu(-0) = +0 (PyTorch keeps -0); softplus and its backward are computed in forms that do not overflow
/// when `threshold` is large (PyTorch's give inf and NaN there); softsign' is dy/(1+|x|)², 0 at ±inf (PyTorch's composite autograd gives NaN there);
/// hardsigmoid' is dy/6 in the compute type (PyTorch multiplies by the f32 constant 1/6 even in f64).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "baracuda/core/hash.hpp"
#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/element.hpp"
#include "baracuda/core/plan.hpp"
#include "baracuda/core/sku.hpp"
#include "baracuda/core/stream.hpp"
#include "baracuda/core/tensor.hpp"
#include "baracuda/core/typed_plan.hpp"
#include "baracuda/core/workspace.hpp"

namespace baracuda {

/// The unary ops, in catalog order.
enum class UnaryKind : uint8_t {
#define BARACUDA_UNARY_OP(name, Enum, params, saved, types, doc) Enum,
#include "baracuda/ops/unary_ops.def"
#undef BARACUDA_UNARY_OP
};

/// Number of `UnaryKind` values.
inline constexpr size_t kNumUnaryKinds = 0
#define BARACUDA_UNARY_OP(name, Enum, params, saved, types, doc) +1
#include "baracuda/ops/unary_ops.def"
#undef BARACUDA_UNARY_OP
    ;

/// What an op's backward reads besides dy.
enum class UnarySaved : uint8_t {
  None,    ///< nothing: dx depends on dy only
  Input,   ///< the forward input x
  Output,  ///< the forward output y = f(x)
};
constexpr std::string_view to_string(UnarySaved s) {
  return s == UnarySaved::None ? "none" : s == UnarySaved::Input ? "input" : "output";
}

/// The parameters of the unary ops (PyTorch's names).
enum class UnaryParam : uint8_t { NegativeSlope, Alpha, Beta, Threshold, Value, Lambd, MinVal, MaxVal, Eps };
inline constexpr size_t kNumUnaryParams = 9;
/// "negative_slope", "alpha", … (the names the catalog's parameter strings use).
constexpr std::string_view to_string(UnaryParam p) {
  constexpr std::string_view names[kNumUnaryParams] = {"negative_slope", "alpha",   "beta",    "threshold", "value",
                                                       "lambd",          "min_val", "max_val", "eps"};
  return static_cast<size_t>(p) < kNumUnaryParams ? names[static_cast<size_t>(p)] : "?";
}

/// What the catalog says about one op.
struct UnaryOpInfo {
  std::string_view name;    ///< "leaky_relu"
  UnaryKind kind;
  std::string_view params;  ///< the parameter string: "negative_slope=0.01" (see unary_ops.def)
  UnarySaved saved;         ///< what the backward reads besides dy
  std::string_view doc;     ///< one line: what it computes
};

/// Every op, in `UnaryKind` order.
inline constexpr std::array<UnaryOpInfo, kNumUnaryKinds> kUnaryOps = {{
#define BARACUDA_UNARY_OP(name, Enum, params, saved, types, doc) \
  UnaryOpInfo{#name, UnaryKind::Enum, params, UnarySaved::saved, doc},
#include "baracuda/ops/unary_ops.def"
#undef BARACUDA_UNARY_OP
}};

/// The catalog entry of `k` (k must be a valid kind).
constexpr const UnaryOpInfo& unary_op_info(UnaryKind k) { return kUnaryOps[static_cast<size_t>(k)]; }
/// "exp", "leaky_relu", … ("?" for an invalid kind).
constexpr std::string_view to_string(UnaryKind k) {
  return static_cast<size_t>(k) < kNumUnaryKinds ? kUnaryOps[static_cast<size_t>(k)].name : "?";
}
/// Parses an op name; false when unknown.
constexpr bool parse_unary_kind(std::string_view name, UnaryKind* out) {
  for (const UnaryOpInfo& op : kUnaryOps)
    if (op.name == name) {
      *out = op.kind;
      return true;
    }
  return false;
}

/// The problem of a `UnaryPlan` or a `UnaryBackwardPlan`: the op, the element kind, the shape and the op's
/// parameters (unset: the op's default).
struct UnaryDescriptor {
  UnaryKind kind = UnaryKind::Relu;
  ElementKind element = ElementKind::F32;
  Shape shape;
  std::array<std::optional<double>, kNumUnaryParams> params{};

  UnaryDescriptor& with_kind(UnaryKind k) { kind = k; return *this; }
  UnaryDescriptor& with_element(ElementKind k) { element = k; return *this; }
  UnaryDescriptor& with_shape(const Shape& s) { shape = s; return *this; }
  UnaryDescriptor& with_parameter(UnaryParam p, double v) { params[static_cast<size_t>(p)] = v; return *this; }
  UnaryDescriptor& with_negative_slope(double v) { return with_parameter(UnaryParam::NegativeSlope, v); }
  UnaryDescriptor& with_alpha(double v) { return with_parameter(UnaryParam::Alpha, v); }
  UnaryDescriptor& with_beta(double v) { return with_parameter(UnaryParam::Beta, v); }
  UnaryDescriptor& with_threshold(double v) { return with_parameter(UnaryParam::Threshold, v); }
  UnaryDescriptor& with_value(double v) { return with_parameter(UnaryParam::Value, v); }
  UnaryDescriptor& with_lambd(double v) { return with_parameter(UnaryParam::Lambd, v); }
  UnaryDescriptor& with_min_val(double v) { return with_parameter(UnaryParam::MinVal, v); }
  UnaryDescriptor& with_max_val(double v) { return with_parameter(UnaryParam::MaxVal, v); }
  /// eps < 0 disables logit's clamp (PyTorch's eps=None); the default.
  UnaryDescriptor& with_eps(double v) { return with_parameter(UnaryParam::Eps, v); }
  std::optional<double> parameter(UnaryParam p) const { return params[static_cast<size_t>(p)]; }

  friend bool operator==(const UnaryDescriptor&, const UnaryDescriptor&) = default;
  size_t hash() const { return detail::hash_fields(kind, element, shape, params); }
};

namespace detail {
struct UnaryLaunch;
struct UnaryBackwardLaunch;
using UnaryFn = Status (*)(const ExecContext&, const UnaryLaunch&);
using UnaryBackwardFn = Status (*)(const ExecContext&, const UnaryBackwardLaunch&);
/// The descriptor's parameters with defaults applied, in `UnaryParam` order (internal).
using UnaryParamValues = std::array<double, kNumUnaryParams>;
}  // namespace detail

namespace dynamic {

/// The operands of a UnaryPlan (`out = f(in)`).
struct UnaryArgs {
  ConstDynTensor in;  ///< read: the descriptor's kind and shape; may broadcast (stride 0)
  DynTensor out;      ///< written: the descriptor's kind and shape; may be `in` (same view)
};

/// The operands of a UnaryBackwardPlan (`dx = dy · f'(saved)`).
struct UnaryBackwardArgs {
  ConstDynTensor dy;     ///< read: the descriptor's kind and shape; may broadcast (stride 0)
  ConstDynTensor saved;  ///< read: x or y as `saved_operand()` says, the descriptor's kind and shape; may be
                         ///< empty (not read) when it says `None`, and is checked when given anyway
  DynTensor dx;          ///< written: the descriptor's kind and shape; may be `dy` or `saved` (same view)
};

/// The dtype/rank-erased UnaryPlan: `out = f(in)`.
class UnaryPlan : public detail::BoundFnPlan<UnaryDescriptor, detail::UnaryFn> {
  using BoundFnPlan::BoundFnPlan;

 public:
  using Args = UnaryArgs;

  static Result<UnaryPlan> select(const Stream& stream, const UnaryDescriptor& desc, PlanPreference pref = {});
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return 0; }
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;

 private:
  detail::UnaryParamValues params_{};
};

/// The dtype/rank-erased UnaryBackwardPlan: `dx = dy · f'(saved)`, where `saved` is x, y or unused as
/// `saved_operand()` (the catalog) says.
class UnaryBackwardPlan : public detail::BoundFnPlan<UnaryDescriptor, detail::UnaryBackwardFn> {
  using BoundFnPlan::BoundFnPlan;

 public:
  using Args = UnaryBackwardArgs;

  static Result<UnaryBackwardPlan> select(const Stream& stream, const UnaryDescriptor& desc,
                                          PlanPreference pref = {});
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return 0; }
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  /// What `saved` must hold: the forward input, the forward output, or nothing (not read).
  UnarySaved saved_operand() const { return unary_op_info(desc_.kind).saved; }
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;

 private:
  detail::UnaryParamValues params_{};
};

}  // namespace dynamic

/// Arguments of a typed UnaryPlan.
template <class T, size_t N>
struct UnaryArgs {
  TensorRef<T, N> in;   ///< read: the descriptor's shape
  TensorMut<T, N> out;  ///< written: the descriptor's shape
  dynamic::UnaryArgs erased() const { return {ConstDynTensor::of(in), DynTensor::of(out)}; }
};

/// Arguments of a typed UnaryBackwardPlan. `saved` is x or y as `UnaryBackwardPlan::saved_operand()` says
/// (default-constructed when it says None).
template <class T, size_t N>
struct UnaryBackwardArgs {
  TensorRef<T, N> dy;     ///< read: the descriptor's shape
  TensorRef<T, N> saved;  ///< read: the descriptor's shape, or default-constructed
  TensorMut<T, N> dx;     ///< written: the descriptor's shape
  dynamic::UnaryBackwardArgs erased() const {
    return {ConstDynTensor::of(dy), ConstDynTensor::of(saved), DynTensor::of(dx)};
  }
};

/// Typed UnaryPlan; see the file comment for the contract.
template <class T, size_t N>
class UnaryPlan : public detail::TypedPlan<dynamic::UnaryPlan, UnaryArgs<T, N>> {
  using Base = detail::TypedPlan<dynamic::UnaryPlan, UnaryArgs<T, N>>;
  friend Base;
  using Base::Base;

 public:
  static Result<UnaryPlan> select(const Stream& stream, const UnaryDescriptor& desc, PlanPreference pref = {}) {
    return Base::template checked_select<UnaryPlan, T, N>("UnaryPlan", "in/out", desc.element, {desc.shape}, [&] {
      return dynamic::UnaryPlan::select(stream, desc, pref);
    });
  }
};

/// Typed UnaryBackwardPlan; see the file comment for the contract.
template <class T, size_t N>
class UnaryBackwardPlan : public detail::TypedPlan<dynamic::UnaryBackwardPlan, UnaryBackwardArgs<T, N>> {
  using Base = detail::TypedPlan<dynamic::UnaryBackwardPlan, UnaryBackwardArgs<T, N>>;
  friend Base;
  using Base::Base;

 public:
  static Result<UnaryBackwardPlan> select(const Stream& stream, const UnaryDescriptor& desc,
                                          PlanPreference pref = {}) {
    return Base::template checked_select<UnaryBackwardPlan, T, N>(
        "UnaryBackwardPlan", "dy/saved/dx", desc.element, {desc.shape},
        [&] { return dynamic::UnaryBackwardPlan::select(stream, desc, pref); });
  }
  /// What `saved` must hold (see `dynamic::UnaryBackwardPlan::saved_operand`).
  UnarySaved saved_operand() const { return this->erased().saved_operand(); }
};

}  // namespace baracuda
