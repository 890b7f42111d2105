// The dynamic-range family's parameter-pass table for the cuda device (kernels.cuh compiled by nvcc).
#include "ops/dynamic_range/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN

const ::baracuda::detail::DynamicRangeParamsTable& dynamic_range_params_table() {
  static constexpr ::baracuda::detail::DynamicRangeParamsTable table = dynamic_range::make_params_table();
  return table;
}

BARACUDA_DEVICE_NAMESPACE_END
