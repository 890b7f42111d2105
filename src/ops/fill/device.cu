// The fill family's dispatch table (kernels.cuh), compiled for both devices (cmake/BaracudaKernels.cmake: by nvcc
// for cuda, by the host compiler against the SIMT emulator for sim).
#include "ops/fill/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN

BARACUDA_DEFINE_KIND_TABLE(detail::FillTable, fill_table, detail::FillTypes, fill::fill_launch)

BARACUDA_DEVICE_NAMESPACE_END
