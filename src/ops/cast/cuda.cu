// The cast family's dispatch table for the cuda device (the kernels of kernels.cuh compiled by nvcc).
#include "ops/cast/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN

const ::baracuda::detail::CastTable& cast_table() {
  static constexpr ::baracuda::detail::CastTable table = cast::make_cast_table();
  return table;
}

BARACUDA_DEVICE_NAMESPACE_END
