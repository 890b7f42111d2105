// Internal: the cuBLASLt plumbing every cuBLASLt backend shares (the gemm family's CublasLtGemm, ops/gemm/cublaslt.hpp,
// and the fp8_gemm family's CublasLtFp8Gemm, ops/fp8_gemm/cublaslt_fp8.hpp): the workspace ceiling, cuBLASLt's status
// as a baracuda error, the process's handle per device, the attribute setters, and the heuristic query with its
// preference. Each backend keeps its own mapping, descriptors and layouts. Everything but the workspace ceiling calls
// cuBLASLt, so it exists only in builds with the cuda kernels.
#pragma once

#include <cublasLt.h>

#include <cstddef>
#include <cstdint>
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

#endif

}  // namespace baracuda::detail
