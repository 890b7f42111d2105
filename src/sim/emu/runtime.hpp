/// \file
/// \brief Host-side API of the SIMT emulator: configuration (schedule, strict mode, workers), the launch entry
/// point behind BARACUDA_LAUNCH, errors and statistics. Kernels never include this directly; they include
/// sim/compat.cuh. Tests and tools may use the configuration functions in-process.
#pragma once

#include <cuda_runtime.h>  // dim3, uint3, cudaError_t

#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../launch_error.hpp"

namespace baracuda::simt {

// ---------------------------------------------------------------------------------------------------
// Configuration. Every setting starts from its environment variable (read once, at first use) and can be
// overridden in-process; a launch uses the values current when it starts.
// ---------------------------------------------------------------------------------------------------

/// Order in which the blocks of a grid are taken by the workers, and the threads of a block started and
/// resumed.
enum class ScheduleKind : std::uint8_t {
  Forward,  ///< block 0 and thread 0 first ("fwd")
  Reverse,  ///< last block and last thread first ("rev")
  Random,   ///< seeded permutations of the blocks and of each block's threads, reshuffled at every barrier
            ///< ("rand:SEED")
};

struct Schedule {
  ScheduleKind kind = ScheduleKind::Forward;
  std::uint64_t seed = 0;  ///< used by Random only

  static constexpr Schedule fwd() { return {ScheduleKind::Forward, 0}; }
  static constexpr Schedule rev() { return {ScheduleKind::Reverse, 0}; }
  static constexpr Schedule random(std::uint64_t seed) { return {ScheduleKind::Random, seed}; }
  friend constexpr bool operator==(const Schedule&, const Schedule&) = default;
};

/// Parses "fwd", "rev" or "rand:SEED" (SEED a decimal integer). Returns false on anything else.
bool parse_schedule(std::string_view text, Schedule* out);
/// The inverse of parse_schedule.
std::string to_string(const Schedule& schedule);

/// Schedule of later launches. Initial value: $BARACUDA_SIM_SCHEDULE, default fwd.
void set_schedule(const Schedule& schedule);
Schedule get_schedule();

/// Strict mode: report (as launch errors) warp collectives whose mask names an exited or absent lane or
/// omits the calling lane, lanes that wait in different collectives or with different masks, and
/// shuffles that read a lane outside the group. Initial value: $BARACUDA_SIM_STRICT=1, default off.
void set_strict(bool on);
bool get_strict();

/// The checkers (a bit set of Check), like compute-sanitizer's tools; each report is a launch error.
///  * synccheck: one __syncthreads barrier reached from two call sites, and a thread that exits having passed
///    fewer barriers than the others (threads that exit before their first barrier are fine: exited threads
///    count as arrived).
///  * initcheck: a read of shared memory that no thread of the block has written.
///  * racecheck: two accesses to one byte of shared memory by different threads, at least one a write, with
///    no __syncthreads (or __syncwarp of both lanes) between them. See src/sim/emu/memcheck.hpp.
/// initcheck and racecheck need the sim kernels compiled with clang's load/store instrumentation
/// (memcheck_available()); without it asking for them is ignored with a message. Initial value:
/// $BARACUDA_SIM_CHECK, a comma-separated list of `sync`, `init`, `race` (or `all`, or `none`), default none.
enum Check : unsigned { kSyncCheck = 1u, kInitCheck = 2u, kRaceCheck = 4u };
inline constexpr unsigned kAllChecks = kSyncCheck | kInitCheck | kRaceCheck;
/// Parses the value of BARACUDA_SIM_CHECK. Returns false on an unknown word.
bool parse_checks(std::string_view text, unsigned* out);
void set_checks(unsigned checks);
unsigned get_checks();
/// Whether this build instruments the sim kernels' loads and stores (initcheck and racecheck work).
bool memcheck_available();

/// Number of worker threads that run blocks (the launching thread is one of them). Initial value:
/// $BARACUDA_SIM_WORKERS, default std::thread::hardware_concurrency(), at least 1.
void set_workers(unsigned n);
unsigned get_workers();

/// Size of each fiber stack in bytes: $BARACUDA_SIM_STACK_KB KiB, default 64 KiB (256 KiB under ASan).
std::size_t stack_bytes();

/// Watchdog: when a worker makes no scheduling progress (no thread starts, blocks, yields or exits) for
/// this many seconds during a launch, the process prints the running thread and aborts, instead of
/// hanging (e.g. a spin-wait without __nanosleep). 0 disables it. Initial value: $BARACUDA_SIM_WATCHDOG_S,
/// default 60.
void set_watchdog_seconds(unsigned seconds);
unsigned get_watchdog_seconds();

/// RAII helper for tests: sets one of the settings above, restores the previous value on destruction.
template <class T, T (*Get)(), auto Set>
class ScopedSetting {
 public:
  explicit ScopedSetting(const T& value) : saved_(Get()) { Set(value); }
  ~ScopedSetting() { Set(saved_); }
  ScopedSetting(const ScopedSetting&) = delete;
  ScopedSetting& operator=(const ScopedSetting&) = delete;

