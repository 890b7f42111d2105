/// \file
/// \brief `DynamicRangeQuantizePlan`: quantization with parameters computed from the data itself — each
/// segment's range is measured, a (scale, zero point) derived from it, and the tensor quantized with them
/// (LLM activations per token, weights per channel or per group, a whole tensor). Operands
/// (`dynamic::DynamicRangeQuantizeArgs`): x is read; y (the quantized x), scale and zero point are written.
///
/// **Conventions** (`QuantConvention`, quant_convention.hpp; docs/ops/dynamic_range_quantize.md). Per segment
/// of the granularity; `opmath` is f32 for f16/bf16/f32 x and f64 for f64 x; each step is one IEEE operation
/// in opmath rounding to nearest even; `nearbyint` rounds half to even.
///
/// `PyTorch` (the default) and `Exact` share the parameters, computed over the segment's range `[lo, hi]`
/// widened to include 0 (`lo' = min(lo, 0)`, `hi' = max(hi, 0)`):
/// - symmetric: `s = max(−lo', hi') / qmax`, `zp = 0`;
/// - asymmetric: `s = (hi' − lo') / (qmax − qmin)`, `zp = clamp(qmin − nearbyint(lo' / s), qmin, qmax)`;
/// - `s == 0` (an all-zero or empty segment, or a range so small that s underflows): `s = 1, zp = 0`;
/// - a segment holding NaN: `s = NaN, zp = 0` (NaN propagates, as `torch.aminmax` does), so every element
///   of it quantizes to 0 (quantize maps NaN quotients to zp); ±inf without NaN: `s = +inf, zp = 0`, so
///   finite elements quantize to 0 and ±inf to NaN/inf → zp (see quantize.hpp).
/// They differ in the quantize step, `y = clamp(nearbyint(r) + zp, qmin, qmax)` with `r` NaN counting as 0:
/// - `PyTorch`: `r = x · inv`, `inv = 1.0f / f32(s)` rounded to f32 (PyTorch's `quantize_val`);
/// - `Exact`: `r = x / s`, one correctly rounded division.
///
/// `Vllm` (f16, bf16, f32 x; f64 is `Unsupported`) reproduces vLLM's dynamic int8 kernels
/// (csrc/quantization/compressed_tensors/int8_quant_kernels.cu at fc4a428, vLLM PR #19233), all in f32,
/// with their constants generalised to the range: 127 → qmax, 255 → qmax − qmin, −128 → qmin (vLLM itself
/// only quantizes to s8 over [−128, 127]; other kinds and ranges are this generalisation). NaN elements are
/// skipped by the reductions (fminf/fmaxf), and the range is NOT widened to include 0:
/// - symmetric (`dynamic_scaled_int8_quant`): `amax = max |x|` over the non-NaN elements, from 0;
///   `s = amax / qmax`, `zp = 0`; the multiplier `m = (amax == 0) ? 0 : qmax / amax`;
///   `y = clamp(nearbyint(x · m), qmin, qmax)` (NaN → 0). An all-zero (or empty, or all-NaN) segment gets
///   `s = 0` (the other conventions give 1) and y = 0; an infinite amax gives `s = inf`, `m = 0`, y = 0.
/// - asymmetric (`dynamic_scaled_int8_azp_quant`): `lo`/`hi` = min/max over the non-NaN elements, starting
///   from `+FLT_MAX`/`−FLT_MAX`; `s = (hi − lo) / (qmax − qmin)` (a zero difference is +0);
///   `zp = int32(nearbyint(qmin − lo / s))`, NOT clamped, converted as `cvt.rzi.s32.f32` (NaN → 0, ±inf and
///   out-of-range values saturate to INT32_MIN/INT32_MAX); `inv = 1.0f / s`;
///   `y = clamp(sat_s32(nearbyint(x · inv)) + zp, qmin, qmax)` with the s32 conversion saturating (NaN → 0)
///   and the sum wrapping around in 32 bits. As in vLLM, a constant segment c ≠ 0 gets `s = 0`,
///   `zp = INT32_MIN` (c > 0) or `INT32_MAX` (c < 0) and `y = clamp(−1)` (the saturated x · inf plus zp
///   wraps to −1); an all-zero one `s = 0, zp = 0` (0/0 is NaN → 0), y = 0; an empty or all-NaN one the
///   formulas over the starting values (`s = −inf`, `zp = qmin`, y = qmin).
/// `TransformerEngine` is FP8-only (fp8.hpp): `Unsupported` here.
///
/// **Element kinds.** x: f16, bf16, f32, f64. y: s8, u8, packed s4/u4 (two per byte, even index in the low
/// nibble, along the last dimension; the pairs' extent — the last dimension, or the group size of a per-group
/// granularity along the last axis — must be even, `InvalidProblem` otherwise; packed y is contiguous).
/// scale: f32 (f64 for f64 x); zero point: int32. **Range:** `qmin`/`qmax` default to y's full range; they
/// must lie in it, satisfy `qmin ≤ 0 ≤ qmax` (PyTorch's observers require the range to contain 0, so 0 is
/// exactly representable) and `qmax > 0` (symmetric) or `qmin < qmax` (asymmetric); `InvalidProblem`
/// otherwise.
///
/// **Shapes.** x and y: the descriptor's shape (rank 1..8); scale and zero point: the granularity's
/// parameter shape (quant_granularity.hpp). **Layout:** x any strides (negative and broadcast included);
/// y, scale and zero point any strides without broadcast (packed y contiguous). **Aliasing:** none of the
/// four may overlap. The zero point is optional in symmetric mode (it is then kept in the workspace);
/// asymmetric mode requires it.
///
/// **Execution.** On sim and cuda, when the segments are the rows of the last dimension (per token; per
/// group along the last axis; per channel of axis 0 of a matrix; per tensor of a vector) and a row of x fits
/// in 48 KiB of shared memory, one fused kernel: a warp (rows of ≤ 1024 elements and ≤ 4 KiB) or a block
/// owns a row, reads it once into shared memory (16-byte loads when unit-stride and aligned), reduces its
/// (min, max), writes scale and zero point, and quantizes from shared memory (16-byte stores when y is
/// unit-stride and aligned) — SKU variant `fused_rows_warp` / `fused_rows_block`. Otherwise (and on the
/// host) two passes (`segment_reduce+quantize`): a segmented reduction (src/device/segment_reduce.cuh)
/// computes each segment's (min, max) and writes scale and zero point (and, for `Vllm` symmetric, the
/// multiplier m into the workspace); the quantize family's kernel then quantizes x with the convention's
/// step. Both paths use the same parameter formula and quantize functors, so their outputs are
/// bit-identical. The path is chosen by `select`.
/// **Workspace:** `workspace_size()` bytes (256-byte aligned): the reduction's partials when few long
/// segments are split across blocks, room for the zero point in symmetric mode, and (`Vllm` symmetric, two
/// passes) the multipliers, f32 of the parameter shape; 0 often.
/// **Determinism:** bit-stable run to run. Scale and zero point are exact functions of (min, max), which do
/// not depend on the reduction order (±0 order as −0 < +0), so every device (host reference included) gives
/// identical y, scale and zero point.
#pragma once

