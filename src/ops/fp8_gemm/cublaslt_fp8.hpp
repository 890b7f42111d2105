// Internal: the fp8_gemm family's cuBLASLt backend (the `CublasLt` SKU, variant `cublaslt`, on the cuda device). The
// plan builds one `CublasLtFp8Gemm` at select from its launch record (ops/fp8_gemm/launch.hpp) and calls `run` with the
// operands. The cuBLASLt plumbing (handle, heuristic, workspace ceiling, status mapping, the descriptor, layouts and
// algorithm it owns) is the dense backend's, shared through ops/gemm/cublaslt_common.hpp, and so is the base class
// (alignments, present marker, workspace size and check: ops/gemm/cublaslt_backend.hpp).
//
// ## The mapping (the dense backend's row-major swap, ops/gemm/cublaslt.hpp, for the one FP8 layout)
//
// D [M, N] = A [M, K] · B [N, K]ᵀ, all row-major, is computed as the column-major Dᵀ = B · Aᵀ: cuBLASLt's A is the
// launch's B (stored K×N, transa = T, lda = the launch's ldb), its B the launch's A (stored K×M, transb = N, ldb = the
// launch's lda), m = N, n = M, k = K, and C = D stored N×M with ldc = ldd = the launch's ldd. This "TN" form is the
// only one cuBLASLt's FP8 matmul takes on sm_89 and sm_90. Everything attached to an operand swaps with it:
// A_SCALE_POINTER is the launch's b_scale, B_SCALE_POINTER its a_scale, and for Block128 the weights' 128×128 blocks
// are cuBLASLt's A (A_SCALE_MODE = BLK128x128_32F) and the activations' 1×128 tiles its B (B_SCALE_MODE =
// VEC128_32F). The bias [N] is one value per row of D' (cuBLASLt's BIAS: a packed vector of m' elements).
//
// ## What cuBLASLt computes (cuBLAS's documentation of cublasLtMatmul for FP8), against the header's steps
//
//   D_temp = epilogue(α · scale_A · scale_B · op(A)·op(B) + β · scale_C · C + bias)    β = 0 here
//   amax_D = max |D_temp|                                       AMAX_D_POINTER, FP8 D only
//   D      = scale_D · D_temp, rounded to D's kind               D_SCALE_POINTER, FP8 D only
//
// which is the header's order: α·acc, + bias[n], act (RELU, or cuBLASLt's GELU, the tanh form), amax of the activated
// value before d_scale, d = round(v · d_scale). cuBLAS documents neither the FP8 conversion's saturation nor NaN (the
// GPU test checks saturation; the header promises round_sat). With Block128 scales the sum is
// Σ_kb a_scale[m, kb]·b_scale[n/128, kb]·(block kb's partial sum) before α, the header's acc.
//
// ## What the mapping accepts (everything else is `Unsupported` with the reason: the plan takes the bespoke kernel)
//
// - A and B e4m3 or e5m2, not both e5m2; D f16, bf16, f32, e4m3 or e5m2. Combinations cuBLASLt's FP8 table lacks are
//   left to its heuristic (create answers `Unsupported`).
// - N and K multiples of 16 (K > 0); lda, ldb ≥ K and multiples of 16; ldd ≥ N with ldd·sizeof(D) a multiple of 16
//   bytes (cuBLASLt's FP8 requirement: 16-byte columns); M, N, K ≤ INT32_MAX. With M = 1 the leading dimensions of B'
//   and D' address nothing and are normalised (K; N rounded up to 16 bytes), so that launches differing only there map
//   to one problem. M = 0 or N = 0 is no cuBLASLt call (create's backend then only zeroes the amax).
// - Epilogues: none, ReLU, GELU-tanh, each with or without the bias (DEFAULT, RELU, GELU, BIAS, RELU_BIAS,
//   GELU_BIAS); SiLU and GELU-erf have none.
// - The bias kind (BIAS_DATA_TYPE): D's for an f16 or bf16 D; bf16 for an f32 D; bf16 or f16 for an FP8 D. C's kind
//   (C is not read) is D's, or for an FP8 D the bias's (f16 without a bias, as PyTorch's _scaled_mm).
// - amax only with an FP8 D (cuBLASLt computes AMAX_D for FP8 outputs only); d_scale present exactly with an FP8 D
//   (`InvalidProblem` otherwise).
// - Block128 only where the toolkit has the 128-element scale modes (cuBLAS ≥ 12.9: CUBLAS_VERSION at build,
//   cublasLtGetVersion() at create), on sm_90 (cuBLASLt implements VEC128_32F and BLK128x128_32F on Hopper only), and
//   only for the scale layouts cuBLASLt reads (as PyTorch's _scaled_mm checks them for its 1x128 x 128x128 recipe,
//   after its own swap):
//     a_scale [M, ⌈K/128⌉] M-major: a_scale_row = 1, a_scale_col = M (the transposed layout DeepGEMM and vLLM keep),
//       with M a multiple of 4 (cuBLASLt's columns of M scales stay 16-byte aligned);
//     b_scale [⌈N/128⌉, ⌈K/128⌉] K-major: b_scale_col = 1, b_scale_row = ⌈K/128⌉, with ⌈K/128⌉ a multiple of 4
//       (cuBLASLt's rows hold ⌈K/128⌉ rounded up to 4 scales: DeepSeek's packed weight_scale_inv is that layout only
//       then, and a padded view could be read past its last row);
//   the stride of an extent-1 dimension is free; both scale pointers 16-byte aligned (can_run).
// - fast_accum → FAST_ACCUM = 1 (cuBLASLt may skip its periodic promotions to f32).
//
// ## What the plan must guarantee
//
// - a, b, d and the bias are `kRequiredAlignment` (16) bytes aligned (the heuristic is told so), the Block128 scales
//   too; the workspace is `kWorkspaceAlignment` (256) bytes aligned.
// - `run` gets a launch that maps to the problem given to `create` (`can_run` checks, and `run` again).
// - The problem given to `create` marks each optional operand (bias, d_scale, amax) present by a non-null pointer (any
//   value, never dereferenced: `present_marker()`) and absent by nullptr; a_scale and b_scale are always present
//   (markers too), with the strides run will have (Block128: the layouts above).
//
// CUDA graphs: `run` allocates nothing and sets no device state; the scale, bias and amax pointers are set on the
// shared matmul descriptor under a lock just before cublasLtMatmul (which reads them when it enqueues), so a captured
// run re-reads the scales and rewrites the amax on replay; α is the launch's, fixed at capture.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "baracuda/core/status.hpp"
#include "ops/fp8_gemm/launch.hpp"
#include "ops/gemm/cublaslt.hpp"  // CublasLtEpilogue
#include "ops/gemm/cublaslt_backend.hpp"

