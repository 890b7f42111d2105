// Internal: what the cuBLASLt backends' objects share (the gemm family's CublasLtGemm, ops/gemm/cublaslt.hpp, and the
// fp8_gemm family's CublasLtFp8Gemm, ops/fp8_gemm/cublaslt_fp8.hpp, derive from `CublasLtBackend`): the alignments they
// plan for, the marker of a present operand, whether the build has cuBLASLt, the cuBLASLt objects `create` built (none
// for an empty problem), the algorithm's workspace, and the checks and errors whose wording they share. Each backend
// keeps its mapping, its `create`, `can_run` and `run`. Compiled in every build; the objects' type is defined only with
// the cuda kernels (ops/gemm/cublaslt_common.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "baracuda/core/status.hpp"

namespace baracuda::detail {

struct CublasLtMatmulObjects;  // ops/gemm/cublaslt_common.hpp (with the cuda kernels)

/// The base of a cuBLASLt backend: one problem planned on cuBLASLt, built by the backend's `create` and never copied.
class CublasLtBackend {
 public:
  static constexpr size_t kRequiredAlignment = 16;    ///< of the operand pointers (each backend's header lists them)
  static constexpr size_t kWorkspaceAlignment = 256;  ///< of the workspace pointer

  /// A non-null pointer that marks an optional operand present in `create`'s problem (never dereferenced; 16-byte
  /// aligned). Any other non-null value does the same.
  static const void* present_marker() { return reinterpret_cast<const void*>(uintptr_t{kRequiredAlignment}); }

  /// Whether this build has the backend (false with BARACUDA_CUDA_KERNELS=OFF: `create` is then Unsupported).
  static bool compiled_in();

  /// The chosen algorithm's workspace in bytes (part of the plan's workspace_size; 0 when it needs none).
  size_t workspace_size() const { return workspace_; }

  CublasLtBackend(const CublasLtBackend&) = delete;
  CublasLtBackend& operator=(const CublasLtBackend&) = delete;

 protected:
  CublasLtBackend();
  ~CublasLtBackend();

  /// "<who>: this library was built without CUDA kernels (...), so without cuBLASLt": `Unsupported`, what `create`
  /// and `run` answer in a build without the cuda kernels.
  static Error not_built(std::string_view who);

  /// `InvalidProblem` "<who>: the launch maps to [<launch>], the backend was built for [<built>]" when they differ.
  template <class Mapping>
  static Status check_same_mapping(std::string_view who, const Mapping& launch, const Mapping& built) {
    if (launch == built) return {};
    return Error::invalid(std::string(who) + ": the launch maps to [" + to_string(launch) +
                          "], the backend was built for [" + to_string(built) + "]");
  }

  /// `MisalignedOperand` for the first of `operands` (a name and a pointer; null passes) that is not
  /// kRequiredAlignment-byte aligned: "<who>: <name> is not 16-byte aligned (<planned> for 16-byte aligned
  /// operands)", `planned` saying what was chosen for them (e.g. "the algorithm was chosen").
  static Status check_alignment(std::string_view who,
                                std::initializer_list<std::pair<const char*, const void*>> operands,
                                std::string_view planned);

  /// run's workspace check: `WorkspaceTooSmall` when `workspace_bytes < workspace_size()`, `MisalignedOperand`
  /// when the algorithm needs a workspace and `workspace` is null or not kWorkspaceAlignment-byte aligned.
  Status check_workspace(std::string_view who, const void* workspace, size_t workspace_bytes) const;

  std::unique_ptr<CublasLtMatmulObjects> objects_;  ///< null for an empty problem (and in a build without cuBLASLt)
  size_t workspace_ = 0;
};

}  // namespace baracuda::detail
