#include "scheduler.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>

#include <execinfo.h>

namespace baracuda::simt::detail {

namespace {

std::string hex(unsigned v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

std::string xyz(unsigned x, unsigned y, unsigned z) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "(%u,%u,%u)", x, y, z);
  return buf;
}

std::uint64_t splitmix64(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

template <class F>
void for_each_lane(unsigned mask, F&& f) {
  while (mask) {
    const int l = __builtin_ctz(mask);
    mask &= mask - 1;
    f(l);
  }
}

bool same_name(const char* a, const char* b) { return a == b || (a != nullptr && b != nullptr && !std::strcmp(a, b)); }

// Two lanes are in the same collective: the same operation (Op type and name) from the same call site, or
// both in a collective that rendezvouses across call sites.
bool same_call(const ThreadRec& a, const ThreadRec& b) {
  return a.coll_tag == b.coll_tag && same_name(a.coll_name, b.coll_name) && a.coll_any_site == b.coll_any_site &&
         (a.coll_any_site || a.coll_site == b.coll_site);
}

// The path to the caller: a hash of the return addresses on its stack. Two sides of a branch that call the same
// device function reach one call site by two paths (on the GPU, two copies of the inlined function).
std::uint64_t path_hash() {
  void* frames[32];
  const int n = backtrace(frames, 32);
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (int i = 0; i < n; ++i) h = (h ^ reinterpret_cast<std::uintptr_t>(frames[i])) * 0x100000001b3ull;
  return h;
}

std::string call_name(const ThreadRec& r) {
  return r.coll_any_site ? std::string(r.coll_name) : std::string(r.coll_name) + " at " + r.coll_site.str();
}

}  // namespace

// ------------------------------------------------------------------------------------------------
// Block lifecycle
// ------------------------------------------------------------------------------------------------

void BlockExec::run(Worker& w, LaunchJob& job, std::uint64_t linear_block) {
  w_ = &w;
  job_ = &job;
  linear_block_ = linear_block;
  const dim3 B = job.block, G = job.grid;
  n_ = job.nthreads;
  live_ = n_;
  runnable_ = n_;
  bar_arrived_ = bar_count_ = 0;
  bar_generation_ = 0;
  short_exit_ = nullptr;
  abandoned_ = false;
  reported_.clear();

  threads_.resize(n_);
  for (unsigned i = 0; i < n_; ++i) {
    ThreadRec& r = threads_[i];
    r = ThreadRec{};
    r.tid = uint3{i % B.x, (i / B.x) % B.y, i / (B.x * B.y)};
    r.lane = static_cast<std::uint16_t>(i & 31u);
    r.warp = static_cast<std::uint16_t>(i >> 5);
  }
  const unsigned nwarps = (n_ + 31) / 32;
  warps_.assign(nwarps, WarpRec{});
  if (n_ % 32 != 0) warps_[nwarps - 1].exited = ~0u << (n_ % 32);  // lanes that do not exist

  order_.resize(n_);
  switch (job.schedule.kind) {
    case ScheduleKind::Forward:
      std::iota(order_.begin(), order_.end(), 0u);
      break;
    case ScheduleKind::Reverse:
      for (unsigned i = 0; i < n_; ++i) order_[i] = n_ - 1 - i;
      break;
    case ScheduleKind::Random:
      std::iota(order_.begin(), order_.end(), 0u);
      rng_ = job.schedule.seed * 0x2545f4914f6cdd1dull + linear_block;  // same order whichever worker runs it
      shuffle_order();
      break;
  }
  for (unsigned p = 0; p < n_; ++p) threads_[order_[p]].pos = p;

  CurrentState& c = t_cur;
  c.block_idx = uint3{static_cast<unsigned>(linear_block % G.x), static_cast<unsigned>((linear_block / G.x) % G.y),
                      static_cast<unsigned>(linear_block / (static_cast<std::uint64_t>(G.x) * G.y))};
  c.block_dim = B;
  c.grid_dim = G;
  c.block = this;
  c.dynamic_smem = w.smem;
  c.dynamic_smem_bytes = job.smem;
  static thread_local std::uint64_t block_serial = 0;
  c.block_serial = ++block_serial;
  // "Uninitialized" shared memory, dynamic and static, at every block.
  if (job.smem != 0) std::memset(w.smem, kSharedPoison, job.smem);
  for (const auto& [p, bytes] : w.static_shared) std::memset(p, kSharedPoison, bytes);
  w.copies.begin_block(n_);
  if ((job.checks & (kInitCheck | kRaceCheck)) != 0) {
    w.memcheck.begin_block(job, w, *this, n_, c.block_serial, linear_block);
    c.memcheck = &w.memcheck;
  }
  w.cur_block.store(linear_block, std::memory_order_relaxed);
  ++w.n_blocks;
  w.n_threads += n_;

  ThreadRec* first = &threads_[order_[0]];
  first->fiber = w.fibers.acquire(&fiber_entry);
  enter(first);
  ++w.n_switches;
  w.fibers.switch_to(&w.main, first->fiber);

  // Back on the worker's own stack: every thread exited, or the block was abandoned.
  if (abandoned_) {
    for (ThreadRec& r : threads_) {
      if (r.fiber != nullptr && r.state != TState::Exited) w.fibers.release_abandoned(r.fiber);
      r.fiber = nullptr;
    }
  }
  c.thread = nullptr;
  c.block = nullptr;
  c.memcheck = nullptr;
  c.paused = nullptr;  // an abandoned thread may have left a pause that never ended
  c.dynamic_smem = nullptr;
  c.dynamic_smem_bytes = 0;
}

BARACUDA_SIM_NO_ASAN void BlockExec::fiber_entry(bctx::transfer_t t) {
  BlockExec* self = t_cur.block;
  Fiber* f = t_cur.thread->fiber;
  self->w_->fibers.entered(t, f);
  self->runner_loop(f);
}

BARACUDA_SIM_NO_ASAN void BlockExec::runner_loop(Fiber* self) {
  for (;;) {
    job_->kernel->invoke(w_->closure);
    ThreadRec* next = thread_exited(t_cur.thread);
    if (next != nullptr && next->state == TState::Unstarted) {
      // Fast path: run the next thread of the schedule on this same fiber, without a switch.
      next->fiber = self;
      enter(next);
      continue;
    }
    self->exiting = true;  // whoever resumes returns this fiber to the pool
    ++w_->n_switches;
    if (next != nullptr) {
      enter(next);
      w_->fibers.switch_to(self, next->fiber);
    } else {
      w_->fibers.switch_to(self, &w_->main);
    }
    std::abort();  // an exiting fiber is never resumed
  }
}

// `progress` is false for switches caused by __nanosleep: threads that only yield to each other make no
// progress, and the watchdog must still see them.
BARACUDA_SIM_INLINE void BlockExec::enter(ThreadRec* next, bool progress) {
  next->state = TState::Running;
  --runnable_;
  t_cur.thread = next;
  t_cur.thread_idx = next->tid;
  if (progress) w_->tick();
  w_->cur_thread.store(static_cast<std::uint32_t>(next - threads_.data()), std::memory_order_relaxed);
}

BARACUDA_SIM_INLINE ThreadRec* BlockExec::pick_next(const ThreadRec* from) const {
  if (runnable_ == 0) return nullptr;
  for (unsigned k = 1; k <= n_; ++k) {
    unsigned p = from->pos + k;
    if (p >= n_) p -= n_;
    ThreadRec* r = const_cast<ThreadRec*>(&threads_[order_[p]]);
    if (r->state == TState::Ready || r->state == TState::Unstarted) return r;
  }
  return nullptr;
}

BARACUDA_SIM_INLINE void BlockExec::switch_from(Fiber* self, ThreadRec* next, bool progress) {
  if (next->state == TState::Unstarted) next->fiber = w_->fibers.acquire(&fiber_entry);
  enter(next, progress || next->state == TState::Unstarted);
  ++w_->n_switches;
  w_->fibers.switch_to(self, next->fiber);
  // Resumed: whoever switched back to us has set t_cur.
}

BARACUDA_SIM_INLINE void BlockExec::block_current(ThreadRec* th) {
  check_activemask(th->warp);
  ThreadRec* next = pick_next(th);
  if (next == nullptr) abandon(th->fiber, cudaErrorLaunchTimeout, describe_deadlock());
  switch_from(th->fiber, next);
}

void BlockExec::abandon(Fiber* self, int code, std::string&& message) {
  job_->errors.add(code, std::move(message));
  job_->abort.store(true, std::memory_order_relaxed);
  abandoned_ = true;
  ++w_->n_switches;
  w_->fibers.switch_to(self, &w_->main);
  std::abort();  // an abandoned block is never resumed
}

ThreadRec* BlockExec::thread_exited(ThreadRec* th) {
  // Its copies still land (a GPU completes them), but nothing waited for them: bandwidth spent for nothing, or a
  // missing wait.
  if (const std::size_t n = w_->copies.land(th->warp * 32u + th->lane, -1, t_cur.memcheck); n != 0)
    violation(th, "cp.async-exit",
              "exited with " + std::to_string(n) + (n == 1 ? " cp.async copy" : " cp.async copies") +
                  " that no wait_group retired");
  th->state = TState::Exited;
  th->fiber = nullptr;
  --live_;
  if (th->bar_passed != 0 && (short_exit_ == nullptr || th->bar_passed < short_exit_->bar_passed)) short_exit_ = th;
  WarpRec& w = warps_[th->warp];
  const unsigned bit = 1u << th->lane;
  w.exited |= bit;
  if (w.waiting != 0) {
    // Lanes waiting in a collective whose group names the exited lane: drop it from their group, which may
    // complete the group; then its first lane is woken to run the op.
    const unsigned base = th->warp * 32u;
    unsigned affected = 0, mask = 0;
    const char* name = nullptr;
    for_each_lane(w.waiting, [&](int l) {
      ThreadRec& r = threads_[base + l];
      if (!r.coll_claimed && (r.coll_eff & bit) != 0) {
        r.coll_eff &= ~bit;
        affected |= 1u << l;
        name = r.coll_name;
        mask = r.coll_mask;
      }
    });
    if (affected != 0) {
      violation(th, "exited",
                std::string(name) + ": mask " + hex(mask) + " names exited or nonexistent lanes " + hex(bit) +
                    " (lane " + std::to_string(th->lane) + " exited while lanes " + hex(affected) + " waited for it)");
      for_each_lane(affected, [&](int l) {
        ThreadRec& r = threads_[base + l];
        if (!r.coll_claimed && try_complete(&r)) {
          r.coll_leader = true;
          r.state = TState::Ready;
          ++runnable_;
        }
      });
    }
  }
  if (bar_arrived_ != 0 && bar_arrived_ == live_) release_barrier();
  check_activemask(th->warp);
  if (live_ == 0) return nullptr;
  ThreadRec* next = pick_next(th);
  if (next == nullptr) {
    job_->errors.add(cudaErrorLaunchTimeout, describe_deadlock());
    job_->abort.store(true, std::memory_order_relaxed);
    abandoned_ = true;
  }
  return next;
}

// ------------------------------------------------------------------------------------------------
// Barrier and yield
// ------------------------------------------------------------------------------------------------

BARACUDA_SIM_INLINE int BlockExec::barrier(int predicate, BarrierOp op, const CallSite& site) {
  ThreadRec* th = t_cur.thread;
  if (bar_arrived_ == 0)
    bar_site_ = site;
  else if ((job_->checks & kSyncCheck) != 0 && !(site == bar_site_))
    sync_violation("barrier-site", thread_name(th) + " reached __syncthreads at " + site.str() +
                                       " while other threads wait at __syncthreads at " + bar_site_.str() +
                                       ": one barrier reached from two call sites (the Guide allows __syncthreads "
                                       "in conditional code only if the condition is the same for the whole block)");
  ++bar_arrived_;
  if (predicate != 0) ++bar_count_;
  th->state = TState::Barrier;
  if (bar_arrived_ == live_) {
    release_barrier();
    th->state = TState::Running;
    --runnable_;
  } else {
    block_current(th);
  }
  switch (op) {
    case BarrierOp::And: return th->bar_count == th->bar_total ? 1 : 0;
    case BarrierOp::Or: return th->bar_count > 0 ? 1 : 0;
    default: return th->bar_count;
  }
}

void BlockExec::release_barrier() {
  const int count = static_cast<int>(bar_count_), total = static_cast<int>(bar_arrived_);
  bar_arrived_ = bar_count_ = 0;
  ++bar_generation_;
  for (ThreadRec& r : threads_) {
    if (r.state != TState::Barrier) continue;
    r.state = TState::Ready;
    r.bar_count = count;
    r.bar_total = total;
    ++r.bar_passed;
    ++runnable_;
  }
  // A thread that took part in the block's barriers and exited before this one: the warps call
  // __syncthreads different numbers of times. (Threads that exit before their first barrier are fine.)
  if ((job_->checks & kSyncCheck) != 0 && short_exit_ != nullptr && short_exit_->bar_passed < bar_generation_)
    sync_violation("barrier-count", thread_name(short_exit_) + " exited after passing " +
                                        std::to_string(short_exit_->bar_passed) +
                                        " __syncthreads barriers; the other threads passed barrier " +
                                        std::to_string(bar_generation_) + " (at " + bar_site_.str() +
                                        ") without it: the threads of the block call __syncthreads different "
                                        "numbers of times");
  if (job_->schedule.kind == ScheduleKind::Random) shuffle_order();
}

void BlockExec::shuffle_order() {
  for (unsigned i = n_; i > 1; --i) {
    const unsigned j = static_cast<unsigned>(splitmix64(rng_) % i);
    std::swap(order_[i - 1], order_[j]);
  }
  for (unsigned p = 0; p < n_; ++p) threads_[order_[p]].pos = p;
}

BARACUDA_SIM_INLINE void BlockExec::yield() {
  ThreadRec* th = t_cur.thread;
  th->state = TState::Ready;
  th->yielded = true;
  ++runnable_;
  check_activemask(th->warp);
  ThreadRec* next = pick_next(th);  // at worst th itself
  if (next == th) {
    th->state = TState::Running;
    --runnable_;
  } else {
    switch_from(th->fiber, next, next->yielded == false);
  }
  th->yielded = false;
}

void BlockExec::trap(const char* what) {
  ThreadRec* th = t_cur.thread;
  abandon(th->fiber, cudaErrorLaunchFailure, thread_name(th) + ": " + what);
}

// ------------------------------------------------------------------------------------------------
// Warp collectives
// ------------------------------------------------------------------------------------------------

BARACUDA_SIM_INLINE WarpGroup* BlockExec::collective_arrive(unsigned mask, const void* in, void* out,
                                                           const void* tag, const char* name, const CallSite* site,
                                                           bool fence) {
  ThreadRec* th = t_cur.thread;
  WarpRec& w = warps_[th->warp];
  const unsigned self = 1u << th->lane;
  if (job_->strict) {
    if ((mask & self) == 0)
      violation(th, "own", std::string(name) + ": mask " + hex(mask) + " does not contain the calling lane");
    if ((mask & w.exited & ~self) != 0)
      violation(th, "exited",
                std::string(name) + ": mask " + hex(mask) + " names exited or nonexistent lanes " + hex(mask & w.exited));
  }
  th->coll_mask = mask;
  // A lane outside its own mask cannot be waited for by the lanes it names: it runs the collective alone.
  th->coll_eff = (mask & self) != 0 ? (mask & ~w.exited) : self;
  th->coll_tag = tag;
  th->coll_name = name;
  th->coll_any_site = site == nullptr;
  th->coll_fence = fence;
  if (site != nullptr) th->coll_site = *site;
  th->coll_in = in;
  th->coll_out = out;
  th->coll_claimed = false;
  th->coll_leader = false;
  th->state = TState::Collective;
  w.waiting |= self;

  if (job_->strict) {
    const unsigned base = th->warp * 32u;
    const unsigned others = th->coll_eff & w.waiting & ~self;
    for (int l = 0; l < 32; ++l) {
      if (((others >> l) & 1u) == 0) continue;
      const ThreadRec& r = threads_[base + l];
      if (!same_call(r, *th) || r.coll_eff != th->coll_eff) {
        violation(th, "disagree",
                  "lanes disagree: this lane is in " + call_name(*th) + " with mask " + hex(mask) + ", lane " +
                      std::to_string(l) + " is in " + call_name(r) + " with mask " + hex(r.coll_mask));
        break;
      }
    }
  }

  if (try_complete(th)) {
    th->state = TState::Running;
    fill_group(th, group_);
    return &group_;
  }
  block_current(th);
  if (th->coll_leader) {  // the group was completed by a lane exiting; this lane runs the op
    th->coll_leader = false;
    fill_group(th, group_);
    return &group_;
  }
  return nullptr;
}

BARACUDA_SIM_INLINE bool BlockExec::try_complete(ThreadRec* th) {
  const WarpRec& w = warps_[th->warp];
  const unsigned group = th->coll_eff;
  if ((w.waiting & group) != group) return false;
  const unsigned base = th->warp * 32u;
  for (int l = 0; l < 32; ++l) {
    if (((group >> l) & 1u) == 0) continue;
    const ThreadRec& r = threads_[base + l];
    if (r.coll_claimed || r.coll_eff != group || !same_call(r, *th)) return false;
  }
  for_each_lane(group, [&](int l) { threads_[base + l].coll_claimed = true; });
  return true;
}

// Also pauses memcheck: the op's own loads and stores (on every lane's behalf) are not the kernel's.
BARACUDA_SIM_INLINE void BlockExec::fill_group(const ThreadRec* th, WarpGroup& g) {
  paused_memcheck_ = t_cur.memcheck;
  t_cur.memcheck = nullptr;
  group_fence_ = th->coll_fence;
  const unsigned base = th->warp * 32u;
  g.mask = th->coll_eff;
  g.requested = th->coll_mask;
  g.exited = warps_[th->warp].exited;
  g.warp = th->warp;
  g.leader = th->lane;
  for (int l = 0; l < 32; ++l) {
    const bool member = ((g.mask >> l) & 1u) != 0;
    g.in[l] = member ? threads_[base + l].coll_in : nullptr;
    g.out[l] = member ? threads_[base + l].coll_out : nullptr;
  }
}

BARACUDA_SIM_INLINE void BlockExec::collective_finish(const WarpGroup& g) {
  t_cur.memcheck = paused_memcheck_;
  if (group_fence_ && t_cur.memcheck != nullptr) t_cur.memcheck->syncwarp(g.warp, g.mask);
  WarpRec& w = warps_[g.warp];
  const unsigned base = static_cast<unsigned>(g.warp) * 32u;
  for_each_lane(g.mask, [&](int l) {
    ThreadRec& r = threads_[base + l];
    r.coll_claimed = false;
    w.waiting &= ~(1u << l);
    if (l != g.leader) {
      r.state = TState::Ready;
      ++runnable_;
    }
  });
  t_cur.thread->state = TState::Running;
}

namespace {
constexpr char kActiveMaskTag = 0;
}

// __activemask emulates maximal convergence: the caller waits until every other lane of its warp has
// exited or is blocked (barrier, collective, __activemask, __nanosleep); the lanes then waiting in
// __activemask form the result. So `if (lane < k) m = __activemask();` gives the k lanes under every
// schedule.
BARACUDA_SIM_INLINE unsigned BlockExec::active_mask(const CallSite& site) {
  ThreadRec* th = t_cur.thread;
  WarpRec& w = warps_[th->warp];
  th->state = TState::Collective;
  th->coll_tag = &kActiveMaskTag;
  th->coll_name = "__activemask";
  th->coll_any_site = false;
  th->coll_site = site;
  th->am_path = path_hash();
  th->coll_mask = th->coll_eff = 0;
  w.am_waiting |= 1u << th->lane;
  if ((check_activemask(th->warp) >> th->lane) & 1u) {
    th->state = TState::Running;
    --runnable_;
  } else {
    block_current(th);
  }
  return th->am_result;
}

BARACUDA_SIM_INLINE unsigned BlockExec::check_activemask(int warp) {
  WarpRec& w = warps_[warp];
  if (w.am_waiting == 0) return 0;
  const unsigned base = static_cast<unsigned>(warp) * 32u;
  for (int l = 0; l < 32; ++l) {
    if ((w.exited >> l) & 1u) continue;
    const ThreadRec& r = threads_[base + l];
    const bool blocked = r.state == TState::Barrier || r.state == TState::Collective ||
                         (r.state == TState::Ready && r.yielded);
    if (!blocked) return 0;
  }
  // The lanes waiting at one call site, reached by one path, are converged with each other, not with those
  // at another site or reached by another path.
  const unsigned waiting = w.am_waiting;
  w.am_waiting = 0;
  for (unsigned rest = waiting; rest != 0;) {
    const ThreadRec& first = threads_[base + static_cast<unsigned>(__builtin_ctz(rest))];
    unsigned group = 0;
    for_each_lane(rest, [&](int l) {
      const ThreadRec& r = threads_[base + l];
      if (r.coll_site == first.coll_site && r.am_path == first.am_path) group |= 1u << l;
    });
    for_each_lane(group, [&](int l) {
      ThreadRec& r = threads_[base + l];
      r.am_result = group;
      r.state = TState::Ready;
      ++runnable_;
    });
    rest &= ~group;
  }
  return waiting;
}

// ------------------------------------------------------------------------------------------------
// Diagnostics
// ------------------------------------------------------------------------------------------------

std::string BlockExec::block_name() const {
  const uint3 b = t_cur.block_idx;
  return "block " + xyz(b.x, b.y, b.z);
}

std::string BlockExec::thread_name(const ThreadRec* th) const {
  const std::size_t i = static_cast<std::size_t>(th - threads_.data());
  return block_name() + " thread " + xyz(th->tid.x, th->tid.y, th->tid.z) + " (linear " + std::to_string(i) +
         ", warp " + std::to_string(th->warp) + " lane " + std::to_string(th->lane) + ")";
}

// One report per (warp, key) and block; -1: the block.
void BlockExec::report(int warp, const char* key, const std::string& what) {
  for (const auto& r : reported_)
    if (r.first == warp && r.second == key) return;
  reported_.emplace_back(warp, key);
  job_->errors.add(cudaErrorIllegalInstruction,
                   what + " [kernel " + describe_code(job_->kernel->kernel_fn, /*function=*/true) + "]");
}

void BlockExec::violation(const ThreadRec* th, const char* key, const std::string& what) {
  if (job_->strict) report(th->warp, key, "strict: " + thread_name(th) + ": " + what);
}

void BlockExec::violation_in_warp(int warp, const std::string& what) {
  if (job_->strict)
    report(warp, what.c_str(), "strict: " + block_name() + " warp " + std::to_string(warp) + ": " + what);
}

void BlockExec::sync_violation(const char* key, const std::string& what) {
  if ((job_->checks & kSyncCheck) != 0) report(-1, key, "synccheck: " + what);
}

std::string BlockExec::describe_deadlock() const {
  auto state_of = [&](unsigned i) -> std::string {
    const ThreadRec& r = threads_[i];
    switch (r.state) {
      case TState::Barrier: return "waiting at __syncthreads";
      case TState::Exited: return "exited";
      case TState::Collective: {
        if (r.coll_tag == &kActiveMaskTag)
          return "waiting in __activemask at " + r.coll_site.str() + " (warp " + std::to_string(r.warp) + ")";
        const unsigned base = r.warp * 32u;
        const unsigned waiting = warps_[r.warp].waiting;
        unsigned missing = 0;
        for (int l = 0; l < 32; ++l) {
          if (((r.coll_eff >> l) & 1u) == 0) continue;
          const ThreadRec& o = threads_[base + l];
          const bool same = ((waiting >> l) & 1u) != 0 && same_call(o, r) && o.coll_eff == r.coll_eff;
          if (!same) missing |= 1u << l;
        }
        return "waiting in " + call_name(r) + " with mask " + hex(r.coll_mask) + " (warp " +
               std::to_string(r.warp) + "; lanes not in the same call: " + hex(missing) + ")";
      }
      case TState::Unstarted: return "not started";
      case TState::Ready: return "runnable";
      case TState::Running: return "running";
    }
    return "?";
  };
  std::string s = "deadlock in " + block_name() + " of a grid of " +
                  xyz(t_cur.grid_dim.x, t_cur.grid_dim.y, t_cur.grid_dim.z) + " blocks of " +
                  xyz(t_cur.block_dim.x, t_cur.block_dim.y, t_cur.block_dim.z) +
                  " threads: no thread can run. " + std::to_string(live_) + " of " + std::to_string(n_) +
                  " threads live, " + std::to_string(bar_arrived_) + " at __syncthreads. Wait states by linear thread id:";
  unsigned i = 0;
  while (i < n_) {
    const std::string st = state_of(i);
    unsigned j = i + 1;
    while (j < n_ && state_of(j) == st) ++j;
    char range[48];
    if (j - i > 1)
      std::snprintf(range, sizeof range, "\n  threads %u-%u: ", i, j - 1);
    else
      std::snprintf(range, sizeof range, "\n  thread %u: ", i);
    s += range;
    s += st;
    i = j;
  }
  return s;
}

void ErrorSink::add(int code, std::string message) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::size_t n = count_.fetch_add(1, std::memory_order_relaxed);
  if (n == 0) code_ = code;
  if (n < kMaxMessages) messages_.push_back(std::move(message));
}

