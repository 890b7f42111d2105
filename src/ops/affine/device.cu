// The affine family's dispatch table (kernels.cuh), compiled for both devices (cmake/BaracudaKernels.cmake: by nvcc
// for cuda, by the host compiler against the SIMT emulator for sim).
#include "ops/affine/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN

BARACUDA_DEFINE_KIND_TABLE(detail::AffineTable, affine_table, detail::AffineTypes, affine::affine_launch)

BARACUDA_DEVICE_NAMESPACE_END
