/// \file
/// \brief FP8 with per-tensor scaling and TransformerEngine's delayed-scaling recipe:
/// `Fp8QuantizePlan` (scale, saturate to fp8, and the amax of the input in the same pass),
/// `Fp8DequantizePlan` (fp8 · scale_inv) and `Fp8ScalingUpdatePlan` (amax history → scale, scale_inv).
/// See docs/ops/fp8.md for the recipe step by step. The kinds each converting plan serves are listed once,
/// in the family's catalog `baracuda/ops/fp8_ops.def`.
///
/// **Fp8QuantizePlan** — `y = saturate_to_fp8(x · scale)`, `amax = max |x|`, and optionally
/// `scale_inv = 1 / scale`:
/// - **Dtypes:** x f16, bf16, f32 or f64; y fp8 E4M3 or E5M2; `scale`, `amax` and `scale_inv` f32. Other
///   kinds: `Unsupported`.
/// - **Math:** `x · scale` is one multiplication in opmath (f32 for f16/bf16/f32 inputs, f64 for f64,
///   where the f32 scale widens exactly), then one rounding to fp8, to nearest even, saturating: finite
///   overflow and ±inf give ±max finite (±448 E4M3, ±57344 E5M2), NaN gives NaN (which NaN encoding is
///   not specified). (For f32 opmath the product is itself rounded to f32 first, as TransformerEngine and
///   PyTorch compute it.) y is the same in every convention.
/// - **amax** is `max |x|` of the **unscaled** input, rounded to f32 (f64 inputs: |x| rounded to nearest,
///   so beyond FLT_MAX it is +inf). Empty x: amax = 0. What a NaN element does depends on the
///   descriptor's `convention` (quant_convention.hpp):
///   - `PyTorch` (default) and `Exact`: **NaN propagates**, as `torch.amax` does: one NaN element makes
///     amax the quiet NaN 0x7FC00000. (The two conventions are the same here: the product `x · scale`
///     has no reciprocal to round.)
///   - `TransformerEngine`: **NaN is skipped**, as TransformerEngine's cast kernels reduce with
///     `fmaxf(fabsf(x), max)` from 0: a NaN element leaves the running maximum unchanged, so an all-NaN x
///     gives amax 0 (or the `accumulate_amax` starting value, by the rule below), and the recipe goes on.
///     ±inf still count (amax = +inf). f64 x is `Unsupported` with this convention (TransformerEngine's
///     cast takes f32, f16 and bf16 only, so there is nothing to reproduce).
///   - `Vllm`: `Unsupported` (vLLM's FP8 quantization is not modelled). An invalid enum value:
///     `InvalidProblem`.
///   With `accumulate_amax` the plan writes `max(amax, max |x|)` instead (f32 values compared by their bit
///   patterns as signed integers, as TransformerEngine's `atomicMaxFloat`: a negative starting value counts
///   as below 0, a NaN stays), so several quantizations of one step can share one history slot, as
///   TransformerEngine's do; an empty x then leaves amax unchanged.
/// - **scale_inv** (optional, any convention): when the `scale_inv` operand is given (f32 [1]),
///   the plan also writes `scale_inv = 1.0f / scale`, one IEEE f32 division (what
///   TransformerEngine's cast computes with `__frcp_rn`: ±0 gives ±inf, ±inf gives ±0, NaN gives
///   NaN), for a following Fp8DequantizePlan; on cuda it is written by the plan's kernels in stream order.
///   Unlike TransformerEngine's launcher, which launches nothing for an empty tensor, the plan writes
///   scale_inv for an empty x too. A scale_inv whose `data` is null (the default `{}`) is omitted: nothing
///   is written, as for binary.hpp's optional gradients.
/// - **Layout:** x and y of the descriptor's shape, rank ≤ 8, any strides (negative included); x may
///   broadcast (stride 0), y may not. `scale`, `amax` and `scale_inv` are shape [1] (any stride).
///   Contiguous 16-byte-aligned x and y take the vectorized path.
/// - **Aliasing:** y must not be x (their element sizes differ); amax must not be scale; scale_inv must
///   be neither scale nor amax. Other overlaps between operands are undefined.
/// - **Workspace:** none. **Determinism:** bit-exact and deterministic: the amax is one atomicMax per block
///   on the float's bit pattern, and a maximum does not depend on the order. Safe under CUDA-graph capture
///   (`scale`, `amax` and `scale_inv` are device tensors, read and written by the kernels). Two kernels
///   per run (the amax reset, which also writes scale_inv, then the fused pass); with `accumulate_amax`
///   one (the fused pass writes scale_inv), or, for an empty x, one small kernel for scale_inv or none.
///
/// **Fp8DequantizePlan** — `y = x · scale_inv`:
/// - **Dtypes:** x fp8 E4M3 or E5M2; y f16, bf16, f32 or f64; `scale_inv` f32 [1].
/// - **Math:** f32 product rounded once to y's kind (f64 output: the exact product in f64). NaN stays NaN,
///   E5M2 ±inf stay ±inf (times a positive scale_inv). Same layout and aliasing rules as quantize, no
///   amax. **Workspace:** none. **Determinism:** bit-exact.
///
/// **Fp8ScalingUpdatePlan** — one step of TransformerEngine's `DelayedScaling` recipe
/// (`amax_and_scale_update`), on device tensors:
/// - **Operands:** `amax_history` f32 [H] (any non-zero stride: a column of a TransformerEngine
///   [H, num_scales] history works), `scale` f32 [1], `scale_inv` f32 [1]; all updated in place.
/// - **History layout (TransformerEngine's):** slot 0 is the **current** step's amax — quantize writes it
///   there (pass a [1] view of `amax_history[0]` as its amax). Slots 1…H−1 are the H−1 previous steps,
///   oldest first.
/// - **Step:** with `amax_compute_algo` Max, `amax = fmaxf(0, fmaxf over all H slots)` (NaN entries are
///   skipped; an all-NaN history gives 0); MostRecent: `amax = history[0]`. Then
///   `scale = fp8_max · 2^−margin / amax` when amax is finite and > 0, else the previous scale is kept;
///   a scale that overflows f32 (a tiny amax) becomes FLT_MAX; `scale_inv = 1 / scale` (f32 division).
///   Then the history rolls: `new[i] = old[i+1]` for 1 ≤ i < H−1, `new[H−1] = old[0]` (the amax just
///   used), and `new[0] = 0`, which clears slot 0 for the **next** step's amax (the oldest, `old[1]`, is
///   dropped).
/// - **Workspace:** none. **Determinism:** bit-exact. One block, one launch; safe under graph capture.
#pragma once

