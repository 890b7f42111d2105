/// \file
/// \brief FP8 GEMM: `Fp8GemmPlan`, `D = act(α · dequant(A) · dequant(B)ᵀ + bias)` with A `[M, K]` and B `[N, K]`
/// in FP8, per-tensor scales (TransformerEngine's and `torch._scaled_mm`'s contract) or DeepSeek-V3's blockwise
/// scales, and an f16/bf16/f32 output or an FP8 output with its own scale and an amax. The FP8 recipe of
/// fp8.hpp (Fp8QuantizePlan, Fp8ScalingUpdatePlan) produces the operands and scales this plan consumes.
///
/// **Kinds.** A and B each `Fp8E4M3` or `Fp8E5M2`, not both E5M2 (as cuBLASLt: E4M3×E4M3, E4M3×E5M2,
/// E5M2×E4M3). D `F16`, `Bf16`, `F32`, `Fp8E4M3` or `Fp8E5M2`. The bias `F16`, `Bf16` or `F32` (its own kind,
/// `bias_kind`). Every scale and the amax are `F32`. Anything else is `Unsupported`.
///
/// **Layout ("TN", the only one FP8 tensor cores take on sm_89/sm_90):** A `[M, K]` row-major with row stride
/// `lda` (≥ K; 0 means K), B `[N, K]` row-major with row stride `ldb` (≥ K; 0 means K) — nn.Linear's weight,
/// so `D = x·Wᵀ` — and D `[M, N]` row-major with row stride `ldd` (≥ N; 0 means N). K, lda and ldb are
/// multiples of 16 (16-byte rows: `InvalidProblem` otherwise); a and b are 16-byte aligned
/// (`MisalignedOperand`), as is every other pointer on the cuBLASLt backend (d, bias, the Block128 scales:
/// `MisalignedOperand` from can_implement and run; select a Bespoke plan for other pointers). 0 ≤ M, N, K ≤ 2^31 − 256; each matrix's storage (rows × ld) at most 2^56 elements.
///
/// **Scaling** (the scales are dequantization factors, fp8 code × scale = value: TransformerEngine's
/// `scale_inv`, the output `scale_inv` of Fp8QuantizePlan and Fp8ScalingUpdatePlan, DeepSeek's
/// `weight_scale_inv`):
/// - `Fp8GemmScaling::Tensor`: `a_scale` and `b_scale` are f32 device tensors of one element (shape `[1]` or
///   `[1, 1]`);
///   `acc[m, n] = a_scale · b_scale · Σ_k A[m, k]·B[n, k]`.
/// - `Fp8GemmScaling::Block128` (DeepSeek-V3): `a_scale` is f32 `[M, ⌈K/128⌉]` (one scale per row and 128-wide
///   K block: activations quantized in 1×128 tiles), `b_scale` f32 `[⌈N/128⌉, ⌈K/128⌉]` (one per 128×128 block
///   of B). b_scale is packed row-major (strides (⌈K/128⌉, 1): DeepSeek's checkpoint `weight_scale_inv`);
///   a_scale is packed row-major (strides (⌈K/128⌉, 1)) or, with `a_scale_m_major`, M-major (strides (1, M): the
///   transposed layout DeepGEMM and vLLM keep, which cuBLASLt reads). Other strides are `InvalidProblem`.
///   `acc[m, n] = Σ_kb a_scale[m, kb] · b_scale[n / 128, kb] · Σ_{k in block kb} A[m, k]·B[n, k]`. A trailing
///   partial block (K or N not a multiple of 128) has its scale like any other.
///
/// **The epilogue** (per output element):
///   1. `v = α·acc` (α a host scalar),
///   2. `v = v + bias[n]` when `has_bias`,
///   3. `v = act(v)`, one of LinearActivation's functions (int_gemm.hpp; ReLU keeps NaN),
///   4. an f16/bf16/f32 D: `d = round(v)`; an FP8 D: `d = round_sat(v · d_scale)`, `d_scale` an f32 device
///      tensor of one element (`[1]` or `[1, 1]`) (the quantization scale: TransformerEngine's `scale`), rounded to nearest even,
///      saturating (finite overflow and ±inf give ±max finite), NaN stays NaN;
///   5. with `has_amax` (FP8 D only: `Unsupported` otherwise, as in cuBLASLt): `amax[0] = max |v|` over D of
///      the value of step 3, before `d_scale` (what the delayed-scaling recipe records for D); 0 for an empty D.
///      A NaN in v makes amax NaN on the bespoke kernel (cuBLASLt documents nothing for NaN).
/// The bespoke kernel's f32 operations, in order (each rounded to nearest even): per 128-wide K block kb,
/// `part` = the block's products summed by the tensor cores from 0; `acc = fmaf(w, part, acc)` from +0 with
/// w = 1 (Tensor) or w = a_scale[m, kb]·b_scale[n/128, kb] (Block128); then `v = f·acc` with
/// f = (α·a_scale)·b_scale (Tensor) or f = α (Block128); `v = v + bias` (the bias widened exactly); act; for an
/// FP8 D, `v·d_scale` rounded to f32, then to FP8. The host reference evaluates the same formulas exactly (long
/// double), with one rounding at the end.
/// K = 0 gives acc = 0 (the epilogue still runs).
///
/// **Backends and accuracy.**
/// - `host` (the reference, src/ops/fp8_gemm/host.cpp): every product exact (at most 8 significant bits), each
///   K block's sum and the scales in long double, the epilogue in long double, one rounding to D's kind.
///   Deterministic.
/// - `sim` and `cuda` `Bespoke` (variant `mma_m16n8k32_fp8`, src/ops/fp8_gemm/kernels.cuh): mma.sync m16n8k32
///   on FP8 operands (sm_89+). Each 128-wide K block is summed by the tensor cores into f32 registers that start
///   at zero, then promoted: added to the f32 accumulator (Tensor) or added after the multiplication by that
///   block's two scales (Block128), so the FP8 tensor cores never carry a sum across more than 128 products
///   (DeepSeek-V3's promotion interval). Fixed summation order, no atomics except the amax's (a maximum, so the
///   bits do not depend on the order): the same bits on every run of a device. sim's emulated mma.sync adds
///   in f32; a GPU's FP8 mma.sync may keep fewer bits inside one instruction, so sim and a GPU may differ in
///   the last bits (docs/ptx.md). Error against the exact result: at most about (K/128 + 131)·2^-24·Σ|terms|,
///   then one rounding to D's kind.
/// - `cuda` `CublasLt` (variant `cublaslt`, the default on a GPU of compute capability 8.9 or 9.x):
///   cuBLASLt's FP8 matmul with the scale pointers, built at select with the algorithm its heuristic ranks
///   first, its workspace part of `workspace_size()`; Block128 through cuBLASLt's 128-element and 128×128
///   scale modes where the toolkit has them (see docs/ops/fp8_gemm.md for exactly which problems it serves);
///   elsewhere select takes the bespoke kernel, and a `CublasLt` preference answers `Unsupported`. cuBLASLt
///   documents no summation order: these plans promise neither bit stability nor determinism, and the
///   `fast_accum` flag lets it skip the promotions (faster, less accurate; the bespoke kernel ignores it).
///   Measured without `fast_accum` on an H100 (docs/perf/2026-11-27-h100, run 6): at K = 4096, with Σ|a·b| about 36
///   after the scales, outputs of O(1) differed from the exact sum by up to 0.0078 (about 2^-12 of Σ|a·b|), where
///   the bespoke kernel stays within its f32 bound; prefer `with_backend(Bespoke)` where that matters.
/// - A cuda device below compute capability 8.9 has no FP8 tensor cores: select is `Unsupported`.
///
/// **Aliasing.** D must not overlap A, B, the bias or a scale; the amax must not overlap any other operand.
/// **Workspace.** None for host and the bespoke kernel; cuBLASLt's algorithm's (256-byte aligned) on cuda.
/// **Empty problems** (M or N = 0) write nothing but the amax (0).
/// **CUDA graphs.** The scales and the amax are device tensors, read and written by the kernels: a captured
/// run re-reads them on replay (α is fixed at select).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/hash.hpp"
#include "baracuda/core/plan.hpp"
#include "baracuda/core/sku.hpp"
#include "baracuda/core/stream.hpp"
#include "baracuda/core/tensor.hpp"
#include "baracuda/core/typed_plan.hpp"
#include "baracuda/core/workspace.hpp"
#include "baracuda/ops/int_gemm.hpp"  // LinearActivation

