// Launchers that run one chosen tile of the int8 GEMM's sm_90 tile set (src/ops/int_gemm/tuning.hpp) on the
// sim device, bypassing the rule that picks a tile, so that every tile the GPU may run is checked in CI; and
// the candidate tiles of the wgmma kernel, which no plan dispatches yet.
#pragma once

#include "baracuda/core/status.hpp"
#include "core/exec_context.hpp"
#include "ops/int_gemm/tables.hpp"
#include "ops/int_gemm/tuning.hpp"

namespace baracuda::test {

/// IntGemm (s8 × s8 → s32) with `tile`.
Status int_gemm_with_tile(detail::IntGemmTileKind tile, const detail::ExecContext& ctx, const detail::IntGemmLaunch& l);
/// The linear epilogue (s8 activation, bf16 output; asymmetric when `l.a_zero_point` is set) with `tile`.
Status linear_bf16_with_tile(detail::IntGemmTileKind tile, const detail::ExecContext& ctx, const detail::LinearLaunch& l);

/// The same two on the wgmma kernel (src/ops/int_gemm/wgmma_kernels.cuh) with detail::kIntGemmWgmmaCandidates[c].
Status int_gemm_wgmma(int c, const detail::ExecContext& ctx, const detail::IntGemmLaunch& l);
Status linear_bf16_wgmma(int c, const detail::ExecContext& ctx, const detail::LinearLaunch& l);

}  // namespace baracuda::test