#include "baracuda/core/hash.hpp"
#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/plan.hpp"
#include "baracuda/core/sku.hpp"
#include "baracuda/core/stream.hpp"
#include "baracuda/core/tensor.hpp"
#include "baracuda/core/typed_plan.hpp"
#include "baracuda/core/workspace.hpp"
#include "baracuda/ops/quant_convention.hpp"

namespace baracuda {

/// The largest finite value of an fp8 kind: 448 (E4M3), 57344 (E5M2); 0 for any other kind.
constexpr float fp8_max_finite(ElementKind k) {
  return k == ElementKind::Fp8E4M3 ? 448.0f : k == ElementKind::Fp8E5M2 ? 57344.0f : 0.0f;
}

// ---------------------------------------------------------------------------------------------------
// Fp8QuantizePlan
// ---------------------------------------------------------------------------------------------------

struct Fp8QuantizeDescriptor {
  ElementKind input = ElementKind::F32;      ///< f16, bf16, f32, f64
  ElementKind output = ElementKind::Fp8E4M3;  ///< Fp8E4M3 or Fp8E5M2
  Shape shape;
  /// amax = max(amax, max |x|) instead of max |x| (several quantizations sharing one history slot).
  bool accumulate_amax = false;
  /// How amax treats NaN (see the file comment): PyTorch (default) and Exact propagate it,
  /// TransformerEngine skips it; Vllm is Unsupported.
  QuantConvention convention = QuantConvention::PyTorch;

