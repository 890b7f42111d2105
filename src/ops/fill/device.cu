// The fill family's dispatch table (kernels.cuh), compiled for both devices (cmake/BaracudaKernels.cmake: by nvcc
// for cuda, by the host compiler against the SIMT emulator for sim).
#include "ops/fill/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN

const ::baracuda::detail::FillTable& fill_table() {
  static constexpr ::baracuda::detail::FillTable table = fill::make_fill_table();
  return table;
}

BARACUDA_DEVICE_NAMESPACE_END
