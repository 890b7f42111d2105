// Launchers of the segmented-reduction test functors (segment_reduce_kernels.cu), callable from plain C++
// tests. Every launcher reduces f32 inputs over the dimensions of `shape` not in `kept_mask` and writes one
// result per segment into dense host arrays (the sim device runs on host memory).
#pragma once

#include <cstdint>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/status.hpp"
#include "baracuda/core/workspace.hpp"
#include "core/exec_context.hpp"

namespace baracuda::test {

/// sum[seg] = Σ x (accumulated in double).
Status segment_sum(const detail::ExecContext& ctx, const Shape& shape, uint32_t kept_mask, Workspace ws,
                   const ConstDynTensor& x, double* sum);
/// lo[seg] = min x, hi[seg] = max x (+inf / −inf for an empty segment); calls[seg] counts finish calls.
Status segment_min_max(const detail::ExecContext& ctx, const Shape& shape, uint32_t kept_mask, Workspace ws,
                       const ConstDynTensor& x, float* lo, float* hi, int* calls);
/// dot[seg] = Σ a·b in double: two inputs, either of which may broadcast.
Status segment_dot(const detail::ExecContext& ctx, const Shape& shape, uint32_t kept_mask, Workspace ws,
                   const ConstDynTensor& a, const ConstDynTensor& b, double* dot);

}  // namespace baracuda::test
