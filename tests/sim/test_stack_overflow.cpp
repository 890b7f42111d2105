// Stack overflows of sim threads must fault (docs/sim.md, "Limits"), never write silently into the stack of
// another thread: a CUDA thread whose locals do not fit its fiber stack (a GPU has room for them; sim needs a
// larger BARACUDA_SIM_STACK_KB) must stop there, not corrupt another thread's data.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <cstdio>
#include <vector>

#include "sim/emu/runtime.hpp"
#include "stack_kernels.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define SIMTEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SIMTEST_ASAN 1
#endif
#endif
#ifndef SIMTEST_ASAN
#define SIMTEST_ASAN 0
#endif

namespace {

// Runs the probe with a local array of `kib` KiB; returns only if the overflow did not fault, after printing
// how many threads found their own stack data overwritten.
void overflow_and_report(int kib) {
  std::vector<unsigned long long> where(64, 0);
  std::vector<int> damaged(64, 0);
  const auto err = simtest::stack_overflow(kib, where.data(), damaged.data());
  int threads = 0;
  for (int d : damaged) threads += d != 0;
  std::fprintf(stderr, "no fault: launch %s; %d other threads' stack data overwritten\n",
               err.failed ? err.message.c_str() : "ok", threads);
}

// A fault: SIGSEGV (the guard region), or AddressSanitizer's report of it (its SEGV handler exits with 1).
bool faulted(int status) {
  if (SIMTEST_ASAN) return WIFEXITED(status) && WEXITSTATUS(status) != 0;
  return WIFSIGNALED(status) && (WTERMSIG(status) == SIGSEGV || WTERMSIG(status) == SIGBUS);
}
constexpr const char* kFaultMessage = SIMTEST_ASAN ? "AddressSanitizer: (stack-overflow|SEGV)" : "";

// The stack size this test knows how to overflow: the default (64 KiB, 256 KiB under ASan).
int stack_kib() { return static_cast<int>(baracuda::simt::stack_bytes() / 1024); }

// A thread 40 KiB deep in its stack calls a function whose local array ends 20-25 KiB below its stack: before
// guard regions were larger than a page, its first KiB landed in the stack of the fiber mapped below.
TEST(SimStackDeathTest, AnOverflowJustPastTheStackFaults) {
  if (stack_kib() != 64 && stack_kib() != 256) GTEST_SKIP() << "BARACUDA_SIM_STACK_KB is set";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(overflow_and_report(stack_kib() - 16), faulted, kFaultMessage);
}

// The same with a local array that ends about 135 KiB below the stack, past the 64 KiB guard region: only stack
// probing (-fstack-clash-protection, which touches every page of a large frame from the top) makes it fault.
TEST(SimStackDeathTest, AnOverflowFarPastTheStackFaults) {
  if (stack_kib() != 64 && stack_kib() != 256) GTEST_SKIP() << "BARACUDA_SIM_STACK_KB is set";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(overflow_and_report(stack_kib() + 96), faulted, kFaultMessage);
}

}  // namespace
