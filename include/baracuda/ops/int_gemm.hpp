/// \file
/// \brief Integer GEMM and the W8A8 linear layers built on it: `IntGemmPlan` (s8/u8 × s8/u8 → s32),
/// `QuantizedLinearPlan` (a float x quantized per token inside the plan, or the caller's per-token quantized
/// x_q; int8 weight) and `SmoothQuantLinearPlan` (a caller-quantized int8 x_q with a static per-tensor scale).
/// Each has a
/// `dynamic::` (kind-erased) plan taking a `dynamic::XxxArgs` struct and a typed wrapper (`IntGemmPlan<TA, TB>`,
/// `QuantizedLinearPlan<T, TOut>`, `SmoothQuantLinearPlan<TOut>`) taking `XxxArgs<...>`.
///
/// **Backends.** `host` runs the reference of src/ops/int_gemm/host.cpp; `sim` and `cuda` run the int8
/// tensor-core kernel of src/ops/int_gemm/kernels.cuh (cp.async multi-stage tiles, ldmatrix,
/// mma.sync.m16n8k32, the fused epilogue below; tiles in tuning.hpp), which matches the host bit for bit
/// (SiLU/GELU within libm's ulp). f64 outputs (the f64 epilogue) are the host reference's only: `select`
/// on `sim`/`cuda` returns `Unsupported` for them.
///
/// **Layouts (all three plans).** The left operand (`a`; the linear plans' `x` / `x_q`) is `[M, K]` and the
/// right one (`b`; `weight`) is `[N, K]` — PyTorch's `nn.Linear.weight` layout, so `c = a · bᵀ` (a "TN"
/// GEMM: both operands K-contiguous). `c`/`y` is `[M, N]`.
/// - **Alignment (the 16-byte cp.async rule):** `K % 16 == 0`; a and b (x_q and weight; for QuantizedLinear
///   the weight, and x_q when the caller gives it: the quantized x the plan lays out itself complies) have
///   unit stride along K, their row strides are multiples of 16 elements (= 16 bytes) and at least K, and
///   their base pointers are 16-byte aligned — else `MisalignedOperand` (or `InvalidProblem` for K itself).
///   M and N are arbitrary (ragged edges are handled) up to M ≤ 4194240 (65535 blocks of 64 rows) and
///   N < 2³¹ (`InvalidProblem`).
///   Outputs have unit stride along N and a row stride ≥ N (no other alignment; the kernel vectorises
///   stores where the rows happen to be aligned). IntGemmPlan's row strides are moreover exactly its
///   descriptor's leading dimensions (IntGemmDescriptor).
/// - **Exactness bound on K:** the s32 accumulator never overflows: `K ≤ int_gemm_max_k(...)`, i.e.
///   `K · max|a| · max|b| ≤ 2³¹ − 1` (s8×s8: K ≤ 131071; u8×u8: K ≤ 33025; an asymmetric quantized x
///   counts `|q − zp| ≤ 255`). Larger K is `InvalidProblem`, so every result is the exact integer (but for the
///   Vllm convention's asymmetric zero point, which the bound cannot cover: see the epilogue's step 1).
/// - Empty problems (M, N or K = 0) succeed; with K = 0 the accumulator is 0 and the epilogue still runs
///   (so y = bias, activated).
/// - **Aliasing:** no output may overlap any input or the workspace.
/// - **Split K (decode, sim and cuda):** when M ≤ 16 and the output alone gives the GPU too few blocks (the
///   decode tile's 32-column blocks: fewer than 264), K is cut into parts whose raw s32 sums (and, for
///   an asymmetric quantized x, column sums) go to the workspace, and a second kernel adds them and runs the
///   epilogue. The sums are integers, so the result is bit for bit the same as without the split. The
///   parts' workspace, `splits·M·N·4` bytes (+ `splits·N·4`), is part of every plan's `workspace_size()`
///   on those devices; the host device needs none. The rule is a function of M, N and K only.
///
/// **The epilogue (QuantizedLinear and SmoothQuantLinear), exactly:** per output element, in the opmath
/// type M (f32; f64 when the output is f64), each step one IEEE operation rounding to nearest even:
///   1. `acc = Σ_k a[m,k]·b[n,k]` exactly in s32 — a is the quantized x (x_q), b the weight; s_a and zp_a
///      are x's scale and zero point (asymmetric x: `acc −= zp_a[m]·Σ_k b[n,k]` in wrap-around s32 — the
///      column-sum correction of vLLM's per-token AZP epilogue — exact whenever
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
#include <memory>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "baracuda/core/hash.hpp"
#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/plan.hpp"
#include "baracuda/core/sku.hpp"
#include "baracuda/core/stream.hpp"
#include "baracuda/core/tensor.hpp"
#include "baracuda/core/typed_plan.hpp"
#include "baracuda/core/workspace.hpp"
#include "baracuda/ops/dynamic_range_quantize.hpp"

