// Block-level kernels of the emulator self-test: barriers, shared memory, dynamic shared memory, spin-waits,
// a planted race, deadlock and trap, and the performance reduction. Plain CUDA: compiles with nvcc too.
// (barrier_vs_shuffle_deadlock really deadlocks on a GPU: run it under the emulator only.)
#include "sim/compat.cuh"

#include "finish_launch.hpp"
#include "selftest_kernels.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace selftest {

__global__ void early_exit_kernel(const int* in, int* out, int n) {
  BARACUDA_SHARED(int, s, [1024]);
  const int i = threadIdx.x;
  if (i >= n) return;
  s[i] = in[i];
  const int count = __syncthreads_count(in[i] > 0);
  const int partner = i ^ 1;
  const int v = partner < n ? s[partner] : s[i];
  __syncthreads();
  out[i] = v + count * 1000;
}

__global__ void barrier_pred_kernel(const int* pred, int* out, int live) {
  const int t = threadIdx.x;
  if (t >= live) return;
  out[t * 3 + 0] = __syncthreads_count(pred[t]);
  out[t * 3 + 1] = __syncthreads_and(pred[t]);
  out[t * 3 + 2] = __syncthreads_or(pred[t]);
}

template <class T, int N>
__device__ int shared_helper(int block, int round) {
  BARACUDA_SHARED(T, h, [N]);
  const int t = static_cast<int>(threadIdx.x);
  h[N - 1 - t] = T(block * 31 + round + t);
  __syncthreads();
  const int bad = h[t] != T(block * 31 + round + (N - 1 - t)) ? 1 : 0;
  __syncthreads();
  return bad;
}

template <class T, int N>
__global__ void isolation_kernel(int rounds, int* errors) {
  BARACUDA_SHARED(T, s, [N]);
  BARACUDA_SHARED(int, other, [128]);  // a second variable of the same kernel
  const int t = static_cast<int>(threadIdx.x);
  const int b = static_cast<int>(blockIdx.x);
  int bad = 0;
  for (int r = 0; r < rounds; ++r) {
    s[t] = T(b * 1000 + r * 7 + t);
    other[t] = b * 100000 + r;
    __syncthreads();
    const int o = (t + r + 1) % N;
    if (s[o] != T(b * 1000 + r * 7 + o)) ++bad;
    if (other[(t + 1) % N] != b * 100000 + r) ++bad;
    bad += shared_helper<T, N>(b, r);
  }
  if (bad != 0) atomicAdd(errors, bad);
}

__global__ void dyn_sum_kernel(const float* in, float* out) {
  BARACUDA_DYNAMIC_SHARED(float, s);
  const unsigned t = threadIdx.x;
  s[t] = in[blockIdx.x * blockDim.x + t];
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}

__global__ void nanosleep_kernel(int* out, volatile int* flags, volatile int* data) {
  const unsigned t = threadIdx.x;
  const unsigned setter = blockDim.x / 2;
  if (t == setter) {
    data[blockIdx.x] = 42 + static_cast<int>(blockIdx.x);
    __threadfence();
    flags[blockIdx.x] = 1;
  }
  if (t == 0) {
    while (flags[blockIdx.x] == 0) __nanosleep(100);
    __threadfence();
    out[blockIdx.x] = data[blockIdx.x];
  }
}

__global__ void spin_kernel(int* counter) {
  atomicAdd(counter, 1);
  while (*static_cast<volatile int*>(counter) < static_cast<int>(blockDim.x)) {
  }
}

template <bool kBarrier>
__global__ void last_sum_kernel(const int* in, int* out) {
  BARACUDA_SHARED(int, s, [1024]);
  const unsigned t = threadIdx.x;
  s[t] = in[blockIdx.x * blockDim.x + t];
  if (kBarrier) __syncthreads();
  if (t == blockDim.x - 1) {
    unsigned sum = 0;  // wraps: without the barrier it adds poisoned (0xCD) words
    for (unsigned j = 0; j < blockDim.x; ++j) sum += static_cast<unsigned>(s[j]);
    out[blockIdx.x] = static_cast<int>(sum);
  }
}

__global__ void deadlock_kernel(int* out) {
  const int t = static_cast<int>(threadIdx.x);
  if (t >= 32 && t < 48) {
    out[t] = __shfl_sync(0xffffffffu, t, 0);
    return;
  }
  __syncthreads();
  out[t] = 1;
}

__global__ void trap_kernel(int* out) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
  if (blockIdx.x == 3 && threadIdx.x == 5) __trap();
}

__global__ void __launch_bounds__(256) block_reduce_kernel(const float* in, float* out, int n) {
  BARACUDA_SHARED(float, warp_sums, [32]);
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  float v = i < n ? in[i] : 0.0f;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < blockDim.x / 32 ? warp_sums[lane] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (lane == 0) atomicAdd(out, v);
  }
}

__global__ void probe_kernel(int* out) {
  if (threadIdx.x == 0 && blockIdx.x == 0) out[0] = 1;
}

}  // namespace selftest
BARACUDA_DEVICE_NAMESPACE_END

namespace simtest {
namespace k = baracuda::selftest;

LaunchError early_exit_barrier(const int* in, int* out, int n, int threads) {
  return launch(1, threads, k::early_exit_kernel, in, out, n);
}

LaunchError barrier_predicates(const int* pred, int* out, int live, int threads) {
  return launch(1, threads, k::barrier_pred_kernel, pred, out, live);
}

LaunchError shared_isolation(int blocks, int rounds, int* errors) {
  const LaunchError e = launch(blocks, 64, k::isolation_kernel<float, 64>, rounds, errors);
  if (e.failed) return e;
  return launch(blocks, 128, k::isolation_kernel<double, 128>, rounds, errors);
}

LaunchError dynamic_smem_sum(const float* in, float* out, int blocks, int threads) {
  BARACUDA_LAUNCH(blocks, threads, threads * sizeof(float), 0, k::dyn_sum_kernel)(in, out);
  return finish();
}

LaunchError nanosleep_flag(int* out, int blocks, int threads) {
  // flags and data live after the outputs: out[blocks .. 3*blocks), zeroed by the caller.
  return launch(blocks, threads, k::nanosleep_kernel, out, out + blocks, out + 2 * blocks);
}

LaunchError spin_without_sleep(int* counter) {
  return launch(1, 32, k::spin_kernel, counter);
}

LaunchError last_thread_sum(const int* in, int* out, int blocks, int threads, bool with_barrier) {
  if (with_barrier) return launch(blocks, threads, k::last_sum_kernel<true>, in, out);
  return launch(blocks, threads, k::last_sum_kernel<false>, in, out);
}

LaunchError barrier_vs_shuffle_deadlock(int* out) {
  return launch(1, 64, k::deadlock_kernel, out);
}

LaunchError trap_in_block(int* out, int blocks) {
  return launch(blocks, 32, k::trap_kernel, out);
}

LaunchError block_reduce_sum(const float* in, float* out, int n, int blocks, int threads) {
  return launch(blocks, threads, k::block_reduce_kernel, in, out, n);
}

LaunchError config_probe(int* out, unsigned gx, unsigned bx, unsigned by, unsigned bz, std::size_t smem) {
  BARACUDA_LAUNCH(dim3(gx), dim3(bx, by, bz), smem, 0, k::probe_kernel)(out);
  return finish();
}

}  // namespace simtest