namespace baracuda {

/// How the FP8 operands are scaled (see the file comment).
enum class Fp8GemmScaling : uint8_t {
  Tensor = 0,    ///< one f32 scale per operand
  Block128 = 1,  ///< DeepSeek-V3: A per row and 128-wide K block, B per 128×128 block
};
/// "tensor", "block128"; "?" for a value outside the enumeration.
std::string_view to_string(Fp8GemmScaling s);

/// The K (and B's N) extent of one Block128 scale.
inline constexpr int64_t kFp8GemmBlock = 128;

/// One FP8 GEMM problem (the file comment has every rule). Leading dimensions 0 mean packed.
struct Fp8GemmDescriptor {
  int64_t m = 0, n = 0, k = 0;
  ElementKind a_kind = ElementKind::Fp8E4M3;
  ElementKind b_kind = ElementKind::Fp8E4M3;
  ElementKind output = ElementKind::Bf16;  ///< D: f16, bf16, f32, fp8e4m3, fp8e5m2
  int64_t lda = 0, ldb = 0, ldd = 0;
  Fp8GemmScaling scaling = Fp8GemmScaling::Tensor;
  bool a_scale_m_major = false;  ///< Block128: a_scale stored M-major (strides (1, M)) instead of row-major
  double alpha = 1.0;
  bool has_bias = false;
  ElementKind bias_kind = ElementKind::Bf16;  ///< f16, bf16 or f32 (read only with `has_bias`)
  LinearActivation activation = LinearActivation::None;
  bool has_amax = false;    ///< FP8 D only: write max |v| (step 5)
  bool fast_accum = false;  ///< cuBLASLt may skip its promotions (CUBLASLT_MATMUL_DESC_FAST_ACCUM)