  Fp8QuantizeDescriptor& with_input(ElementKind k) { input = k; return *this; }
  Fp8QuantizeDescriptor& with_output(ElementKind k) { output = k; return *this; }
  Fp8QuantizeDescriptor& with_shape(const Shape& s) { shape = s; return *this; }
  Fp8QuantizeDescriptor& with_accumulate_amax(bool a) { accumulate_amax = a; return *this; }
  Fp8QuantizeDescriptor& with_convention(QuantConvention c) { convention = c; return *this; }
  friend bool operator==(const Fp8QuantizeDescriptor&, const Fp8QuantizeDescriptor&) = default;
  size_t hash() const { return detail::hash_fields(input, output, shape, accumulate_amax, convention); }
};

// ---------------------------------------------------------------------------------------------------
// Fp8DequantizePlan
// ---------------------------------------------------------------------------------------------------

struct Fp8DequantizeDescriptor {
  ElementKind input = ElementKind::Fp8E4M3;  ///< Fp8E4M3 or Fp8E5M2
  ElementKind output = ElementKind::F32;     ///< f16, bf16, f32, f64
  Shape shape;

  Fp8DequantizeDescriptor& with_input(ElementKind k) { input = k; return *this; }
  Fp8DequantizeDescriptor& with_output(ElementKind k) { output = k; return *this; }
  Fp8DequantizeDescriptor& with_shape(const Shape& s) { shape = s; return *this; }
  friend bool operator==(const Fp8DequantizeDescriptor&, const Fp8DequantizeDescriptor&) = default;
  size_t hash() const { return detail::hash_fields(input, output, shape); }
};

// ---------------------------------------------------------------------------------------------------
// Fp8ScalingUpdatePlan
// ---------------------------------------------------------------------------------------------------

/// How the amax that sets the scale is taken from the history (TransformerEngine's `amax_compute_algo`).
enum class AmaxComputeAlgo : uint8_t {
  Max,         ///< "max": the largest amax of the H slots (NaN entries skipped)
  MostRecent,  ///< "most_recent": slot 0, the current step's amax
};

struct Fp8ScalingUpdateDescriptor {
  ElementKind fp8_kind = ElementKind::Fp8E4M3;  ///< the format the scale targets (fp8_max 448 or 57344)
  int64_t history_length = 1024;                ///< H ≥ 1 (TransformerEngine's `amax_history_len`)
  AmaxComputeAlgo amax_compute_algo = AmaxComputeAlgo::Max;
  /// scale = fp8_max · 2^−margin / amax; an integer in [−64, 64] (TransformerEngine's `margin`, default 0).
  int margin = 0;

  Fp8ScalingUpdateDescriptor& with_fp8_kind(ElementKind k) { fp8_kind = k; return *this; }
  Fp8ScalingUpdateDescriptor& with_history_length(int64_t h) { history_length = h; return *this; }
  Fp8ScalingUpdateDescriptor& with_amax_compute_algo(AmaxComputeAlgo a) { amax_compute_algo = a; return *this; }
  Fp8ScalingUpdateDescriptor& with_margin(int m) { margin = m; return *this; }
  friend bool operator==(const Fp8ScalingUpdateDescriptor&, const Fp8ScalingUpdateDescriptor&) = default;
  size_t hash() const { return detail::hash_fields(fp8_kind, history_length, amax_compute_algo, margin); }
};

namespace detail {
struct Fp8QuantizeLaunch;
struct Fp8DequantizeLaunch;
struct Fp8ScalingUpdateLaunch;
using Fp8QuantizeFn = Status (*)(const ExecContext&, const Fp8QuantizeLaunch&);
using Fp8DequantizeFn = Status (*)(const ExecContext&, const Fp8DequantizeLaunch&);
using Fp8ScalingUpdateFn = Status (*)(const ExecContext&, const Fp8ScalingUpdateLaunch&);
}  // namespace detail

namespace dynamic {

/// The operands of an Fp8QuantizePlan: inputs, then outputs.
struct Fp8QuantizeArgs {
  ConstDynTensor x;          ///< read: the descriptor's `input` kind and shape
  ConstDynTensor scale;      ///< read: f32 [1]
  DynTensor y;               ///< written: the descriptor's `output` kind and shape
  DynTensor amax;            ///< written: f32 [1] (with `accumulate_amax` also read)
  DynTensor scale_inv = {};  ///< written: f32 [1], optional (data null, as the default `{}`: omitted)
};

/// The dtype/rank-erased Fp8QuantizePlan.
class Fp8QuantizePlan : public detail::BoundFnPlan<Fp8QuantizeDescriptor, detail::Fp8QuantizeFn> {
  using BoundFnPlan::BoundFnPlan;

