// The unary family's bf16 functions for the sim device (kernels.cuh compiled against the SIMT emulator).
#include "ops/unary/kernels.cuh"

BARACUDA_UNARY_SLICE(__nv_bfloat16, bf16)
