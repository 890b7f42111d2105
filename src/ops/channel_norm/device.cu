// The channel_norm family's kernels (kernels.cuh, group_row_kernel.cuh) and tables, compiled for both devices
// (cmake/BaracudaKernels.cmake: by nvcc for cuda, by the host compiler against the SIMT emulator for sim).
#include "ops/channel_norm/group_row_kernel.cuh"
#include "ops/channel_norm/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN

BARACUDA_DEFINE_KIND_TABLE(detail::ChannelNormTable, channel_norm_forward_table, detail::ChannelNormTypes,
                           channel_norm::forward)
BARACUDA_DEFINE_KIND_TABLE(detail::ChannelNormTable, channel_norm_backward_table, detail::ChannelNormTypes,
                           channel_norm::backward)
BARACUDA_DEFINE_KIND_TABLE(detail::ChannelNormTable, group_norm_rows_table, detail::ChannelNormTypes,
                           channel_norm::group_rows_forward)

BARACUDA_DEVICE_NAMESPACE_END