namespace baracuda {

/// The largest K for which an s32 accumulation of `a_kind × b_kind` products (s8 or u8) cannot overflow:
/// `⌊(2³¹ − 1) / (max|a| · max|b|)⌋`; `a_max_abs` overrides max|a| (255 for an asymmetric quantized x after
/// the zero-point correction). 0 for kinds other than s8/u8.
int64_t int_gemm_max_k(ElementKind a_kind, ElementKind b_kind, int64_t a_max_abs = 0);

// ------------------------------------------------------------------------------------------------------
// IntGemmPlan
// ------------------------------------------------------------------------------------------------------

/// `c[m, n] = Σ_k a[m, k] · b[n, k]`, exact in s32.
///
/// The row strides (leading dimensions, in elements) are part of the descriptor, as GemmDescriptor's are, so that
/// the cuBLASLt backend builds its matrix layouts once, at select; 0 means packed (lda = ldb = K, ldc = N). A given
/// lda/ldb is ≥ K and a multiple of 16 (the 16-byte rows of the file comment), ldc ≥ N (`InvalidProblem`
/// otherwise), and each operand's row stride must then be exactly its ld (`InvalidProblem` in can_implement;
/// a matrix of one row is not checked).
struct IntGemmDescriptor {
  int64_t m = 0, n = 0, k = 0;
  ElementKind a = ElementKind::S8;       ///< s8 or u8
  ElementKind b = ElementKind::S8;       ///< s8 or u8
  ElementKind c = ElementKind::S32;      ///< s32
  int64_t lda = 0, ldb = 0, ldc = 0;     ///< row strides of a, b, c (0: packed)

  IntGemmDescriptor& with_shape(int64_t m_, int64_t n_, int64_t k_) { m = m_, n = n_, k = k_; return *this; }
  IntGemmDescriptor& with_kinds(ElementKind a_, ElementKind b_) { a = a_, b = b_; return *this; }
  IntGemmDescriptor& with_leading_dims(int64_t lda_, int64_t ldb_, int64_t ldc_) {
    lda = lda_, ldb = ldb_, ldc = ldc_;
    return *this;
  }
  /// The row strides with 0 resolved: (lda or K, ldb or K, ldc or N).
  int64_t row_stride_a() const { return lda != 0 ? lda : k; }
  int64_t row_stride_b() const { return ldb != 0 ? ldb : k; }
  int64_t row_stride_c() const { return ldc != 0 ? ldc : n; }
  friend bool operator==(const IntGemmDescriptor&, const IntGemmDescriptor&) = default;
  size_t hash() const { return detail::hash_fields(m, n, k, a, b, c, lda, ldb, ldc); }
};

namespace detail {
struct IntGemmLaunch;
struct LinearLaunch;
class CublasLtGemm;
/// Where a plan keeps the split-K parts in its workspace (the file comment's "Split K").
struct IntGemmSplitWorkspace {
  int splits = 1;
  size_t offset = 0;         ///< of the s32 [splits, M, N] sums in the workspace
  size_t colsum_offset = 0;  ///< of the s32 [splits, N] column sums (asymmetric linear only)
  size_t bytes = 0;          ///< the end of the parts' region (0: no split)
};
using IntGemmFn = Status (*)(const ExecContext&, const IntGemmLaunch&);
using LinearFn = Status (*)(const ExecContext&, const LinearLaunch&);
/// A linear plan on cuBLASLt (see "cuBLASLt" at the linear plans): cuBLASLt's s8 × s8 → s32 GEMM writes the sums
/// into the plan's workspace at `sums_offset`, then `epilogue` (the library's linear epilogue alone) reads them.
struct LinearOnCublasLt {
  std::shared_ptr<const CublasLtGemm> gemm;  ///< null: the plan runs its fused kernel
  LinearFn epilogue = nullptr;
  size_t sums_offset = 0, lt_offset = 0;  ///< the s32 [M, N] sums and cuBLASLt's workspace
  size_t end = 0;                         ///< the end of cuBLASLt's workspace: the plan's workspace size
};
}  // namespace detail

namespace dynamic {

/// The operands of `dynamic::IntGemmPlan` (the layout rules of the file comment).
struct IntGemmArgs {
  ConstDynTensor a;  ///< [M, K] of the descriptor's `a` kind (s8/u8), read; K-contiguous, row stride lda
  ConstDynTensor b;  ///< [N, K] of the descriptor's `b` kind (s8/u8), read; K-contiguous, row stride ldb
  DynTensor c;       ///< [M, N] s32, written; unit stride along N, row stride ldc
};

/// Integer GEMM. Workspace: the split-K parts' sums on sim and cuda for decode shapes (file comment), 256-byte
/// aligned; none on host or otherwise; on cuBLASLt, its algorithm's. SKU `int_gemm/s8->s8/rcr/identity/...` for
/// s8 × s8: element is a's kind and aux_element b's (so the arrow joins a and b; the output is always s32),
/// layout Rcr; its variant names the kernel: `reference` (host), `tc_m16n8k32` (mma.sync), or on a compute
/// capability 9.0 GPU past decode `wgmma_m64n128k32_tma` / `wgmma_m64n256k32_tma` (docs/ops/int_gemm.md; rows
/// that are not 16-byte aligned then run the mma.sync kernel), or `cublaslt_imma` (below).
///
/// **cuBLASLt** (SKU backend `cublaslt`, variant `cublaslt_imma`): cuBLASLt's s8 × s8 → s32 GEMM (compute type
/// 32I, the TN form), its algorithm and layouts chosen at select from the descriptor's leading dimensions; N a
/// multiple of 4, every pointer 16-byte aligned (`MisalignedOperand` in can_implement otherwise); s8 × s8 only.
/// Its workspace is the algorithm's. **The default on a compute capability 9.0 GPU** for s8 × s8: measured there
/// at 1.20–1.45× the bespoke kernels' speed at M ≥ 2048 and 0.92–1.12× below (docs/perf/2026-11-27-h100,
/// run 10). Where cuBLASLt cannot express the problem (u8, N not a multiple of 4, no algorithm within
/// `max_workspace_bytes`), select takes the bespoke kernels, and the SKU says so; other GPUs keep the bespoke
/// kernels until measured. `with_backend(BackendKind::CublasLt)` asks for cuBLASLt on any GPU (`Unsupported`
/// where it cannot serve), `with_backend(BackendKind::Bespoke)` for the bespoke kernels. The sum is the exact
/// integer on every backend, so the choice never changes a bit of c.
class IntGemmPlan : public detail::BoundFnPlan<IntGemmDescriptor, detail::IntGemmFn> {
  using BoundFnPlan::BoundFnPlan;

