// The unary family's f16 functions for the sim device (kernels.cuh compiled against the SIMT emulator).
#include "ops/unary/kernels.cuh"

BARACUDA_UNARY_SLICE(__half, f16)
