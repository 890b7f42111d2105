/// \file
/// \brief `NormPlan` and `NormBackwardPlan`: RMSNorm and LayerNorm over the last dimension, with optional
/// weight and bias, the saved statistics for the backward, and the backward's dx, dweight and dbias.
///
/// - **Forward** over rows of the last dimension (H elements; every other dimension indexes rows):
///   `RmsNorm`: `rstd = 1 / sqrt(mean(x²) + eps)`, `y = x · rstd · w` (HF's LlamaRMSNorm, with the product
///   rounded once: Llama rounds x·rstd to the activation kind before the multiply by w, so its 16-bit results
///   may differ from these in the last bit); `LayerNorm`: `mean = mean(x)`, `rstd = 1 / sqrt(var(x) + eps)`
///   (biased variance), `y = (x − mean) · rstd · w + b` (`F.layer_norm`). Without a weight w = 1, without a
///   bias b = 0 (RmsNorm takes no bias). `mean` (LayerNorm) and `rstd` may be written out, `[rows]` of the
///   statistics' kind (f32; f64 for f64 x), for the backward.
/// - **Backward** from dy, x, w and the saved statistics, with `g = dy · w`: `RmsNorm`:
///   `dx = rstd · g − rstd³ · mean(g·x) · x`; `LayerNorm`: `x̂ = (x − mean) · rstd`,
///   `dx = rstd · (g − mean(g) − x̂ · mean(g·x̂))`; `dweight = Σ_rows dy · x̂` (RmsNorm: `dy · x · rstd`),
///   `dbias = Σ_rows dy`. Each may be omitted (empty tensor); dweight and dbias are reduced in a fixed order
///   (no atomics): the same bits on every run.
/// - **Dtypes:** x, w, b, y, dy, dx, dweight, dbias one kind (f16, bf16, f32, f64); statistics and
///   accumulation in f32 (f64 for f64).
/// - **Layout:** x rank ≥ 1, any strides; w and b `[H]`; outputs no stride-0 dimension of extent > 1 and no
///   overlap with the inputs.
/// - **Fused residual** (`has_residual`): `h = x + residual` (one rounding to the element kind, as
///   `BinaryPlan` add) is written to `h` and normalized: `y = norm(h)` (vLLM's `fused_add_rms_norm`, which
///   writes h over the residual in place: `h` may be exactly `residual` or `x`). The backward of the fused
///   op is NormBackwardPlan on h (the gradient of h flows to both x and residual unchanged).
/// - **Fused quantized output** (`quant`; `q` written, x's shape): the result is bit for bit what the
///   unfused chain gives — NormPlan writing y, then the quantize plan reading y:
///   - `Static`: `q` s8 = `QuantizePlan` (Quantize, per-tensor granularity) of y with the caller's `scale`
///     (`[1]`, the statistics' kind) and optional `zero_point` (s32 `[1]`; absent: 0) — SmoothQuant's
///     static activation quantization;
///   - `Dynamic`: `q` s8 with `q_scale` (and `q_zero_point`) `[rows]` written = `DynamicRangeQuantizePlan`
///     (per-token granularity, `dynamic_mode`) of y — the per-token input of `QuantizedLinearPlan`'s `x_q`;
///   - `Fp8`: `q` E4M3 = `Fp8QuantizePlan` of y with the caller's f32 `scale` `[1]`, and `amax` (f32 `[1]`,
///     max |y| of the unscaled y) written.
///   The `convention` is that plan's (quant_convention.hpp): PyTorch (default), Exact, Vllm (int8 only) or
///   TransformerEngine (FP8 only); the range is s8's full range. With a quantized output y is optional.
/// - **Execution.** On sim and cuda, rows of up to 64 KiB of the element kind (`kNormRowBytes`) take one
///   single-pass kernel (`rows_warp` / `rows_block`): a warp (rows ≤ 4 KiB) or a block owns a row, reads x
///   (and residual, weight, bias) once with 16-byte loads where unit-stride and aligned into shared memory,
///   reduces the statistics there (LayerNorm: the mean, then Σ(x − mean)²) in an order fixed by H alone,
///   and writes h, y and the quantized output once. Longer rows, and the host, run the composed path
///   (`segment_reduce+elementwise`: a segmented reduction for the statistics, an elementwise pass for y,
///   then the quantize plan on y). Each path is deterministic; their results may differ in the last bit of
///   y (the statistics are summed in a different order).
///   The backward's dx takes a single-pass kernel (`rows_warp` / `rows_block`) on sim and cuda for rows of
///   up to 32 KiB (it keeps dy and x on chip, 64 KiB): dy and x read once, (Σg, Σg·x) reduced in an order
///   fixed by H, dx written once. Longer rows and the host reduce the row sums with the segmented-reduction
///   engine and write dx in an elementwise pass. dweight and dbias are column sums on the segmented-reduction
///   engine on every path (a second read of dy, and of x for dweight).
/// - **Aliasing (forward):** y may be exactly x (same data and strides) or, with a residual, exactly
///   residual; h exactly x or residual; no other overlap between operands.
/// - **Workspace:** `workspace_size()`, 256-byte aligned (per-row values — the backward's composed path's
///   three coefficients per row — and the reductions' partials; on the
///   composed path y when the caller does not keep it, the zero point of a static quantization without one,
///   and the quantize plan's workspace).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/hash.hpp"
#include "baracuda/core/plan.hpp"
#include "baracuda/core/sku.hpp"
#include "baracuda/core/stream.hpp"
#include "baracuda/core/tensor.hpp"
#include "baracuda/core/workspace.hpp"
#include "baracuda/ops/dynamic_range_quantize.hpp"
#include "baracuda/ops/quant_convention.hpp"

