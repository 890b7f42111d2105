/// \file
/// \brief Internal to the runtime: a launch in flight (LaunchJob), a worker thread's state (Worker) and the block
/// executor (BlockExec) that runs the CUDA threads of one block as fibers on one worker.
///
/// Scheduling model. Threads are visited in a per-block order (fwd, rev or a seeded permutation). A thread
/// runs until it blocks (barrier, warp collective), yields (__nanosleep) or exits; then the next runnable
/// thread after it in that order (cyclically) runs. Threads that have not started yet are runnable, and
/// are started lazily: a fiber whose thread exits goes straight on with the next unstarted thread, so a
/// block without barriers runs on a single fiber (the fast path) in exactly the order of the schedule.
/// When no thread is runnable and some are live, the block is deadlocked: it is abandoned and reported.
#pragma once

#include <time.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "async_copies.hpp"
#include "fiber.hpp"
#include "memcheck.hpp"
#include "runtime.hpp"
#include "state.hpp"
#include "warp.hpp"

namespace baracuda::simt::detail {

/// Errors of one launch. Thread-safe.
class ErrorSink {
 public:
  void add(int code, std::string message);
  bool empty() const { return count_.load(std::memory_order_relaxed) == 0; }
  launch::LaunchError take();

 private:
  static constexpr std::size_t kMaxMessages = 16;
  std::mutex mu_;
  std::atomic<std::size_t> count_{0};
  int code_ = 0;
  std::vector<std::string> messages_;
};

struct LaunchJob {
  dim3 grid;
  dim3 block;
  std::size_t smem = 0;
  const KernelThunk* kernel = nullptr;
  Schedule schedule;
  bool strict = false;
  unsigned checks = 0;  ///< Check bits
  std::uint64_t generation = 0;  ///< 1, 2, ... per launch of the process (racecheck's launch of an access)
  std::uint64_t order_key = 0;  ///< rand: the block permutation's key (block_at)
  std::uint64_t nblocks = 0;
  unsigned nthreads = 0;  ///< per block
  alignas(64) std::atomic<std::uint64_t> next_block{0};  ///< tickets; block_at maps one to a block
  alignas(64) std::atomic<bool> abort{false};
  ErrorSink errors;
};

enum class TState : std::uint8_t { Unstarted, Ready, Running, Barrier, Collective, Exited };

struct ThreadRec {
  uint3 tid{};
  TState state = TState::Unstarted;
  bool coll_claimed = false;  ///< its group is complete; waiting for the group's op to run
  bool coll_leader = false;   ///< woken to run its group's op
  bool yielded = false;       ///< Ready because it called __nanosleep (counts as blocked for __activemask)
  std::uint16_t lane = 0;
  std::uint16_t warp = 0;
  std::uint32_t pos = 0;  ///< position in the schedule order
  Fiber* fiber = nullptr;
  int bar_count = 0;  ///< results of the last barrier it passed
  int bar_total = 0;
  unsigned am_result = 0;  ///< result of its last __activemask
  unsigned coll_mask = 0;  ///< requested mask
  unsigned coll_eff = 0;   ///< effective group: (mask | self) & ~exited
  const void* coll_tag = nullptr;
  const char* coll_name = nullptr;
  const void* coll_in = nullptr;
  void* coll_out = nullptr;
  bool coll_any_site = false;  ///< the collective rendezvouses across call sites (__syncwarp)
  bool coll_fence = false;     ///< the collective orders the lanes' memory accesses (__syncwarp)
  CallSite coll_site{nullptr, 0, 0};
  unsigned bar_passed = 0;  ///< barriers passed (synccheck)
  std::uint64_t am_path = 0;  ///< __activemask: a hash of the call's return addresses (the path to it)
};

struct WarpRec {
  unsigned exited = 0;      ///< exited or absent lanes
  unsigned waiting = 0;     ///< lanes in a warp collective
  unsigned am_waiting = 0;  ///< lanes in __activemask
};

struct Worker;

class BlockExec {
 public:
  /// Runs block `linear_block` of `job` to completion (or abandons it). Called on the worker's own stack.
  void run(Worker& w, LaunchJob& job, std::uint64_t linear_block);

