// The gemm family's tensor-core kernel for the sim device (gemm_tc_kernels.hpp): its four instantiations.
#include "gemm_tc_kernels.hpp"
#include "ops/gemm/tc_kernels.cuh"

namespace baracuda::test {

Status gemm_tensor_core_sim(const detail::ExecContext& ctx, const detail::GemmLaunch& l) {
  namespace g = ::baracuda::device_sim::gemm;
  const bool f32 = l.cd == ElementKind::F32;
  if (l.ab == ElementKind::F16)
    return f32 ? g::tensor_core<__half, float>(ctx, l) : g::tensor_core<__half, __half>(ctx, l);
  if (l.ab == ElementKind::Bf16)
    return f32 ? g::tensor_core<__nv_bfloat16, float>(ctx, l) : g::tensor_core<__nv_bfloat16, __nv_bfloat16>(ctx, l);
  return Error::unsupported("gemm_tensor_core_sim: f16 or bf16 operands only");
}

}  // namespace baracuda::test
