/// \file
/// \brief Integer GEMM and the W8A8 linear layers built on it: `IntGemmPlan` (s8/u8 × s8/u8 → s32),
/// `QuantizedLinearPlan` (float activation quantized per token inside the plan, int8 weight) and
/// `SmoothQuantLinearPlan` (caller-quantized int8 activation with a static per-tensor scale).
///
/// **Backends.** `host` runs the reference of src/ops/int_gemm/host.cpp; `sim` and `cuda` run the int8
/// tensor-core kernel of src/ops/int_gemm/kernels.cuh (cp.async multi-stage tiles, ldmatrix,
/// mma.sync.m16n8k32, the fused epilogue below; tiles in tuning.hpp), which matches the host bit for bit
/// (SiLU/GELU within libm's ulp). f64 outputs (the f64 epilogue) are the host reference's only: `select`
/// on `sim`/`cuda` returns `Unsupported` for them.
///
/// **Layouts (all three plans).** `A` (the activation) is `[M, K]` and `B` (the weight) is `[N, K]` —
/// PyTorch's `nn.Linear.weight` layout, so `C = A · Bᵀ` (a "TN" GEMM: both operands K-contiguous). `C`/`y`
/// is `[M, N]`.
/// - **Alignment (the 16-byte cp.async rule):** `K % 16 == 0`; A and B have unit stride along K, their row
///   strides are multiples of 16 elements (= 16 bytes) and at least K, and their base pointers are 16-byte
///   aligned — else `MisalignedOperand` (or `InvalidProblem` for K itself). M and N are arbitrary (ragged
///   edges are handled) up to M ≤ 4194240 (65535 blocks of 64 rows) and N < 2³¹ (`InvalidProblem`). Outputs have unit stride along N and a row stride ≥ N (no other alignment; the
///   kernel vectorises stores where the rows happen to be aligned).
/// - **Exactness bound on K:** the s32 accumulator never overflows: `K ≤ int_gemm_max_k(...)`, i.e.
///   `K · max|a| · max|b| ≤ 2³¹ − 1` (s8×s8: K ≤ 131071; u8×u8: K ≤ 33025; asymmetric activations count
///   `|q − zp| ≤ 255`). Larger K is `InvalidProblem`, so every result is the exact integer (but for the
///   Vllm convention's asymmetric zero point, which the bound cannot cover: see the epilogue's step 1).
/// - Empty problems (M, N or K = 0) succeed; with K = 0 the accumulator is 0 and the epilogue still runs
///   (so y = bias, activated).
/// - **Aliasing:** no output may overlap any input or the workspace.
/// - **Split K (decode, sim and cuda):** when M ≤ 16 and the output alone gives the GPU too few blocks (the
///   decode tile's 32-column blocks: fewer than 264), K is cut into parts whose raw s32 sums (and, for
///   asymmetric activations, column sums) go to the workspace, and a second kernel adds them and runs the
///   epilogue. The sums are integers, so the result is bit for bit the same as without the split. The
///   parts' workspace, `splits·M·N·4` bytes (+ `splits·N·4`), is part of every plan's `workspace_size()`
///   on those devices; the host device needs none. The rule is a function of M, N and K only.
///
/// **The epilogue (QuantizedLinear and SmoothQuantLinear), exactly:** per output element, in the opmath
/// type M (f32; f64 when the output is f64), each step one IEEE operation rounding to nearest even:
///   1. `acc = Σ_k a[m,k]·b[n,k]` exactly in s32 (asymmetric activations: `acc −= zp_a[m]·Σ_k b[n,k]` in
///      wrap-around s32 — the column-sum correction of vLLM's per-token AZP epilogue — exact whenever
///      `|q − zp| ≤ 255`, which the PyTorch and Exact conventions' clamped zero points guarantee; the Vllm
///      convention's unclamped zero point can take it past s32, and it wraps, as vLLM's int32 epilogue does);
///   2. `t = s_w[n] · M(acc)` — the weight scale first (`M(acc)` rounds once for |acc| > 2²⁴ in f32);
///   3. `v = s_a[m] · t` without bias, or `v = fma(s_a[m], t, M(bias[n]))` with it (one rounding);
///   4. `v = act(v)` (ReLU: `v > 0 ? v : 0`, NaN propagates; SiLU and GELU as the unary family computes them);
///   5. one rounding of v to the output type.
/// The GPU kernel must reproduce steps 1–3 and 5 (and ReLU) bit for bit; SiLU/GELU call f32 libm functions
/// whose device and host versions may differ by an ulp.
///
/// **Determinism:** the sum is exact integer arithmetic (order-free) and the epilogue a fixed sequence of
/// operations, so every plan is deterministic and bit-stable.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/plan.hpp"
#include "baracuda/core/sku.hpp"
#include "baracuda/core/stream.hpp"
#include "baracuda/core/workspace.hpp"
#include "baracuda/ops/dynamic_range_quantize.hpp"

