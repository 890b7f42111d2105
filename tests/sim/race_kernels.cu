// racecheck's probes (race_kernels.hpp). Plain CUDA: compiles with nvcc and against the emulator.
#include "sim/compat.cuh"

#include "device/ptx/cp_async.cuh"
#include "device/ptx/ldmatrix.cuh"
#include "finish_launch.hpp"
#include "race_kernels.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace race {

__global__ void sum_after_writes_kernel(int* data, int* out, bool with_barrier) {
  const int t = threadIdx.x;
  data[t] = t + 1;
  if (with_barrier) __syncthreads();
  if (t == 0) {
    int s = 0;
    for (int i = 0; i < static_cast<int>(blockDim.x); ++i) s += data[i];
    out[0] = s;
  }
}

__global__ void neighbour_in_warp_kernel(int* data, int* out, bool with_syncwarp) {
  const int lane = threadIdx.x;
  data[lane] = 100 + lane;
  if (with_syncwarp) __syncwarp();
  out[lane] = data[(lane + 1) % 32];
}

__global__ void last_block_sum_kernel(const int* in, int* partial, unsigned* counter, int* out, bool with_atomic) {
  BARACUDA_SHARED(int, sums, [64]);
  BARACUDA_SHARED(bool, last);
  const int t = threadIdx.x;
  const unsigned b = blockIdx.x, blocks = gridDim.x;
  sums[t] = in[b * 64 + t];
  __syncthreads();
  if (t == 0) {
    int s = 0;
    for (int i = 0; i < 64; ++i) s += sums[i];
    partial[b] = s;
    if (with_atomic) {
      __threadfence();  // the partial is visible before the count says so
      last = atomicAdd(counter, 1u) == blocks - 1;
    } else {
      last = b == blocks - 1;  // the bug: block order is not launch order
    }
  }
  __syncthreads();
  if (last && t == 0) {
    int s = 0;
    for (unsigned i = 0; i < blocks; ++i) s += partial[i];
    out[0] = s;
  }
}

__global__ void flag_handshake_kernel(int* data, int* flag, int* out, bool atomic_flag) {
  const int t = threadIdx.x;
  if (t == 32) {
    *data = 7;
    __threadfence();
    if (atomic_flag)
      atomicExch(flag, 1);
    else
      *static_cast<volatile int*>(flag) = 1;
  }
  if (t == 0) {
    if (atomic_flag)
      while (atomicAdd(flag, 0) == 0) __nanosleep(100);
    else
      while (*static_cast<volatile int*>(flag) == 0) __nanosleep(100);
    __threadfence();
    *out = *data;
  }
}

__global__ void byte_per_thread_kernel(unsigned char* bytes) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  bytes[i] = static_cast<unsigned char>(i & 0xffu);
}

// Two stages of one 8 × 16-byte tile in dynamic shared memory; warp 1's lanes 0..7 copy, warp 0 reads.
__global__ void double_buffered_tiles_kernel(const unsigned* in, unsigned* out, int steps, bool refill_before_barrier) {
  BARACUDA_DYNAMIC_SHARED(unsigned char, stages);
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31;
  const auto request = [&](int s) {  // tile s into stage s & 1, a row a thread
    if (tid >= 32 && tid < 40) ptx::cp_async_cg(stages + (s & 1) * 128 + 16 * (tid - 32), in + 32 * s + 4 * (tid - 32));
  };
  request(0);
  ptx::cp_async_commit();
  unsigned acc = 0;
  for (int s = 0; s < steps; ++s) {
    ptx::cp_async_wait_all();
    if (refill_before_barrier && s + 1 < steps) request(s + 1);  // the bug: warp 0 may still read that stage
    __syncthreads();  // tile s visible; stage (s + 1) & 1, which step s − 1 read, free
    if (!refill_before_barrier && s + 1 < steps) request(s + 1);
    ptx::cp_async_commit();
    if (tid < 32) {
      unsigned r[1];
      ptx::ldmatrix<1>(r, stages + (s & 1) * 128 + 16 * (lane & 7));  // lane l: word l of the tile
      acc += r[0];
    }
  }
  if (tid < 32) out[lane] = acc;
}

// Each thread copies 16 bytes into its slot of dynamic shared memory by cp.async; after a barrier it reads the first
// word of its neighbour's slot. `wait`: the cp.async.wait_all before the barrier (without it, the planted bug).
__global__ void neighbour_copy_kernel(const unsigned* in, unsigned* out, bool wait) {
  BARACUDA_DYNAMIC_SHARED(unsigned char, slots);
  const int t = static_cast<int>(threadIdx.x), n = static_cast<int>(blockDim.x);
  ptx::cp_async_cg(slots + 16 * t, in + 4 * t);
  ptx::cp_async_commit();
  if (wait) ptx::cp_async_wait_all();
  __syncthreads();
  out[t] = *reinterpret_cast<const unsigned*>(slots + 16 * ((t + 1) % n));
}

}  // namespace race
BARACUDA_DEVICE_NAMESPACE_END

namespace simtest {
namespace k = ::baracuda::race;

LaunchError global_sum_after_writes(int* data, int* out, int threads, bool with_barrier) {
  return launch(1, threads, k::sum_after_writes_kernel, data, out, with_barrier);
}
LaunchError global_neighbour_in_warp(int* data, int* out, bool with_syncwarp) {
  return launch(1, 32, k::neighbour_in_warp_kernel, data, out, with_syncwarp);
}
LaunchError last_block_sum(const int* in, int* partial, unsigned* counter, int* out, int blocks, bool with_atomic) {
  return launch(blocks, 64, k::last_block_sum_kernel, in, partial, counter, out, with_atomic);
}
LaunchError flag_handshake(int* data, int* flag, int* out, bool atomic_flag) {
  return launch(1, 64, k::flag_handshake_kernel, data, flag, out, atomic_flag);
}
LaunchError byte_per_thread(unsigned char* bytes, int blocks) {
  return launch(blocks, 32, k::byte_per_thread_kernel, bytes);
}
LaunchError neighbour_copy(const unsigned* in, unsigned* out, bool wait) {
  BARACUDA_LAUNCH(1, 64, 64 * 16, 0, k::neighbour_copy_kernel)(in, out, wait);
  return finish();
}
LaunchError double_buffered_tiles(const unsigned* in, unsigned* out, int steps, bool refill_before_barrier) {
  BARACUDA_LAUNCH(1, 64, 256, 0, k::double_buffered_tiles_kernel)(in, out, steps, refill_before_barrier);
  return finish();
}

}  // namespace simtest
