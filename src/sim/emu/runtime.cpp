// Configuration, the persistent worker pool, the launch driver, errors, statistics and the watchdog.
#include "runtime.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>
#include <thread>

#include <pthread.h>

#include "scheduler.hpp"

namespace baracuda::simt {

// ------------------------------------------------------------------------------------------------
// Configuration
// ------------------------------------------------------------------------------------------------

bool parse_schedule(std::string_view text, Schedule* out) {
  if (text == "fwd") {
    *out = Schedule::fwd();
    return true;
  }
  if (text == "rev") {
    *out = Schedule::rev();
    return true;
  }
  if (text.substr(0, 5) == "rand:" && text.size() > 5) {
    std::uint64_t seed = 0;
    for (char ch : text.substr(5)) {
      if (ch < '0' || ch > '9') return false;
      seed = seed * 10 + static_cast<std::uint64_t>(ch - '0');
    }
    *out = Schedule::random(seed);
    return true;
  }
  return false;
}

std::string to_string(const Schedule& s) {
  switch (s.kind) {
    case ScheduleKind::Forward: return "fwd";
    case ScheduleKind::Reverse: return "rev";
    case ScheduleKind::Random: return "rand:" + std::to_string(s.seed);
  }
  return "?";
}

bool parse_checks(std::string_view text, unsigned* out) {
  unsigned checks = 0;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view word = text.substr(0, comma);
    if (word == "sync") checks |= kSyncCheck;
    else if (word == "init") checks |= kInitCheck;
    else if (word == "race") checks |= kRaceCheck;
    else if (word == "all") checks |= kAllChecks;
    else if (word != "none" && !word.empty()) return false;
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
  }
  *out = checks;
  return true;
}

bool memcheck_available() { return BARACUDA_SIM_MEMCHECK != 0; }

namespace {

// The checks of `requested` this build has: initcheck and racecheck need the instrumented sim kernels (said
// once, on the first request that loses them).
unsigned available_checks(unsigned requested) {
  requested &= kAllChecks;
  if ((requested & (kInitCheck | kRaceCheck)) == 0 || memcheck_available()) return requested;
  static std::once_flag warned;
  std::call_once(warned, [] {
    std::fprintf(stderr, "baracuda sim: initcheck and racecheck need the sim kernels built by clang with load/store "
                         "instrumentation; this build has none, so they are off\n");
  });
  return requested & ~(kInitCheck | kRaceCheck);
}

long env_long(const char* name, long fallback, long min_value) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (*end != '\0' || x < min_value) {
    std::fprintf(stderr, "baracuda sim: ignoring %s=%s (expected an integer >= %ld)\n", name, v, min_value);
    return fallback;
  }
  return x;
}

struct Config {
  Config() {
    const char* s = std::getenv("BARACUDA_SIM_SCHEDULE");
    if (s != nullptr && *s != '\0' && !parse_schedule(s, &schedule))
      std::fprintf(stderr, "baracuda sim: ignoring BARACUDA_SIM_SCHEDULE=%s (expected fwd, rev or rand:SEED)\n", s);
    const char* st = std::getenv("BARACUDA_SIM_STRICT");
    strict = st != nullptr && (std::string_view(st) == "1" || std::string_view(st) == "on" ||
                               std::string_view(st) == "true");
    const char* ch = std::getenv("BARACUDA_SIM_CHECK");
    unsigned parsed = 0;
    if (ch != nullptr && *ch != '\0' && !parse_checks(ch, &parsed))
      std::fprintf(stderr, "baracuda sim: ignoring BARACUDA_SIM_CHECK=%s (expected a list of sync, init, race, all, "
                   "none)\n", ch);
    checks = available_checks(parsed);
    const long hw = std::max(1L, static_cast<long>(std::thread::hardware_concurrency()));
    workers = static_cast<unsigned>(env_long("BARACUDA_SIM_WORKERS", hw, 1));
    stack = static_cast<std::size_t>(env_long("BARACUDA_SIM_STACK_KB", BARACUDA_SIM_ASAN ? 256 : 64, 16)) * 1024;
    watchdog_s = static_cast<unsigned>(env_long("BARACUDA_SIM_WATCHDOG_S", 60, 0));
  }
  std::mutex mu;
  Schedule schedule;
  std::atomic<bool> strict{false};
  std::atomic<unsigned> checks{0};
  std::atomic<unsigned> workers{1};
  std::size_t stack = 64 * 1024;
  std::atomic<unsigned> watchdog_s{60};
};

Config& config() {
  static Config c;
  return c;
}

}  // namespace

void set_schedule(const Schedule& s) {
  Config& c = config();
  std::lock_guard<std::mutex> lock(c.mu);
  c.schedule = s;
}

Schedule get_schedule() {
  Config& c = config();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.schedule;
}