#include <cstdint>
#include <iterator>
#include <optional>
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

/// How a segment's range becomes (scale, zero point): one enumerator per line of the family's catalog,
/// `baracuda/ops/dynamic_range_modes.def` (Symmetric: `s = max|x| / qmax`, `zp = 0`; Asymmetric:
/// `s = (max − min) / (qmax − qmin)`, `zp = qmin − nearbyint(min / s)`); the exact formulas per convention
/// are in the file comment.
enum class DynamicRangeMode : uint8_t {
#define BARACUDA_DYNAMIC_RANGE_MODE(name, Enum, zero_point, doc) Enum,
#include "baracuda/ops/dynamic_range_modes.def"
#undef BARACUDA_DYNAMIC_RANGE_MODE
};

namespace detail {
/// A line of the catalog.
struct DynamicRangeModeInfo {
  std::string_view name;     ///< "symmetric", "asymmetric"
  std::string_view op;       ///< the SKU's op name, "dynamic_range_quantize_<name>"
  bool zero_point_required;  ///< the `zero_point` operand must be given
  std::string_view doc;
};
/// The catalog, indexed by `DynamicRangeMode`.
inline constexpr DynamicRangeModeInfo kDynamicRangeModes[] = {
#define BARACUDA_DYNAMIC_RANGE_MODE(name, Enum, zero_point, doc) \
  {#name, "dynamic_range_quantize_" #name, std::string_view(#zero_point) == "Required", doc},
#include "baracuda/ops/dynamic_range_modes.def"
#undef BARACUDA_DYNAMIC_RANGE_MODE
};
}  // namespace detail
/// The number of modes (valid values are 0 .. kNumDynamicRangeModes − 1).
inline constexpr size_t kNumDynamicRangeModes = std::size(detail::kDynamicRangeModes);

/// Describes a dynamic-range quantization problem.
struct DynamicRangeQuantizeDescriptor {
  ElementKind element = ElementKind::F32;                          ///< x: f16, bf16, f32, f64
  ElementKind quantized = ElementKind::S8;                         ///< y: s8, u8, s4, u4
  Shape shape;                                                     ///< x's shape, rank 1..8
  QuantGranularity granularity = QuantGranularity::per_token();    ///< the scope: one (scale, zp) per segment
  DynamicRangeMode mode = DynamicRangeMode::Symmetric;
  std::optional<int32_t> quant_min;                                ///< default: y's smallest value
  std::optional<int32_t> quant_max;                                ///< default: y's largest value
  /// Whose arithmetic (see the file comment): PyTorch (default), Exact, or Vllm (f16/bf16/f32 x).
  QuantConvention convention = QuantConvention::PyTorch;

