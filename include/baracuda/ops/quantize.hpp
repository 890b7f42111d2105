/// \file
/// \brief Affine quantization: `dynamic::QuantizePlan` runs one `QuantizeOp` — quantize, dequantize,
/// fake-quantize, the learnable fake-quantize, and their backward ops — the descriptor's `op` — at every
/// `QuantGranularity`; the typed `QuantizePlan<T, TQ, N, Op>` wraps it for one op fixed at compile time.
/// Operands (`dynamic::QuantizeArgs`, inputs then outputs): a forward op reads `x` and writes `y` ("x in, y
/// out": quantize writes the quantized y, dequantize reads the quantized x); a backward op reads `dy` (and x)
/// and writes `dx`; the family's catalog, quantize_ops.def, lists the fields each op uses.
///
/// **The arithmetic** follows the descriptor's `QuantConvention` (quant_convention.hpp). Write `r(x, s)` for
/// x against the scale:
/// - `PyTorch` (default; PyTorch 1.13's CPU kernels bit for bit): `r = x · inv`, `inv = 1.0f / s` rounded to
///   f32. With f64 data PyTorch takes the scale as f32 too: `inv` is computed from `f32(s)` and the
///   fake-quantize output multiplies by `f32(s)`, both widened to f64.
/// - `Exact`: `r = x / s`, one correctly rounded division (f32, or f64 for f64 data).
/// - `Vllm` (Quantize and Dequantize, f16/bf16/f32 data: vLLM's `static_scaled_int8_quant` with an azp):
///   `t = cvt.rni.sat.s32(x · f32(1/s))` (NaN → 0), `y = clamp(t + zp)` with the sum wrapping in 32 bits.
///   vLLM's symmetric static kernel divides: that is `Exact` with `zp = 0`.
/// - `TransformerEngine`: `Unsupported` (FP8 only; fp8.hpp).
///
/// The ops (rounding half to even throughout; `zp` added after rounding; computed in f32 for f16/bf16/f32
/// data and in f64 for f64 data):
/// - quantize (x float, y quantized): `y = clamp(nearbyint(r(x, s)) + zp, qmin, qmax)`, clamped on the way
///   to storage. A NaN `r` (a NaN input, or 0/0) quantizes to `zp` (PTX `cvt.rni` turns NaN into 0); ±inf
///   clamps to qmax/qmin.
/// - dequantize (x quantized, y float): `y = (x − zp) · s`, rounded once to the output type (the same in
///   every convention).
/// - fake-quantize: `y = (clamp(nearbyint(r(x, s)) + zp, qmin, qmax) − zp) · s`, in x's type.
/// - straight-through backward of quantize: `dx = dy / s · 1[qmin ≤ nearbyint(r(x, s)) + zp ≤ qmax]`
///   (inclusive, on the **unclamped** value, recomputed from the saved x); of fake-quantize `dx = dy · mask`
///   with the same mask; of dequantize `dx = dy · s` (the gradient with respect to the quantized x taken as
///   real-valued; dx is float, of the descriptor's shape).
/// - learnable fake-quantize (LSQ, PyTorch's `_fake_quantize_learnable_per_{tensor,channel}_affine`): the
///   zero point is real-valued and the forward uses `zp' = clamp(nearbyint(zp), qmin, qmax)`.
///   - `Exact`: the backward uses the forward's `zp'` and `v = nearbyint(x / s) + zp'`, so the gradient is
///     the gradient of the forward computed: `dx = dy` inside the range and 0 outside, and per element
///     `ds = dy·(y − x)/s` inside, `dy·(qmin − zp')` below, `dy·(qmax − zp')` above; `dzp = 0` inside and
///     `−dy·s` outside; `ds` and `dzp` are summed over each parameter's elements (in f64, times
///     `grad_factor`, rounded once).
///   - `PyTorch`: its backward kernels exactly — a per-tensor zero point is read as f32 and becomes
///     `trunc(clamp(f32(zp) + 0.5f))` (so −3.4 → −2 and 2.5 → 3 where the forward gives −3 and 2; the
///     per-tensor forward also reads it as f32 before rounding), others `clamp(nearbyint(zp))`; the mask is
///     on `v = nearbyint(fma(x, inv, zp'))` (zp' added **before** rounding, and the product not rounded
///     first: PyTorch's x86-64 kernels are compiled with fma contraction); per element, left to right in
///     f32, `ds = dy·fma(v − zp', f32(s), −x)·inv·gf` inside (y − x without rounding y), `dy·(qmin or
///     qmax − zp')·gf` outside, `dzp = dy·(−1)·f32(s)·gf` outside, with `gf = f32(grad_factor)`; the terms
///     are summed per parameter in f64 and rounded once (PyTorch sums in f32 in its own order, so sums over
///     many elements can differ in the last bits; one-element parameters match bit for bit).
/// **Element kinds.** Float tensors (x and y where not quantized, dx, dy): the descriptor's `element`, f16,
/// bf16, f32, f64. Quantized (Quantize's y, Dequantize's x): the descriptor's `quantized`, s8, u8, and
/// packed s4/u4 (two values per byte, the even index in the low nibble, along the **last** dimension, whose
/// extent must be even — and so must the group size of a per-group granularity along the last axis, so that
/// no byte holds two groups' values; `InvalidProblem` otherwise, as in dynamic_range_quantize.hpp; packed
/// tensors are contiguous). Scale: f32 for f16/bf16/f32 data, f64 for f64 data (the opmath type); zero
/// point: int32 (learnable: the scale's type). `qmin`/`qmax` default to the quantized kind's range and must
/// lie inside it with `qmin ≤ qmax` (for fake-quantize, `quantized` only names that range; the learnable
/// variant also needs `qmin ≤ 0 ≤ qmax`, as PyTorch does).
/// Under the `PyTorch` and `Exact` conventions an s32 zero point must lie in `[qmin, qmax]` (PyTorch rejects
/// others): the host and sim devices report `InvalidProblem` at `run` otherwise; cuda does not check the
/// values (that needs a synchronisation) and computes the formulas above with it. `Vllm` takes any zero
/// point, as vLLM's kernels do. Scales are not inspected: s = 0 follows IEEE division (see above).
///
/// **Layout.** Float and int8 tensors: any strides (negative ones included); inputs may broadcast (stride 0),
/// outputs may not. Scale and zero-point tensors have the granularity's parameter shape, any strides.
/// **Aliasing:** an output may overwrite an input of the same element size in place (same pointer, equal
/// strides): `FakeQuantize`'s y over x, a backward op's dx over dy or x; other overlaps are undefined.
///
/// **Workspace.** None, except `FakeQuantizeLearnableBackward` (partial sums; see `workspace_size()`).
/// **Determinism.** Every plan is bit-stable run to run; the elementwise plans also agree bit for bit across
/// devices. The learnable backward sums in a fixed order per (device, launch geometry).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "baracuda/core/hash.hpp"
#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/plan.hpp"
#include "baracuda/core/sku.hpp"
#include "baracuda/core/stream.hpp"
#include "baracuda/core/tensor.hpp"
#include "baracuda/core/typed_plan.hpp"
#include "baracuda/core/workspace.hpp"
#include "baracuda/ops/quant_convention.hpp"
#include "baracuda/ops/quant_granularity.hpp"