 public:
  using Args = IntGemmArgs;
  /// Kinds (a, b ∈ {s8, u8}, c = s32), non-negative shape within the file comment's limits, K % 16 == 0,
  /// K ≤ int_gemm_max_k, the leading dimensions' rules; the device's function (the host reference, the
  /// tensor-core kernel on sim/cuda, or cuBLASLt: above).
  static Result<IntGemmPlan> select(const Stream& stream, const IntGemmDescriptor& desc, PlanPreference pref = {});
  /// Kinds, shapes, the row strides the descriptor gives, the alignment rules of the file comment, no
  /// broadcast, no overlap of c with a or b.
  Status can_implement(const Args& args) const;
  size_t workspace_size() const;
  PrecisionGuarantee precision_guarantee() const;
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;

 private:
  detail::IntGemmSplitWorkspace split_{};
  std::shared_ptr<const detail::CublasLtGemm> lt_;  ///< the cuBLASLt backend, when select chose it
};

}  // namespace dynamic

// ------------------------------------------------------------------------------------------------------
// The linear layers
// ------------------------------------------------------------------------------------------------------

/// The activation function applied after scale and bias (step 4 of the epilogue): one enumerator per line of
/// the catalog `baracuda/ops/linear_activations.def`, which gives each one's function (None; Relu; Silu,
/// x·σ(x); GeluErf, 0.5·x·erfc(−x/√2); GeluTanh, 0.5·x·(1 + tanh(√(2/π)(x + 0.044715x³)))).
enum class LinearActivation : uint8_t {
#define BARACUDA_LINEAR_ACTIVATION(name, Enum, epilogue, doc) Enum,
#include "baracuda/ops/linear_activations.def"
#undef BARACUDA_LINEAR_ACTIVATION
};
/// The number of activations (valid values are 0 .. kNumLinearActivations − 1).
inline constexpr size_t kNumLinearActivations = 0
#define BARACUDA_LINEAR_ACTIVATION(name, Enum, epilogue, doc) +1
#include "baracuda/ops/linear_activations.def"
#undef BARACUDA_LINEAR_ACTIVATION
    ;
/// "none", "relu", "silu", "gelu_erf", "gelu_tanh"; "?" for a value outside the catalog.
std::string_view to_string(LinearActivation a);

/// How many weight scales there are: one per output channel (`[N]`) or one for the tensor (`[1]`).
enum class WeightScaleGranularity : uint8_t { PerChannel = 0, PerTensor = 1 };

/// W8A8 linear with per-token dynamic quantization of x:
/// `y[m, n] = act(s_a[m] · (s_w[n] · (Σ_k x_q[m,k]·w[n,k] − zp_a[m]·Σ_k w[n,k])) + bias[n])`, where x_q, s_a
/// and zp_a are the per-token quantized x, its scales and its zero points.
///
/// The plan quantizes x itself, exactly as `DynamicRangeQuantizePlan` with `QuantGranularity::per_token()`
/// and the descriptor's `convention` does (dynamic_range_quantize.hpp has every formula), into the
/// workspace, then runs the GEMM with the epilogue of the file comment. Or the caller gives x already
/// quantized (`x_q`, `x_scale`, `x_zero_point` of `dynamic::QuantizedLinearArgs`, e.g. from a fused norm)
/// and the plan runs the GEMM on them: given what that quantization writes, y is bit for bit the float-x
/// path's (the descriptor's `convention` then describes the caller's quantization; the plan does not
/// check the values). Per row m of x, with `[lo, hi]` its range, `qmin`/`qmax` those of `x_quantized` (s8:
/// −128/127; u8: 0/255):
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
/// - or x_q: `[M, K]` of `x_quantized` (the a alignment rules of the file comment), with x_scale `[M]` f32
///   (f64 for f64 x), any stride, and in asymmetric mode x_zero_point `[M]` s32, any stride (empty in
///   symmetric mode). Exactly one of x and x_q; neither, both, or a missing or extra x_scale/x_zero_point is
///   `InvalidProblem`.
/// - weight: `[N, K]` s8 (symmetric), the a/b alignment rules of the file comment.
/// - weight_scale: `[N]` (PerChannel) or `[1]` (PerTensor), f32 (f64 when the output is f64), any stride.
/// - bias (optional): `[N]` of the output kind, any stride; empty (default) = no bias.
/// - y: `[M, N]` of `output`: f16, bf16 or f32 for f16/bf16/f32 x (f32 epilogue); f64 for f64 x (f64
///   epilogue; the host reference only — the tensor-core kernel will not serve it).
/// - x_quantized (the kind x is quantized to): s8 (symmetric or asymmetric) or u8 (asymmetric only).
/// **Workspace:** `workspace_size()` bytes, 256-byte aligned: the quantized x (dense `[M, K]`, rows K bytes
/// apart — so 16-byte aligned), its scales `[M]` and zero points `[M]` (s32), each sub-buffer 256-byte
/// aligned, then what the per-token quantization pass itself needs. The quantized x and its scales are left
/// there after `run` (`quantized_x(ws)`, `x_scale(ws)`, `x_zero_point(ws)`); then, on sim and cuda for
/// decode shapes, the split-K parts (file comment). A run with x_q takes the same workspace (the size is an
/// upper bound) and uses only the split-K parts: the quantized-x region is left untouched.
struct QuantizedLinearDescriptor {
  int64_t m = 0, n = 0, k = 0;
  ElementKind element = ElementKind::F16;               ///< x
  ElementKind output = ElementKind::F16;                ///< y (and bias)
  ElementKind x_quantized = ElementKind::S8;            ///< the per-token quantized x: s8, or u8 (asymmetric)
  ElementKind weight_element = ElementKind::S8;         ///< the weight's kind: s8
  DynamicRangeMode mode = DynamicRangeMode::Symmetric;  ///< of x's quantization
  WeightScaleGranularity weight_scale_granularity = WeightScaleGranularity::PerChannel;
  bool has_bias = false;
  LinearActivation activation = LinearActivation::None;  ///< the epilogue's function
  /// The arithmetic of x's quantization: PyTorch (default), Exact or Vllm (see above).
  QuantConvention convention = QuantConvention::PyTorch;

