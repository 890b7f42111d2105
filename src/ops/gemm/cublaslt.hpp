// Internal: the gemm family's cuBLASLt backend (the `CublasLt` SKU on the cuda device). The plan builds one
// `CublasLtGemm` at select from its launch record (ops/gemm/launch.hpp) and calls `run` with the operands.
//
// ## The row-major mapping
//
// cuBLASLt multiplies column-major matrices: `D' = α·op(A')·op(B') + β·C'`, D' m'×n', op(A') m'×k', op(B') k'×n',
// each stored matrix S read at `S(r, c) = data[r + c·ld]`. A row-major [R, C] matrix X with row stride ld is the
// column-major C×R matrix Xᵀ with the same ld, so the launch's row-major `D = op(A)·op(B)` is computed as
//
//   Dᵀ = op(B)ᵀ · op(A)ᵀ:   A' := op(B)ᵀ (the launch's b), B' := op(A)ᵀ (its a), m' = N, n' = M, k' = K,
//
// and D' is D's memory read as the column-major N×M matrix with ld = d.row (likewise C' and aux).
// Each operand X of the launch ([R, C] with element strides row, col) becomes the stored matrix of Xᵀ:
//
//   col == 1 (row-major X):   Xᵀ is stored as it is:   trans N, stored C×R, ld = row
//   row == 1 (column-major X): X is stored:           trans T, stored R×C, ld = col
//
// so `transa` comes from op(B)'s strides and `transb` from op(A)'s. The usual linear layer y = x·Wᵀ (x [M, K],
// W [N, K], both row-major; op(B) = Wᵀ has row == 1) is transa = T, lda = K, transb = N, ldb = K, ldd = N:
// the "TN" form. A dimension of extent 1 has no meaningful stride: the operand then takes the form its other
// stride allows, and an ld that addresses nothing is normalised (the stored rows rounded up to 16 bytes), so
// that launches differing only in such strides map to the same cuBLASLt problem.
//
// Batches are strided (`STRIDED_BATCH_OFFSET` per layout, in elements, `BATCH_COUNT` = batch); a batch stride
// of 0 broadcasts that operand. With batch == 1 every batch stride is 0.
//
// Epilogues, after the swap: the launch's bias [N] (one value per output column of D) is one value per *row*
// of D', which is what cuBLASLt's BIAS adds (a packed vector of length rows(D')). The launch's bias_grad [M] =
// Σ_k op(A)[m, k] sums B' = op(A)ᵀ over k, i.e. one value per *column* of D': BGRADB (not BGRADA, whose
// length is rows(D') = N and which sums A' = op(B)ᵀ). The activations: ReLU → RELU, GELU-tanh → GELU
// (cuBLASLt's GELU is the tanh form); SiLU and GELU-erf have no cuBLASLt epilogue. aux (the pre-activation
// value, D's kind) exists only with GELU: GELU_AUX[_BIAS] writes the GELU input with EPILOGUE_AUX_LD = aux.row
// (a multiple of 8, ≥ N); cuBLASLt's ReLU aux is a bit mask, not the pre-activation, and is not used.
//
// Precision: compute type f32 (f32 accumulation) for f16, bf16 and f32 inputs, f32 with TF32 tensor cores only
// when the launch allows TF32, f64 for f64; α and β are host scalars of the scale type (f32, or f64). For a
// 16-bit D the heuristic may only pick split-K reductions that add the parts in the compute type (the
// reduction-scheme mask excludes INPLACE and OUTPUT_TYPE, which add them in D's 16-bit kind).
//
// Objects: one cuBLASLt handle per device, made on first use and kept for the life of the process (under a
// lock); each backend owns its matmul descriptor and layouts (C shares D's layout when it has D's strides, so
// C may be D itself: in place) and destroys them with itself; the preference lives only during create. The
// handle, the objects and what CublasLtFp8Gemm shares with this backend are in ops/gemm/cublaslt_common.hpp
// and ops/gemm/cublaslt_backend.hpp.
//
// ## What the plan must guarantee
//
// - Every pointer (a, b, c, d, aux, bias, bias_grad) is `kRequiredAlignment` (16) bytes aligned: the heuristic is
//   told so (MIN_ALIGNMENT_{A,B,C,D}_BYTES; the bias and aux pointers are given as 16-aligned placeholders) and
//   may pick an algorithm that needs it. The workspace is `kWorkspaceAlignment` (256) bytes aligned.
// - `run` gets a launch that maps to the same cuBLASLt problem as the one given to `create` (`can_run` checks
//   that, and the alignment; `run` checks it again): same kinds, shape, leading dimensions and batch strides
//   (where they address anything), and the same optional operands present.
// - The problem given to `create` marks each optional operand (c, aux, bias, bias_grad) present by a non-null
//   `data` (any value: `create` never dereferences it) and absent by nullptr. C absent means β = 0.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "baracuda/core/status.hpp"
#include "ops/gemm/cublaslt_backend.hpp"
#include "ops/gemm/cublaslt_common.hpp"  // cublaslt_workspace_cap
#include "ops/gemm/launch.hpp"