void set_strict(bool on) { config().strict.store(on); }
bool get_strict() { return config().strict.load(); }
void set_checks(unsigned checks) { config().checks.store(available_checks(checks)); }
unsigned get_checks() { return config().checks.load(); }
void set_workers(unsigned n) { config().workers.store(std::max(1u, n)); }
unsigned get_workers() { return config().workers.load(); }
std::size_t stack_bytes() { return config().stack; }
void set_watchdog_seconds(unsigned seconds) { config().watchdog_s.store(seconds); }
unsigned get_watchdog_seconds() { return config().watchdog_s.load(); }

// ------------------------------------------------------------------------------------------------
// Statistics and errors
// ------------------------------------------------------------------------------------------------

namespace {

struct GlobalStats {
  std::atomic<std::uint64_t> launches{0}, blocks{0}, threads{0}, switches{0}, fibers{0};
};
GlobalStats g_stats;

thread_local launch::LaunchError t_last_error;

void record_error(launch::LaunchError e) {
  if (!t_last_error.failed) t_last_error = std::move(e);  // keep the first error until it is taken
}

}  // namespace

Stats stats() {
  Stats s;
  s.launches = g_stats.launches.load();
  s.blocks = g_stats.blocks.load();
  s.threads = g_stats.threads.load();
  s.switches = g_stats.switches.load();
  s.fibers = g_stats.fibers.load();
  return s;
}

void reset_stats() {
  g_stats.launches = 0;
  g_stats.blocks = 0;
  g_stats.threads = 0;
  g_stats.switches = 0;
  g_stats.fibers = 0;
}

launch::LaunchError take_last_error() { return std::exchange(t_last_error, launch::LaunchError{}); }

namespace detail {

// ------------------------------------------------------------------------------------------------
// Watchdog: aborts the process (with a diagnostic) when a worker makes no scheduling progress while it
// spends BARACUDA_SIM_WATCHDOG_S seconds of CPU time, e.g. in a spin-wait without __nanosleep. CPU time, not
// wall time: a process stopped (SIGSTOP, a debugger) or starved by others makes no progress and spends no
// CPU time, and must not be aborted on resume. Never destroyed.
// ------------------------------------------------------------------------------------------------

namespace {

class Watchdog {
 public:
  static Watchdog& get() {
    static Watchdog* w = new Watchdog;
    return *w;
  }

  void add(Worker* w) {
    std::lock_guard<std::mutex> lock(mu_);
    workers_.push_back({w, 0, cpu_seconds(*w)});
  }

  void remove(Worker* w) {
    std::lock_guard<std::mutex> lock(mu_);
    workers_.erase(std::remove_if(workers_.begin(), workers_.end(), [&](const Entry& e) { return e.worker == w; }),
                   workers_.end());
  }

  void ensure_started() {
    std::lock_guard<std::mutex> lock(mu_);
    if (started_) return;
    started_ = true;
    std::thread([this] { loop(); }).detach();
  }

  // fork(): the child keeps only the forking thread, so only its worker, and no watchdog thread yet.
  void prepare_fork() { mu_.lock(); }
  void parent_after_fork() { mu_.unlock(); }
  void child_after_fork(Worker* survivor) {
    workers_.erase(std::remove_if(workers_.begin(), workers_.end(),
                                  [&](const Entry& e) { return e.worker != survivor; }),
                   workers_.end());
    // The child's thread has its own CPU clock (the parent's thread is not in this process).
    if (survivor != nullptr && pthread_getcpuclockid(pthread_self(), &survivor->cpu_clock) != 0)
      survivor->cpu_clock = CLOCK_THREAD_CPUTIME_ID;
    for (Entry& e : workers_) e.since = cpu_seconds(*e.worker);
    started_ = false;
    mu_.unlock();
  }

 private:
  struct Entry {
    Worker* worker;
    std::uint64_t progress;
    double since;  ///< the worker's CPU seconds when its progress last changed
  };

  // The CPU time the worker's thread has used (its own clock: the watchdog thread reads it).
  static double cpu_seconds(const Worker& w) {
    timespec ts{};
    if (clock_gettime(w.cpu_clock, &ts) != 0) return 0.0;
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  }

