// The unary family's f32 functions (kernels.cuh), compiled for both devices (cmake/BaracudaKernels.cmake: by nvcc
// for cuda, by the host compiler against the SIMT emulator for sim).
#include "ops/unary/kernels.cuh"

BARACUDA_UNARY_SLICE(float, f32)