namespace baracuda::detail {

/// The cuBLASLt epilogues the mapping uses; the values are `cublasLtEpilogue_t`'s (checked in cublaslt.cpp).
enum class CublasLtEpilogue : uint32_t {
  Default = 1,
  Relu = 2,
  Bias = 4,
  ReluBias = 6,
  Gelu = 32,
  GeluBias = 36,
  GeluAux = 160,
  GeluAuxBias = 164,
  BgradA = 256,
  BgradB = 512,
};
/// "DEFAULT", "RELU_BIAS", "BGRADB", ... (cuBLASLt's names without the CUBLASLT_EPILOGUE_ prefix).
std::string_view to_string(CublasLtEpilogue e);

/// The epilogue of `activation` (both cuBLASLt backends' mappings): DEFAULT, RELU or GELU (cuBLASLt's GELU is the tanh
/// form), their _BIAS forms with `bias`, and GELU_AUX[_BIAS] for GELU-tanh with `aux` (not read otherwise). Errors,
/// named by `who`: `Unsupported` for SiLU and GELU-erf (no cuBLASLt epilogue), `InvalidProblem` for a value that is not
/// a LinearActivation.
Result<CublasLtEpilogue> cublaslt_epilogue(std::string_view who, LinearActivation activation, bool bias, bool aux);

/// One cuBLASLt matrix layout (column-major) and the operation applied to it.
struct CublasLtMatrix {
  bool transpose = false;    ///< CUBLAS_OP_T (true) or CUBLAS_OP_N; always N for C and D
  int64_t rows = 0;          ///< of the stored matrix (CUBLASLT_MATRIX_LAYOUT_ROWS)
  int64_t cols = 0;          ///< of the stored matrix
  int64_t ld = 0;            ///< elements between columns, ≥ rows
  int64_t batch_stride = 0;  ///< STRIDED_BATCH_OFFSET in elements (0: broadcast, or batch == 1)
  friend bool operator==(const CublasLtMatrix&, const CublasLtMatrix&) = default;
};

/// The column-major problem cuBLASLt is asked for a launch (the file comment's mapping). `a` is the layout of
/// cuBLASLt's A (the launch's op(B)), `b` that of cuBLASLt's B (the launch's op(A)).
struct CublasLtMapping {
  ElementKind ab = ElementKind::F16, cd = ElementKind::F16;  ///< the launch's kinds (A and B; C, D, aux, bias)
  bool tf32 = false;            ///< compute type f32 with TF32 tensor cores (f32 inputs that allow TF32 only)
  int64_t m = 0, n = 0, k = 0;  ///< cuBLASLt's: m = N, n = M, k = K
  int32_t batch_count = 1;
  CublasLtMatrix a, b, c, d;  ///< c is d's layout when the launch has no C
  bool has_c = false;
  CublasLtEpilogue epilogue = CublasLtEpilogue::Default;
  int64_t bias_length = 0;       ///< N with a bias, M with a bias gradient (BGRADB), else 0
  int64_t aux_ld = 0;            ///< EPILOGUE_AUX_LD (elements), with aux only
  int64_t aux_batch_stride = 0;  ///< EPILOGUE_AUX_BATCH_STRIDE (elements), with aux and batch > 1 only
  friend bool operator==(const CublasLtMapping&, const CublasLtMapping&) = default;
};
/// e.g. "f16->f16 transa=T transb=N m=4096 n=16 k=4096 lda=4096 ldb=4096 ldc=4096 ldd=4096 batch=1 epilogue=BIAS".
std::string to_string(const CublasLtMapping& m);

/// The cuBLASLt problem of `launch` (pure: no cuBLAS call, no pointer dereferenced; only the presence of c, aux,
/// bias and bias_grad is read from the data pointers). `Unsupported`, with the reason, where cuBLASLt cannot
/// express the launch: SiLU or GELU-erf; aux without GELU-tanh; bias_grad with batch > 1, a bias, aux or an
/// activation; a strided bias or bias_grad; an operand without a unit stride, or whose leading dimension is
/// below cuBLASLt's minimum (e.g. a stride-0 broadcast row); a negative batch stride; K = 0 or an empty
/// problem; an extent above INT32_MAX; element kinds other than f16/bf16 → same or f32, f32 → f32, f64 → f64.
/// `InvalidProblem` for negative extents or a C, D or aux whose column stride is not 1.
Result<CublasLtMapping> cublaslt_mapping(const GemmLaunch& launch);

/// The pointers `cublasLtMatmul` gets for a launch mapped to `m`: cuBLASLt's A is the launch's b and its B the
/// launch's a; C is D's pointer when the launch has no C (β = 0: not read); `bias` is the bias, or the bias
/// gradient (written) for BGRADB; `aux` the aux output. Pure, like the mapping.
struct CublasLtPointers {
  const void* a = nullptr;
  const void* b = nullptr;
  const void* c = nullptr;
  void* d = nullptr;
  const void* bias = nullptr;  ///< BIAS_POINTER (written for BGRADB)
  void* aux = nullptr;         ///< EPILOGUE_AUX_POINTER
};
CublasLtPointers cublaslt_pointers(const GemmLaunch& launch, const CublasLtMapping& m);

/// One GEMM problem planned on cuBLASLt: the matmul descriptor, the four layouts and the algorithm the
/// heuristic ranked first, built once by `create`; `run` only enqueues `cublasLtMatmul`. `kRequiredAlignment`
/// (16, of every operand pointer: see the file comment), `kWorkspaceAlignment` (256), `present_marker()` (a
/// non-null `data` that marks an optional operand present in `create`'s problem), `compiled_in()` and
/// `workspace_size()` are CublasLtBackend's (ops/gemm/cublaslt_backend.hpp).
class CublasLtGemm : public CublasLtBackend {
 public:
  /// Built at the plan's select for device `device` (a CUDA device index; made current): `problem` has the
  /// shapes, kinds, strides and flags, its optional operands marked as the file comment says. `max_workspace`
  /// bounds the algorithm's workspace (further capped by `cublaslt_workspace_cap`). An empty problem (M or batch
  /// 0, or N = 0 without bias_grad) gives a backend whose `run` does nothing; N = 0 with a bias_grad (M sums to
  /// write) is Unsupported. Errors: `cublaslt_mapping`'s; `Unsupported` where
  /// cuBLASLt rejects a layout or descriptor or its heuristic finds no algorithm (with cuBLASLt's status
  /// string), or CUDA is unusable; `DeviceError` where cuBLASLt fails otherwise (e.g. cublasLtCreate).
  static Result<std::shared_ptr<const CublasLtGemm>> create(int device, const GemmLaunch& problem,
                                                            size_t max_workspace);

