/// \file
/// \brief The self-test launchers' last step (*_kernels.cu, after sim/compat.cuh): wait for the kernel on a
/// GPU (the emulator has already run it) and return its launch error.
#pragma once

#include "sim/compat.cuh"
#include "sim/launch_error.hpp"

namespace simtest {

inline baracuda::launch::LaunchError finish() {
#if !BARACUDA_SIM
  cudaDeviceSynchronize();
#endif
  return baracuda::launch::take_last_error();
}

}  // namespace simtest
