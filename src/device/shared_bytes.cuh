/// \file
/// \brief The dynamic shared-memory opt-in every kernel launch above 48 KiB needs on cuda (the sim has no limit).
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <cstddef>
#include <string>
#include <string_view>

#include "baracuda/core/status.hpp"

// Beside launch::take_last_error (sim/compat.cuh), in the same per-device inline namespace.
namespace baracuda::launch {
inline namespace BARACUDA_DEVICE_ABI {

/// Lets `kernel` launch with `smem` bytes of dynamic shared memory: above 48 KiB a cuda kernel needs the opt-in
/// attribute, per device, so before every launch (the call is cheap). `plan` names the caller in the error.
template <class Kernel>
inline ::baracuda::Status allow_shared_bytes(Kernel* kernel, size_t smem, std::string_view plan) {
#if !BARACUDA_SIM
  if (smem > 48 * 1024) {
    const auto bytes = static_cast<int>(smem);
    const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    if (e != cudaSuccess)
      return ::baracuda::Error::device(std::string(plan) + ": cudaFuncSetAttribute: " + cudaGetErrorString(e), e);
  }
#else
  (void)kernel, (void)smem, (void)plan;
#endif
  return {};
}

}  // namespace BARACUDA_DEVICE_ABI
}  // namespace baracuda::launch