namespace baracuda {

/// The largest K for which an s32 accumulation of `a_kind × b_kind` products (s8 or u8) cannot overflow:
/// `⌊(2³¹ − 1) / (max|a| · max|b|)⌋`; `a_max_abs` overrides max|a| (255 for asymmetric activations after
/// the zero-point correction). 0 for kinds other than s8/u8.
int64_t int_gemm_max_k(ElementKind a_kind, ElementKind b_kind, int64_t a_max_abs = 0);

// ------------------------------------------------------------------------------------------------------
// IntGemmPlan
// ------------------------------------------------------------------------------------------------------

/// `C[m, n] = Σ_k A[m, k] · B[n, k]`, exact in s32.
struct IntGemmDescriptor {
  int64_t m = 0, n = 0, k = 0;
  ElementKind a = ElementKind::S8;       ///< s8 or u8
  ElementKind b = ElementKind::S8;       ///< s8 or u8
  ElementKind c = ElementKind::S32;      ///< s32

  IntGemmDescriptor& with_shape(int64_t m_, int64_t n_, int64_t k_) { m = m_, n = n_, k = k_; return *this; }
  IntGemmDescriptor& with_kinds(ElementKind a_, ElementKind b_) { a = a_, b = b_; return *this; }
  friend bool operator==(const IntGemmDescriptor&, const IntGemmDescriptor&) = default;
  size_t hash() const;
};

/// A `[M, K]`, B `[N, K]` (read), C `[M, N]` s32 (written). Rank-2 DynTensors.
struct IntGemmTensors {
  DynTensor a;
  DynTensor b;
  DynTensor c;
};

namespace detail {
struct IntGemmLaunch;
struct LinearLaunch;
/// Where a plan keeps the split-K parts in its workspace (the file comment's "Split K").
struct IntGemmSplitWorkspace {
  int splits = 1;
  size_t offset = 0;         ///< of the s32 [splits, M, N] sums in the workspace
  size_t colsum_offset = 0;  ///< of the s32 [splits, N] column sums (asymmetric linear only)
  size_t bytes = 0;          ///< the end of the parts' region (0: no split)
};
using IntGemmFn = Status (*)(const ExecContext&, const IntGemmLaunch&);
using LinearFn = Status (*)(const ExecContext&, const LinearLaunch&);
}  // namespace detail

namespace dynamic {

/// Integer GEMM. Workspace: the split-K parts' sums on sim and cuda for decode shapes (file comment), 256-byte
/// aligned; none on host or otherwise. SKU `int_gemm/s8->s8/rcr/identity/...` for s8 × s8: element is A's
/// kind and aux_element B's (so the arrow joins A and B; the output is always s32), layout Rcr.
class IntGemmPlan {
 public:
  /// Kinds (A, B ∈ {s8, u8}, C = s32), non-negative shape within the file comment's limits, K % 16 == 0,
  /// K ≤ int_gemm_max_k; the device's function (the host reference, or the tensor-core kernel on sim/cuda).
  static Result<IntGemmPlan> select(const Stream& stream, const IntGemmDescriptor& desc, PlanPreference pref = {});
  /// Kinds, shapes, the alignment rules of the file comment, no broadcast, no overlap of C with A or B.
  Status can_implement(const IntGemmTensors& t) const;
  size_t workspace_size() const { return split_.bytes; }
  KernelSku sku() const { return binding_.sku; }
  PrecisionGuarantee precision_guarantee() const;
  Status run(const Stream& stream, Workspace workspace, const IntGemmTensors& t) const;
  const IntGemmDescriptor& descriptor() const { return desc_; }