  QuantizedLinearDescriptor& with_shape(int64_t m_, int64_t n_, int64_t k_) { m = m_, n = n_, k = k_; return *this; }
  QuantizedLinearDescriptor& with_element(ElementKind e) { element = e; return *this; }
  QuantizedLinearDescriptor& with_output(ElementKind e) { output = e; return *this; }
  QuantizedLinearDescriptor& with_x_quantized(ElementKind e) { x_quantized = e; return *this; }
  QuantizedLinearDescriptor& with_mode(DynamicRangeMode md) { mode = md; return *this; }
  QuantizedLinearDescriptor& with_weight_scale_granularity(WeightScaleGranularity g) {
    weight_scale_granularity = g;
    return *this;
  }
  QuantizedLinearDescriptor& with_bias(bool b = true) { has_bias = b; return *this; }
  QuantizedLinearDescriptor& with_activation(LinearActivation a) { activation = a; return *this; }
  QuantizedLinearDescriptor& with_convention(QuantConvention c) { convention = c; return *this; }
  friend bool operator==(const QuantizedLinearDescriptor&, const QuantizedLinearDescriptor&) = default;
  size_t hash() const {
    return detail::hash_fields(m, n, k, element, output, x_quantized, weight_element, mode, weight_scale_granularity,
                               has_bias, activation, convention);
  }
};

/// SmoothQuant W8A8 linear: x was smoothed and quantized per tensor by the caller with the static scale
/// `x_scale` (a descriptor scalar, applied in the epilogue: no scratch, no fill pass):
/// `y[m, n] = act(x_scale · (s_w[n] · Σ_k x_q[m,k]·w[n,k]) + bias[n])`.
/// - x_q: `[M, K]` s8; weight: `[N, K]` s8 (both with the alignment rules of the file comment).
/// - weight_scale: `[N]` or `[1]`, f32 (f64 when the output is f64), any stride.
/// - bias (optional): `[N]` of the output kind. y: `[M, N]` f16, bf16, f32 (f32 epilogue) or f64 (f64
///   epilogue, host reference only). `x_scale` must be finite; it enters the f64 epilogue as the exact
///   double of the float.
/// **Workspace:** the split-K parts on sim and cuda for decode shapes (file comment), 256-byte aligned; none
/// on host or otherwise.
struct SmoothQuantLinearDescriptor {
  int64_t m = 0, n = 0, k = 0;
  float x_scale = 1.0f;                          ///< x's static per-tensor scale
  ElementKind x_quantized = ElementKind::S8;     ///< x_q's kind: s8
  ElementKind weight_element = ElementKind::S8;  ///< the weight's kind: s8
  ElementKind output = ElementKind::F16;         ///< y (and bias)
  WeightScaleGranularity weight_scale_granularity = WeightScaleGranularity::PerChannel;
  bool has_bias = false;
  LinearActivation activation = LinearActivation::None;  ///< the epilogue's function

