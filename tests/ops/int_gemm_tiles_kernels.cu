// The int8 GEMM kernel at each tile of the sm_90 set, for the sim device (int_gemm_tiles_kernels.hpp).
#include "ops/int_gemm/kernels.cuh"

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

}  // namespace

Status int_gemm_with_tile(IntGemmTileKind tile, const detail::ExecContext& ctx, const detail::IntGemmLaunch& l) {
  return with_tile<int32_t, false>(tile, ctx, ig::gemm_params(l));
}

Status linear_bf16_with_tile(IntGemmTileKind tile, const detail::ExecContext& ctx, const detail::LinearLaunch& l) {
  const ig::GemmParams p = ig::linear_params(l);
  if (p.a_zp != nullptr) return with_tile<__nv_bfloat16, true>(tile, ctx, p);
  return with_tile<__nv_bfloat16, false>(tile, ctx, p);
}

}  // namespace baracuda::test