launch::LaunchError ErrorSink::take() {
  std::lock_guard<std::mutex> lock(mu_);
  launch::LaunchError e;
  const std::size_t n = count_.load(std::memory_order_relaxed);
  if (n == 0) return e;
  e.failed = true;
  e.code = code_;
  for (std::size_t i = 0; i < messages_.size(); ++i) e.message += (i ? "\n" : "") + messages_[i];
  if (n > messages_.size()) e.message += "\n(" + std::to_string(n - messages_.size()) + " more errors)";
  messages_.clear();
  count_.store(0, std::memory_order_relaxed);
  return e;
}

// ------------------------------------------------------------------------------------------------
// Entry points used by the device API. Outside a kernel (t_cur.block == null) they act as a lone thread.
// ------------------------------------------------------------------------------------------------

int barrier(int predicate, BarrierOp op, const CallSite& site) {
  if (BlockExec* b = t_cur.block) return b->barrier(predicate, op, site);
  return predicate != 0 ? 1 : 0;
}

void yield() {
  if (BlockExec* b = t_cur.block) b->yield();
}

void trap(const char* what) {
  if (BlockExec* b = t_cur.block) b->trap(what);
  std::fprintf(stderr, "baracuda sim: %s outside a kernel\n", what);
  std::abort();
}