namespace baracuda::detail {

/// The cuBLASLt scale modes the mapping uses; the values are `cublasLtMatmulMatrixScale_t`'s (checked in the .cpp).
enum class CublasLtScaleMode : int32_t {
  Scalar32F = 0,       ///< SCALAR_32F: one f32 per matrix (the default)
  Vec128_32F = 4,      ///< VEC128_32F: one f32 per 128 elements along K
  Blk128x128_32F = 5,  ///< BLK128x128_32F: one f32 per 128×128 block
};
/// "SCALAR_32F", "VEC128_32F", "BLK128x128_32F".
std::string_view to_string(CublasLtScaleMode m);

/// The column-major problem cuBLASLt is asked for an FP8 launch (the file comment's mapping). Always transa = T and
/// transb = N; `a` is cuBLASLt's A (the launch's B), `b` its B (the launch's A).
struct CublasLtFp8Mapping {
  ElementKind a = ElementKind::Fp8E4M3;  ///< cuBLASLt's A: the launch's b_kind
  ElementKind b = ElementKind::Fp8E4M3;  ///< cuBLASLt's B: the launch's a_kind
  ElementKind c = ElementKind::Bf16;     ///< C's kind (unread: β = 0): D's, or the bias's for an FP8 D
  ElementKind d = ElementKind::Bf16;
  int64_t m = 0, n = 0, k = 0;        ///< cuBLASLt's: m = N, n = M, k = K
  int64_t lda = 0, ldb = 0, ldd = 0;  ///< A stored k×m, B stored k×n, C and D stored m×n (ldc = ldd)
  CublasLtEpilogue epilogue = CublasLtEpilogue::Default;
  bool has_bias = false;
  ElementKind bias = ElementKind::Bf16;                           ///< BIAS_DATA_TYPE, with a bias only
  CublasLtScaleMode a_scale_mode = CublasLtScaleMode::Scalar32F;  ///< the launch's b_scale
  CublasLtScaleMode b_scale_mode = CublasLtScaleMode::Scalar32F;  ///< the launch's a_scale
  bool d_scale = false;                                           ///< D_SCALE_POINTER set (FP8 D)
  bool amax = false;                                              ///< AMAX_D_POINTER set (FP8 D)
  bool fast_accum = false;                                        ///< FAST_ACCUM
  friend bool operator==(const CublasLtFp8Mapping&, const CublasLtFp8Mapping&) = default;
};
/// e.g. "fp8e4m3 x fp8e4m3 -> bf16 (C bf16) transa=T transb=N m=4096 n=16 k=4096 lda=4096 ldb=4096 ldd=4096
/// epilogue=BIAS bias=bf16 scales=(SCALAR_32F, SCALAR_32F)" and " d_scale", " amax", " fast_accum" when set.
std::string to_string(const CublasLtFp8Mapping& m);

/// The cuBLASLt problem of `problem` on a device of compute capability `sm` (× 10). Pure: no cuBLAS call, no pointer
/// dereferenced; only the presence of bias, d_scale and amax is read from the pointers. `Unsupported`, with the reason,
/// for what the file comment's list excludes and below sm 8.9; `InvalidProblem` for negative extents, a leading
/// dimension below its minimum, or a d_scale whose presence does not match D's kind.
Result<CublasLtFp8Mapping> cublaslt_fp8_mapping(const Fp8GemmLaunch& problem, int sm);

/// The pointers `run` gives cuBLASLt for a launch mapped to `m` (pure): its A is the launch's b and its B the launch's
/// a, and their scales swap likewise. C (β = 0: never read) is D's pointer where C's kind is D's; with an FP8 D (C of the
/// bias's kind) it is the launch's b, since cuBLASLt rejects C == D with layouts that differ.
struct CublasLtFp8Pointers {
  const void* a = nullptr;
  const void* b = nullptr;
  const void* c = nullptr;
  void* d = nullptr;
  const float* a_scale = nullptr;  ///< A_SCALE_POINTER: the launch's b_scale
  const float* b_scale = nullptr;  ///< B_SCALE_POINTER: the launch's a_scale
  const float* d_scale = nullptr;  ///< D_SCALE_POINTER (FP8 D), else null
  float* amax = nullptr;           ///< AMAX_D_POINTER, else null
  const void* bias = nullptr;      ///< BIAS_POINTER, else null
};
CublasLtFp8Pointers cublaslt_fp8_pointers(const Fp8GemmLaunch& launch, const CublasLtFp8Mapping& m);

/// One FP8 GEMM planned on cuBLASLt: the matmul descriptor, the four layouts and the algorithm the heuristic ranked
/// first, built once by `create`; `run` sets the operand pointers and enqueues `cublasLtMatmul`. `kRequiredAlignment`
/// (16, of a, b, d, the bias and the Block128 scales), `kWorkspaceAlignment` (256), `present_marker()` (a non-null
/// pointer that marks an optional operand present in `create`'s problem), `compiled_in()` and `workspace_size()` are
/// CublasLtBackend's (ops/gemm/cublaslt_backend.hpp).
class CublasLtFp8Gemm : public CublasLtBackend {
 public:
  /// Built at the plan's select for device `device` (a CUDA device index; made current) of compute capability `sm`:
  /// `problem` has the shapes, kinds, strides and flags, its optional operands marked as the file comment says.
  /// `max_workspace` bounds the algorithm's workspace (further capped by `cublaslt_workspace_cap`). An empty problem (M
  /// or N = 0) gives a backend whose `run` only zeroes the amax (when present). Errors: `cublaslt_fp8_mapping`'s;
  /// `Unsupported` where cuBLASLt rejects a layout or descriptor, its heuristic finds no algorithm (with cuBLASLt's
  /// status string), the cuBLASLt library is older than 12.9 for Block128, or CUDA is unusable; `DeviceError` where
  /// cuBLASLt fails otherwise.
  static Result<std::shared_ptr<const CublasLtFp8Gemm>> create(int device, int sm, const Fp8GemmLaunch& problem,
                                                               size_t max_workspace);

