// The gemm family's tensor-core kernel (src/ops/gemm/tc_kernels.cuh) on the sim device, called directly (no
// plan), so that gemm_tc_test checks it against its own f64 reference at every layout and epilogue.
#pragma once

#include "baracuda/core/status.hpp"
#include "core/exec_context.hpp"
#include "ops/gemm/launch.hpp"

namespace baracuda::test {

/// gemm::tensor_core<TAB, TCD> (sim) for the kinds of `l`: ab ∈ {F16, Bf16}, cd ∈ {ab, F32}; with `max_yz`,
/// tensor_core_chunked (at most max_yz N tiles and batches per launch).
Status gemm_tensor_core_sim(const detail::ExecContext& ctx, const detail::GemmLaunch& l, int64_t max_yz = 0);

}  // namespace baracuda::test
