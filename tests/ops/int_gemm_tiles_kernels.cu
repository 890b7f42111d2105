// The int8 GEMM kernel at each tile of the sm_90 set, and the wgmma kernel at each candidate tile, for the sim
// device (int_gemm_tiles_kernels.hpp).
#include "ops/int_gemm/kernels.cuh"
#include "ops/int_gemm/wgmma_kernels.cuh"

#include "int_gemm_tiles_kernels.hpp"

namespace baracuda::test {
namespace {

namespace ig = ::baracuda::device_sim::int_gemm;
using detail::IntGemmTileKind;
constexpr detail::IntGemmTileSet kSet = detail::kIntGemmTilesSm90;

template <class TOut, bool kAsym>
Status with_tile(IntGemmTileKind tile, const detail::ExecContext& ctx, const ig::GemmParams& p) {
  switch (tile) {
    case IntGemmTileKind::Decode: return ig::launch_tile<int8_t, int8_t, TOut, kAsym, kSet.decode>(ctx, p, "test");
    case IntGemmTileKind::Medium: return ig::launch_tile<int8_t, int8_t, TOut, kAsym, kSet.medium>(ctx, p, "test");
    case IntGemmTileKind::Large: break;
  }
  return ig::launch_tile<int8_t, int8_t, TOut, kAsym, kSet.large>(ctx, p, "test");
}

template <class TOut, bool kAsym, size_t... I>
Status wgmma_candidate(int c, const detail::ExecContext& ctx, const ig::GemmParams& p, std::index_sequence<I...>) {
  Status s = Error::invalid("no such wgmma candidate");
  ((c == static_cast<int>(I)
        ? (void)(s = ig::launch_wgmma_tile<int8_t, int8_t, TOut, kAsym, detail::kIntGemmWgmmaCandidates[I]>(ctx, p, "test"))
        : (void)0),
   ...);
  return s;
}
template <class TOut, bool kAsym>
Status with_wgmma(int c, const detail::ExecContext& ctx, const ig::GemmParams& p) {
  return wgmma_candidate<TOut, kAsym>(c, ctx, p, std::make_index_sequence<std::size(detail::kIntGemmWgmmaCandidates)>{});
}

}  // namespace

Status int_gemm_with_tile(IntGemmTileKind tile, const detail::ExecContext& ctx, const detail::IntGemmLaunch& l) {
  return with_tile<int32_t, false>(tile, ctx, ig::gemm_params(l));
}

Status linear_bf16_with_tile(IntGemmTileKind tile, const detail::ExecContext& ctx, const detail::LinearLaunch& l) {
  const ig::GemmParams p = ig::linear_params(l);
  if (p.a_zp != nullptr) return with_tile<__nv_bfloat16, true>(tile, ctx, p);
  return with_tile<__nv_bfloat16, false>(tile, ctx, p);
}

Status int_gemm_wgmma(int c, const detail::ExecContext& ctx, const detail::IntGemmLaunch& l) {
  return with_wgmma<int32_t, false>(c, ctx, ig::gemm_params(l));
}

Status linear_bf16_wgmma(int c, const detail::ExecContext& ctx, const detail::LinearLaunch& l) {
  const ig::GemmParams p = ig::linear_params(l);
  if (p.a_zp != nullptr) return with_wgmma<__nv_bfloat16, true>(c, ctx, p);
  return with_wgmma<__nv_bfloat16, false>(c, ctx, p);
}

}  // namespace baracuda::test