 private:
  T saved_;
};
using ScopedSchedule = ScopedSetting<Schedule, get_schedule, set_schedule>;
using ScopedStrict = ScopedSetting<bool, get_strict, set_strict>;
using ScopedWorkers = ScopedSetting<unsigned, get_workers, set_workers>;
using ScopedChecks = ScopedSetting<unsigned, get_checks, set_checks>;

// ---------------------------------------------------------------------------------------------------
// Errors and statistics
// ---------------------------------------------------------------------------------------------------

/// Returns and clears the first error recorded by a launch from this host thread since the last call:
/// an invalid launch configuration, a deadlock, a strict-mode violation, __trap(). Launches never throw.
launch::LaunchError take_last_error();

/// Process-wide counters, summed over all finished launches.
struct Stats {
  std::uint64_t launches = 0;
  std::uint64_t blocks = 0;
  std::uint64_t threads = 0;   ///< CUDA threads run
  std::uint64_t switches = 0;  ///< fiber switches
  std::uint64_t fibers = 0;    ///< fiber contexts created (the fast path runs threads back to back on one)
};
Stats stats();
void reset_stats();

// ---------------------------------------------------------------------------------------------------
// Launch machinery (used by BARACUDA_LAUNCH)
// ---------------------------------------------------------------------------------------------------

namespace detail {

/// A type-erased kernel with its converted arguments. Each worker copies the closure once per launch into
/// its own cache-line-aligned buffer, and every CUDA thread calls invoke() on that copy.
struct KernelThunk {
  void (*invoke)(const void* closure);
  void (*copy)(void* dst, const void* src);  ///< copy-constructs a closure at dst
  void (*destroy)(void* closure);
  std::size_t size;
  std::size_t align;
  const void* closure;
  const void* kernel_fn;  ///< the kernel's address, to name it in reports
};

/// Runs the whole grid synchronously. Errors are recorded for take_last_error().
void launch(dim3 grid, dim3 block, std::size_t dynamic_smem_bytes, const KernelThunk& kernel);

template <class... P>
struct Closure {
  void (*kernel)(P...);
  std::tuple<P...> args;

  static void invoke(const void* c) {
    const auto* self = static_cast<const Closure*>(c);
    std::apply(self->kernel, self->args);  // each thread gets its own by-value copies of the parameters
  }
  static void copy(void* dst, const void* src) { ::new (dst) Closure(*static_cast<const Closure*>(src)); }
  static void destroy(void* c) { static_cast<Closure*>(c)->~Closure(); }
};

}  // namespace detail

/// The callable returned by launcher(): converts the arguments to the kernel's parameter types once and
/// runs the grid.
template <class... P>
class Launcher {
 public:
  Launcher(dim3 grid, dim3 block, std::size_t smem, void (*kernel)(P...))
      : grid_(grid), block_(block), smem_(smem), kernel_(kernel) {}

  template <class... A>
  void operator()(A&&... args) const {
    static_assert(sizeof...(A) == sizeof...(P), "BARACUDA_LAUNCH: wrong number of kernel arguments");
    using C = detail::Closure<std::remove_cv_t<P>...>;
    const C closure{kernel_, std::tuple<std::remove_cv_t<P>...>(std::forward<A>(args)...)};
    const detail::KernelThunk thunk{&C::invoke, &C::copy,   &C::destroy,
                                    sizeof(C),  alignof(C), &closure,
                                    reinterpret_cast<const void*>(kernel_)};
    detail::launch(grid_, block_, smem_, thunk);
  }

 private:
  dim3 grid_;
  dim3 block_;
  std::size_t smem_;
  void (*kernel_)(P...);
};

/// launcher(grid, block, smem, stream, kernel)(args...) runs `kernel` on the emulator. The stream is
/// ignored: every launch is synchronous.
template <class Stream, class... P>
Launcher<P...> launcher(dim3 grid, dim3 block, std::size_t smem, Stream&& /*stream*/, void (*kernel)(P...)) {
  return Launcher<P...>(grid, block, smem, kernel);
}

}  // namespace baracuda::simt