  DynamicRangeQuantizeDescriptor& with_element(ElementKind k) { element = k; return *this; }
  DynamicRangeQuantizeDescriptor& with_quantized(ElementKind k) { quantized = k; return *this; }
  DynamicRangeQuantizeDescriptor& with_shape(const Shape& s) { shape = s; return *this; }
  DynamicRangeQuantizeDescriptor& with_granularity(const QuantGranularity& g) { granularity = g; return *this; }
  DynamicRangeQuantizeDescriptor& with_mode(DynamicRangeMode m) { mode = m; return *this; }
  DynamicRangeQuantizeDescriptor& with_range(int32_t qmin, int32_t qmax) {
    quant_min = qmin;
    quant_max = qmax;
    return *this;
  }
  DynamicRangeQuantizeDescriptor& with_convention(QuantConvention c) { convention = c; return *this; }
  friend bool operator==(const DynamicRangeQuantizeDescriptor&, const DynamicRangeQuantizeDescriptor&) = default;
  size_t hash() const {
    return detail::hash_fields(element, quantized, shape, granularity, mode, quant_min, quant_max, convention);
  }
};

namespace detail {
struct DynamicRangeLaunch;
struct QuantizeLaunch;
using DynamicRangeParamsFn = Status (*)(const ExecContext&, const DynamicRangeLaunch&);
using DynamicRangeFusedFn = Status (*)(const ExecContext&, const DynamicRangeLaunch&);
using QuantizeFn = Status (*)(const ExecContext&, const QuantizeLaunch&);
}  // namespace detail

namespace dynamic {

/// The operands: x is read; y (the quantized x), scale and zero_point are written (zero_point may be empty in
/// symmetric mode).
struct DynamicRangeQuantizeArgs {
  ConstDynTensor x;           ///< read: the descriptor's shape and `element`
  DynTensor y;                ///< written: the quantized x, the descriptor's shape and `quantized`
  DynTensor scale;            ///< written: `param_shape()`, `scale_kind()`
  DynTensor zero_point = {};  ///< written: `param_shape()`, s32; may be empty in symmetric mode
};

/// The dtype/rank-erased DynamicRangeQuantizePlan.
class DynamicRangeQuantizePlan : public detail::BoundPlan<DynamicRangeQuantizeDescriptor> {
  using BoundPlan::BoundPlan;

