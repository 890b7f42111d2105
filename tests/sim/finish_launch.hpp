/// \file
/// \brief The self-test launchers' last step (*_kernels.cu, after sim/compat.cuh): wait for the kernel on a
/// GPU (the emulator has already run it) and return its launch error; and `launch`, a plain launch and that.
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

/// Launches `kernel` over grid × block threads (no dynamic shared memory, the default stream) on `args` and
/// returns its launch error.
template <class... P, class... A>
baracuda::launch::LaunchError launch(dim3 grid, dim3 block, void (*kernel)(P...), A... args) {
  BARACUDA_LAUNCH(grid, block, 0, 0, kernel)(args...);
  return finish();
}

/// Blocks of 128 threads that cover n elements, one per thread.
inline int blocks_for(int n) { return (n + 127) / 128; }

}  // namespace simtest
