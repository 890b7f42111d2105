// The numerics probes' kernels (numerics_kernels.hpp). Plain CUDA: compiles with nvcc and against the emulator.
#include "sim/compat.cuh"

#include "device/shift.cuh"
#include "finish_launch.hpp"
#include "numerics_kernels.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace numerics {

__global__ void pi_trig_float_kernel(const float* xs, float* out, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  const float x = xs[i];
  float* o = out + static_cast<long long>(i) * simtest::kPiTrigOps;
  o[0] = sinpif(x);
  o[1] = cospif(x);
  sincospif(x, &o[2], &o[3]);
}

__global__ void pi_trig_double_kernel(const double* xs, double* out, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  const double x = xs[i];
  double* o = out + static_cast<long long>(i) * simtest::kPiTrigOps;
  o[0] = sinpi(x);
  o[1] = cospi(x);
  sincospi(x, &o[2], &o[3]);
}

__global__ void fast_divide_kernel(const float* x, const float* y, float* out, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) out[i] = __fdividef(x[i], y[i]);
}

__global__ void shift_kernel(const unsigned long long* xs, const unsigned* amounts, unsigned long long* out, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  const unsigned long long x = xs[i];
  const unsigned s = amounts[i];
  const auto u32 = static_cast<unsigned>(x);
  const auto s32 = static_cast<int>(u32);
  const auto s64 = static_cast<long long>(x);
  unsigned long long* o = out + static_cast<long long>(i) * simtest::kShiftOps;
  o[0] = shift::left(u32, s);
  o[1] = shift::right(u32, s);
  o[2] = static_cast<unsigned>(shift::left(s32, s));
  o[3] = static_cast<unsigned>(shift::right(s32, s));
  o[4] = shift::left(x, s);
  o[5] = shift::right(x, s);
  o[6] = static_cast<unsigned long long>(shift::left(s64, s));
  o[7] = static_cast<unsigned long long>(shift::right(s64, s));
}

}  // namespace numerics
BARACUDA_DEVICE_NAMESPACE_END

namespace simtest {
namespace k = baracuda::numerics;

LaunchError pi_trig_float(const float* x, float* out, int n) {
  return launch(blocks_for(n), 128, k::pi_trig_float_kernel, x, out, n);
}
LaunchError pi_trig_double(const double* x, double* out, int n) {
  return launch(blocks_for(n), 128, k::pi_trig_double_kernel, x, out, n);
}
LaunchError fast_divide(const float* x, const float* y, float* out, int n) {
  return launch(blocks_for(n), 128, k::fast_divide_kernel, x, y, out, n);
}
LaunchError shifts(const unsigned long long* x, const unsigned* amount, unsigned long long* out, int n) {
  return launch(blocks_for(n), 128, k::shift_kernel, x, amount, out, n);
}

}  // namespace simtest
