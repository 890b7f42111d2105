// The fp8_gemm family's table: kernels.cuh (the bespoke FP8 tensor-core GEMM, variant mma_m16n8k32_fp8), compiled
// for both devices (cmake/BaracudaKernels.cmake: by nvcc for cuda, by the host compiler against the SIMT emulator
// for sim). The host reference's table is host.cpp's.
#include "ops/fp8_gemm/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN

BARACUDA_DEFINE_TABLE(detail::Fp8GemmTables, fp8_gemm_tables, fp8_gemm::make_tables())

BARACUDA_DEVICE_NAMESPACE_END
