// The fidelity probes' kernels (fidelity_kernels.hpp). Plain CUDA: compiles with nvcc and against the emulator.
#include "sim/compat.cuh"

#include "device/ptx/cp_async.cuh"

#include "fidelity_kernels.hpp"
#include "finish_launch.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace fidelity {

constexpr unsigned kFull = 0xffffffffu;

__global__ void activemask_per_branch_kernel(unsigned* out) {
  const int lane = threadIdx.x;
  if (lane < 16)
    out[lane] = __activemask();
  else
    out[lane] = __activemask();
}

// The warp-aggregated atomic: one atomicAdd per group of converged lanes.
__device__ void aggregated_add(int* counter) {
  const unsigned active = __activemask();
  const int leader = __ffs(static_cast<int>(active)) - 1;
  if (static_cast<int>(threadIdx.x % 32) == leader) atomicAdd(counter, __popc(active));
}

// The arms store around the call in different orders, so that no compiler can merge the two calls into one
// (which would converge the lanes there, on the GPU too).
__global__ void aggregated_atomic_kernel(int* counts, int* arms) {
  if (threadIdx.x < 16) {
    aggregated_add(&counts[0]);
    arms[threadIdx.x] = 0;
  } else {
    arms[threadIdx.x] = 1;
    aggregated_add(&counts[1]);
  }
}

__global__ void shuffle_across_branches_kernel(int* out) {
  const int lane = threadIdx.x;
  if (lane < 16)
    out[lane] = __shfl_sync(kFull, lane, 0);
  else
    out[lane] = __shfl_sync(kFull, lane, 0);
}

__global__ void ballot_vs_all_kernel(unsigned* out) {
  const int lane = threadIdx.x;
  if (lane < 16)
    out[lane] = __ballot_sync(kFull, 1);
  else
    out[lane] = static_cast<unsigned>(__all_sync(kFull, 0));
}

__global__ void match_any_vs_all_kernel(unsigned* out) {
  const int lane = threadIdx.x;
  int pred = 0;
  if (lane < 16)
    out[lane] = __match_any_sync(kFull, 1u);
  else
    out[lane] = __match_all_sync(kFull, 1u, &pred);
}

__global__ void uninitialised_counter_kernel(unsigned* out) {
  BARACUDA_SHARED(unsigned, counter);  // the bug: nothing initialises it
  if (threadIdx.x == 0) out[0] = counter;
  __syncthreads();
  atomicAdd(&counter, 1u);
  __syncthreads();
  if (threadIdx.x == 0) out[1] = counter;
}

__global__ void block_order_kernel(int* order, int* ticket) { order[blockIdx.x] = atomicAdd(ticket, 1); }

__global__ void dependent_blocks_kernel(int* out) {
  const int b = static_cast<int>(blockIdx.x);
  out[b] = b == 0 ? 1 : out[b - 1] + 1;  // the bug: nothing orders block b after block b - 1
}

__global__ void barrier_per_branch_kernel(int* out) {
  if (threadIdx.x < 32)
    __syncthreads();
  else
    __syncthreads();
  out[threadIdx.x] = 1;
}

__global__ void barrier_count_kernel(int* out) {
  const int warp = static_cast<int>(threadIdx.x / 32);
  for (int i = 0; i < warp; ++i) __syncthreads();
  out[threadIdx.x] = warp;
}

__global__ void shuffle_width_kernel(int* out, int width) {
  const int lane = threadIdx.x;
  out[lane] = __shfl_sync(kFull, lane, 0, width);
}

__global__ void fns_kernel(const unsigned* mask, const unsigned* base, const int* offset, unsigned* out, int n) {
  for (int k = 0; k < n; ++k) out[k] = __fns(mask[k], base[k], offset[k]);
}

__global__ void float_atomic_add_kernel(float* global, float add, float shared_init, float* out) {
  BARACUDA_SHARED(float, s);
  s = shared_init;
  atomicAdd(global, add);
  out[1] = atomicAdd(&s, add);
  out[0] = s;
}