  void loop() {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      const unsigned timeout_s = get_watchdog_seconds();
      std::lock_guard<std::mutex> lock(mu_);
      for (Entry& e : workers_) {
        const std::uint64_t p = e.worker->progress.load(std::memory_order_relaxed);
        const double cpu = cpu_seconds(*e.worker);
        if (!e.worker->busy.load(std::memory_order_relaxed) || p != e.progress) {
          e.progress = p;
          e.since = cpu;
          continue;
        }
        if (timeout_s != 0 && cpu - e.since > static_cast<double>(timeout_s)) {
          std::fprintf(stderr,
                       "baracuda sim: watchdog: thread %u (linear) of block %llu (linear) has run for %u s (CPU) without "
                       "reaching a barrier, a warp collective, __nanosleep or its end. A spin-wait on a flag set by "
                       "another thread of the same block never ends under the emulator unless the loop calls "
                       "__nanosleep(). Aborting (BARACUDA_SIM_WATCHDOG_S=0 disables this check).\n",
                       e.worker->cur_thread.load(), static_cast<unsigned long long>(e.worker->cur_block.load()),
                       timeout_s);
          std::fflush(stderr);
          std::abort();
        }
      }
    }
  }

  std::mutex mu_;
  std::vector<Entry> workers_;
  bool started_ = false;
};

}  // namespace

Worker::Worker(std::size_t stack) : fibers(stack) {
  main.is_main = true;
  if (pthread_getcpuclockid(pthread_self(), &cpu_clock) != 0) cpu_clock = CLOCK_THREAD_CPUTIME_ID;
  Watchdog::get().add(this);
}

Worker::~Worker() {
  Watchdog::get().remove(this);
  std::free(closure);
}

namespace {
thread_local std::unique_ptr<Worker> t_worker;
}

Worker& this_worker() {
  if (!t_worker) t_worker = std::make_unique<Worker>(stack_bytes());
  return *t_worker;
}

std::uint64_t block_at(const LaunchJob& job, std::uint64_t t) {
  switch (job.schedule.kind) {
    case ScheduleKind::Forward: return t;
    case ScheduleKind::Reverse: return job.nblocks - 1 - t;
    case ScheduleKind::Random: break;
  }
  // A keyed bijection of [0, 2^bits) (each step is invertible: xor and add of a key, multiplication by an odd
  // number, xorshift), cycle-walked into [0, nblocks): every block exactly once, under two rounds per ticket on
  // average.
  const unsigned bits = job.nblocks <= 1 ? 1 : 64 - static_cast<unsigned>(__builtin_clzll(job.nblocks - 1));
  const std::uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
  const unsigned shift = (bits + 1) / 2;
  std::uint64_t x = t;
  do {
    for (std::uint64_t round = 0; round < 3; ++round) {
      x = (x ^ job.order_key) & mask;
      x = (x * 0x9e3779b97f4a7c15ull) & mask;
      x ^= x >> shift;
      x = (x + (job.order_key >> 17) + round) & mask;
    }
  } while (x >= job.nblocks);
  return x;
}

namespace {

void run_job(LaunchJob& job) {
  Worker& w = this_worker();
  const KernelThunk& k = *job.kernel;
  const std::size_t align = std::max<std::size_t>(64, k.align);  // own cache lines: no false sharing
  const std::size_t need = (k.size + align - 1) / align * align;
  if (w.closure_cap < need || align > 64) {
    std::free(w.closure);
    w.closure = std::aligned_alloc(align, need);
    w.closure_cap = need;
  }
  k.copy(w.closure, k.closure);
  // Exact size, so that AddressSanitizer sees out-of-bounds accesses to dynamic shared memory.
  w.smem = static_cast<unsigned char*>(::operator new[](job.smem, std::align_val_t(16)));
  const std::uint64_t blocks0 = w.n_blocks, threads0 = w.n_threads, switches0 = w.n_switches;
  const std::size_t fibers0 = w.fibers.created();
  w.busy.store(true, std::memory_order_relaxed);
  while (!job.abort.load(std::memory_order_relaxed)) {
    const std::uint64_t t = job.next_block.fetch_add(1, std::memory_order_relaxed);
    if (t >= job.nblocks) break;
    w.exec.run(w, job, block_at(job, t));
  }
  w.busy.store(false, std::memory_order_relaxed);
  ::operator delete[](w.smem, std::align_val_t(16));
  w.smem = nullptr;
  k.destroy(w.closure);
  g_stats.blocks += w.n_blocks - blocks0;
  g_stats.threads += w.n_threads - threads0;
  g_stats.switches += w.n_switches - switches0;
  g_stats.fibers += w.fibers.created() - fibers0;
}

// Persistent pool of worker threads (the launching thread works too). Never destroyed, so that no thread
// is joined during static destruction.
class Pool {
 public:
  static Pool& get() {
    static Pool* p = new Pool;
    return *p;
  }