 private:
  IntGemmDescriptor desc_;
  detail::PlanBinding binding_;
  detail::IntGemmSplitWorkspace split_{};
  detail::IntGemmFn fn_ = nullptr;
};

}  // namespace dynamic

// ------------------------------------------------------------------------------------------------------
// The linear layers
// ------------------------------------------------------------------------------------------------------

/// The activation applied after scale and bias (step 4 of the epilogue).
enum class LinearActivation : uint8_t {
  None = 0,
  Relu = 1,
  Silu = 2,      ///< x·σ(x)
  GeluErf = 3,   ///< 0.5·x·erfc(−x/√2)
  GeluTanh = 4,  ///< 0.5·x·(1 + tanh(√(2/π)(x + 0.044715x³)))
};
std::string_view to_string(LinearActivation a);

/// How many weight scales there are: one per output channel (`[N]`) or one for the tensor (`[1]`).
enum class WeightScaleGranularity : uint8_t { PerChannel = 0, PerTensor = 1 };

/// W8A8 linear with per-token dynamic activation quantization:
/// `y[m, n] = act(s_a[m] · (s_w[n] · (Σ_k q_a[m,k]·w[n,k] − zp_a[m]·Σ_k w[n,k])) + bias[n])`.
///
/// The plan quantizes x itself, exactly as `DynamicRangeQuantizePlan` with `QuantGranularity::per_token()`
/// and the descriptor's `convention` does (dynamic_range_quantize.hpp has every formula), into the
/// workspace, then runs the GEMM with the epilogue of the file comment. Per row m of x, with
/// `[lo, hi]` its range, `qmin`/`qmax` the activation kind's (s8: −128/127; u8: 0/255):
/// - `PyTorch` (default) and `Exact`: over `[lo', hi']` = the range widened to include 0, symmetric
///   `s = max(−lo', hi')/qmax, zp = 0`; asymmetric `s = (hi' − lo')/(qmax − qmin)`,
///   `zp = clamp(qmin − nearbyint(lo'/s), qmin, qmax)`; `s = 0 → s = 1, zp = 0`; a row with NaN: s = NaN.
///   Then `q = clamp(nearbyint(r) + zp, qmin, qmax)` with `r = x · f32(1/s)` (PyTorch) or `r = x / s` (Exact).
/// - `Vllm` (f16/bf16/f32 x; f64 is `Unsupported`): vLLM's `dynamic_scaled_int8_quant` (symmetric: NaN
///   skipped, `amax = max|x|`, `s = amax/qmax`, `q = clamp(nearbyint(x · (qmax/amax)))`, an all-zero row
///   gets s = 0 and q = 0) and `dynamic_scaled_int8_azp_quant` (asymmetric: NaN skipped, no widening,
///   `s = (hi − lo)/(qmax − qmin)`, `zp = s32(nearbyint(qmin − lo/s))` unclamped and saturating,
///   `q = clamp(s32(nearbyint(x · (1/s))) + zp)` with a wrap-around s32 sum); vLLM itself is s8 only, u8
///   uses the same formulas over [0, 255]. Its zero point can lie far outside [qmin, qmax] (a row whose
///   range is far from 0); step 1's correction then wraps in s32 (file comment).
/// - `TransformerEngine`: `Unsupported` (FP8 only).
/// - x: `[M, K]` of `element` (f16, bf16, f32, f64), any strides (DynamicRangeQuantizePlan's rules).
/// - weight: `[N, K]` s8 (symmetric), the A/B alignment rules of the file comment.
/// - weight_scale: `[N]` (PerChannel) or `[1]` (PerTensor), f32 (f64 when the output is f64), any stride.
/// - bias (optional): `[N]` of the output kind, any stride; empty DynTensor = no bias.
/// - y: `[M, N]` of `output`: f16, bf16 or f32 for f16/bf16/f32 x (f32 epilogue); f64 for f64 x (f64
///   epilogue; the host reference only — the tensor-core kernel will not serve it).
/// - activation quantized kind: s8 (symmetric or asymmetric) or u8 (asymmetric only).
/// **Workspace:** `workspace_size()` bytes, 256-byte aligned: the quantized activation (dense `[M, K]`,
/// rows K bytes apart — so 16-byte aligned), its scales `[M]` and zero points `[M]` (s32), each sub-buffer
/// 256-byte aligned, then what the per-token quantization pass itself needs. The quantized activation and
/// its scales are left there after `run` (the tests read them); then, on sim and cuda for decode shapes, the
/// split-K parts (file comment).
struct QuantizedLinearDescriptor {
  int64_t m = 0, n = 0, k = 0;
  ElementKind element = ElementKind::F16;             ///< x
  ElementKind output = ElementKind::F16;              ///< y (and bias)
  ElementKind activation_quantized = ElementKind::S8; ///< the per-token quantized x: s8, or u8 (asymmetric)
  ElementKind weight = ElementKind::S8;               ///< s8
  DynamicRangeMode mode = DynamicRangeMode::Symmetric;
  WeightScaleGranularity weight_scale = WeightScaleGranularity::PerChannel;
  bool has_bias = false;
  LinearActivation activation = LinearActivation::None;
  /// The activation quantization's arithmetic: PyTorch (default), Exact or Vllm (see above).
  QuantConvention convention = QuantConvention::PyTorch;

