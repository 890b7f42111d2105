// The fp8_gemm family's bespoke kernel for the sim device (fp8_gemm_kernels.hpp): the table kernels.cuh makes.
#include "ops/fp8_gemm/kernels.cuh"  // first: it includes sim/compat.cuh first

#include "fp8_gemm_kernels.hpp"

namespace baracuda::test {
namespace {

constexpr detail::Fp8GemmTables kTables = ::baracuda::device_sim::fp8_gemm::make_tables();

}  // namespace

Status fp8_gemm_kernel_sim(const detail::ExecContext& ctx, const detail::Fp8GemmLaunch& l) {
  const detail::Fp8GemmFn fn = kTables.gemm[detail::kind_index(l.a_kind)][detail::kind_index(l.d_kind)];
  if (fn == nullptr) return Error::unsupported("fp8_gemm_kernel_sim: no kernel for these kinds");
  return fn(ctx, l);
}

std::string_view fp8_gemm_variant_sim(ElementKind a, ElementKind d) {
  return kTables.variant[detail::kind_index(a)][detail::kind_index(d)];
}

}  // namespace baracuda::test
