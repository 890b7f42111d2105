/// \file
/// \brief Launch configuration of the elementwise engine, as data: threads per block, work items per
/// thread, and a cap on resident blocks, per device kind (and, for cuda, per architecture).
///
/// The grid is `min(ceil(work / (threads_per_block · items_per_thread)), max_blocks_per_sm · SMs)` and
/// every kernel is a grid-stride loop, so any cap is correct and only changes speed. An "item" is one
/// 16-byte vector on the vectorized path and one element on the scalar and strided paths.
#pragma once

#include <string>

namespace baracuda::detail {

struct ElementwiseTuning {
  int threads_per_block = 256;
  int items_per_thread = 4;
  int max_blocks_per_sm = 8;

  friend bool operator==(const ElementwiseTuning&, const ElementwiseTuning&) = default;
  std::string to_string() const {
    return "threads=" + std::to_string(threads_per_block) + " items=" + std::to_string(items_per_thread) +
           " max_blocks_per_sm=" + std::to_string(max_blocks_per_sm);
  }
};

/// GPUs: 256 threads, 4 items each, up to 8 resident blocks per SM (2048 threads: full occupancy on
/// sm_80 and sm_90). The same policy serves both architectures until measurements say otherwise.
inline constexpr ElementwiseTuning kElementwiseTuningSm80{256, 4, 8};
inline constexpr ElementwiseTuning kElementwiseTuningSm90{256, 4, 8};

/// The emulator: every CUDA thread is a fiber, so launches stay small (at most 8 blocks of 128 threads,
/// the emulated device reports one SM) and the grid-stride loops do the rest.
inline constexpr ElementwiseTuning kElementwiseTuningSim{128, 4, 8};

/// The policy for a cuda device of compute capability `sm` (×10).
constexpr ElementwiseTuning elementwise_tuning_for_sm(int sm) {
  return sm >= 90 ? kElementwiseTuningSm90 : kElementwiseTuningSm80;
}

}  // namespace baracuda::detail
