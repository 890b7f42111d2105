// The gemm family's tensor-core kernel for the sim device (gemm_tc_kernels.hpp): its four instantiations.
#include "ops/gemm/tc_kernels.cuh"  // first: it includes sim/compat.cuh first

#include "gemm_tc_kernels.hpp"

namespace baracuda::test {
namespace {

namespace g = ::baracuda::device_sim::gemm;

template <class TAB, class TCD>
Status run(const detail::ExecContext& ctx, const detail::GemmLaunch& l, int64_t max_yz) {
  return max_yz > 0 ? g::tensor_core_chunked<TAB, TCD>(ctx, l, max_yz) : g::tensor_core<TAB, TCD>(ctx, l);
}

}  // namespace

Status gemm_tensor_core_sim(const detail::ExecContext& ctx, const detail::GemmLaunch& l, int64_t max_yz) {
  const bool f32 = l.cd == ElementKind::F32;
  if (l.ab == ElementKind::F16) return f32 ? run<__half, float>(ctx, l, max_yz) : run<__half, __half>(ctx, l, max_yz);
  if (l.ab == ElementKind::Bf16)
    return f32 ? run<__nv_bfloat16, float>(ctx, l, max_yz) : run<__nv_bfloat16, __nv_bfloat16>(ctx, l, max_yz);
  return Error::unsupported("gemm_tensor_core_sim: f16 or bf16 operands only");
}

}  // namespace baracuda::test
