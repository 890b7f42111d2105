/// \file
/// \brief Affine quantization: `dynamic::QuantizePlan` runs one `QuantizeOp` — quantize, dequantize,
/// fake-quantize, the learnable fake-quantize, and their backward ops — at every `QuantGranularity`; the
/// typed `QuantizePlan<T, TQ, N>` wraps `QuantizeOp::Quantize`.
///
/// **The arithmetic** follows the descriptor's `QuantConvention` (quant_convention.hpp). Write `r(x, s)` for
/// x against the scale:
/// - `PyTorch` (default; PyTorch 1.13's CPU kernels bit for bit): `r = x · inv`, `inv = 1.0f / s` rounded to
///   f32. With f64 data PyTorch takes the scale as f32 too: `inv` is computed from `f32(s)` and the
///   fake-quantize output multiplies by `f32(s)`, both widened to f64.
/// - `Exact`: `r = x / s`, one correctly rounded division (f32, or f64 for f64 data).
/// - `Vllm` (Quantize and Dequantize, f16/bf16/f32 data: vLLM's `static_scaled_int8_quant` with an azp):
///   `t = cvt.rni.sat.s32(x · f32(1/s))` (NaN → 0), `q = clamp(t + zp)` with the sum wrapping in 32 bits.
///   vLLM's symmetric static kernel divides: that is `Exact` with `zp = 0`.
/// - `TransformerEngine`: `Unsupported` (FP8 only; fp8.hpp).
///
/// The ops (rounding half to even throughout; `zp` added after rounding; computed in f32 for f16/bf16/f32
/// data and in f64 for f64 data):
/// - quantize: `q = clamp(nearbyint(r(x, s)) + zp, qmin, qmax)`, clamped on the way to storage. A NaN `r`
///   (a NaN input, or 0/0) quantizes to `zp` (PTX `cvt.rni` turns NaN into 0); ±inf clamps to qmax/qmin.
/// - dequantize: `x = (q − zp) · s`, rounded once to the output type (the same in every convention).
/// - fake-quantize: `y = (clamp(nearbyint(r(x, s)) + zp, qmin, qmax) − zp) · s`, in x's type.
/// - straight-through backward of quantize: `dx = dy / s · 1[qmin ≤ nearbyint(r(x, s)) + zp ≤ qmax]`
///   (inclusive, on the **unclamped** value, recomputed from the saved x); of fake-quantize `dx = dy · mask`
///   with the same mask; of dequantize `dq = dy · s` (the gradient with respect to q taken as real-valued).
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
/// **Element kinds.** Float tensors (x, y, dx, dy): f16, bf16, f32, f64. Quantized: s8, u8, and packed s4/u4
/// (two values per byte, the even index in the low nibble, along the **last** dimension, whose extent must be
/// even — and so must the group size of a per-group granularity along the last axis, so that no byte holds
/// two groups' values; `InvalidProblem` otherwise, as in dynamic_range_quantize.hpp; packed tensors are
/// contiguous). Scale: f32 for f16/bf16/f32 data, f64 for f64 data (the opmath
/// type); zero point: int32 (learnable: the scale's type). `qmin`/`qmax` default to the quantized kind's
/// range and must lie inside it with `qmin ≤ qmax` (for fake-quantize, `quantized` only names that range;
/// the learnable variant also needs `qmin ≤ 0 ≤ qmax`, as PyTorch does).
/// Parameter values are data and are not inspected: a zero point outside `[qmin, qmax]` still gives
/// clamped, well-defined results; s = 0 follows IEEE division (see above).
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

#include <cstdint>
#include <optional>
#include <type_traits>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/plan.hpp"
#include "baracuda/core/sku.hpp"
#include "baracuda/core/stream.hpp"
#include "baracuda/core/tensor.hpp"
#include "baracuda/core/workspace.hpp"
#include "baracuda/ops/quant_convention.hpp"
#include "baracuda/ops/quant_granularity.hpp"

