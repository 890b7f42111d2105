// Launchers that run one candidate block shape of the W4A16 GEMM (src/ops/int4_gemm/tuning.hpp's
// kInt4GemmCandidates) on the sim device, bypassing the plan (which runs only the default shape), so that
// every shape the tuning program may choose is checked in CI.
#pragma once

#include <cstddef>

#include "baracuda/core/status.hpp"
#include "core/exec_context.hpp"
#include "ops/int4_gemm/tables.hpp"
#include "ops/int4_gemm/tuning.hpp"

namespace baracuda::test {

/// The GEMM of `l` (f16 or bf16, the kind of `l.a`) with kInt4GemmCandidates[index], K cut into at most
/// `l.splits` parts (their partial sums in `l.partial`).
Status int4_gemm_with_config(size_t index, const detail::ExecContext& ctx, const detail::Int4GemmLaunch& l);

}  // namespace baracuda::test
