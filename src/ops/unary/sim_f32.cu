// The unary family's f32 functions for the sim device (kernels.cuh compiled against the SIMT emulator).
#include "ops/unary/kernels.cuh"

BARACUDA_UNARY_SLICE(float, f32)
