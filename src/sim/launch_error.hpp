/// \file
/// \brief baracuda::launch::LaunchError: the error of a kernel launch, identical in the cuda (nvcc) and sim
/// (emulator) compilations. Only the functions that produce it differ; they live in the device-ABI inline
/// namespace (see compat.cuh) so that both compilations can be linked into one library.
#pragma once

#include <string>

namespace baracuda::launch {

/// The result of take_last_error().
struct LaunchError {
  bool failed = false;  ///< true when an error was pending
  int code = 0;         ///< a cudaError_t value; 0 (cudaSuccess) when !failed
  std::string message;  ///< what went wrong, in words; empty when !failed
};

}  // namespace baracuda::launch