namespace baracuda {

/// Which normalization.
enum class NormOp : uint8_t {
  RmsNorm = 0,
  LayerNorm = 1,
};
std::string_view to_string(NormOp op);

/// A NormPlan's fused quantized output (see the file comment for the plan each one equals).
enum class NormQuant : uint8_t {
  None = 0,     ///< y only
  Static = 1,   ///< q s8 with the caller's per-tensor scale (and zero point)
  Dynamic = 2,  ///< q s8 with a scale (and zero point) per row, written
  Fp8 = 3,      ///< q E4M3 with the caller's per-tensor scale; amax written
};
/// "none", "static", "dynamic", "fp8".
std::string_view to_string(NormQuant q);

/// Rows of up to this many bytes (H · element size) take the single-pass row kernel on sim and cuda (above
/// 48 KiB the kernel is opted in to more dynamic shared memory).
inline constexpr int64_t kNormRowBytes = 64 * 1024;

/// The problem. A hashable value.
struct NormDescriptor {
  NormOp op = NormOp::RmsNorm;
  ElementKind element = ElementKind::F32;
  Shape shape;              ///< x's shape; the last dimension is normalized
  double eps = 1e-6;        ///< ≥ 0, finite
  bool has_weight = true;   ///< w `[H]`
  bool has_bias = false;    ///< b `[H]` (LayerNorm only)
  bool has_residual = false;  ///< forward: h = x + residual, normalized and written (file comment)
  NormQuant quant = NormQuant::None;                    ///< forward: the fused quantized output
  DynamicRangeMode dynamic_mode = DynamicRangeMode::Symmetric;  ///< `Dynamic`: symmetric or asymmetric
  QuantConvention convention = QuantConvention::PyTorch;  ///< the quantize plan's arithmetic

