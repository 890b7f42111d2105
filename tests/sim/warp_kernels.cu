// Warp-intrinsic kernels of the emulator self-test. Plain CUDA: compiles with nvcc and against the emulator.
#include "sim/compat.cuh"

#include "finish_launch.hpp"
#include "selftest_kernels.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace selftest {

template <class T>
__global__ void shfl_kernel(int mode, const T* in, T* out, const int* b, int width, unsigned mask) {
  const int i = threadIdx.x;
  const int lane = i % 32;
  if (((mask >> lane) & 1u) == 0) return;
  const T v = in[i];
  T r = v;
  switch (mode) {
    case simtest::kShflIdx: r = __shfl_sync(mask, v, b[i], width); break;
    case simtest::kShflUp: r = __shfl_up_sync(mask, v, static_cast<unsigned>(b[i]), width); break;
    case simtest::kShflDown: r = __shfl_down_sync(mask, v, static_cast<unsigned>(b[i]), width); break;
    default: r = __shfl_xor_sync(mask, v, b[i], width); break;
  }
  out[i] = r;
}

__global__ void vote_kernel(const int* pred, unsigned* out, unsigned mask) {
  const int i = threadIdx.x;
  if (((mask >> (i % 32)) & 1u) == 0) return;
  const int p = pred[i];
  unsigned* o = out + i * 8;
  o[0] = __ballot_sync(mask, p);
  o[1] = static_cast<unsigned>(__any_sync(mask, p));
  o[2] = static_cast<unsigned>(__all_sync(mask, p));
  o[3] = __match_any_sync(mask, static_cast<unsigned>(p));
  int all_pred = -1;
  o[4] = __match_all_sync(mask, p, &all_pred);
  o[5] = static_cast<unsigned>(all_pred);
  o[6] = __match_any_sync(mask, static_cast<long long>(p) << 40);
  o[7] = __match_any_sync(mask, static_cast<float>(p) * 0.5f);
  __syncwarp(mask);
}

__global__ void reduce_kernel(const int* v, unsigned* out, unsigned mask) {
  const int i = threadIdx.x;
  if (((mask >> (i % 32)) & 1u) == 0) return;
  const int x = v[i];
  const unsigned u = static_cast<unsigned>(x);
  unsigned* o = out + i * 9;
  o[0] = __reduce_add_sync(mask, u);
  o[1] = __reduce_min_sync(mask, u);
  o[2] = __reduce_max_sync(mask, u);
  o[3] = static_cast<unsigned>(__reduce_add_sync(mask, x));
  o[4] = static_cast<unsigned>(__reduce_min_sync(mask, x));
  o[5] = static_cast<unsigned>(__reduce_max_sync(mask, x));
  o[6] = __reduce_and_sync(mask, u);
  o[7] = __reduce_or_sync(mask, u);
  o[8] = __reduce_xor_sync(mask, u);
}

__global__ void activemask_kernel(const int* keep, unsigned* out) {
  const int i = threadIdx.x;
  if (i % 32 >= keep[i / 32]) return;
  const unsigned m = __activemask();
  out[i] = m;
  __syncwarp(m);
}

__global__ void shfl_exited_kernel(const int* in, int* out, unsigned exit_mask) {
  const int i = threadIdx.x;
  if ((exit_mask >> i) & 1u) return;
  out[i] = __shfl_xor_sync(0xffffffffu, in[i], 1);
}

__global__ void not_in_own_mask_kernel(int* out) {
  const int i = threadIdx.x;
  if (i == 0) out[0] = __shfl_sync(0x2u, 7, 0);
  if (i == 1) out[1] = __shfl_sync(0x2u, 9, 1);
}

__global__ void disagree_kernel(int* out) {
  const int i = threadIdx.x;
  if (i < 16)
    out[i] = static_cast<int>(__ballot_sync(0xffffffffu, 1));
  else
    out[i] = __shfl_sync(0xffffffffu, i, 0);
}

__global__ void layout_kernel(int* out) {
  const int linear = threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y;
  int* o = out + linear * 4;
  o[0] = static_cast<int>(threadIdx.x);
  o[1] = static_cast<int>(threadIdx.y);
  o[2] = static_cast<int>(threadIdx.z);
  // Lane 0 of each warp broadcasts its linear id: linear - lane must come back.
  o[3] = __shfl_sync(0xffffffffu, linear, 0);
}

}  // namespace selftest
BARACUDA_DEVICE_NAMESPACE_END

namespace simtest {
namespace k = baracuda::selftest;

template <class T>
LaunchError shfl(int mode, const T* in, T* out, const int* b, int width, unsigned mask, int threads) {
  return launch(1, threads, k::shfl_kernel<T>, mode, in, out, b, width, mask);
}
template LaunchError shfl<int>(int, const int*, int*, const int*, int, unsigned, int);
template LaunchError shfl<unsigned>(int, const unsigned*, unsigned*, const int*, int, unsigned, int);
template LaunchError shfl<long long>(int, const long long*, long long*, const int*, int, unsigned, int);
template LaunchError shfl<unsigned long long>(int, const unsigned long long*, unsigned long long*, const int*, int,
                                              unsigned, int);
template LaunchError shfl<float>(int, const float*, float*, const int*, int, unsigned, int);
template LaunchError shfl<double>(int, const double*, double*, const int*, int, unsigned, int);
template LaunchError shfl<__half>(int, const __half*, __half*, const int*, int, unsigned, int);
template LaunchError shfl<__half2>(int, const __half2*, __half2*, const int*, int, unsigned, int);
template LaunchError shfl<__nv_bfloat16>(int, const __nv_bfloat16*, __nv_bfloat16*, const int*, int, unsigned, int);
template LaunchError shfl<__nv_bfloat162>(int, const __nv_bfloat162*, __nv_bfloat162*, const int*, int, unsigned,
                                          int);

LaunchError vote(const int* pred, unsigned* out, unsigned mask, int threads) {
  return launch(1, threads, k::vote_kernel, pred, out, mask);
}

LaunchError reduce(const int* v, unsigned* out, unsigned mask, int threads) {
  return launch(1, threads, k::reduce_kernel, v, out, mask);
}

LaunchError activemask(const int* keep, unsigned* out, int threads) {
  return launch(1, threads, k::activemask_kernel, keep, out);
}

LaunchError shfl_exited_lanes(const int* in, int* out, unsigned exit_mask) {
  return launch(1, 32, k::shfl_exited_kernel, in, out, exit_mask);
}

LaunchError shfl_not_in_own_mask(int* out) {
  return launch(1, 32, k::not_in_own_mask_kernel, out);
}

LaunchError warp_disagree(int* out) {
  return launch(1, 32, k::disagree_kernel, out);
}

LaunchError thread_layout(int* out) {
  return launch(1, dim3(8, 4, 2), k::layout_kernel, out);
}

}  // namespace simtest
