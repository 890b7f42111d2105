/// \file
/// \brief Fibers for the emulator: raw Boost.Context fcontext switches over mmap'ed stacks with a guard region, kept
/// in a per-worker pool, with the AddressSanitizer fiber-switch annotations. Internal to the runtime.
#pragma once

#include <boost/context/detail/fcontext.hpp>

#include <cstddef>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define BARACUDA_SIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BARACUDA_SIM_ASAN 1
#endif
#endif
#ifndef BARACUDA_SIM_ASAN
#define BARACUDA_SIM_ASAN 0
#endif

// Functions that switch stacks must not be instrumented: GCC would insert __asan_handle_no_return (a
// sigaltstack syscall) into code it believes never returns.
#define BARACUDA_SIM_NO_ASAN __attribute__((no_sanitize("address")))

// The switch path is forced inline into the scheduler's entry points: jump_fcontext resumes with an
// indirect jump, which leaves the return-stack predictor one entry off, so every return between the
// switch and the kernel code costs a misprediction. (Not under ASan: GCC cannot inline across the
// no_sanitize boundary.)
#if BARACUDA_SIM_ASAN
#define BARACUDA_SIM_INLINE inline
#else
#define BARACUDA_SIM_INLINE inline __attribute__((always_inline))
#endif

#if BARACUDA_SIM_ASAN
extern "C" {
void __sanitizer_start_switch_fiber(void** fake_stack_save, const void* bottom, std::size_t size);
void __sanitizer_finish_switch_fiber(void* fake_stack_save, const void** bottom_old, std::size_t* size_old);
}
#endif

namespace baracuda::simt::detail {

namespace bctx = boost::context::detail;

/// One execution context: either a pooled stack or a worker thread's own stack (`is_main`).
struct Fiber {
  bctx::fcontext_t ctx = nullptr;  ///< where to resume it; valid while it is suspended
  char* stack_lo = nullptr;        ///< lowest usable address (above the guard region)
  std::size_t stack_size = 0;
  void* asan_fake_stack = nullptr;
  bool exiting = false;  ///< set before its last switch: the resumed side returns its stack to the pool
  bool is_main = false;
  std::size_t top_offset = 0;  ///< staggers the stack tops so that fibers do not alias in the L1 cache
  void* mapping = nullptr;  ///< guard region + stack
  std::size_t mapping_size = 0;
};

using FiberEntry = void (*)(bctx::transfer_t);

/// Per-worker pool of fibers. All methods must be called on the owning worker thread.
class FiberPool {
 public:
  explicit FiberPool(std::size_t stack_bytes);
  ~FiberPool();
  FiberPool(const FiberPool&) = delete;
  FiberPool& operator=(const FiberPool&) = delete;

  /// A fiber that will start in `entry` when first switched to.
  Fiber* acquire(FiberEntry entry);
  /// Returns a fiber that will never be resumed (its frames are dropped) to the pool.
  void release_abandoned(Fiber* f);

  /// Suspends `from` (the running context) and resumes `to`. Returns when some context switches back to
  /// `from`. If `from->exiting`, it never returns.
  BARACUDA_SIM_NO_ASAN BARACUDA_SIM_INLINE void switch_to(Fiber* from, Fiber* to) {
#if BARACUDA_SIM_ASAN
    __sanitizer_start_switch_fiber(from->exiting ? nullptr : &from->asan_fake_stack, to->stack_lo, to->stack_size);
#endif
    after_resume(bctx::jump_fcontext(to->ctx, from), from);
  }
  /// First call of a fiber entry function, with the transfer it received.
  BARACUDA_SIM_NO_ASAN BARACUDA_SIM_INLINE void entered(bctx::transfer_t t, Fiber* self) { after_resume(t, self); }

  std::size_t created() const { return all_.size(); }

 private:
  BARACUDA_SIM_NO_ASAN BARACUDA_SIM_INLINE void after_resume(bctx::transfer_t t, Fiber* self) {
#if BARACUDA_SIM_ASAN
    const void* prev_bottom = nullptr;
    std::size_t prev_size = 0;
    __sanitizer_finish_switch_fiber(self->asan_fake_stack, &prev_bottom, &prev_size);
#else
    (void)self;
#endif
    Fiber* prev = static_cast<Fiber*>(t.data);
    prev->ctx = t.fctx;
#if BARACUDA_SIM_ASAN
    if (prev->is_main) {
      prev->stack_lo = static_cast<char*>(const_cast<void*>(prev_bottom));
      prev->stack_size = prev_size;
    }
#endif
    if (prev->exiting) release(prev);
  }
  void release(Fiber* f) { free_.push_back(f); }

  std::size_t stack_bytes_;
  std::vector<Fiber*> free_;
  std::vector<Fiber*> all_;
};

}  // namespace baracuda::simt::detail
