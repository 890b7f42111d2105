#include "fiber.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#if BARACUDA_SIM_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace baracuda::simt::detail {

namespace {
// The inaccessible region below every stack. The sim kernel sources are compiled with -fstack-clash-protection
// (cmake/BaracudaKernels.cmake), so their frames touch every page as they grow the stack and one page would do;
// the rest is for code without that flag (the runtime, libraries a kernel calls), whose frames it covers up to
// this size. Only address space: PROT_NONE pages take no memory.
constexpr std::size_t kGuardBytes = 64 * 1024;
}  // namespace

FiberPool::FiberPool(std::size_t stack_bytes) : stack_bytes_(stack_bytes) {}

FiberPool::~FiberPool() {
  for (Fiber* f : all_) {
    munmap(f->mapping, f->mapping_size);
    delete f;
  }
}

Fiber* FiberPool::acquire(FiberEntry entry) {
  Fiber* f;
  if (!free_.empty()) {
    f = free_.back();
    free_.pop_back();
  } else {
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    // One extra page for the staggered top: stacks are page-aligned, so without it the hot top-of-stack
    // lines of all fibers would fall into the same L1 cache sets.
    const std::size_t size = (stack_bytes_ + page - 1) / page * page + page;
    const std::size_t guard = (kGuardBytes + page - 1) / page * page;
    void* m = mmap(nullptr, guard + size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (m == MAP_FAILED || mprotect(m, guard, PROT_NONE) != 0) {
      std::fprintf(stderr, "baracuda sim: cannot map a %zu-byte fiber stack\n", size);
      std::abort();
    }
    f = new Fiber;
    f->mapping = m;
    f->mapping_size = guard + size;
    f->stack_lo = static_cast<char*>(m) + guard;
    f->stack_size = size;
    f->top_offset = (all_.size() % 32) * 128;
    all_.push_back(f);
  }
  f->exiting = false;
  f->asan_fake_stack = nullptr;
  f->ctx = bctx::make_fcontext(f->stack_lo + f->stack_size - f->top_offset, f->stack_size - f->top_offset, entry);
  return f;
}

void FiberPool::release_abandoned(Fiber* f) {
#if BARACUDA_SIM_ASAN
  // The dropped frames leave their redzones poisoned; the next user of this stack must not see them.
  __asan_unpoison_memory_region(f->stack_lo, f->stack_size);
#endif
  release(f);
}

}  // namespace baracuda::simt::detail