unsigned active_mask(const CallSite& site) {
  if (BlockExec* b = t_cur.block) return b->active_mask(site);
  return 1u;
}

bool register_shared(void* p, std::size_t bytes) {
  std::memset(p, kSharedPoison, bytes);  // no thread can have written it: each writer passed its declaration
  this_worker().static_shared.emplace_back(static_cast<unsigned char*>(p), bytes);
  return true;
}

bool in_shared(const void* p, std::size_t bytes) {
  if (t_cur.block == nullptr) return false;
  const auto q = reinterpret_cast<std::uintptr_t>(p);
  auto inside = [&](const unsigned char* base, std::size_t size) {
    const auto b = reinterpret_cast<std::uintptr_t>(base);
    return q >= b && q - b <= size && bytes <= size - (q - b);
  };
  if (t_cur.dynamic_smem != nullptr && inside(t_cur.dynamic_smem, t_cur.dynamic_smem_bytes)) return true;
  for (const auto& [base, size] : this_worker().static_shared)
    if (inside(base, size)) return true;
  return false;
}

void cp_async_issue(void* dst, const void* src, int cp_size, int src_bytes) {
  const void* pc = __builtin_return_address(0);
  if (!in_shared(dst, static_cast<std::size_t>(cp_size)))
    strict_violation("cp.async-dst", "cp.async: the destination is not shared memory");
  const int n = AsyncCopies::source_bytes(cp_size, src_bytes);
  if (n > 0 && in_shared(src, static_cast<std::size_t>(n)))
    strict_violation("cp.async-src", "cp.async: the source is shared memory, not global memory");
  const ThreadRec* th = t_cur.thread;
  if (th == nullptr) return AsyncCopies::perform(dst, src, cp_size, src_bytes);  // outside a kernel: at once
  if (MemCheck* m = t_cur.memcheck) {
    if (n > 0) m->access(src, static_cast<std::size_t>(n), /*store=*/false, pc);
    m->access(dst, static_cast<std::size_t>(cp_size), /*store=*/true, pc, true, /*copy=*/1);
  }
  this_worker().copies.issue(th->warp * 32u + th->lane, dst, src, cp_size, src_bytes, pc);
}

