// Launchers of the int8 GEMM's wgmma candidates (detail::kIntGemmWgmmaCandidates), compiled for sm_90a in
// int_gemm_wgmma_tiles.cu; present when the build has sm_90a kernels (BARACUDA_HAVE_SM90A_KERNELS).
#pragma once

#include "baracuda/core/status.hpp"
#include "core/exec_context.hpp"
#include "ops/int_gemm/epilogue.cuh"

namespace int_gemm_tiles {

/// The number of wgmma candidates.
int wgmma_candidates();
/// Runs candidate `c`: s8 × s8 → s32 (IntGemm), or the symmetric linear epilogue with a bf16 output.
baracuda::Status launch_wgmma(int c, bool linear_bf16, const baracuda::detail::ExecContext& ctx,
                              const baracuda::device_cuda::int_gemm::GemmParams& p);

}  // namespace int_gemm_tiles