  Fp8GemmDescriptor& with_shape(int64_t m_, int64_t n_, int64_t k_) { m = m_, n = n_, k = k_; return *this; }
  Fp8GemmDescriptor& with_kinds(ElementKind a, ElementKind b, ElementKind d) {
    a_kind = a, b_kind = b, output = d;
    return *this;
  }
  Fp8GemmDescriptor& with_lda(int64_t v) { lda = v; return *this; }
  Fp8GemmDescriptor& with_ldb(int64_t v) { ldb = v; return *this; }
  Fp8GemmDescriptor& with_ldd(int64_t v) { ldd = v; return *this; }
  Fp8GemmDescriptor& with_scaling(Fp8GemmScaling s) { scaling = s; return *this; }
  Fp8GemmDescriptor& with_a_scale_m_major(bool b = true) { a_scale_m_major = b; return *this; }
  Fp8GemmDescriptor& with_alpha(double a) { alpha = a; return *this; }
  Fp8GemmDescriptor& with_bias(ElementKind kind) { has_bias = true, bias_kind = kind; return *this; }
  Fp8GemmDescriptor& with_activation(LinearActivation a) { activation = a; return *this; }
  Fp8GemmDescriptor& with_amax(bool b = true) { has_amax = b; return *this; }
  Fp8GemmDescriptor& with_fast_accum(bool b = true) { fast_accum = b; return *this; }

  friend bool operator==(const Fp8GemmDescriptor&, const Fp8GemmDescriptor&) = default;
  size_t hash() const {
    return detail::hash_fields(m, n, k, a_kind, b_kind, output, lda, ldb, ldd, scaling, a_scale_m_major, alpha,
                               has_bias, bias_kind, activation, has_amax, fast_accum);
  }
};

namespace detail {
struct Fp8GemmLaunch;
class CublasLtFp8Gemm;
using Fp8GemmFn = Status (*)(const ExecContext&, const Fp8GemmLaunch&);
/// OK on compute capability `sm` (× 10) ≥ 89; `Unsupported` below (no FP8 tensor cores).
Status fp8_gemm_arch_check(int sm);
}  // namespace detail

namespace dynamic {

/// The operands of `dynamic::Fp8GemmPlan`, inputs then outputs (shapes and strides: the file comment).
struct Fp8GemmArgs {
  ConstDynTensor a;             ///< [M, K] of a_kind, row stride lda, read
  ConstDynTensor b;             ///< [N, K] of b_kind, row stride ldb, read
  ConstDynTensor a_scale;       ///< f32 [1] or [1, 1] (Tensor), or [M, ⌈K/128⌉] (Block128), read
  ConstDynTensor b_scale;       ///< f32 [1] or [1, 1] (Tensor), or [⌈N/128⌉, ⌈K/128⌉] (Block128), read
  ConstDynTensor bias = {};     ///< [N] of bias_kind, contiguous; empty unless `has_bias`
  ConstDynTensor d_scale = {};  ///< f32 [1] or [1, 1]: FP8 D only (required there), read
  DynTensor d = {};             ///< [M, N] of `output`, row stride ldd, written
  DynTensor amax = {};          ///< f32 [1], written; empty unless `has_amax`
};

/// FP8 GEMM. SKU `fp8_gemm/<a kind>-><output>/rcr/<epilogue>/<backend>/f32/<variant>`: variant `reference`
/// (host), `mma_m16n8k32_fp8` (the bespoke kernel) or `cublaslt`; the SKU's element is A's kind.
class Fp8GemmPlan : public detail::BoundFnPlan<Fp8GemmDescriptor, detail::Fp8GemmFn> {
  using BoundFnPlan::BoundFnPlan;

