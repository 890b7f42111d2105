// Internal: which rows the row kernels (device/row_chunks.cuh: the norm forward, softmax) serve, decided on
// the host at select time from the row's length and element size alone.
#pragma once

#include <cstdint>

namespace baracuda::detail {

/// A warp per row (≤ 1024 elements and ≤ 4 KiB), a block of kRowThreads per row (≤ kRowKernelBytes, 64 KiB:
/// above 48 KiB the launch opts the kernel in to more dynamic shared memory, launch::allow_shared_bytes), or
/// none (the engines).
enum class RowSchedule : uint8_t { None, WarpPerRow, BlockPerRow };
inline constexpr int kRowThreads = 256;
inline constexpr int64_t kRowKernelBytes = 64 * 1024;

inline RowSchedule row_schedule(int64_t len, int64_t elem_bytes) {
  if (len <= 1024 && len * elem_bytes <= 4096) return RowSchedule::WarpPerRow;
  if (len * elem_bytes <= kRowKernelBytes) return RowSchedule::BlockPerRow;
  return RowSchedule::None;
}

/// The norm backward's dx kernel keeps two rows (dy and x) on chip: the same rule over twice the bytes.
inline RowSchedule norm_backward_row_schedule(int64_t len, int64_t elem_bytes) {
  return row_schedule(len, 2 * elem_bytes);
}

}  // namespace baracuda::detail
