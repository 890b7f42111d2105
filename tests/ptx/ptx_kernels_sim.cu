// The PTX wrapper self-test kernels compiled against the SIMT emulator (LANGUAGE CXX).
#include "ptx_kernels.cuh"