 public:
  using Args = Fp8GemmArgs;
  /// The descriptor's rules, then the stream's device (cuda: compute capability ≥ 8.9) and the preference.
  static Result<Fp8GemmPlan> select(const Stream& stream, const Fp8GemmDescriptor& desc, PlanPreference pref = {});
  /// Kinds, shapes and strides against the descriptor, the optional operands, alignment and aliasing.
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return workspace_bytes_; }
  PrecisionGuarantee precision_guarantee() const;
  /// Re-validates, then the backend: on the bespoke kernels one amax reset (with `has_amax`) and one GEMM.
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;

 private:
  std::shared_ptr<const detail::CublasLtFp8Gemm> lt_;  ///< the library backend, when it serves the plan
  size_t workspace_bytes_ = 0;
};

}  // namespace dynamic

// ------------------------------------------------------------------------------------------------------
// Typed wrapper
// ------------------------------------------------------------------------------------------------------

/// Arguments of a typed Fp8GemmPlan: TA, TB the FP8 operand types, TD the output type, TBias the bias type.
/// Leave an optional operand default (null data) when it is absent.
template <class TA, class TB, class TD, class TBias = __nv_bfloat16>
struct Fp8GemmArgs {
  TensorRef<TA, 2> a;
  TensorRef<TB, 2> b;
  TensorRef<float, 2> a_scale;  ///< [1, 1] view of the [1] scale (Tensor), or [M, ⌈K/128⌉]
  TensorRef<float, 2> b_scale;  ///< [1, 1] (Tensor), or [⌈N/128⌉, ⌈K/128⌉]
  TensorRef<TBias, 1> bias{};
  TensorRef<float, 1> d_scale{};
  TensorMut<TD, 2> d{};
  TensorMut<float, 1> amax{};
  dynamic::Fp8GemmArgs erased() const {
    auto in = [](const auto& t) { return t.data != nullptr ? ConstDynTensor::of(t) : ConstDynTensor{}; };
    auto out = [](const auto& t) { return t.data != nullptr ? DynTensor::of(t) : DynTensor{}; };
    return {ConstDynTensor::of(a),
            ConstDynTensor::of(b),
            ConstDynTensor::of(a_scale),
            ConstDynTensor::of(b_scale),
            in(bias),
            in(d_scale),
            DynTensor::of(d),
            out(amax)};
  }
};

/// Typed Fp8GemmPlan: TA, TB, TD, TBias are the descriptor's a_kind, b_kind, output and bias_kind.
template <class TA, class TB, class TD, class TBias = __nv_bfloat16>
class Fp8GemmPlan : public detail::TypedPlan<dynamic::Fp8GemmPlan, Fp8GemmArgs<TA, TB, TD, TBias>> {
  using Base = detail::TypedPlan<dynamic::Fp8GemmPlan, Fp8GemmArgs<TA, TB, TD, TBias>>;
  friend Base;
  using Base::Base;

 public:
  static Result<Fp8GemmPlan> select(const Stream& stream, const Fp8GemmDescriptor& desc, PlanPreference pref = {}) {
    BARACUDA_TRY(detail::check_typed_element("Fp8GemmPlan", "a", desc.a_kind, kind_of<TA>));
    BARACUDA_TRY(detail::check_typed_element("Fp8GemmPlan", "b", desc.b_kind, kind_of<TB>));
    BARACUDA_TRY(detail::check_typed_element("Fp8GemmPlan", "d", desc.output, kind_of<TD>));
    if (desc.has_bias) BARACUDA_TRY(detail::check_typed_element("Fp8GemmPlan", "bias", desc.bias_kind, kind_of<TBias>));
    auto p = dynamic::Fp8GemmPlan::select(stream, desc, pref);
    if (!p) return p.error();
    return Fp8GemmPlan(std::move(p).value());
  }
};

}  // namespace baracuda