  /// The cuBLASLt problem this backend was built for.
  const CublasLtMapping& mapping() const { return mapping_; }

  /// OK when `launch` maps to the same cuBLASLt problem as `create`'s and its pointers are aligned:
  /// `InvalidProblem` (naming both problems) or `MisalignedOperand` otherwise; `InvalidProblem` for β ≠ 0
  /// without C. The plan may call it from can_implement; `run` calls it too.
  Status can_run(const GemmLaunch& launch) const;

  /// Enqueues `D = act(α·op(A)·op(B) + β·C + bias)` (and aux or bias_grad) on `stream` (of the device given
  /// to `create`, which must be current; plans make it current in their launch context). Allocates nothing
  /// and sets no device state, so it can be captured in a CUDA graph (α and β are then fixed at capture).
  /// Threads may run one backend at once: a run with a bias or aux sets their pointers on the shared matmul
  /// descriptor and enqueues under a lock (cuBLASLt reads them when it enqueues).
  /// `WorkspaceTooSmall` when `workspace_bytes < workspace_size()`, `MisalignedOperand` for a workspace not
  /// 256-byte aligned; can_run's errors; cuBLASLt's failures mapped as in `create` (`InvalidProblem` for
  /// CUBLAS_STATUS_INVALID_VALUE).
  Status run(cudaStream_t stream, const GemmLaunch& launch, void* workspace, size_t workspace_bytes) const;

 private:
  CublasLtGemm() = default;
  CublasLtMapping mapping_;
};

}  // namespace baracuda::detail
