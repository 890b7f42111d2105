// The int4_gemm family's table for the cuda device: kernels.cuh (the W4A16 Marlin-layout tensor-core GEMM and
// the act-order column gather) compiled by nvcc.
#include "ops/int4_gemm/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN

const ::baracuda::detail::Int4GemmTables& int4_gemm_tables() {
  static constexpr ::baracuda::detail::Int4GemmTables t = int4_gemm::make_tables();
  return t;
}

BARACUDA_DEVICE_NAMESPACE_END
