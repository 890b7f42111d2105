/// \file
/// \brief Launchers of the TMA self-test kernel (tma_kernels.cuh), compiled for the sim device and, in builds
/// with cuda kernels, by nvcc (the instructions need sm_90, older targets trap).
#pragma once

#include <cstdint>

#include "sim/launch_error.hpp"

namespace ptxtest {

using baracuda::launch::LaunchError;

/// One TMA self-test launch (one block of kTmaThreads): the tensor `src` (rows × cols elements of elem_bytes,
/// rows row_bytes apart) is described by a tensor map with a box_cols × box_rows box and the given swizzle
/// (0, 32, 64 or 128 bytes); thread 0 issues `copies` (1 or 2) box copies at (c0[i], c1[i]) into two
/// 1024-byte aligned shared buffers, each announced by arrive.expect_tx of the box's bytes on one mbarrier
/// (count 1), copy i in phase i; every thread waits on parity i, then the block writes buffer i out to
/// out[i · box bytes ...] as it lies in shared memory.
struct TmaCase {
  std::uint64_t cols = 0, rows = 0, row_bytes = 0;
  unsigned elem_bytes = 1;
  unsigned box_cols = 0, box_rows = 0;
  unsigned swizzle = 0;
  int copies = 1;
  int c0[2] = {0, 0}, c1[2] = {0, 0};
};

inline constexpr int kTmaThreads = 128;
inline constexpr int kTmaMaxBoxBytes = 32 * 1024;

#define PTXTEST_DECLARE_TMA_LAUNCHERS \
  LaunchError tma(const TmaCase& c, const unsigned char* src, std::size_t src_bytes, unsigned char* out);

namespace device_sim {
PTXTEST_DECLARE_TMA_LAUNCHERS
}
namespace device_cuda {
PTXTEST_DECLARE_TMA_LAUNCHERS
}
#undef PTXTEST_DECLARE_TMA_LAUNCHERS

}  // namespace ptxtest
