// The fill family's dispatch table for the cuda device (the kernels of kernels.cuh compiled by nvcc).
#include "ops/fill/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN

const ::baracuda::detail::FillTable& fill_table() {
  static constexpr ::baracuda::detail::FillTable table = fill::make_fill_table();
  return table;
}

BARACUDA_DEVICE_NAMESPACE_END
