// Internal: the channel_norm family's launch record, its geometry (the view every device pass runs over) and its
// tables (forward and backward, GroupNorm and BatchNorm), by element kind.
#pragma once

#include <cstdint>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/workspace.hpp"
#include "baracuda/ops/channel_norm.hpp"
#include "core/exec_context.hpp"
#include "device/dispatch_table.hpp"

namespace baracuda::detail {

/// What a channel_norm function receives: the caller's operands at their own shapes (each empty when absent
/// or not wanted). `mean` and `rstd` (forward) are the caller's or workspace memory, always present in a
/// GroupNorm and a training BatchNorm forward; the backward's read-only operands ride in the DynTensor fields
/// too (mean, rstd, running_mean, running_var). `coefficients`: workspace for three opmath values per
/// statistics segment (backward); `partials`: workspace for the reductions' two-pass schedule.
struct ChannelNormLaunch {
  bool batch = false;    ///< BatchNorm (else GroupNorm)
  bool training = true;  ///< BatchNorm: batch statistics (else the running ones)
  int64_t groups = 1;    ///< GroupNorm
  double eps = 0, momentum = 0;
  ConstDynTensor x, dy, weight, bias;
  DynTensor y, dx, dweight, dbias;
  DynTensor mean, rstd, running_mean, running_var;
  void* coefficients = nullptr;
  Workspace partials;
};

/// The device passes' view of x `[N, C, S...]`: GroupNorm `[N, G, C/G, S...]` (one dimension more), BatchNorm
/// x's shape. Statistics segments: (n, g) (dimensions 0 and 1) or the channel (dimension 1); channels:
/// dimensions 1 and 2 (GroupNorm) or 1 (BatchNorm).
inline Shape channel_norm_view_shape(const Shape& x, bool batch, int64_t groups) {
  if (batch) return x;
  Shape v;
  v.rank = x.rank + 1;
  v.dims[0] = x.dims[0], v.dims[1] = groups, v.dims[2] = x.dims[1] / groups;
  for (int d = 2; d < x.rank; ++d) v.dims[d + 1] = x.dims[d];
  return v;
}
inline uint32_t channel_norm_stats_mask(bool batch) { return batch ? 2u : 3u; }
inline uint32_t channel_norm_channel_mask(bool batch) { return batch ? 2u : 6u; }

using ChannelNormTable = KindTable<ChannelNormFn>;
using ChannelNormTypes = FloatTypes;

}  // namespace baracuda::detail

// reference: host.cpp; sim and cuda: the kernel unit device.cu
BARACUDA_DECLARE_DEVICE_TABLE(detail::ChannelNormTable, channel_norm_forward_table)
BARACUDA_DECLARE_DEVICE_TABLE(detail::ChannelNormTable, channel_norm_backward_table)
// sim and cuda only (the kernel unit device.cu): GroupNorm's single-pass forward (group_row_kernel.cuh).
BARACUDA_DECLARE_KERNEL_TABLE(detail::ChannelNormTable, group_norm_rows_table)