  NormDescriptor& with_op(NormOp o) { op = o; return *this; }
  NormDescriptor& with_element(ElementKind k) { element = k; return *this; }
  NormDescriptor& with_shape(const Shape& s) { shape = s; return *this; }
  NormDescriptor& with_eps(double e) { eps = e; return *this; }
  NormDescriptor& with_weight(bool w) { has_weight = w; return *this; }
  NormDescriptor& with_bias(bool b) { has_bias = b; return *this; }
  NormDescriptor& with_residual(bool r) { has_residual = r; return *this; }
  NormDescriptor& with_quant(NormQuant q) { quant = q; return *this; }
  NormDescriptor& with_dynamic_mode(DynamicRangeMode m) { dynamic_mode = m; return *this; }
  NormDescriptor& with_convention(QuantConvention c) { convention = c; return *this; }
  friend bool operator==(const NormDescriptor&, const NormDescriptor&) = default;
  size_t hash() const {
    return detail::hash_fields(op, element, shape, eps, has_weight, has_bias, has_residual, quant, dynamic_mode,
                               convention);
  }
};

namespace detail {
struct NormLaunch;
struct NormQuantChain;
using NormFn = Status (*)(const ExecContext&, const NormLaunch&);
}  // namespace detail

namespace dynamic {

/// The operands of a NormPlan.
struct NormArgs {
  ConstDynTensor x;       ///< read: the descriptor's shape and kind
  ConstDynTensor weight;  ///< read: `[H]` when `has_weight`, else empty
  ConstDynTensor bias;    ///< read: `[H]` when `has_bias`, else empty
  DynTensor y;            ///< written: x's shape and kind (optional with a quantized output)
  DynTensor mean;         ///< written (optional, LayerNorm only): `[rows]`, `stats_kind()`
  DynTensor rstd;         ///< written (optional): `[rows]`, `stats_kind()`
  ConstDynTensor residual = {};    ///< read (`has_residual`): x's shape and kind
  DynTensor h = {};                ///< written (`has_residual`): x + residual, x's shape and kind
  DynTensor q = {};                ///< written (quantized output): x's shape, `quant_kind()`
  ConstDynTensor scale = {};       ///< read (`Static`: `stats_kind()`; `Fp8`: f32): `[1]`
  ConstDynTensor zero_point = {};  ///< read (`Static`, optional): s32 `[1]`
  DynTensor q_scale = {};          ///< written (`Dynamic`): `[rows]`, `stats_kind()`
  DynTensor q_zero_point = {};     ///< written (`Dynamic`; required asymmetric, optional symmetric): s32 `[rows]`
  DynTensor amax = {};             ///< written (`Fp8`): f32 `[1]`
};

/// The operands of a NormBackwardPlan.
struct NormBackwardArgs {
  ConstDynTensor dy;      ///< read: x's shape and kind
  ConstDynTensor x;       ///< read: the forward's x
  ConstDynTensor weight;  ///< read: `[H]` when `has_weight`, else empty
  ConstDynTensor mean;    ///< read: the forward's mean (LayerNorm), else empty
  ConstDynTensor rstd;    ///< read: the forward's rstd
  DynTensor dx;           ///< written (optional): x's shape
  DynTensor dweight;      ///< written (optional, with a weight): `[H]`
  DynTensor dbias;        ///< written (optional, with a bias): `[H]`
};

/// The dtype/rank-erased NormPlan.
class NormPlan : public detail::BoundFnPlan<NormDescriptor, detail::NormFn> {
  using BoundFnPlan::BoundFnPlan;

 public:
  using Args = NormArgs;
  NormPlan() = default;
  static Result<NormPlan> select(const Stream& stream, const NormDescriptor& desc, PlanPreference pref = {});
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return workspace_bytes_; }
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;
  /// The statistics' shape, `[rows]` (x's shape without its last dimension).
  const Shape& stats_shape() const { return stats_shape_; }
  /// The statistics' kind: f32, or f64 for f64 x.
  ElementKind stats_kind() const { return desc_.element == ElementKind::F64 ? ElementKind::F64 : ElementKind::F32; }
  /// q's kind: s8 (`Static`, `Dynamic`), E4M3 (`Fp8`); none without a quantized output.
  std::optional<ElementKind> quant_kind() const;

 private:
  Status check_fused(const Args& args) const;
  Shape stats_shape_;
  size_t workspace_bytes_ = 0;
  bool row_kernel_ = false;                               // the single-pass kernel (else the composed path)
  std::shared_ptr<const detail::NormQuantChain> chain_;  // the composed path's quantize plan
};

/// The dtype/rank-erased NormBackwardPlan.
class NormBackwardPlan : public detail::BoundFnPlan<NormDescriptor, detail::NormFn> {
  using BoundFnPlan::BoundFnPlan;

 public:
  using Args = NormBackwardArgs;
  NormBackwardPlan() = default;
  static Result<NormBackwardPlan> select(const Stream& stream, const NormDescriptor& desc, PlanPreference pref = {});
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return workspace_bytes_; }
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;
  const Shape& stats_shape() const { return stats_shape_; }
  ElementKind stats_kind() const { return desc_.element == ElementKind::F64 ? ElementKind::F64 : ElementKind::F32; }

 private:
  Shape stats_shape_;
  size_t workspace_bytes_ = 0;
  bool row_kernel_ = false;  // dx by the single-pass kernel (else the composed path)
};

}  // namespace dynamic
}  // namespace baracuda