  SmoothQuantLinearDescriptor& with_shape(int64_t m_, int64_t n_, int64_t k_) { m = m_, n = n_, k = k_; return *this; }
  SmoothQuantLinearDescriptor& with_x_scale(float s) { x_scale = s; return *this; }
  SmoothQuantLinearDescriptor& with_output(ElementKind e) { output = e; return *this; }
  SmoothQuantLinearDescriptor& with_weight_scale_granularity(WeightScaleGranularity g) {
    weight_scale_granularity = g;
    return *this;
  }
  SmoothQuantLinearDescriptor& with_bias(bool b = true) { has_bias = b; return *this; }
  SmoothQuantLinearDescriptor& with_activation(LinearActivation a) { activation = a; return *this; }
  friend bool operator==(const SmoothQuantLinearDescriptor&, const SmoothQuantLinearDescriptor&) = default;
  size_t hash() const {
    return detail::hash_fields(m, n, k, x_scale, x_quantized, weight_element, output, weight_scale_granularity,
                               has_bias, activation);
  }
};

namespace dynamic {

/// The operands of `dynamic::QuantizedLinearPlan` (shapes, kinds and strides above). Exactly one of `x` and
/// `x_q` is given: a float x that the plan quantizes per token, or an x already quantized per token by the
/// caller (a fused producer: `DynamicRangeQuantizePlan` per token with the descriptor's `mode`, or
/// NormPlan's dynamic quantized output), with its scales and zero points; then the plan runs the GEMM on it
/// directly. The optional x_q operands follow y, so that `{x, weight, weight_scale, bias, y}` keeps its
/// meaning.
struct QuantizedLinearArgs {
  ConstDynTensor x;             ///< [M, K] of `element`, read; any strides; empty when x_q is given
  ConstDynTensor weight;        ///< [N, K] s8, read; K-contiguous, 16-byte aligned rows
  ConstDynTensor weight_scale;  ///< [N] (PerChannel) or [1] (PerTensor), f32 (f64 for f64 y), read
  ConstDynTensor bias;          ///< [N] of `output`, read; empty unless `has_bias`
  DynTensor y;                  ///< [M, N] of `output`, written; unit stride along N
  /// [M, K] of `x_quantized`, read: instead of x, x already quantized per token (e.g. by
  /// DynamicRangeQuantizePlan per_token with the descriptor's mode, or NormPlan's dynamic output);
  /// K-contiguous, 16-byte aligned rows (the x_q rule of SmoothQuantLinear)
  ConstDynTensor x_q = {};
  ConstDynTensor x_scale = {};       ///< [M], f32 (f64 for f64), read with x_q (required); any stride
  ConstDynTensor x_zero_point = {};  ///< [M] s32, read with x_q in asymmetric mode; empty in symmetric mode
};

/// The operands of `dynamic::SmoothQuantLinearPlan` (shapes, kinds and strides above).
struct SmoothQuantLinearArgs {
  ConstDynTensor x_q;           ///< [M, K] s8 (x quantized with `x_scale`), read; K-contiguous, 16-byte aligned rows
  ConstDynTensor weight;        ///< [N, K] s8, read; K-contiguous, 16-byte aligned rows
  ConstDynTensor weight_scale;  ///< [N] (PerChannel) or [1] (PerTensor), f32 (f64 for f64 y), read
  ConstDynTensor bias;          ///< [N] of `output`, read; empty unless `has_bias`
  DynTensor y;                  ///< [M, N] of `output`, written; unit stride along N
};

/// **cuBLASLt** (QuantizedLinearPlan and SmoothQuantLinearPlan; cuda, only by
/// `PlanPreference::with_backend(BackendKind::CublasLt)`; SKU backend `cublaslt`, variant `cublaslt_imma`):
/// cuBLASLt's s8 × s8 → s32 GEMM (IntGemmPlan's cuBLASLt SKU: packed operands, N a multiple of 4, 16-byte
/// aligned pointers) writes the exact sums into the workspace, then the linear epilogue of the file comment
/// runs over them as a second kernel (the same arithmetic as the fused kernels: the same bits). Symmetric x only
/// (an asymmetric x's zero-point correction needs the weight's column sums, which cuBLASLt does not give:
/// `Unsupported`), f16/bf16/f32 outputs. x_q and the weight must be packed (row stride K; `InvalidProblem`
/// otherwise); the quantized x the plan writes itself is. The workspace adds the sums (M·N·4 bytes) and the
/// algorithm's workspace to the plan's. Not the default until a GPU measurement says it is faster.

/// W8A8 linear with x quantized per token inside the plan (QuantizedLinearDescriptor).
class QuantizedLinearPlan : public detail::BoundFnPlan<QuantizedLinearDescriptor, detail::LinearFn> {
  using BoundFnPlan::BoundFnPlan;