namespace baracuda {

/// The quantization operations (the descriptor's `op`), one per line of the family's catalog,
/// baracuda/ops/quantize_ops.def, in its order: Quantize, QuantizeBackward, Dequantize, DequantizeBackward,
/// FakeQuantize, FakeQuantizeBackward, FakeQuantizeLearnable, FakeQuantizeLearnableBackward. The catalog
/// lists the `QuantizeArgs` fields each reads and writes (`detail::kQuantizeOps`) and what it computes.
enum class QuantizeOp : uint8_t {
#define BARACUDA_QUANTIZE_OP(name, Enum, table, reads, writes, form, doc) Enum,
#include "baracuda/ops/quantize_ops.def"
#undef BARACUDA_QUANTIZE_OP
};
/// "quantize", "quantize_backward", …
std::string_view to_string(QuantizeOp op);

/// Describes a quantization problem: the op, the float data, the quantized storage, the shape and the
/// granularity.
struct QuantizeDescriptor {
  QuantizeOp op = QuantizeOp::Quantize;      ///< which operation the plan runs
  ElementKind element = ElementKind::F32;    ///< the float data: x, y (where not quantized), dx, dy
  ElementKind quantized = ElementKind::S8;   ///< the quantized storage (Quantize's y, Dequantize's x): s8, u8, s4, u4
  Shape shape;                               ///< the float tensor's (logical) shape, rank 1..8
  QuantGranularity granularity;              ///< which elements share (scale, zero point)
  std::optional<int32_t> quant_min;          ///< default: the smallest value of `quantized`
  std::optional<int32_t> quant_max;          ///< default: the largest value of `quantized`
  double grad_factor = 1.0;                  ///< learnable backward: the factor on ds and dzp
  /// Whose arithmetic (see the file comment): PyTorch (default), Exact, or Vllm (Quantize and Dequantize).
  QuantConvention convention = QuantConvention::PyTorch;