  QuantizedLinearDescriptor& with_shape(int64_t m_, int64_t n_, int64_t k_) { m = m_, n = n_, k = k_; return *this; }
  QuantizedLinearDescriptor& with_element(ElementKind e) { element = e; return *this; }
  QuantizedLinearDescriptor& with_output(ElementKind e) { output = e; return *this; }
  QuantizedLinearDescriptor& with_activation_quantized(ElementKind e) { activation_quantized = e; return *this; }
  QuantizedLinearDescriptor& with_mode(DynamicRangeMode md) { mode = md; return *this; }
  QuantizedLinearDescriptor& with_weight_scale(WeightScaleGranularity g) { weight_scale = g; return *this; }
  QuantizedLinearDescriptor& with_bias(bool b = true) { has_bias = b; return *this; }
  QuantizedLinearDescriptor& with_activation(LinearActivation a) { activation = a; return *this; }
  QuantizedLinearDescriptor& with_convention(QuantConvention c) { convention = c; return *this; }
  friend bool operator==(const QuantizedLinearDescriptor&, const QuantizedLinearDescriptor&) = default;
  size_t hash() const;
};

struct QuantizedLinearTensors {
  DynTensor x;             ///< [M, K] float (read)
  DynTensor weight;        ///< [N, K] s8 (read)
  DynTensor weight_scale;  ///< [N] or [1] (read)
  DynTensor bias;          ///< [N] output kind (read), empty when !has_bias
  DynTensor y;             ///< [M, N] (written)
};

/// SmoothQuant W8A8 linear: the activation was smoothed and quantized per tensor by the caller with the
/// static scale `act_scale` (a descriptor scalar, applied in the epilogue: no scratch, no fill pass):
/// `y[m, n] = act(act_scale · (s_w[n] · Σ_k a_q[m,k]·w[n,k]) + bias[n])`.
/// - act_q: `[M, K]` s8; weight: `[N, K]` s8 (both with the alignment rules of the file comment).
/// - weight_scale: `[N]` or `[1]`, f32 (f64 when the output is f64), any stride.
/// - bias (optional): `[N]` of the output kind. y: `[M, N]` f16, bf16, f32 (f32 epilogue) or f64 (f64
///   epilogue, host reference only). `act_scale` must be finite; it enters the f64 epilogue as the exact
///   double of the float.
/// **Workspace:** the split-K parts on sim and cuda for decode shapes (file comment), 256-byte aligned; none
/// on host or otherwise.
struct SmoothQuantLinearDescriptor {
  int64_t m = 0, n = 0, k = 0;
  float act_scale = 1.0f;
  ElementKind activation_quantized = ElementKind::S8;  ///< s8
  ElementKind weight = ElementKind::S8;                ///< s8
  ElementKind output = ElementKind::F16;
  WeightScaleGranularity weight_scale = WeightScaleGranularity::PerChannel;
  bool has_bias = false;
  LinearActivation activation = LinearActivation::None;

