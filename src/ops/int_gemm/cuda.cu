// The int_gemm family's table for the cuda device: kernels.cuh (the int8 tensor-core GEMM and its fused
// epilogues) compiled by nvcc.
#include "ops/int_gemm/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN

const ::baracuda::detail::IntGemmTables& int_gemm_tables() {
  static constexpr ::baracuda::detail::IntGemmTables t = int_gemm::make_tables();
  return t;
}

BARACUDA_DEVICE_NAMESPACE_END