  QuantizeDescriptor& with_op(QuantizeOp o) { op = o; return *this; }
  QuantizeDescriptor& with_element(ElementKind k) { element = k; return *this; }
  QuantizeDescriptor& with_quantized(ElementKind k) { quantized = k; return *this; }
  QuantizeDescriptor& with_shape(const Shape& s) { shape = s; return *this; }
  QuantizeDescriptor& with_granularity(const QuantGranularity& g) { granularity = g; return *this; }
  QuantizeDescriptor& with_range(int32_t qmin, int32_t qmax) {
    quant_min = qmin;
    quant_max = qmax;
    return *this;
  }
  QuantizeDescriptor& with_grad_factor(double f) { grad_factor = f; return *this; }
  QuantizeDescriptor& with_convention(QuantConvention c) { convention = c; return *this; }
  friend bool operator==(const QuantizeDescriptor&, const QuantizeDescriptor&) = default;
  size_t hash() const {
    return detail::hash_fields(op, element, quantized, shape, granularity, quant_min, quant_max, grad_factor,
                               convention);
  }
};

namespace detail {
struct QuantizeLaunch;
using QuantizeFn = Status (*)(const ExecContext&, const QuantizeLaunch&);

/// The catalog's flags for the `QuantizeArgs` fields (quantize_ops.def's reads and writes).
namespace quantize_operand {
enum : unsigned {
  X = 1u << 0, Scale = 1u << 1, ZeroPoint = 1u << 2, Dy = 1u << 3,  // inputs
  Y = 1u << 4, Dx = 1u << 5, DScale = 1u << 6, DZeroPoint = 1u << 7,  // outputs
};
}  // namespace quantize_operand

/// Which operand is quantized, or what the zero point is (quantize_ops.def's form).
enum class QuantizeForm : uint8_t {
  Quantizes,    ///< y is quantized
  Dequantizes,  ///< x is quantized
  Float,        ///< no quantized operand; the zero point is s32
  Learnable,    ///< no quantized operand; the zero point is real-valued (the scale's kind)
};

/// One catalog line: the op's name, the fields it reads and writes (quantize_operand flags), its form and
/// what it computes.
struct QuantizeOpInfo {
  std::string_view name;
  unsigned reads, writes;
  QuantizeForm form;
  std::string_view doc;
};

namespace quantize_operand {
inline constexpr QuantizeOpInfo kQuantizeOps[] = {
#define BARACUDA_QUANTIZE_OP(name, Enum, table, reads, writes, form, doc) {#name, reads, writes, QuantizeForm::form, doc},
#include "baracuda/ops/quantize_ops.def"
#undef BARACUDA_QUANTIZE_OP
};
}  // namespace quantize_operand
/// The catalog, indexed by `QuantizeOp`.
using quantize_operand::kQuantizeOps;

/// Whether `op` is one of the catalog's.
constexpr bool is_quantize_op(QuantizeOp op) { return static_cast<size_t>(op) < std::size(kQuantizeOps); }

/// The catalog flag of the `QuantizeArgs` field named `field` (0 for none).
constexpr unsigned quantize_operand_flag(std::string_view field) {
  using namespace quantize_operand;
  constexpr std::string_view kNames[] = {"x", "scale", "zero_point", "dy", "y", "dx", "dscale", "dzero_point"};
  for (unsigned i = 0; i < std::size(kNames); ++i)
    if (field == kNames[i]) return 1u << i;
  return 0;
}

/// Whether `op` reads or writes the `QuantizeArgs` field named `field` (its catalog line).
constexpr bool quantize_op_uses(QuantizeOp op, std::string_view field) {
  if (!is_quantize_op(op)) return false;
  const QuantizeOpInfo& i = kQuantizeOps[static_cast<size_t>(op)];
  return ((i.reads | i.writes) & quantize_operand_flag(field)) != 0;
}
}  // namespace detail

namespace dynamic {

/// The operands of a quantization plan, by role: inputs, then outputs. Each op reads and writes the ones its
/// `QuantizeOp` names; the others must be left empty (default-constructed). x, y, dy and dx have the
/// descriptor's shape; scale, zero_point, dscale and dzero_point `param_shape()`.
struct QuantizeArgs {
  ConstDynTensor x = {};           ///< read: float (`element`; Quantize*, FakeQuantize*) or quantized (Dequantize)
  ConstDynTensor scale = {};       ///< read: `scale_kind()` (every op)
  ConstDynTensor zero_point = {};  ///< read: s32 (learnable: `scale_kind()`); empty for DequantizeBackward
  ConstDynTensor dy = {};          ///< read (backward ops): the upstream gradient, `element`
  DynTensor y = {};                ///< written (forward ops): quantized (Quantize) or `element` (the others)
  DynTensor dx = {};               ///< written (backward ops): `element` (DequantizeBackward: of the quantized x)
  DynTensor dscale = {};           ///< written (learnable backward): `scale_kind()`
  DynTensor dzero_point = {};      ///< written (learnable backward): `scale_kind()`
};

/// One quantization op (the descriptor's `op`) over dtype/rank-erased tensors.
class QuantizePlan : public detail::BoundFnPlan<QuantizeDescriptor, detail::QuantizeFn> {
  using BoundFnPlan::BoundFnPlan;