  // Device entry points, called from the running CUDA thread.
  int barrier(int predicate, BarrierOp op, const CallSite& site);
  void yield();
  [[noreturn]] void trap(const char* what);
  WarpGroup* collective_arrive(unsigned mask, const void* in, void* out, const void* tag, const char* name,
                               const CallSite* site, bool fence);
  void collective_finish(const WarpGroup& g);
  unsigned active_mask(const CallSite& site);
  /// Strict-mode reports, at most one per (warp, key) and block.
  void violation(const ThreadRec* th, const char* key, const std::string& what);
  void violation_in_warp(int warp, const std::string& what);
  bool strict() const { return job_->strict; }
  /// synccheck's reports (when it is on), at most one per key and block.
  void sync_violation(const char* key, const std::string& what);
  /// initcheck's and racecheck's reports, at most one per key and block.
  void memcheck_report(const char* key, const std::string& what) { report(-1, key, what); }
  /// "block (x,y,z) thread (x,y,z) (linear i, warp w lane l)" of linear thread `i`.
  std::string thread_label(unsigned i) const { return thread_name(&threads_[i]); }

  /// Entry of every fiber: runs unstarted threads back to back until one blocks.
  static void fiber_entry(bctx::transfer_t t);

 private:
  [[noreturn]] void runner_loop(Fiber* self);
  ThreadRec* thread_exited(ThreadRec* th);
  ThreadRec* pick_next(const ThreadRec* from) const;
  void block_current(ThreadRec* th);
  void switch_from(Fiber* self, ThreadRec* next, bool progress = true);
  void enter(ThreadRec* next, bool progress = true);
  void release_barrier();
  bool try_complete(ThreadRec* th);
  unsigned check_activemask(int warp);
  void fill_group(const ThreadRec* th, WarpGroup& g);
  /// Records the error and drops the block: its fibers are never resumed, so the message is moved out
  /// of the caller's frame (whose destructors will not run) before the switch.
  [[noreturn]] void abandon(Fiber* self, int code, std::string&& message);
  std::string describe_deadlock() const;
  std::string block_name() const;
  std::string thread_name(const ThreadRec* th) const;
  void shuffle_order();
  void report(int warp, const char* key, const std::string& what);

  Worker* w_ = nullptr;
  LaunchJob* job_ = nullptr;
  std::uint64_t linear_block_ = 0;
  unsigned n_ = 0;
  unsigned live_ = 0;
  unsigned runnable_ = 0;  ///< Ready + Unstarted
  unsigned bar_arrived_ = 0;
  unsigned bar_count_ = 0;
  CallSite bar_site_{nullptr, 0, 0};  ///< the current barrier's first arrival's call site
  unsigned bar_generation_ = 0;       ///< barriers released in this block
  const ThreadRec* short_exit_ = nullptr;  ///< the exited thread that passed the fewest barriers (but some)
  bool abandoned_ = false;
  std::uint64_t rng_ = 0;
  std::vector<ThreadRec> threads_;
  std::vector<std::uint32_t> order_;
  std::vector<WarpRec> warps_;
  WarpGroup group_;  ///< the group whose op is running (ops never block, so one is enough)
  bool group_fence_ = false;             ///< the running op orders memory (__syncwarp)
  MemCheck* paused_memcheck_ = nullptr;  ///< memcheck, paused while the op runs
  std::vector<std::pair<int, std::string>> reported_;  ///< strict-mode reports of this block (warp, key)
};

/// Per-worker-thread state, created on first use and kept for the thread's lifetime.
struct Worker {
  explicit Worker(std::size_t stack_bytes);
  ~Worker();

  FiberPool fibers;
  Fiber main;
  BlockExec exec;
  MemCheck memcheck;
  AsyncCopies copies;       ///< the running block's cp.async copies in flight
  void* closure = nullptr;  ///< this worker's cache-line-aligned copy of the kernel and its arguments
  std::size_t closure_cap = 0;
  unsigned char* smem = nullptr;
  /// This worker's static shared variables (BARACUDA_SHARED), poisoned at the start of every block.
  std::vector<std::pair<unsigned char*, std::size_t>> static_shared;
  // Thread-local statistics, folded into the global ones at the end of each launch.
  std::uint64_t n_blocks = 0, n_threads = 0, n_switches = 0;
  // Read by the watchdog thread.
  alignas(64) std::atomic<std::uint64_t> progress{0};
  std::atomic<bool> busy{false};
  std::atomic<std::uint64_t> cur_block{0};
  clockid_t cpu_clock{};  ///< this worker thread's CPU-time clock
  std::atomic<std::uint32_t> cur_thread{0};

  void tick() { progress.store(progress.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }
};

Worker& this_worker();

/// The block that ticket `t` (0, 1, ... in the order workers take them) runs under the job's schedule:
/// fwd in launch order, rev backwards, rand a permutation keyed by the seed.
std::uint64_t block_at(const LaunchJob& job, std::uint64_t t);

}  // namespace baracuda::simt::detail
