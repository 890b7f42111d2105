// The TMA self-test kernel compiled by nvcc (the copies and barriers need sm_90; older targets trap).
#include "tma_kernels.cuh"