 public:
  using Args = QuantizedLinearArgs;
  static Result<QuantizedLinearPlan> select(const Stream& stream, const QuantizedLinearDescriptor& desc,
                                            PlanPreference pref = {});
  /// Kinds, shapes, the alignment rules of the file comment, bias present iff `has_bias`, exactly one of x
  /// and x_q (with x_q: x_scale, and x_zero_point iff asymmetric), no overlap of y with any input.
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return workspace_bytes_; }
  PrecisionGuarantee precision_guarantee() const;
  /// Re-validates; quantizes x into the workspace (not with x_q: the GEMM reads x_q, x_scale and
  /// x_zero_point); then the GEMM with the epilogue.
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;
  /// Views, inside a workspace given to `run`, of the quantized x `[M, K]` (`x_quantized`), its scales `[M]`
  /// and zero points `[M]` (s32; all zero in symmetric mode). Written by a run on x, not by one on x_q.
  DynTensor quantized_x(Workspace ws) const;
  DynTensor x_scale(Workspace ws) const;
  DynTensor x_zero_point(Workspace ws) const;

 private:
  DynamicRangeQuantizePlan quantize_;
  size_t q_offset_ = 0, scale_offset_ = 0, zp_offset_ = 0, quantize_ws_offset_ = 0;
  detail::IntGemmSplitWorkspace split_{};
  size_t workspace_bytes_ = 0;
  detail::LinearOnCublasLt lt_;
};

/// SmoothQuant W8A8 linear over a caller-quantized x_q (SmoothQuantLinearDescriptor).
class SmoothQuantLinearPlan : public detail::BoundFnPlan<SmoothQuantLinearDescriptor, detail::LinearFn> {
  using BoundFnPlan::BoundFnPlan;

