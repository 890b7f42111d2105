// The dynamic-range family's parameter-pass and fused-path tables (kernels.cuh), compiled for both devices
// (cmake/BaracudaKernels.cmake: by nvcc for cuda, by the host compiler against the SIMT emulator for sim).
#include "ops/dynamic_range/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN

BARACUDA_DEFINE_KIND_TABLE(detail::DynamicRangeParamsTable, dynamic_range_params_table, detail::DynamicRangeTypes,
                           dynamic_range::params_launch)

BARACUDA_DEFINE_TABLE(detail::DynamicRangeFusedTable, dynamic_range_fused_table, dynamic_range::make_fused_table())

BARACUDA_DEVICE_NAMESPACE_END
