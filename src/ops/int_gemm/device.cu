// The int_gemm family's table: kernels.cuh (the int8 tensor-core GEMM and its fused epilogues), compiled for both
// devices (cmake/BaracudaKernels.cmake: by nvcc for cuda, by the host compiler against the SIMT emulator for sim).
#include "ops/int_gemm/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN

BARACUDA_DEFINE_TABLE(detail::IntGemmTables, int_gemm_tables, int_gemm::make_tables())

BARACUDA_DEVICE_NAMESPACE_END
