/// \file
/// \brief Launchers of the fidelity probes (fidelity_kernels.cu): kernels written as a user would write them,
/// each showing one place where the emulator must behave as the CUDA C++ Programming Guide and the PTX ISA
/// say (test_fidelity.cpp cites the section of each).
#pragma once

#include "sim/launch_error.hpp"

namespace simtest {

using baracuda::launch::LaunchError;

/// One warp: lanes 0-15 write __activemask() (one call site) to out[lane], lanes 16-31 write it from another
/// call site in the else branch.
LaunchError activemask_per_branch(unsigned* out);

/// One warp, the warp-aggregated atomic in both arms of a branch (lanes 0-15 / 16-31): each arm's leader
/// adds the popcount of its __activemask() to counts[arm]; every lane writes its arm to arms[lane].
LaunchError aggregated_atomic_per_branch(int* counts, int* arms);

/// One warp: lanes 0-15 call __shfl_sync(0xffffffff, lane, 0) in the if, lanes 16-31 the same shuffle in
/// the else (another call site); out[lane] = the result.
LaunchError shuffle_across_branches(int* out);

/// One warp: lanes 0-15 call __ballot_sync(0xffffffff, 1), lanes 16-31 __all_sync(0xffffffff, 0);
/// out[lane] = the result.
LaunchError ballot_vs_all(unsigned* out);

/// One warp: lanes 0-15 call __match_any_sync(0xffffffff, 1), lanes 16-31 __match_all_sync(0xffffffff, 1);
/// out[lane] = the result.
LaunchError match_any_vs_all(unsigned* out);

/// One block of 32: thread 0 writes a static __shared__ counter's value before anything stored to it to
/// out[0], then every thread adds 1 to it (atomically) and thread 0 writes the sum to out[1].
LaunchError uninitialised_shared_counter(unsigned* out);

/// `blocks` blocks of one thread: order[block] = atomicAdd(ticket, 1), the order in which blocks ran.
LaunchError block_order(int* order, int* ticket, int blocks);

/// `blocks` blocks of one thread, each depending on its predecessor's output without synchronisation:
/// out[0] = 1, out[b] = out[b - 1] + 1.
LaunchError blocks_depending_on_each_other(int* out, int blocks);

/// 64 threads: threads 0-31 call __syncthreads() in the if, 32-63 another __syncthreads() in the else.
LaunchError barrier_per_branch(int* out);

/// 96 threads: warp w calls __syncthreads() w times (in a loop), then exits.
LaunchError barrier_count_per_warp(int* out);

/// One warp: __shfl_sync(0xffffffff, lane, 0, width) with a width that is not a power of two.
LaunchError shuffle_width(int* out, int width);

/// out[k] = __fns(mask[k], base[k], offset[k]) for k < n (one thread).
LaunchError fns(const unsigned* mask, const unsigned* base, const int* offset, unsigned* out, int n);

/// One thread: global[0] = atomicAdd on global memory of add to global[0]'s value; the same on a shared
/// float initialised to shared_init, whose result goes to out[0] (out[1] = the old value returned).
LaunchError float_atomic_add(float* global, float add, float shared_init, float* out);

/// One warp: each lane copies 16 bytes of src (global) with cp.async into shared memory (to_global false)
/// or, wrongly, into dst (global memory), then waits; dst[lane] gets the copied words either way.
LaunchError cp_async_destination(const unsigned* src, unsigned* dst, bool to_global);

/// One warp: each lane writes its lane id to a shared slot, exchanges a value by __shfl_sync, then (after a
/// __syncwarp only if with_syncwarp) reads its neighbour's slot: out[lane] = slot[(lane + 1) % 32].
LaunchError neighbour_after_shuffle(int* out, bool with_syncwarp);

/// One block of 64: every thread reads slot[t] of a shared array that only the even threads wrote
/// (initialise_all: every thread writes first); out[t] = the value read.
LaunchError partly_written_shared(int* out, bool initialise_all);

/// One thread computes (spins on clock64) for `ms` milliseconds of wall time, then writes out[0] = 1.
LaunchError busy_for(int ms, int* out);

}  // namespace simtest