namespace baracuda {

/// Describes a quantization problem: the float data, the quantized storage, the shape and the granularity.
/// Shared by every plan of this file (each documents the fields it uses).
struct QuantizeDescriptor {
  ElementKind element = ElementKind::F32;    ///< the float data: x (and y, dx, dy)
  ElementKind quantized = ElementKind::S8;   ///< the quantized storage: s8, u8, s4, u4
  Shape shape;                               ///< the float tensor's (logical) shape, rank 1..8
  QuantGranularity granularity;              ///< which elements share (scale, zero point)
  std::optional<int32_t> quant_min;          ///< default: the smallest value of `quantized`
  std::optional<int32_t> quant_max;          ///< default: the largest value of `quantized`
  double grad_factor = 1.0;                  ///< learnable backward: the factor on ds and dzp
  /// Whose arithmetic (see the file comment): PyTorch (default), Exact, or Vllm (Quantize and Dequantize).
  QuantConvention convention = QuantConvention::PyTorch;

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
  size_t hash() const;
};

/// The quantization operations; one dynamic plan class serves each.
enum class QuantizeOp : uint8_t {
  Quantize = 0,                 ///< (x, scale, zp) → q
  QuantizeBackward = 1,         ///< (x, scale, zp, dy) → dx
  Dequantize = 2,               ///< (q, scale, zp) → y
  DequantizeBackward = 3,       ///< (scale, dy) → dq (float, q's shape)
  FakeQuantize = 4,             ///< (x, scale, zp) → y
  FakeQuantizeBackward = 5,     ///< (x, scale, zp, dy) → dx
  FakeQuantizeLearnable = 6,    ///< (x, scale, zp real-valued) → y
  FakeQuantizeLearnableBackward = 7,  ///< (x, scale, zp, dy) → dx, dscale, dzp
};
/// "quantize", "quantize_backward", …
std::string_view to_string(QuantizeOp op);

namespace detail {
struct QuantizeLaunch;
using QuantizeFn = Status (*)(const ExecContext&, const QuantizeLaunch&);
}  // namespace detail

/// The operands of a quantization plan, by role. Each op reads and writes the ones its `QuantizeOp` names;
/// the others must be left empty (default-constructed).
struct QuantizeTensors {
  DynTensor x;           ///< float input (Quantize*, FakeQuantize*)
  DynTensor q;           ///< quantized: output of Quantize, input of Dequantize
  DynTensor scale;       ///< param_shape, the opmath float kind
  DynTensor zero_point;  ///< param_shape, int32 (learnable: the scale's kind)
  DynTensor y;           ///< float output of Dequantize / FakeQuantize*
  DynTensor dy;          ///< upstream gradient (backward ops; the shape of y, or of q for Quantize)
  DynTensor dx;          ///< gradient of x (QuantizeBackward, FakeQuantize*Backward), or of q (DequantizeBackward)
  DynTensor dscale;      ///< learnable backward: param_shape, the scale's kind
  DynTensor dzero_point; ///< learnable backward: param_shape, the scale's kind
};

namespace dynamic {

/// One quantization op (see `QuantizeOp`) over dtype/rank-erased tensors.
class QuantizePlan {
 public:
  /// Validates the descriptor for `op`: element kinds, shape, granularity, range (see the file comment);
  /// `InvalidProblem` / `Unsupported` with the reason otherwise.
  static Result<QuantizePlan> select(const Stream& stream, QuantizeOp op, const QuantizeDescriptor& desc,
                                     PlanPreference pref = {});
  /// Checks every operand the op uses (kind, shape, alignment, aliasing) and that unused ones are empty.
  Status can_implement(const QuantizeTensors& t) const;
  size_t workspace_size() const { return workspace_bytes_; }
  KernelSku sku() const { return binding_.sku; }
  PrecisionGuarantee precision_guarantee() const;
  Status run(const Stream& stream, Workspace workspace, const QuantizeTensors& t) const;
  QuantizeOp op() const { return op_; }
  const QuantizeDescriptor& descriptor() const { return desc_; }
  int32_t quant_min() const { return qmin_; }
  int32_t quant_max() const { return qmax_; }
  /// The scale / zero-point shape for this descriptor.
  const Shape& param_shape() const { return param_shape_; }
  /// The opmath float kind of scale (f32, or f64 for f64 data).
  ElementKind scale_kind() const;

 private:
  QuantizeOp op_ = QuantizeOp::Quantize;
  QuantizeDescriptor desc_;
  detail::PlanBinding binding_;
  int32_t qmin_ = 0, qmax_ = 0;
  Shape param_shape_;
  size_t workspace_bytes_ = 0;
  detail::QuantizeFn fn_ = nullptr;
};

}  // namespace dynamic

/// Typed quantize: `q = clamp(nearbyint(r(x, s)) + zp, qmin, qmax)` (the descriptor's convention). `TQ` is int8_t, uint8_t, int4x2_t or
/// uint4x2_t (packed tensors count logical elements in their shape); S is the scale type (float, or double
/// for double data).
template <class T, class TQ, size_t N>
class QuantizePlan {
 public:
  using S = std::conditional_t<std::is_same_v<T, double>, double, float>;
  static Result<QuantizePlan> select(const Stream& stream, const QuantizeDescriptor& desc, PlanPreference pref = {}) {
    BARACUDA_TRY(detail::check_typed_element("QuantizePlan", "x", desc.element, kind_of<T>));
    BARACUDA_TRY(detail::check_typed_element("QuantizePlan", "q", desc.quantized, kind_of<TQ>));
    BARACUDA_TRY(detail::check_typed_rank("QuantizePlan", desc.shape.rank, static_cast<int>(N)));
    auto p = dynamic::QuantizePlan::select(stream, QuantizeOp::Quantize, desc, pref);
    if (!p) return p.error();
    return QuantizePlan(std::move(p).value());
  }
  /// `scale` and `zero_point` are dense or strided views of `param_shape()` given as DynTensors (their rank
  /// depends on the granularity, not on N).
  Status can_implement(TensorRef<T, N> x, const DynTensor& scale, const DynTensor& zero_point, TensorMut<TQ, N> q) const {
    return plan_.can_implement(tensors(x, scale, zero_point, q));
  }
  size_t workspace_size() const { return plan_.workspace_size(); }
  KernelSku sku() const { return plan_.sku(); }
  Status run(const Stream& stream, Workspace ws, TensorRef<T, N> x, const DynTensor& scale,
             const DynTensor& zero_point, TensorMut<TQ, N> q) const {
    return plan_.run(stream, ws, tensors(x, scale, zero_point, q));
  }
  const dynamic::QuantizePlan& erased() const { return plan_; }

 private:
  explicit QuantizePlan(dynamic::QuantizePlan p) : plan_(std::move(p)) {}
  static QuantizeTensors tensors(TensorRef<T, N> x, const DynTensor& scale, const DynTensor& zp, TensorMut<TQ, N> q) {
    QuantizeTensors t;
    t.x = DynTensor::of(x);
    t.scale = scale;
    t.zero_point = zp;
    t.q = DynTensor::of(q);
    return t;
  }
  dynamic::QuantizePlan plan_;
};

}  // namespace baracuda
