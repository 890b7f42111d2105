// The PTX wrapper self-test kernels compiled by nvcc for the cuda device.
#include "ptx_kernels.cuh"
