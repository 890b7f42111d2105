// The wgmma self-test kernel compiled by nvcc for compute_90a/sm_90a only (wgmma needs the arch-specific
// target; see cmake/BaracudaKernels.cmake, baracuda_add_sm90a_kernel_sources).
#include "wgmma_kernels.cuh"
