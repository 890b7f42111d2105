// The base the cuBLASLt backends share (see cublaslt_backend.hpp).
#include "ops/gemm/cublaslt_backend.hpp"

#include "ops/gemm/cublaslt_common.hpp"  // CublasLtMatmulObjects, with the cuda kernels

namespace baracuda::detail {

#if !BARACUDA_HAVE_CUDA_KERNELS
/// Without the cuda kernels no backend is built (`create` fails), so none has objects: an empty type, for `objects_`'s
/// destructor.
struct CublasLtMatmulObjects {};
#endif

CublasLtBackend::CublasLtBackend() = default;
CublasLtBackend::~CublasLtBackend() = default;

bool CublasLtBackend::compiled_in() { return BARACUDA_HAVE_CUDA_KERNELS != 0; }

Error CublasLtBackend::not_built(std::string_view who) {
  return Error::unsupported(std::string(who) +
                            ": this library was built without CUDA kernels (BARACUDA_CUDA_KERNELS=OFF), so without "
                            "cuBLASLt");
}

Status CublasLtBackend::check_alignment(std::string_view who,
                                        std::initializer_list<std::pair<const char*, const void*>> operands,
                                        std::string_view planned) {
  const std::string alignment = std::to_string(kRequiredAlignment);
  for (const auto& [name, ptr] : operands)
    if (reinterpret_cast<uintptr_t>(ptr) % kRequiredAlignment != 0)
      return Error::misaligned(std::string(who) + ": " + name + " is not " + alignment + "-byte aligned (" +
                               std::string(planned) + " for " + alignment + "-byte aligned operands)");
  return {};
}

Status CublasLtBackend::check_workspace(std::string_view who, const void* workspace, size_t workspace_bytes) const {
  if (workspace_bytes < workspace_)
    return Error::workspace_too_small(std::string(who) + ": the algorithm needs " + std::to_string(workspace_) +
                                          " bytes of workspace, got " + std::to_string(workspace_bytes),
                                      workspace_, workspace_bytes);
  if (workspace_ > 0 && (workspace == nullptr || reinterpret_cast<uintptr_t>(workspace) % kWorkspaceAlignment != 0))
    return Error::misaligned(std::string(who) + ": the workspace is not " + std::to_string(kWorkspaceAlignment) +
                             "-byte aligned");
  return {};
}

}  // namespace baracuda::detail