void cp_async_commit() {
  if (const ThreadRec* th = t_cur.thread) this_worker().copies.commit(th->warp * 32u + th->lane);
}

void cp_async_wait(int n) {
  if (const ThreadRec* th = t_cur.thread) this_worker().copies.land(th->warp * 32u + th->lane, n, t_cur.memcheck);
}

void note_race_read(const void* p, std::size_t bytes) {
  if (MemCheck* m = t_cur.memcheck)
    m->access(p, bytes, /*store=*/false, __builtin_return_address(0), /*init_check=*/false);
}

void note_mbarrier_acquire() {
  if (MemCheck* m = t_cur.memcheck) m->acquire();
}

void note_atomic_slow(const void* p) {
  if (MemCheck* m = t_cur.memcheck) m->atomic(p);
}

void MemcheckPause::note_written(const void* p, std::size_t bytes) const {
  if (MemCheck* m = t_cur.paused) m->note_written(p, bytes);
}

void strict_violation(const char* key, const std::string& what) {
  if (BlockExec* b = t_cur.block)
    if (b->strict()) b->violation(t_cur.thread, key, what);
}

WarpGroup* collective_arrive(unsigned mask, const void* in, void* out, const void* tag, const char* name,
                             const CallSite* site, bool fence) {
  if (BlockExec* b = t_cur.block) return b->collective_arrive(mask, in, out, tag, name, site, fence);
  thread_local WarpGroup g;  // outside a kernel: a group of one
  g.mask = 1u;
  g.requested = mask;
  g.exited = ~1u;
  g.warp = 0;
  g.leader = 0;
  for (int l = 0; l < 32; ++l) g.in[l] = g.out[l] = nullptr;
  g.in[0] = in;
  g.out[0] = out;
  return &g;
}

void collective_finish(const WarpGroup& g) {
  if (BlockExec* b = t_cur.block) b->collective_finish(g);
}

}  // namespace baracuda::simt::detail

namespace baracuda::simt {

void WarpGroup::violation(const std::string& what) const {
  if (detail::BlockExec* b = detail::t_cur.block) b->violation_in_warp(warp, what);
}

int lane_id() {
  if (detail::t_cur.thread == nullptr) return 0;
  return detail::t_cur.thread->lane;
}

int warp_id() {
  if (detail::t_cur.thread == nullptr) return 0;
  return detail::t_cur.thread->warp;
}

}  // namespace baracuda::simt
