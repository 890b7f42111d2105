// The int4_gemm family's table: kernels.cuh (the W4A16 Marlin-layout tensor-core GEMM and the act-order column
// gather), compiled for both devices (cmake/BaracudaKernels.cmake: by nvcc for cuda, by the host compiler against
// the SIMT emulator for sim).
#include "ops/int4_gemm/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN

BARACUDA_DEFINE_TABLE(detail::Int4GemmTables, int4_gemm_tables, int4_gemm::make_tables())

BARACUDA_DEVICE_NAMESPACE_END
