// The cast family's dispatch table (kernels.cuh), compiled for both devices (cmake/BaracudaKernels.cmake: by nvcc
// for cuda, by the host compiler against the SIMT emulator for sim).
#include "ops/cast/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN

BARACUDA_DEFINE_TABLE(detail::CastTable, cast_table, cast::make_cast_table())

BARACUDA_DEVICE_NAMESPACE_END
