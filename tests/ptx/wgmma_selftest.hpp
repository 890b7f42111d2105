/// \file
/// \brief Launchers of the wgmma self-test kernels (wgmma_kernels.cuh), compiled for the sim device and, in
/// builds with sm_90a kernels, by nvcc for compute_90a/sm_90a alone.
#pragma once

#include <cstdint>

#include "sim/launch_error.hpp"

namespace ptxtest {

using baracuda::launch::LaunchError;

/// One wgmma self-test launch: two warpgroups (256 threads) in one block. `image` (image_bytes, at most
/// kWgmmaImageBytes) is copied by plain stores to a 1024-byte aligned base of dynamic shared memory, then
/// warpgroup wg issues `steps` (1 or 2) wgmma.m64nNk32 with the descriptors
///   A: wgmma_desc(base + a_off[wg], a_lbo, a_sbo, swizzle), B: wgmma_desc(base + b_off, b_lbo, b_sbo, swizzle),
/// step 1 advancing both start addresses by a_step / b_step bytes (wgmma_desc_advance). The accumulators
/// start as c[tid * N/2 + i]; step 0 runs with scale-d = scale_d0, step 1 with scale-d = 1. Output:
/// d[tid * N/2 + i] (register i of thread tid).
struct WgmmaCase {
  int n = 128;  ///< 64, 128 or 256
  bool a_signed = true, b_signed = true;
  int swizzle = 1;  ///< the descriptor's mode: 0 none, 1 128B, 2 64B, 3 32B
  unsigned a_off[2] = {0, 0}, b_off = 0;
  unsigned a_lbo = 16, a_sbo = 0, b_lbo = 16, b_sbo = 0;
  unsigned a_step = 0, b_step = 0;
  int steps = 1;
  bool scale_d0 = false;
};

inline constexpr int kWgmmaThreads = 256;
inline constexpr int kWgmmaImageBytes = 64 * 1024;

#define PTXTEST_DECLARE_WGMMA_LAUNCHERS \
  LaunchError wgmma(const WgmmaCase& c, const unsigned char* image, int image_bytes, const int* acc_in, int* acc_out);

namespace device_sim {
PTXTEST_DECLARE_WGMMA_LAUNCHERS
}
namespace device_cuda {
PTXTEST_DECLARE_WGMMA_LAUNCHERS
}
#undef PTXTEST_DECLARE_WGMMA_LAUNCHERS

}  // namespace ptxtest
