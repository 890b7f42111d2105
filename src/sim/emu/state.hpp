/// \file
/// \brief The per-worker "current thread" state behind threadIdx, blockIdx, blockDim, gridDim and dynamic shared
/// memory, and the scheduler entry points that the device API calls. Internal to the emulator.
#pragma once

#include <cuda_runtime.h>  // uint3, dim3

#include <cstddef>
#include <cstdint>

namespace baracuda::simt::detail {

class BlockExec;
struct ThreadRec;

/// Rewritten by the scheduler on every fiber switch (thread_idx, thread) and once per block (the rest).
/// All fibers of a block run on one worker thread, so a thread_local is exactly the right scope.
struct CurrentState {
  uint3 thread_idx{0, 0, 0};
  uint3 block_idx{0, 0, 0};
  dim3 block_dim{1, 1, 1};
  dim3 grid_dim{1, 1, 1};
  ThreadRec* thread = nullptr;
  BlockExec* block = nullptr;  ///< null outside a kernel
  unsigned char* dynamic_smem = nullptr;
  std::size_t dynamic_smem_bytes = 0;  ///< the launch's dynamic shared memory size
  std::uint64_t block_serial = 0;      ///< distinct for every block this worker runs (per-thread side state)
};

// The TLS model is left to the compiler (local-exec in executables, general-dynamic relaxed by the linker in
// -fPIC code). Forcing initial-exec breaks UBSan builds: GCC 12 tests the flags of an
// `add t_cur@gottpoff(%rip)` that the linker rewrites into a flag-less `lea`.
inline thread_local CurrentState t_cur;

enum class BarrierOp : int { Plain, Count, And, Or };

/// __syncthreads*: blocks the calling thread until every live (not exited) thread of the block arrived.
/// Returns the number of arrived threads whose predicate was non-zero (Plain/Count), or the and/or.
int barrier(int predicate, BarrierOp op);
/// Lets the other threads of the block run (used by __nanosleep and by failing atomicCAS).
void yield();
/// Records `what` as the launch error and abandons the launch (the rest of the grid is skipped).
[[noreturn]] void trap(const char* what);
/// __activemask: waits until every other lane of the calling warp has exited or is blocked (barrier,
/// warp collective, __activemask, __nanosleep), then returns the lanes waiting in __activemask.
unsigned active_mask();

}  // namespace baracuda::simt::detail
