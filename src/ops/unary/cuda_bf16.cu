// The unary family's bf16 functions for the cuda device (kernels.cuh compiled by nvcc).
#include "ops/unary/kernels.cuh"

BARACUDA_UNARY_SLICE(__nv_bfloat16, bf16)
