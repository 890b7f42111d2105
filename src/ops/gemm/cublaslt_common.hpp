// Internal: the cuBLASLt plumbing every cuBLASLt backend shares (the gemm family's CublasLtGemm, ops/gemm/cublaslt.hpp,
// and the fp8_gemm family's CublasLtFp8Gemm, ops/fp8_gemm/cublaslt_fp8.hpp): the workspace ceiling, cuBLASLt's status
// as a baracuda error, the process's handle per device, the attribute setters, the heuristic query with its
// preference, and the cuBLASLt objects one planned matmul owns (descriptor, layouts, algorithm). Each backend keeps its
// own mapping and fills the descriptor and the layouts from it. Everything but the workspace ceiling calls cuBLASLt,
// so it exists only in builds with the cuda kernels.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "baracuda/core/status.hpp"

namespace baracuda::detail {

/// MAX_WORKSPACE_BYTES' ceiling on a device of compute capability `sm` (× 10): 32 MiB from Hopper on, 4 MiB before
/// (cuBLAS's recommended workspace sizes, as PyTorch uses them).
size_t cublaslt_workspace_cap(int sm);

#if BARACUDA_HAVE_CUDA_KERNELS

/// cuBLASLt's status as a baracuda error, its message "<who>: <what>: <status name> (<status string>)" and " for
/// [<problem>]" when `problem` is not empty. At select (`selecting`) a rejection (not supported, an invalid value for a
/// problem the plan has validated, another architecture) means cuBLASLt cannot serve the problem: `Unsupported`; at run
/// an invalid value is `InvalidProblem`. Any other failure is the device's.
Error cublaslt_error(cublasStatus_t s, std::string_view who, std::string_view what, bool selecting,
                     std::string_view problem = {});

/// The process's cuBLASLt handle for `device` (current), created on first use (under a lock) and never destroyed: a
/// handle destroyed at exit could outlive the CUDA runtime's own teardown. `who` names the caller in cublasLtCreate's
/// error.
Result<cublasLtHandle_t> cublaslt_handle(int device, std::string_view who);

template <class T>
cublasStatus_t cublaslt_set(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, const T& v) {
  return cublasLtMatmulDescSetAttribute(d, attr, &v, sizeof(v));
}
template <class T>
cublasStatus_t cublaslt_set(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t attr, const T& v) {
  return cublasLtMatrixLayoutSetAttribute(l, attr, &v, sizeof(v));
}
template <class T>
cublasStatus_t cublaslt_set(cublasLtMatmulPreference_t p, cublasLtMatmulPreferenceAttributes_t attr, const T& v) {
  return cublasLtMatmulPreferenceSetAttribute(p, attr, &v, sizeof(v));
}

/// What the heuristic is asked for besides the problem: the workspace ceiling (MAX_WORKSPACE_BYTES), the alignment in
/// bytes of A, B, C and D (MIN_ALIGNMENT_*_BYTES), and the split-K reductions it may pick (REDUCTION_SCHEME_MASK; 0
/// leaves cuBLASLt's default, every scheme).
struct CublasLtAlgoRequest {
  uint64_t max_workspace = 0;
  uint32_t alignment = 16;
  uint32_t reduction_schemes = 0;
};

/// The algorithm the heuristic ranked first among the usable ones, and its workspace in bytes.
struct CublasLtAlgoChoice {
  cublasLtMatmulAlgo_t algo{};
  size_t workspace = 0;
};

/// Builds the preference of `request`, asks cublasLtMatmulAlgoGetHeuristic for up to 8 algorithms (ranked by estimated
/// time) and returns the first whose state is success within the workspace ceiling. Errors: `cublaslt_error`
/// (selecting) with `who` and `problem`; `Unsupported` when no algorithm is usable.
Result<CublasLtAlgoChoice> cublaslt_heuristic(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                              cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                              cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                              const CublasLtAlgoRequest& request, std::string_view who,
                                              std::string_view problem);

/// The device a backend's `create` works on, made current: its compute capability (× 10; the workspace ceiling's
/// argument) and the process's cuBLASLt handle for it.
struct CublasLtDevice {
  int sm = 0;
  cublasLtHandle_t handle = nullptr;
};
/// Errors: cuda_device_info's; `DeviceError` "<who>: cudaSetDevice: ..."; cublaslt_handle's.
Result<CublasLtDevice> cublaslt_device(int device, std::string_view who);

/// What `create`'s cuBLASLt failures name: the backend and its mapping (the mapping's to_string).
struct CublasLtSelecting {
  std::string_view who;
  std::string problem;
  /// OK for CUBLAS_STATUS_SUCCESS, else `cublaslt_error(s, who, what, selecting = true, problem)`.
  Status check(cublasStatus_t s, std::string_view what) const;
};

/// One matrix layout to create: the element type, the stored (column-major) matrix rows × cols with leading dimension
/// ld, and with batch_count > 1 its BATCH_COUNT and STRIDED_BATCH_OFFSET (elements).
struct CublasLtLayout {
  cudaDataType_t type = CUDA_R_32F;
  int64_t rows = 0, cols = 0, ld = 0;
  int32_t batch_count = 1;
  int64_t batch_stride = 0;
};

/// The cuBLASLt objects of one planned matmul, destroyed with it (the handle is the process's, not owned): the matmul
/// descriptor the backend creates and sets, the layouts of A, B, C and D, and the algorithm the heuristic chose.
struct CublasLtMatmulObjects {
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  size_t workspace = 0;  ///< the algorithm's, in bytes
  /// Serializes runs that set operand pointers on the shared descriptor before their cublasLtMatmul (the call reads
  /// them when it enqueues its kernels); each backend says which pointers.
  std::mutex pointers;

  CublasLtMatmulObjects() = default;
  CublasLtMatmulObjects(const CublasLtMatmulObjects&) = delete;
  CublasLtMatmulObjects& operator=(const CublasLtMatmulObjects&) = delete;
  ~CublasLtMatmulObjects();

  /// C's layout: D's when none was created for C.
  cublasLtMatrixLayout_t c_layout() const { return c != nullptr ? c : d; }

  /// Creates the layouts in the order A, B, C, D, each with its batch attributes; none for C when `c` is null (D's
  /// layout serves as C's). Errors: `selecting.check`'s, naming cublasLtMatrixLayoutCreate or the attribute.
  Status create_layouts(const CublasLtLayout& a, const CublasLtLayout& b, const CublasLtLayout* c,
                        const CublasLtLayout& d, const CublasLtSelecting& selecting);

  /// The heuristic's algorithm for these objects (`cublaslt_heuristic` with the selecting's names) into `algo`, and
  /// its workspace into `workspace`, which is returned.
  Result<size_t> choose_algorithm(const CublasLtAlgoRequest& request, const CublasLtSelecting& selecting);

  /// cublasLtMatmul of these objects on `stream` (C's layout: c_layout()); the workspace is given, with its size,
  /// only when the algorithm needs one.
  cublasStatus_t matmul(const void* alpha, const void* a, const void* b, const void* beta, const void* c, void* d,
                        void* workspace, size_t workspace_bytes, cudaStream_t stream) const;
};

#endif

}  // namespace baracuda::detail