 public:
  using Args = QuantizeArgs;
  /// Validates the descriptor for its `op`: element kinds, shape, granularity, range (see the file comment);
  /// `InvalidProblem` / `Unsupported` with the reason otherwise.
  static Result<QuantizePlan> select(const Stream& stream, const QuantizeDescriptor& desc, PlanPreference pref = {});
  /// Checks every operand the op uses (kind, shape, alignment, aliasing) and that unused ones are empty.
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return workspace_bytes_; }
  PrecisionGuarantee precision_guarantee() const;
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;
  QuantizeOp op() const { return desc_.op; }
  int32_t quant_min() const { return qmin_; }
  int32_t quant_max() const { return qmax_; }
  /// The scale / zero-point shape for this descriptor.
  const Shape& param_shape() const { return param_shape_; }
  /// The opmath float kind of scale (f32, or f64 for f64 data).
  ElementKind scale_kind() const;

 private:
  int32_t qmin_ = 0, qmax_ = 0;
  Shape param_shape_;
  size_t workspace_bytes_ = 0;
};

}  // namespace dynamic

/// Arguments of a typed `QuantizePlan<T, TQ, N, Op>`: the fields of `dynamic::QuantizeArgs`, typed. x is
/// quantized (TQ) for Dequantize and float (T) otherwise; y is quantized for Quantize and float otherwise;
/// dy, dx are float. Scale and zero-point tensors stay erased views of `param_shape()` (their rank is the
/// granularity's, not N). Fields `Op` does not use are left default (a non-null one is rejected).
template <class T, class TQ, size_t N, QuantizeOp Op = QuantizeOp::Quantize>
struct QuantizeArgs {
  using In = std::conditional_t<Op == QuantizeOp::Dequantize, TQ, T>;
  using Out = std::conditional_t<Op == QuantizeOp::Quantize, TQ, T>;
  TensorRef<In, N> x = {};
  ConstDynTensor scale = {};
  ConstDynTensor zero_point = {};
  TensorRef<T, N> dy = {};
  TensorMut<Out, N> y = {};
  TensorMut<T, N> dx = {};
  DynTensor dscale = {};
  DynTensor dzero_point = {};

  dynamic::QuantizeArgs erased() const {
    return {view<ConstDynTensor>("x", x), scale, zero_point, view<ConstDynTensor>("dy", dy),
            view<DynTensor>("y", y), view<DynTensor>("dx", dx), dscale, dzero_point};
  }

 private:
  /// A field the op uses, or one given anyway (non-null: the erased plan rejects it); else empty.
  template <class V, class Tensor>
  static V view(std::string_view field, const Tensor& t) {
    if (!detail::quantize_op_uses(Op, field) && t.data == nullptr) return V{};
    return V::of(t);
  }
};

/// Typed quantization plan for the op `Op` (the descriptor's `op` must be `Op`: `InvalidProblem` naming both
/// otherwise). T is the float type (__half, __nv_bfloat16, float, double), TQ the quantized one (int8_t,
/// uint8_t, int4x2_t or uint4x2_t: the descriptor's `quantized`, which names the range of every op; packed
/// tensors count logical elements in their shape); S is the scale type (float, or double for double data).
template <class T, class TQ, size_t N, QuantizeOp Op = QuantizeOp::Quantize>
class QuantizePlan : public detail::TypedPlan<dynamic::QuantizePlan, QuantizeArgs<T, TQ, N, Op>> {
  using Base = detail::TypedPlan<dynamic::QuantizePlan, QuantizeArgs<T, TQ, N, Op>>;
  friend Base;
  using Base::Base;

 public:
  using S = std::conditional_t<std::is_same_v<T, double>, double, float>;
  static Result<QuantizePlan> select(const Stream& stream, const QuantizeDescriptor& desc, PlanPreference pref = {}) {
    if (desc.op != Op)
      return Error::invalid("QuantizePlan: the descriptor's op is " + std::string(to_string(desc.op)) +
                            " but the typed plan's op is " + std::string(to_string(Op)));
    BARACUDA_TRY(detail::check_typed_element("QuantizePlan", "quantized", desc.quantized, kind_of<TQ>));
    return Base::template checked_select<QuantizePlan, T, N>(
        "QuantizePlan", "element", desc.element, {desc.shape},
        [&] { return dynamic::QuantizePlan::select(stream, desc, pref); });
  }
  /// The scale / zero-point shape.
  const Shape& param_shape() const { return this->erased().param_shape(); }
};

}  // namespace baracuda
