// The int4_marlin_repack family's table: kernels.cuh (the GPTQ / AWQ → Marlin gather kernel), compiled for both
// devices (cmake/BaracudaKernels.cmake: by nvcc for cuda, by the host compiler against the SIMT emulator for sim).
#include "ops/int4_marlin_repack/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN

BARACUDA_DEFINE_TABLE(detail::Int4RepackTables, int4_marlin_repack_tables, int4_marlin_repack::make_tables())

BARACUDA_DEVICE_NAMESPACE_END