  void run(LaunchJob& job, unsigned extra) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      while (threads_ < extra) {
        std::thread(&Pool::thread_main, this, threads_).detach();
        ++threads_;
      }
      job_ = &job;
      wanted_ = extra;
      pending_ = extra;
      ++generation_;
    }
    work_.notify_all();
    run_job(job);
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [&] { return pending_ == 0; });
    job_ = nullptr;
  }

  // fork() (between launches, see register_fork_handlers): the child has none of the pool threads.
  void prepare_fork() { mu_.lock(); }
  void parent_after_fork() { mu_.unlock(); }
  void child_after_fork() {
    threads_ = 0;
    // The condition variables may still count the parent's waiters, which do not exist here.
    new (&work_) std::condition_variable;
    new (&done_) std::condition_variable;
    mu_.unlock();
  }

 private:
  void thread_main(unsigned index) {
    std::uint64_t seen = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      seen = generation_ - 1;  // the launch that created this thread wants it
    }
    for (;;) {
      LaunchJob* job = nullptr;
      {
        std::unique_lock<std::mutex> lock(mu_);
        work_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
        if (index >= wanted_) continue;
        job = job_;
      }
      run_job(*job);
      std::lock_guard<std::mutex> lock(mu_);
      if (--pending_ == 0) done_.notify_one();
    }
  }

  std::mutex mu_;
  std::condition_variable work_, done_;
  unsigned threads_ = 0;
  LaunchJob* job_ = nullptr;
  unsigned wanted_ = 0;
  unsigned pending_ = 0;
  std::uint64_t generation_ = 0;
};

std::mutex g_launch_mutex;  // one grid at a time; launches from several host threads are serialized

// A fork() waits for the launch in flight, and the child starts with an empty pool (e.g. death tests).
void register_fork_handlers() {
  static const bool registered = [] {
    pthread_atfork(
        [] {
          g_launch_mutex.lock();
          config().mu.lock();
          Pool::get().prepare_fork();
          Watchdog::get().prepare_fork();
        },
        [] {
          Watchdog::get().parent_after_fork();
          Pool::get().parent_after_fork();
          config().mu.unlock();
          g_launch_mutex.unlock();
        },
        [] {
          Watchdog::get().child_after_fork(t_worker.get());
          Pool::get().child_after_fork();
          config().mu.unlock();
          g_launch_mutex.unlock();
        });
    return true;
  }();
  (void)registered;
}

std::string dims(dim3 d) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "(%u,%u,%u)", d.x, d.y, d.z);
  return buf;
}

}  // namespace

void launch(dim3 grid, dim3 block, std::size_t smem, const KernelThunk& kernel) {
  if (t_cur.block != nullptr) {
    record_error({true, cudaErrorNotSupported, "baracuda sim: kernel launch from device code is not supported"});
    return;
  }
  const std::uint64_t nthreads = static_cast<std::uint64_t>(block.x) * block.y * block.z;
  const std::uint64_t nblocks = static_cast<std::uint64_t>(grid.x) * grid.y * grid.z;
  std::string bad;
  if (nthreads == 0 || block.x > 1024 || block.y > 1024 || block.z > 64 || nthreads > 1024)
    bad = "block " + dims(block) + " must have 1 to 1024 threads (x, y <= 1024, z <= 64)";
  else if (nblocks == 0 || grid.x > 0x7fffffffu || grid.y > 65535 || grid.z > 65535)
    bad = "grid " + dims(grid) + " must be non-empty with x < 2^31 and y, z <= 65535";
  if (!bad.empty()) {
    record_error({true, cudaErrorInvalidConfiguration, "baracuda sim: invalid launch configuration: " + bad});
    return;
  }
  constexpr std::size_t kMaxSmem = 227 * 1024;
  if (smem > kMaxSmem) {
    record_error({true, cudaErrorInvalidValue, "baracuda sim: " + std::to_string(smem) +
                                                   " bytes of dynamic shared memory exceed the limit of " +
                                                   std::to_string(kMaxSmem)});
    return;
  }

  Config& cfg = config();
  LaunchJob job;
  job.grid = grid;
  job.block = block;
  job.smem = smem;
  job.kernel = &kernel;
  job.schedule = get_schedule();
  job.strict = cfg.strict.load();
  job.checks = cfg.checks.load();
  static std::atomic<std::uint64_t> generations{0};
  job.generation = ++generations;
  job.order_key = job.schedule.seed * 0xd1b54a32d192ed03ull + 0x8cb92ba72f3d8dd7ull;
  job.nblocks = nblocks;
  job.nthreads = static_cast<unsigned>(nthreads);

  register_fork_handlers();
  Watchdog::get().ensure_started();
  {
    std::lock_guard<std::mutex> lock(g_launch_mutex);
    const std::uint64_t extra = std::min<std::uint64_t>(cfg.workers.load() - 1, nblocks - 1);
    if (extra == 0)
      run_job(job);
    else
      Pool::get().run(job, static_cast<unsigned>(extra));
  }
  ++g_stats.launches;
  if (!job.errors.empty()) record_error(job.errors.take());
}

}  // namespace detail
}  // namespace baracuda::simt
