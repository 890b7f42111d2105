// The unary family's f64 functions for the cuda device (kernels.cuh compiled by nvcc).
#include "ops/unary/kernels.cuh"

BARACUDA_UNARY_SLICE(double, f64)