 public:
  using Args = Fp8QuantizeArgs;
  static Result<Fp8QuantizePlan> select(const Stream& stream, const Fp8QuantizeDescriptor& desc,
                                        PlanPreference pref = {});
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return 0; }
  /// amax is combined by atomicMax: a maximum, whatever the order, so the result is deterministic.
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;

 private:
};

/// The operands of an Fp8DequantizePlan: inputs, then the output.
struct Fp8DequantizeArgs {
  ConstDynTensor x;          ///< read: the descriptor's `input` (fp8) kind and shape
  ConstDynTensor scale_inv;  ///< read: f32 [1]
  DynTensor y;               ///< written: the descriptor's `output` kind and shape
};

/// The dtype/rank-erased Fp8DequantizePlan.
class Fp8DequantizePlan : public detail::BoundFnPlan<Fp8DequantizeDescriptor, detail::Fp8DequantizeFn> {
  using BoundFnPlan::BoundFnPlan;

 public:
  using Args = Fp8DequantizeArgs;
  static Result<Fp8DequantizePlan> select(const Stream& stream, const Fp8DequantizeDescriptor& desc,
                                          PlanPreference pref = {});
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return 0; }
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;

 private:
};

/// The operands of an Fp8ScalingUpdatePlan: all three are read and written (the history is rolled in
/// place), and pairwise distinct.
struct Fp8ScalingUpdateArgs {
  DynTensor amax_history;  ///< read and written: f32 [H] (any non-zero stride)
  DynTensor scale;         ///< read and written: f32 [1]
  DynTensor scale_inv;     ///< written: f32 [1]
};

/// The erased Fp8ScalingUpdatePlan.
class Fp8ScalingUpdatePlan : public detail::BoundFnPlan<Fp8ScalingUpdateDescriptor, detail::Fp8ScalingUpdateFn> {
  using BoundFnPlan::BoundFnPlan;

 public:
  using Args = Fp8ScalingUpdateArgs;
  static Result<Fp8ScalingUpdatePlan> select(const Stream& stream, const Fp8ScalingUpdateDescriptor& desc,
                                             PlanPreference pref = {});
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return 0; }
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;

 private:
};

}  // namespace dynamic

// ---------------------------------------------------------------------------------------------------
// Typed wrappers
// ---------------------------------------------------------------------------------------------------

/// Arguments of a typed Fp8QuantizePlan (the fields of `dynamic::Fp8QuantizeArgs`).
template <class TIn, class TOut, size_t N>
struct Fp8QuantizeArgs {
  TensorRef<TIn, N> x;
  TensorRef<float, 1> scale;  ///< [1]
  TensorMut<TOut, N> y;
  TensorMut<float, 1> amax;   ///< [1]
  /// [1], optional: a view with a null pointer (the default) omits it; otherwise the plan writes 1 / scale.
  TensorMut<float, 1> scale_inv = {};

  dynamic::Fp8QuantizeArgs erased() const {
    return {ConstDynTensor::of(x), ConstDynTensor::of(scale), DynTensor::of(y), DynTensor::of(amax),
            DynTensor::of(scale_inv)};
  }
};

