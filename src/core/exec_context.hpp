// Internal: the launch context plans hand to their device functions, and backend resolution.
#pragma once

#include <string_view>

#include <cuda_runtime_api.h>

#include "baracuda/core/sku.hpp"
#include "baracuda/core/status.hpp"
#include "baracuda/core/stream.hpp"

namespace baracuda::detail {

struct ExecContext {
  DeviceKind device = DeviceKind::Host;
  int device_index = 0;
  cudaStream_t stream = nullptr;
  int sm = 0;                    // compute capability × 10 (cuda only)
  int multiprocessor_count = 1;  // SMs (cuda), 1 otherwise
};

/// The context for launching on `stream`'s device.
Result<ExecContext> make_exec_context(const Stream& stream);

/// The backend that serves `stream`'s device for a family with bespoke kernels (Host, Sim or Bespoke),
/// or `Unsupported` naming `plan` when the preference forces another backend.
Result<BackendKind> resolve_bespoke_backend(std::string_view plan, const Stream& stream,
                                            const PlanPreference& pref);

/// `InvalidProblem` unless `stream` is on the device (and device index) the plan was selected for.
Status check_same_device(std::string_view plan, DeviceKind selected, int selected_index, const Stream& stream);

}  // namespace baracuda::detail
