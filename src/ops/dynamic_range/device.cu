// The dynamic-range family's parameter-pass and fused-path tables (kernels.cuh), compiled for both devices
// (cmake/BaracudaKernels.cmake: by nvcc for cuda, by the host compiler against the SIMT emulator for sim).
#include "ops/dynamic_range/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN

const ::baracuda::detail::DynamicRangeParamsTable& dynamic_range_params_table() {
  static constexpr ::baracuda::detail::DynamicRangeParamsTable table = dynamic_range::make_params_table();
  return table;
}

const ::baracuda::detail::DynamicRangeFusedTable& dynamic_range_fused_table() {
  static constexpr ::baracuda::detail::DynamicRangeFusedTable table = dynamic_range::make_fused_table();
  return table;
}

BARACUDA_DEVICE_NAMESPACE_END