/// Typed Fp8QuantizePlan (TIn: __half, __nv_bfloat16, float, double; TOut: __nv_fp8_e4m3, __nv_fp8_e5m2).
template <class TIn, class TOut, size_t N>
class Fp8QuantizePlan : public detail::TypedPlan<dynamic::Fp8QuantizePlan, Fp8QuantizeArgs<TIn, TOut, N>> {
  using Base = detail::TypedPlan<dynamic::Fp8QuantizePlan, Fp8QuantizeArgs<TIn, TOut, N>>;
  friend Base;
  using Base::Base;

 public:
  static Result<Fp8QuantizePlan> select(const Stream& stream, const Fp8QuantizeDescriptor& desc,
                                        PlanPreference pref = {}) {
    BARACUDA_TRY(detail::check_typed_element("Fp8QuantizePlan", "x", desc.input, kind_of<TIn>));
    return Base::template checked_select<Fp8QuantizePlan, TOut, N>(
        "Fp8QuantizePlan", "y", desc.output, {desc.shape},
        [&] { return dynamic::Fp8QuantizePlan::select(stream, desc, pref); });
  }
};

/// Arguments of a typed Fp8DequantizePlan (the fields of `dynamic::Fp8DequantizeArgs`).
template <class TIn, class TOut, size_t N>
struct Fp8DequantizeArgs {
  TensorRef<TIn, N> x;
  TensorRef<float, 1> scale_inv;  ///< [1]
  TensorMut<TOut, N> y;

  dynamic::Fp8DequantizeArgs erased() const {
    return {ConstDynTensor::of(x), ConstDynTensor::of(scale_inv), DynTensor::of(y)};
  }
};

/// Typed Fp8DequantizePlan (TIn: __nv_fp8_e4m3, __nv_fp8_e5m2; TOut: __half, __nv_bfloat16, float, double).
template <class TIn, class TOut, size_t N>
class Fp8DequantizePlan : public detail::TypedPlan<dynamic::Fp8DequantizePlan, Fp8DequantizeArgs<TIn, TOut, N>> {
  using Base = detail::TypedPlan<dynamic::Fp8DequantizePlan, Fp8DequantizeArgs<TIn, TOut, N>>;
  friend Base;
  using Base::Base;

 public:
  static Result<Fp8DequantizePlan> select(const Stream& stream, const Fp8DequantizeDescriptor& desc,
                                          PlanPreference pref = {}) {
    BARACUDA_TRY(detail::check_typed_element("Fp8DequantizePlan", "x", desc.input, kind_of<TIn>));
    return Base::template checked_select<Fp8DequantizePlan, TOut, N>(
        "Fp8DequantizePlan", "y", desc.output, {desc.shape},
        [&] { return dynamic::Fp8DequantizePlan::select(stream, desc, pref); });
  }
};

/// Arguments of the typed Fp8ScalingUpdatePlan (the fields of `dynamic::Fp8ScalingUpdateArgs`; all f32
/// vectors, read and written).
struct Fp8ScalingUpdateArgs {
  TensorMut<float, 1> amax_history;  ///< [H]
  TensorMut<float, 1> scale;         ///< [1]
  TensorMut<float, 1> scale_inv;     ///< [1]

  dynamic::Fp8ScalingUpdateArgs erased() const {
    return {DynTensor::of(amax_history), DynTensor::of(scale), DynTensor::of(scale_inv)};
  }
};

/// Typed Fp8ScalingUpdatePlan (all operands are f32 vectors).
class Fp8ScalingUpdatePlan : public detail::TypedPlan<dynamic::Fp8ScalingUpdatePlan, Fp8ScalingUpdateArgs> {
  using Base = detail::TypedPlan<dynamic::Fp8ScalingUpdatePlan, Fp8ScalingUpdateArgs>;
  friend Base;
  using Base::Base;

 public:
  static Result<Fp8ScalingUpdatePlan> select(const Stream& stream, const Fp8ScalingUpdateDescriptor& desc,
                                             PlanPreference pref = {}) {
    auto p = dynamic::Fp8ScalingUpdatePlan::select(stream, desc, pref);
    if (!p) return p.error();
    return Fp8ScalingUpdatePlan(std::move(p).value());
  }
};

}  // namespace baracuda
