// The cuBLASLt plumbing shared by the cuBLASLt backends (see cublaslt_common.hpp).
#include "ops/gemm/cublaslt_common.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "baracuda/core/stream.hpp"

namespace baracuda::detail {

size_t cublaslt_workspace_cap(int sm) { return (sm >= 90 ? size_t{32} : size_t{4}) << 20; }

#if BARACUDA_HAVE_CUDA_KERNELS

Error cublaslt_error(cublasStatus_t s, std::string_view who, std::string_view what, bool selecting,
                     std::string_view problem) {
  std::string msg = std::string(who) + ": " + std::string(what) + ": " + cublasLtGetStatusName(s) + " (" +
                    cublasLtGetStatusString(s) + ")";
  if (!problem.empty()) msg += " for [" + std::string(problem) + "]";
  switch (s) {
    case CUBLAS_STATUS_NOT_SUPPORTED:
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return Error::unsupported(std::move(msg));
    case CUBLAS_STATUS_INVALID_VALUE:
      return selecting ? Error::unsupported(std::move(msg)) : Error::invalid(std::move(msg));
    default:
      return Error::device(std::move(msg), static_cast<int>(s));
  }
}

Result<cublasLtHandle_t> cublaslt_handle(int device, std::string_view who) {
  static std::mutex mu;
  static auto* handles = new std::map<int, cublasLtHandle_t>();
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = handles->find(device); it != handles->end()) return it->second;
  cublasLtHandle_t h = nullptr;
  const cublasStatus_t s = cublasLtCreate(&h);
  if (s != CUBLAS_STATUS_SUCCESS) return cublaslt_error(s, who, "cublasLtCreate", false);
  handles->emplace(device, h);
  return h;
}

Result<CublasLtAlgoChoice> cublaslt_heuristic(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                              cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                              cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                              const CublasLtAlgoRequest& request, std::string_view who,
                                              std::string_view problem) {
  auto fail = [&](cublasStatus_t s, std::string_view what) { return cublaslt_error(s, who, what, true, problem); };
  cublasLtMatmulPreference_t pref = nullptr;
  if (const cublasStatus_t s = cublasLtMatmulPreferenceCreate(&pref); s != CUBLAS_STATUS_SUCCESS)
    return fail(s, "cublasLtMatmulPreferenceCreate");
  const std::unique_ptr<cublasLtMatmulPreferenceOpaque_t, cublasStatus_t (*)(cublasLtMatmulPreference_t)> owner(
      pref, cublasLtMatmulPreferenceDestroy);
  if (const cublasStatus_t s = cublaslt_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, request.max_workspace);
      s != CUBLAS_STATUS_SUCCESS)
    return fail(s, "MAX_WORKSPACE_BYTES");
  for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    if (const cublasStatus_t s = cublaslt_set(pref, attr, request.alignment); s != CUBLAS_STATUS_SUCCESS)
      return fail(s, "MIN_ALIGNMENT");
  if (request.reduction_schemes != 0)
    if (const cublasStatus_t s =
            cublaslt_set(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, request.reduction_schemes);
        s != CUBLAS_STATUS_SUCCESS)
      return fail(s, "REDUCTION_SCHEME_MASK");

  constexpr int kRequested = 8;
  cublasLtMatmulHeuristicResult_t results[kRequested] = {};
  int returned = 0;
  if (const cublasStatus_t s =
          cublasLtMatmulAlgoGetHeuristic(handle, desc, a, b, c, d, pref, kRequested, results, &returned);
      s != CUBLAS_STATUS_SUCCESS)
    return fail(s, "cublasLtMatmulAlgoGetHeuristic");
  // Ranked by estimated time: the first usable one.
  for (int i = 0; i < returned; ++i) {
    if (results[i].state != CUBLAS_STATUS_SUCCESS || results[i].workspaceSize > request.max_workspace) continue;
    return CublasLtAlgoChoice{results[i].algo, results[i].workspaceSize};
  }
  return Error::unsupported(std::string(who) + ": cuBLASLt's heuristic found no algorithm for [" +
                            std::string(problem) + "] within " + std::to_string(request.max_workspace) +
                            " bytes of workspace");
}

Result<CublasLtDevice> cublaslt_device(int device, std::string_view who) {
  auto info = cuda_device_info(device);
  if (!info) return info.error();
  if (const cudaError_t e = cudaSetDevice(device); e != cudaSuccess)
    return Error::device(std::string(who) + ": cudaSetDevice: " + cudaGetErrorString(e), e);
  auto handle = cublaslt_handle(device, who);
  if (!handle) return handle.error();
  return CublasLtDevice{info->sm, *handle};
}

Status CublasLtSelecting::check(cublasStatus_t s, std::string_view what) const {
  if (s == CUBLAS_STATUS_SUCCESS) return {};
  return cublaslt_error(s, who, what, /*selecting=*/true, problem);
}

CublasLtMatmulObjects::~CublasLtMatmulObjects() {
  for (cublasLtMatrixLayout_t l : {d, c, b, a})
    if (l != nullptr) cublasLtMatrixLayoutDestroy(l);
  if (desc != nullptr) cublasLtMatmulDescDestroy(desc);
}

Status CublasLtMatmulObjects::create_layouts(const CublasLtLayout& la, const CublasLtLayout& lb,
                                             const CublasLtLayout* lc, const CublasLtLayout& ld,
                                             const CublasLtSelecting& selecting) {
  const std::pair<cublasLtMatrixLayout_t*, const CublasLtLayout*> layouts[] = {
      {&a, &la}, {&b, &lb}, {&c, lc}, {&d, &ld}};
  for (const auto& [out, x] : layouts) {
    if (x == nullptr) continue;
    BARACUDA_TRY(selecting.check(cublasLtMatrixLayoutCreate(out, x->type, static_cast<uint64_t>(x->rows),
                                                            static_cast<uint64_t>(x->cols), x->ld),
                                 "cublasLtMatrixLayoutCreate"));
    if (x->batch_count > 1) {
      BARACUDA_TRY(
          selecting.check(cublaslt_set(*out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, x->batch_count), "BATCH_COUNT"));
      BARACUDA_TRY(selecting.check(cublaslt_set(*out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, x->batch_stride),
                                   "STRIDED_BATCH_OFFSET"));
    }
  }
  return {};
}

Result<size_t> CublasLtMatmulObjects::choose_algorithm(const CublasLtAlgoRequest& request,
                                                       const CublasLtSelecting& selecting) {
  auto choice = cublaslt_heuristic(handle, desc, a, b, c_layout(), d, request, selecting.who, selecting.problem);
  if (!choice) return choice.error();
  algo = choice->algo;
  workspace = choice->workspace;
  return workspace;
}

cublasStatus_t CublasLtMatmulObjects::matmul(const void* alpha, const void* pa, const void* pb, const void* beta,
                                             const void* pc, void* pd, void* ws, size_t ws_bytes,
                                             cudaStream_t stream) const {
  void* const given = workspace > 0 ? ws : nullptr;
  return cublasLtMatmul(handle, desc, alpha, pa, a, pb, b, beta, pc, c_layout(), pd, d, &algo, given,
                        given != nullptr ? ws_bytes : 0, stream);
}

#endif

}  // namespace baracuda::detail