__global__ void cp_async_kernel(const unsigned* src, unsigned* dst, bool to_global) {
  BARACUDA_SHARED(__align__(16) unsigned, tile, [32 * 4]);
  const int lane = threadIdx.x;
  unsigned* to = to_global ? dst + lane * 4 : tile + lane * 4;
  ptx::cp_async_cg(to, src + lane * 4);
  ptx::cp_async_commit();
  ptx::cp_async_wait_all();
  __syncwarp();
  if (!to_global)
    for (int k = 0; k < 4; ++k) dst[lane * 4 + k] = tile[lane * 4 + k];
}

__global__ void neighbour_kernel(int* out, bool with_syncwarp) {
  BARACUDA_SHARED(int, slot, [32]);
  const int lane = threadIdx.x;
  slot[lane] = lane;
  const int v = __shfl_sync(kFull, lane, 0);  // a collective, but not a memory fence
  if (with_syncwarp) __syncwarp();
  out[lane] = slot[(lane + 1) % 32] + v;
}

__global__ void partly_written_kernel(int* out, bool initialise_all) {
  BARACUDA_SHARED(int, slot, [64]);
  const int t = threadIdx.x;
  if (initialise_all || t % 2 == 0) slot[t] = t;
  __syncthreads();
  out[t] = slot[t ^ 1];
}

__global__ void busy_kernel(long long ns, int* out) {
  const long long t0 = clock64();
  while (clock64() - t0 < ns) {
  }
  out[0] = 1;
}

}  // namespace fidelity
BARACUDA_DEVICE_NAMESPACE_END

namespace simtest {

namespace k = ::baracuda::fidelity;

LaunchError activemask_per_branch(unsigned* out) { return launch(1, 32, k::activemask_per_branch_kernel, out); }
LaunchError aggregated_atomic_per_branch(int* counts, int* arms) {
  return launch(1, 32, k::aggregated_atomic_kernel, counts, arms);
}
LaunchError shuffle_across_branches(int* out) { return launch(1, 32, k::shuffle_across_branches_kernel, out); }
LaunchError ballot_vs_all(unsigned* out) { return launch(1, 32, k::ballot_vs_all_kernel, out); }
LaunchError match_any_vs_all(unsigned* out) { return launch(1, 32, k::match_any_vs_all_kernel, out); }
LaunchError uninitialised_shared_counter(unsigned* out) {
  return launch(1, 32, k::uninitialised_counter_kernel, out);
}
LaunchError block_order(int* order, int* ticket, int blocks) {
  return launch(blocks, 1, k::block_order_kernel, order, ticket);
}
LaunchError blocks_depending_on_each_other(int* out, int blocks) {
  return launch(blocks, 1, k::dependent_blocks_kernel, out);
}
LaunchError barrier_per_branch(int* out) { return launch(1, 64, k::barrier_per_branch_kernel, out); }
LaunchError barrier_count_per_warp(int* out) { return launch(1, 96, k::barrier_count_kernel, out); }
LaunchError shuffle_width(int* out, int width) { return launch(1, 32, k::shuffle_width_kernel, out, width); }
LaunchError fns(const unsigned* mask, const unsigned* base, const int* offset, unsigned* out, int n) {
  return launch(1, 1, k::fns_kernel, mask, base, offset, out, n);
}
LaunchError cp_async_destination(const unsigned* src, unsigned* dst, bool to_global) {
  return launch(1, 32, k::cp_async_kernel, src, dst, to_global);
}
LaunchError neighbour_after_shuffle(int* out, bool with_syncwarp) {
  return launch(1, 32, k::neighbour_kernel, out, with_syncwarp);
}
LaunchError partly_written_shared(int* out, bool initialise_all) {
  return launch(1, 64, k::partly_written_kernel, out, initialise_all);
}
LaunchError busy_for(int ms, int* out) { return launch(1, 1, k::busy_kernel, 1000000LL * ms, out); }
LaunchError float_atomic_add(float* global, float add, float shared_init, float* out) {
  return launch(1, 1, k::float_atomic_add_kernel, global, add, shared_init, out);
}

}  // namespace simtest
