// Test kernels for the elementwise engine itself, compiled for the sim device (and by nvcc when a GPU run
// builds the tests): a two-output functor, and a deliberately invalid launch.
#include "sim/compat.cuh"

#include "device/elementwise.cuh"
#include "elementwise_engine_kernels.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace engine_test {

/// (a + b, a − b): two outputs of one type.
struct SumDifference {
  __host__ __device__ elementwise::Results<float, 2> operator()(float a, float b) const {
    return {{a + b, a - b}};
  }
};

__global__ void noop_kernel() {}

}  // namespace engine_test
BARACUDA_DEVICE_NAMESPACE_END

namespace baracuda::test {

Status sum_difference(const detail::ExecContext& ctx, const DynTensor& sum, const DynTensor& difference,
                      const ConstDynTensor& a, const ConstDynTensor& b) {
  return elementwise::launch_elementwise_multi<engine_test::SumDifference, 2, float, float, float>(
      "SumDifference", ctx, engine_test::SumDifference{}, {sum, difference}, a, b);
}

Status launch_oversized_block(const detail::ExecContext& ctx) {
  BARACUDA_LAUNCH(dim3(1), dim3(4096), 0, ctx.stream, engine_test::noop_kernel)();
  return elementwise::launch_status("OversizedBlock");
}

}  // namespace baracuda::test