  /// The cuBLASLt problem this backend was built for (empty problems: the default mapping).
  const CublasLtFp8Mapping& mapping() const { return mapping_; }

  /// OK when `launch` maps to the same cuBLASLt problem as `create`'s, its required pointers (a, b, d, the scales) are
  /// present and its pointers aligned: `InvalidProblem` (naming both problems) or `MisalignedOperand` otherwise. The
  /// plan may call it from can_implement; `run` calls it too.
  Status can_run(const Fp8GemmLaunch& launch) const;

  /// Enqueues the launch on `stream` (of the device given to `create`, which must be current). Allocates nothing and
  /// sets no device state, so it can be captured in a CUDA graph. Threads may run one backend at once (the pointers are
  /// set on the shared descriptor under a lock). `WorkspaceTooSmall` when `workspace_bytes < workspace_size()`,
  /// `MisalignedOperand` for a workspace not 256-byte aligned; can_run's errors; cuBLASLt's failures (`InvalidProblem`
  /// for CUBLAS_STATUS_INVALID_VALUE, else `DeviceError`).
  Status run(cudaStream_t stream, const Fp8GemmLaunch& launch, void* workspace, size_t workspace_bytes) const;

 private:
  CublasLtFp8Gemm() = default;
  CublasLtFp8Mapping mapping_;
};

}  // namespace baracuda::detail
