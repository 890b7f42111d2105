// The wgmma self-test kernel compiled against the SIMT emulator (LANGUAGE CXX).
#include "wgmma_kernels.cuh"