 public:
  using Args = DynamicRangeQuantizeArgs;
  /// Validates the descriptor (kinds, shape, granularity, range rules of the file comment).
  static Result<DynamicRangeQuantizePlan> select(const Stream& stream, const DynamicRangeQuantizeDescriptor& desc,
                                                 PlanPreference pref = {});
  /// Kinds, shapes, alignment, no broadcast in outputs, no overlap.
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return workspace_bytes_; }
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;
  int32_t quant_min() const { return qmin_; }
  int32_t quant_max() const { return qmax_; }
  /// The scale / zero-point shape.
  const Shape& param_shape() const { return param_shape_; }
  /// f32, or f64 for f64 x.
  ElementKind scale_kind() const { return desc_.element == ElementKind::F64 ? ElementKind::F64 : ElementKind::F32; }

 private:
  int32_t qmin_ = 0, qmax_ = 0;
  Shape param_shape_;
  size_t zp_scratch_bytes_ = 0;  // symmetric: room for the zero point when the caller passes none
  size_t multiplier_bytes_ = 0;  // Vllm symmetric, two passes: the multipliers qmax / amax (f32, param_shape)
  size_t workspace_bytes_ = 0;
  detail::DynamicRangeParamsFn params_fn_ = nullptr;  // pass 1: range → scale, zero point
  detail::QuantizeFn quantize_fn_ = nullptr;          // pass 2: the quantize family's function
  detail::DynamicRangeFusedFn fused_fn_ = nullptr;    // the fused single-pass path (then the only launch)
};

}  // namespace dynamic

/// Arguments of a typed DynamicRangeQuantizePlan (the fields of `dynamic::DynamicRangeQuantizeArgs`): x is
/// `TensorRef<T, N>` (T: __half, __nv_bfloat16, float, double), y is `TensorMut<TQ, N>` (TQ: int8_t, uint8_t,
/// int4x2_t, uint4x2_t; packed tensors count logical elements in their shape). `scale` (S: float, or double
/// for double x) and `zero_point` (int32_t) are DynTensor views of `param_shape()` (their rank depends on the
/// granularity, not on N); the zero point may be left empty in symmetric mode.
template <class T, class TQ, size_t N>
struct DynamicRangeQuantizeArgs {
  TensorRef<T, N> x;
  TensorMut<TQ, N> y;
  DynTensor scale;
  DynTensor zero_point = {};  ///< may be empty in symmetric mode

  dynamic::DynamicRangeQuantizeArgs erased() const {
    return {ConstDynTensor::of(x), DynTensor::of(y), scale, zero_point};
  }
};

/// Typed dynamic-range quantize over the dynamic plan.
template <class T, class TQ, size_t N>
class DynamicRangeQuantizePlan
    : public detail::TypedPlan<dynamic::DynamicRangeQuantizePlan, DynamicRangeQuantizeArgs<T, TQ, N>> {
  using Base = detail::TypedPlan<dynamic::DynamicRangeQuantizePlan, DynamicRangeQuantizeArgs<T, TQ, N>>;
  friend Base;
  using Base::Base;

 public:
  using S = std::conditional_t<std::is_same_v<T, double>, double, float>;
  static Result<DynamicRangeQuantizePlan> select(const Stream& stream, const DynamicRangeQuantizeDescriptor& desc,
                                                 PlanPreference pref = {}) {
    BARACUDA_TRY(detail::check_typed_element("DynamicRangeQuantizePlan", "x", desc.element, kind_of<T>));
    return Base::template checked_select<DynamicRangeQuantizePlan, TQ, N>(
        "DynamicRangeQuantizePlan", "y", desc.quantized, {desc.shape},
        [&] { return dynamic::DynamicRangeQuantizePlan::select(stream, desc, pref); });
  }
  /// The scale / zero-point shape.
  const Shape& param_shape() const { return this->erased().param_shape(); }
};

}  // namespace baracuda
