/// \file
/// \brief The per-worker "current thread" state behind threadIdx, blockIdx, blockDim, gridDim and dynamic shared
/// memory, and the scheduler entry points that the device API calls. Internal to the emulator.
#pragma once

#include <cuda_runtime.h>  // uint3, dim3

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace baracuda::simt {

/// Where a device call was made: the file, line and (with clang) column of the call expression. A defaulted
/// `CallSite site = {}` parameter records its caller's location: the builtins in the constructor's default
/// arguments name the outermost call that used them (clang and GCC; GCC has no column, so two calls on one
/// line are one site there).
struct CallSite {
  const char* file;
  unsigned line;
  unsigned column;

#if defined(__clang__)
  constexpr CallSite(const char* f = __builtin_FILE(), unsigned l = __builtin_LINE(), unsigned c = __builtin_COLUMN())
#else
  constexpr CallSite(const char* f = __builtin_FILE(), unsigned l = __builtin_LINE(), unsigned c = 0)
#endif
      : file(f), line(l), column(c) {
  }
  friend bool operator==(const CallSite& a, const CallSite& b) {
    return a.line == b.line && a.column == b.column && (a.file == b.file || std::strcmp(a.file, b.file) == 0);
  }
  /// "file:line".
  std::string str() const { return std::string(file) + ":" + std::to_string(line); }
};

}  // namespace baracuda::simt

namespace baracuda::simt::detail {

class BlockExec;
class MemCheck;
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
  MemCheck* memcheck = nullptr;        ///< initcheck/racecheck of the running block (null: off, or paused)
  MemCheck* paused = nullptr;          ///< the checker that the outermost MemcheckPause holds
};

// The TLS model is left to the compiler (local-exec in executables, general-dynamic relaxed by the linker in
// -fPIC code). Forcing initial-exec breaks UBSan builds: GCC 12 tests the flags of an
// `add t_cur@gottpoff(%rip)` that the linker rewrites into a flag-less `lea`.
inline thread_local CurrentState t_cur;

enum class BarrierOp : int { Plain, Count, And, Or };

/// __syncthreads*: blocks the calling thread until every live (not exited) thread of the block arrived.
/// Returns the number of arrived threads whose predicate was non-zero (Plain/Count), or the and/or. `site`
/// is the call's source location: synccheck reports one barrier reached from two call sites.
int barrier(int predicate, BarrierOp op, const CallSite& site);
/// Lets the other threads of the block run (used by __nanosleep and by failing atomicCAS).
void yield();
/// Records `what` as the launch error and abandons the launch (the rest of the grid is skipped).
[[noreturn]] void trap(const char* what);
/// __activemask: waits until every other lane of the calling warp has exited or is blocked (barrier,
/// warp collective, __activemask, __nanosleep), then returns the lanes waiting in __activemask at the same
/// call site (`site`): the two sides of a divergent branch are not converged.
unsigned active_mask(const CallSite& site);

/// Registers a static shared variable (BARACUDA_SHARED) of the calling worker thread's copy: it is filled
/// with the poison byte now and at the start of every block this worker runs. Returns true.
bool register_shared(void* p, std::size_t bytes);
/// Whether [p, p + bytes) lies in the running block's shared memory (dynamic, or a registered static
/// variable). False outside a kernel.
bool in_shared(const void* p, std::size_t bytes);
/// The byte that fills shared memory before a block runs ("uninitialized").
inline constexpr unsigned char kSharedPoison = 0xCD;

/// Bytes an emulated instruction read for the running thread, for racecheck alone (an ldmatrix row): initcheck would
/// report rows written by struct copies, which the instrumentation does not see.
void note_race_read(const void* p, std::size_t bytes);
/// cp.async of the running thread (async_copies.hpp): the copy of the first src_bytes (clamped to [0, cp_size]) bytes
/// of `src` into `dst`, the rest of its cp_size bytes zero, lands at the thread's wait_group that retires its group,
/// at wait_all, or at its exit (outside a kernel: at once). Strict mode reports a destination outside shared memory
/// and a source inside it.
void cp_async_issue(void* dst, const void* src, int cp_size, int src_bytes);
/// cp.async.commit_group of the running thread.
void cp_async_commit();
/// cp.async.wait_group n of the running thread; n < 0: cp.async.wait_all.
void cp_async_wait(int n);
/// The running thread completed a wait on an mbarrier phase (racecheck's acquire; memcheck.hpp).
void note_mbarrier_acquire();
/// An atomic operation of the running thread on `p` (racecheck: on global memory, a release and an acquire).
void note_atomic_slow(const void* p);
inline void note_atomic(const void* p) {
  if (t_cur.memcheck != nullptr) note_atomic_slow(p);
}

/// Pauses initcheck/racecheck while an emulated instruction's own code runs (its loads and stores are not
/// the kernel's, and its state, shared by the CUDA threads, is not global memory). Pauses nest.
class MemcheckPause {
 public:
  MemcheckPause() : saved_(t_cur.memcheck), outer_(t_cur.paused) {
    if (saved_ != nullptr) t_cur.paused = saved_;
    t_cur.memcheck = nullptr;
  }
  ~MemcheckPause() {
    t_cur.memcheck = saved_;
    t_cur.paused = outer_;
  }
  MemcheckPause(const MemcheckPause&) = delete;
  MemcheckPause& operator=(const MemcheckPause&) = delete;
  /// Shared-memory bytes an emulated instruction wrote (TMA, whose completion is an mbarrier's): written, for the
  /// paused checker's initcheck.
  void note_written(const void* p, std::size_t bytes) const;

 private:
  MemCheck* saved_;
  MemCheck* outer_;
};

/// Records a strict-mode violation of the calling CUDA thread (no effect unless strict mode is on); `key`
/// limits it to one report per warp and block.
void strict_violation(const char* key, const std::string& what);

}  // namespace baracuda::simt::detail
