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

// launch_at(tile or wgmma candidate, ...): the kernel at one tile of the set, or the wgmma kernel at a candidate.
template <class TOut, bool kAsym>
Status launch_at(IntGemmTileKind tile, const detail::ExecContext& ctx, const ig::GemmParams& p) {
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
Status launch_at(int c, const detail::ExecContext& ctx, const ig::GemmParams& p) {
  return wgmma_candidate<TOut, kAsym>(c, ctx, p, std::make_index_sequence<std::size(detail::kIntGemmWgmmaCandidates)>{});
}

/// The int8 GEMM (s32 out) at `at` (a tile or a wgmma candidate).
template <class At>
Status int_gemm_at(At at, const detail::ExecContext& ctx, const detail::IntGemmLaunch& l) {
  return launch_at<int32_t, false>(at, ctx, ig::gemm_params(l));
}

/// The linear epilogue (bf16 out; asymmetric when the launch has zero points) at `at`.
template <class At>
Status linear_bf16_at(At at, const detail::ExecContext& ctx, const detail::LinearLaunch& l) {
  const ig::GemmParams p = ig::linear_params(l);
  if (p.a_zp != nullptr) return launch_at<__nv_bfloat16, true>(at, ctx, p);
  return launch_at<__nv_bfloat16, false>(at, ctx, p);
}

}  // namespace

Status int_gemm_with_tile(IntGemmTileKind tile, const detail::ExecContext& ctx, const detail::IntGemmLaunch& l) {
  return int_gemm_at(tile, ctx, l);
}

Status linear_bf16_with_tile(IntGemmTileKind tile, const detail::ExecContext& ctx, const detail::LinearLaunch& l) {
  return linear_bf16_at(tile, ctx, l);
}

Status int_gemm_wgmma(int c, const detail::ExecContext& ctx, const detail::IntGemmLaunch& l) {
  return int_gemm_at(c, ctx, l);
}

Status linear_bf16_wgmma(int c, const detail::ExecContext& ctx, const detail::LinearLaunch& l) {
  return linear_bf16_at(c, ctx, l);
}

}  // namespace baracuda::test
