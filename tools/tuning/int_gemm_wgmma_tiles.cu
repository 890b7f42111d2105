// The wgmma candidates of the int8 GEMM (src/ops/int_gemm/wgmma_kernels.cuh) for int_gemm_tiles.cu: this file
// is compiled by nvcc for sm_90a alone (baracuda_add_sm90a_kernel_sources), int_gemm_tiles.cu for
// BARACUDA_CUDA_ARCHS, so the wgmma kernels reach the tool through these launchers.
#include "int_gemm_wgmma_tiles.hpp"

#include <utility>

#include "ops/int_gemm/wgmma_kernels.cuh"

namespace int_gemm_tiles {
namespace {

namespace ig = baracuda::device_cuda::int_gemm;
using baracuda::detail::kIntGemmWgmmaCandidates;

template <class TOut, size_t... I>
baracuda::Status launch(int c, const baracuda::detail::ExecContext& ctx, const ig::GemmParams& p, std::index_sequence<I...>) {
  baracuda::Status s = baracuda::Error::invalid("no such wgmma candidate");
  ((c == static_cast<int>(I)
        ? (void)(s = ig::launch_wgmma_tile<int8_t, int8_t, TOut, false, kIntGemmWgmmaCandidates[I]>(ctx, p, "tiles"))
        : (void)0),
   ...);
  return s;
}

}  // namespace

int wgmma_candidates() { return static_cast<int>(std::size(kIntGemmWgmmaCandidates)); }

baracuda::Status launch_wgmma(int c, bool linear_bf16, const baracuda::detail::ExecContext& ctx, const ig::GemmParams& p) {
  constexpr auto kIdx = std::make_index_sequence<std::size(kIntGemmWgmmaCandidates)>{};
  if (linear_bf16) return launch<__nv_bfloat16>(c, ctx, p, kIdx);
  return launch<int32_t>(c, ctx, p, kIdx);
}

}  // namespace int_gemm_tiles