 public:
  using Args = SmoothQuantLinearArgs;
  static Result<SmoothQuantLinearPlan> select(const Stream& stream, const SmoothQuantLinearDescriptor& desc,
                                              PlanPreference pref = {});
  /// Kinds, shapes, the alignment rules of the file comment, bias present iff `has_bias`, no overlap of y.
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return workspace_bytes_; }
  PrecisionGuarantee precision_guarantee() const;
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;

 private:
  detail::IntGemmSplitWorkspace split_{};
  size_t workspace_bytes_ = 0;
  detail::LinearOnCublasLt lt_;
};

}  // namespace dynamic

// ------------------------------------------------------------------------------------------------------
// Typed wrappers (the kinds are template parameters; the ranks are fixed: no rank checks)
// ------------------------------------------------------------------------------------------------------

/// Arguments of a typed IntGemmPlan (the fields of `dynamic::IntGemmArgs`).
template <class TA, class TB>
struct IntGemmArgs {
  TensorRef<TA, 2> a;       ///< [M, K]
  TensorRef<TB, 2> b;       ///< [N, K]
  TensorMut<int32_t, 2> c;  ///< [M, N]
  dynamic::IntGemmArgs erased() const { return {ConstDynTensor::of(a), ConstDynTensor::of(b), DynTensor::of(c)}; }
};

/// Typed IntGemmPlan: TA, TB ∈ {int8_t, uint8_t} are the descriptor's `a` and `b` kinds (its `c` is s32).
template <class TA, class TB>
class IntGemmPlan : public detail::TypedPlan<dynamic::IntGemmPlan, IntGemmArgs<TA, TB>> {
  using Base = detail::TypedPlan<dynamic::IntGemmPlan, IntGemmArgs<TA, TB>>;
  friend Base;
  using Base::Base;

 public:
  static Result<IntGemmPlan> select(const Stream& stream, const IntGemmDescriptor& desc, PlanPreference pref = {}) {
    BARACUDA_TRY(detail::check_typed_element("IntGemmPlan", "a", desc.a, kind_of<TA>));
    BARACUDA_TRY(detail::check_typed_element("IntGemmPlan", "b", desc.b, kind_of<TB>));
    BARACUDA_TRY(detail::check_typed_element("IntGemmPlan", "c", desc.c, kind_of<int32_t>));
    auto p = dynamic::IntGemmPlan::select(stream, desc, pref);
    if (!p) return p.error();
    return IntGemmPlan(std::move(p).value());
  }
};

/// The weight scale's element type for an output type: double for a double output (the f64 epilogue),
/// else float.
template <class TOut>
using LinearScaleType = std::conditional_t<std::is_same_v<TOut, double>, double, float>;

/// Arguments of a typed QuantizedLinearPlan (the float-x fields of `dynamic::QuantizedLinearArgs`); leave
/// `bias` default (null data) when the descriptor has none. A caller-quantized x (x_q, x_scale,
/// x_zero_point) goes through the dynamic args: `plan.erased().run(stream, ws, args)`.
template <class T, class TOut>
struct QuantizedLinearArgs {
  TensorRef<T, 2> x;                                 ///< [M, K]
  TensorRef<int8_t, 2> weight;                       ///< [N, K]
  TensorRef<LinearScaleType<TOut>, 1> weight_scale;  ///< [N] or [1]
  TensorRef<TOut, 1> bias;                           ///< [N], or default
  TensorMut<TOut, 2> y;                              ///< [M, N]
  dynamic::QuantizedLinearArgs erased() const {
    return {ConstDynTensor::of(x), ConstDynTensor::of(weight), ConstDynTensor::of(weight_scale),
            bias.data != nullptr ? ConstDynTensor::of(bias) : ConstDynTensor{}, DynTensor::of(y)};
  }
};

/// Typed QuantizedLinearPlan: T is the descriptor's `element` (x), TOut its `output` (y, bias); the weight
/// is int8_t (`weight_element` s8).
template <class T, class TOut>
class QuantizedLinearPlan : public detail::TypedPlan<dynamic::QuantizedLinearPlan, QuantizedLinearArgs<T, TOut>> {
  using Base = detail::TypedPlan<dynamic::QuantizedLinearPlan, QuantizedLinearArgs<T, TOut>>;
  friend Base;
  using Base::Base;