  SmoothQuantLinearDescriptor& with_shape(int64_t m_, int64_t n_, int64_t k_) { m = m_, n = n_, k = k_; return *this; }
  SmoothQuantLinearDescriptor& with_act_scale(float s) { act_scale = s; return *this; }
  SmoothQuantLinearDescriptor& with_output(ElementKind e) { output = e; return *this; }
  SmoothQuantLinearDescriptor& with_weight_scale(WeightScaleGranularity g) { weight_scale = g; return *this; }
  SmoothQuantLinearDescriptor& with_bias(bool b = true) { has_bias = b; return *this; }
  SmoothQuantLinearDescriptor& with_activation(LinearActivation a) { activation = a; return *this; }
  friend bool operator==(const SmoothQuantLinearDescriptor&, const SmoothQuantLinearDescriptor&) = default;
  size_t hash() const;
};

struct SmoothQuantLinearTensors {
  DynTensor act_q;         ///< [M, K] s8 (read)
  DynTensor weight;        ///< [N, K] s8 (read)
  DynTensor weight_scale;  ///< [N] or [1] (read)
  DynTensor bias;          ///< [N] output kind (read), empty when !has_bias
  DynTensor y;             ///< [M, N] (written)
};

namespace dynamic {

class QuantizedLinearPlan {
 public:
  static Result<QuantizedLinearPlan> select(const Stream& stream, const QuantizedLinearDescriptor& desc,
                                            PlanPreference pref = {});
  Status can_implement(const QuantizedLinearTensors& t) const;
  size_t workspace_size() const { return workspace_bytes_; }
  KernelSku sku() const { return binding_.sku; }
  PrecisionGuarantee precision_guarantee() const;
  Status run(const Stream& stream, Workspace workspace, const QuantizedLinearTensors& t) const;
  const QuantizedLinearDescriptor& descriptor() const { return desc_; }
  /// Views, inside a workspace given to `run`, of the quantized activation `[M, K]`, its scales `[M]` and
  /// zero points `[M]` (s32; all zero in symmetric mode).
  DynTensor quantized_activation(Workspace ws) const;
  DynTensor activation_scale(Workspace ws) const;
  DynTensor activation_zero_point(Workspace ws) const;

 private:
  QuantizedLinearDescriptor desc_;
  detail::PlanBinding binding_;
  DynamicRangeQuantizePlan quantize_;
  size_t q_offset_ = 0, scale_offset_ = 0, zp_offset_ = 0, quantize_ws_offset_ = 0;
  detail::IntGemmSplitWorkspace split_{};
  size_t workspace_bytes_ = 0;
  detail::LinearFn fn_ = nullptr;
};

class SmoothQuantLinearPlan {
 public:
  static Result<SmoothQuantLinearPlan> select(const Stream& stream, const SmoothQuantLinearDescriptor& desc,
                                              PlanPreference pref = {});
  Status can_implement(const SmoothQuantLinearTensors& t) const;
  size_t workspace_size() const { return split_.bytes; }
  KernelSku sku() const { return binding_.sku; }
  PrecisionGuarantee precision_guarantee() const;
  Status run(const Stream& stream, Workspace workspace, const SmoothQuantLinearTensors& t) const;
  const SmoothQuantLinearDescriptor& descriptor() const { return desc_; }

 private:
  SmoothQuantLinearDescriptor desc_;
  detail::PlanBinding binding_;
  detail::IntGemmSplitWorkspace split_{};
  detail::LinearFn fn_ = nullptr;
};

}  // namespace dynamic

// ------------------------------------------------------------------------------------------------------
// SmoothQuant's offline smoothing (host utilities, double precision)
// ------------------------------------------------------------------------------------------------------

/// SmoothQuant's per-input-channel factors (Xiao et al. 2023, smoothquant/smooth.py):
/// `s_j = max|X_j|^α / max|W_j|^(1−α)`, with the reference implementation's guards exactly:
/// `s_j = max(max_abs_x[j]^α / max(max_abs_w[j], 1e-5)^(1−α), 1e-5)`, so an all-zero weight or activation
/// channel gives a finite, positive factor (`pow(0, 0) = 1`).
/// `max_abs_x[j]` is the calibration maximum of |X[:, j]|, `max_abs_w[j]` the maximum over the weights
/// that consume channel j (for a fused QKV: over all of them); both must have the same length, be finite
/// and ≥ 0, and α ∈ [0, 1] — `InvalidProblem` otherwise.
Result<std::vector<double>> smooth_quant_factors(std::span<const double> max_abs_x, std::span<const double> max_abs_w,
                                                double alpha);

/// W ← W·diag(s): multiplies column j of the row-major `[N, K]` weight by `s[j]` (in place, one rounding
/// per element). `w.size()` must be N·K with K = s.size().
Status smooth_quant_scale_weight(std::span<float> w, std::span<const double> s);

/// X ← X·diag(1/s): divides column j of the row-major `[M, K]` activation by `s[j]` (in place, one
/// rounding per element). At inference the division is folded into the preceding LayerNorm's weight and
/// bias (the same call on those `[1, K]` vectors).
Status smooth_quant_scale_activation(std::span<float> x, std::span<const double> s);

}  // namespace baracuda
