// The sim and cuda dispatch tables of the int_gemm family: empty, because the int8 tensor-core kernel
// (cp.async tiles, ldmatrix, mma.sync.m16n8k32, the fused epilogue) is not built yet (issue #5). select
// turns the empty slots into Unsupported with that message. The kernel's sim.cu / cuda.cu replace this file.
#include "ops/int_gemm/tables.hpp"

namespace baracuda {
inline namespace device_sim {
const detail::IntGemmTables& int_gemm_tables() {
  static constexpr detail::IntGemmTables t{};
  return t;
}
}  // namespace device_sim
#if BARACUDA_HAVE_CUDA_KERNELS
inline namespace device_cuda {
const detail::IntGemmTables& int_gemm_tables() {
  static constexpr detail::IntGemmTables t{};
  return t;
}
}  // namespace device_cuda
#endif
}  // namespace baracuda