 public:
  static Result<QuantizedLinearPlan> select(const Stream& stream, const QuantizedLinearDescriptor& desc,
                                            PlanPreference pref = {}) {
    BARACUDA_TRY(detail::check_typed_element("QuantizedLinearPlan", "x", desc.element, kind_of<T>));
    BARACUDA_TRY(detail::check_typed_element("QuantizedLinearPlan", "weight", desc.weight_element, kind_of<int8_t>));
    BARACUDA_TRY(detail::check_typed_element("QuantizedLinearPlan", "y", desc.output, kind_of<TOut>));
    auto p = dynamic::QuantizedLinearPlan::select(stream, desc, pref);
    if (!p) return p.error();
    return QuantizedLinearPlan(std::move(p).value());
  }
  DynTensor quantized_x(Workspace ws) const { return this->erased().quantized_x(ws); }
  DynTensor x_scale(Workspace ws) const { return this->erased().x_scale(ws); }
  DynTensor x_zero_point(Workspace ws) const { return this->erased().x_zero_point(ws); }
};

/// Arguments of a typed SmoothQuantLinearPlan (the fields of `dynamic::SmoothQuantLinearArgs`); leave `bias`
/// default (null data) when the descriptor has none.
template <class TOut>
struct SmoothQuantLinearArgs {
  TensorRef<int8_t, 2> x_q;                          ///< [M, K]
  TensorRef<int8_t, 2> weight;                       ///< [N, K]
  TensorRef<LinearScaleType<TOut>, 1> weight_scale;  ///< [N] or [1]
  TensorRef<TOut, 1> bias;                           ///< [N], or default
  TensorMut<TOut, 2> y;                              ///< [M, N]
  dynamic::SmoothQuantLinearArgs erased() const {
    return {ConstDynTensor::of(x_q), ConstDynTensor::of(weight), ConstDynTensor::of(weight_scale),
            bias.data != nullptr ? ConstDynTensor::of(bias) : ConstDynTensor{}, DynTensor::of(y)};
  }
};

/// Typed SmoothQuantLinearPlan: TOut is the descriptor's `output` (y, bias); x_q and the weight are int8_t.
template <class TOut>
class SmoothQuantLinearPlan
    : public detail::TypedPlan<dynamic::SmoothQuantLinearPlan, SmoothQuantLinearArgs<TOut>> {
  using Base = detail::TypedPlan<dynamic::SmoothQuantLinearPlan, SmoothQuantLinearArgs<TOut>>;
  friend Base;
  using Base::Base;

 public:
  static Result<SmoothQuantLinearPlan> select(const Stream& stream, const SmoothQuantLinearDescriptor& desc,
                                              PlanPreference pref = {}) {
    BARACUDA_TRY(detail::check_typed_element("SmoothQuantLinearPlan", "x_q", desc.x_quantized, kind_of<int8_t>));
    BARACUDA_TRY(
        detail::check_typed_element("SmoothQuantLinearPlan", "weight", desc.weight_element, kind_of<int8_t>));
    BARACUDA_TRY(detail::check_typed_element("SmoothQuantLinearPlan", "y", desc.output, kind_of<TOut>));
    auto p = dynamic::SmoothQuantLinearPlan::select(stream, desc, pref);
    if (!p) return p.error();
    return SmoothQuantLinearPlan(std::move(p).value());
  }
};

// ------------------------------------------------------------------------------------------------------
// SmoothQuant's offline smoothing (host utilities, double precision)
// ------------------------------------------------------------------------------------------------------

/// SmoothQuant's per-input-channel factors (Xiao et al. 2023, smoothquant/smooth.py):
/// `s_j = max|X_j|^α / max|W_j|^(1−α)`, with the reference implementation's guards exactly:
/// `s_j = max(max_abs_x[j]^α / max(max_abs_w[j], 1e-5)^(1−α), 1e-5)`, so an all-zero weight or x
/// channel gives a finite, positive factor (`pow(0, 0) = 1`).
/// `max_abs_x[j]` is the calibration maximum of |X[:, j]|, `max_abs_w[j]` the maximum over the weights
/// that consume channel j (for a fused QKV: over all of them); both must have the same length, be finite
/// and ≥ 0, and α ∈ [0, 1] — `InvalidProblem` otherwise.
Result<std::vector<double>> smooth_quant_factors(std::span<const double> max_abs_x, std::span<const double> max_abs_w,
                                                double alpha);

/// W ← W·diag(s): multiplies column j of the row-major `[N, K]` weight by `s[j]` (in place, one rounding
/// per element). `w.size()` must be N·K with K = s.size().
Status smooth_quant_scale_weight(std::span<float> w, std::span<const double> s);

/// X ← X·diag(1/s): divides column j of the row-major `[M, K]` x by `s[j]` (in place, one
/// rounding per element). At inference the division is folded into the preceding LayerNorm's weight and
/// bias (the same call on those `[1, K]` vectors).
Status smooth_quant_scale_activation(std::span<float> x, std::span<const double> s);

}  // namespace baracuda
