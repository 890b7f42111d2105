// Launchers of the engine test kernels (elementwise_engine_kernels.cu), callable from plain C++ tests.
#pragma once

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/status.hpp"
#include "core/exec_context.hpp"

namespace baracuda::test {

/// sum = a + b and difference = a − b through `launch_elementwise_multi` (f32 views of one shape).
Status sum_difference(const detail::ExecContext& ctx, const DynTensor& sum, const DynTensor& difference,
                      const ConstDynTensor& a, const ConstDynTensor& b);

/// Launches a kernel with 4096 threads per block (above the 1024 limit) and returns the engine's
/// `launch_status`, which must report the failure as `DeviceError`.
Status launch_oversized_block(const detail::ExecContext& ctx);

}  // namespace baracuda::test
