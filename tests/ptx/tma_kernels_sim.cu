// The TMA self-test kernel compiled against the SIMT emulator (LANGUAGE CXX).
#include "tma_kernels.cuh"
