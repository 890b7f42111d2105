// Fidelity probes: kernels written as a user would write them, each where the emulator must behave as the
// CUDA C++ Programming Guide ("the Guide") and the PTX ISA say, or report the kernel's error.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <bit>
#include <cstdint>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include "fidelity_kernels.hpp"
#include "selftest_kernels.hpp"
#include "sim/emu/runtime.hpp"

namespace {

namespace simt = baracuda::simt;

const simt::Schedule kSchedules[] = {simt::Schedule::fwd(), simt::Schedule::rev(), simt::Schedule::random(1),
                                     simt::Schedule::random(2), simt::Schedule::random(3)};

bool mentions(const baracuda::launch::LaunchError& e, std::string_view part) {
  return e.message.find(part) != std::string::npos;
}

// Guide, "Independent Thread Scheduling" and "Warp Vote Functions": the two sides of a divergent branch
// execute separately; __activemask() returns the threads active in the calling warp at that call.
TEST(SimFidelity, ActivemaskGivesTheLanesOfItsOwnBranch) {
  for (const auto& sched : kSchedules) {
    simt::ScopedSchedule s(sched);
    std::vector<unsigned> out(32, 0);
    const auto err = simtest::activemask_per_branch(out.data());
    ASSERT_FALSE(err.failed) << err.message;
    for (int l = 0; l < 32; ++l)
      EXPECT_EQ(out[l], l < 16 ? 0x0000ffffu : 0xffff0000u) << "lane " << l << ", " << simt::to_string(sched);
  }
}

// The warp-aggregated atomic (Guide, "Warp Vote Functions" and __activemask) in both arms of a branch: one
// add of 16 per arm.
TEST(SimFidelity, WarpAggregatedAtomicCountsEachArm) {
  for (const auto& sched : kSchedules) {
    simt::ScopedSchedule s(sched);
    int counts[2] = {0, 0};
    std::vector<int> arms(32, -1);
    const auto err = simtest::aggregated_atomic_per_branch(counts, arms.data());
    ASSERT_FALSE(err.failed) << err.message;
    EXPECT_EQ(counts[0], 16) << simt::to_string(sched);
    EXPECT_EQ(counts[1], 16) << simt::to_string(sched);
    for (int l = 0; l < 32; ++l) EXPECT_EQ(arms[l], l < 16 ? 0 : 1) << "lane " << l;
  }
}

// Guide, "Warp Shuffle Functions": the threads named in mask must execute the same intrinsic with the same
// mask. Two call sites are two intrinsics to sim: they never form one group (a deadlock is reported), and
// strict mode names both sites.
TEST(SimFidelity, ShufflesAtDifferentCallSitesAreNotMerged) {
  std::vector<int> out(32, -1);
  auto err = simtest::shuffle_across_branches(out.data());
  ASSERT_TRUE(err.failed) << "a shuffle at two call sites must not form one group";
  EXPECT_TRUE(mentions(err, "deadlock")) << err.message;
  simt::ScopedStrict strict(true);
  err = simtest::shuffle_across_branches(out.data());
  ASSERT_TRUE(err.failed);
  EXPECT_TRUE(mentions(err, "fidelity_kernels.cu:")) << err.message;
}

// Guide, "Warp Vote Functions": all non-exited threads named in mask must execute the same intrinsic with
// the same mask, or the result is undefined. A ballot and an __all_sync are never merged into one vote.
TEST(SimFidelity, BallotAndAllAreNotMergedIntoOneVote) {
  std::vector<unsigned> out(32, 7);
  auto err = simtest::ballot_vs_all(out.data());
  ASSERT_TRUE(err.failed) << "__ballot_sync and __all_sync must not form one group; lane 0 got " << out[0];
  simt::ScopedStrict strict(true);
  err = simtest::ballot_vs_all(out.data());
  ASSERT_TRUE(err.failed);
  EXPECT_TRUE(mentions(err, "__ballot_sync") && mentions(err, "__all_sync")) << err.message;
}

// Guide, "Warp Match Functions": the same rule for __match_any_sync and __match_all_sync.
TEST(SimFidelity, MatchAnyAndMatchAllAreNotMerged) {
  std::vector<unsigned> out(32, 7);
  auto err = simtest::match_any_vs_all(out.data());
  ASSERT_TRUE(err.failed) << "__match_any_sync and __match_all_sync must not form one group";
  simt::ScopedStrict strict(true);
  err = simtest::match_any_vs_all(out.data());
  ASSERT_TRUE(err.failed);
  EXPECT_TRUE(mentions(err, "__match_any_sync") && mentions(err, "__match_all_sync")) << err.message;
}

// Guide, "__shared__": the variable's value is not initialised (and a block cannot see another launch's
// values). Sim fills static shared memory with a poison pattern at every block, on every launch.
TEST(SimFidelity, StaticSharedMemoryIsPoisonedAtEveryLaunch) {
  constexpr unsigned kPoison = 0xcdcdcdcdu;
  for (int launch = 0; launch < 3; ++launch) {
    unsigned out[2] = {0, 0};
    const auto err = simtest::uninitialised_shared_counter(out);
    ASSERT_FALSE(err.failed) << err.message;
    EXPECT_EQ(out[0], kPoison) << "launch " << launch;
    EXPECT_EQ(out[1], kPoison + 32) << "launch " << launch;
  }
}

std::vector<int> block_order(int blocks) {
  std::vector<int> order(blocks, -1);
  int ticket = 0;
  const auto err = simtest::block_order(order.data(), &ticket, blocks);
  EXPECT_FALSE(err.failed) << err.message;
  return order;
}

bool is_permutation_of_iota(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  for (int i = 0; i < static_cast<int>(v.size()); ++i)
    if (v[i] != i) return false;
  return true;
}

// Guide, "Thread Hierarchy": thread blocks must be able to run in any order, in parallel or in series. The
// schedules order the blocks too: fwd in launch order, rev backwards, rand:SEED a permutation of the seed.
TEST(SimFidelity, SchedulesPermuteTheOrderOfBlocks) {
  constexpr int kBlocks = 64;
  std::vector<int> iota(kBlocks), reversed(kBlocks);
  std::iota(iota.begin(), iota.end(), 0);
  std::iota(reversed.rbegin(), reversed.rend(), 0);
  simt::ScopedWorkers one(1);
  {
    simt::ScopedSchedule s(simt::Schedule::fwd());
    EXPECT_EQ(block_order(kBlocks), iota);
  }
  {
    simt::ScopedSchedule s(simt::Schedule::rev());
    EXPECT_EQ(block_order(kBlocks), reversed);
  }
  std::vector<int> r5;
  {
    simt::ScopedSchedule s(simt::Schedule::random(5));
    r5 = block_order(kBlocks);
    EXPECT_TRUE(is_permutation_of_iota(r5));
    EXPECT_NE(r5, iota);
    EXPECT_NE(r5, reversed);
    EXPECT_EQ(block_order(kBlocks), r5) << "the order must be reproducible from the seed";
  }
  {
    simt::ScopedSchedule s(simt::Schedule::random(6));
    const auto r6 = block_order(kBlocks);
    EXPECT_TRUE(is_permutation_of_iota(r6));
    EXPECT_NE(r6, r5);
  }
  simt::ScopedWorkers two(2);
  simt::ScopedSchedule s(simt::Schedule::random(5));
  EXPECT_TRUE(is_permutation_of_iota(block_order(kBlocks)));
}

// A planted bug: block b reads block b - 1's output without synchronisation (Guide, "Thread Hierarchy"). It
// passes when blocks run in launch order; the rev schedule must expose it.
TEST(SimFidelity, BlocksDependingOnEachOtherFailUnderTheReverseSchedule) {
  constexpr int kBlocks = 16;
  std::vector<int> expected(kBlocks);
  std::iota(expected.begin(), expected.end(), 1);
  simt::ScopedWorkers one(1);
  {
    simt::ScopedSchedule s(simt::Schedule::fwd());
    std::vector<int> out(kBlocks, 0);
    ASSERT_FALSE(simtest::blocks_depending_on_each_other(out.data(), kBlocks).failed);
    EXPECT_EQ(out, expected);
  }
  simt::ScopedSchedule s(simt::Schedule::rev());
  std::vector<int> out(kBlocks, 0);
  ASSERT_FALSE(simtest::blocks_depending_on_each_other(out.data(), kBlocks).failed);
  EXPECT_NE(out, expected) << "the reverse schedule must run the blocks backwards";
}

// Guide, "Synchronization Functions": __syncthreads() is allowed in conditional code only if the condition
// evaluates identically across the whole block. synccheck reports two barriers met by one block.
TEST(SimFidelity, SynccheckReportsBarriersAtDifferentCallSites) {
  std::vector<int> out(64, 0);
  ASSERT_FALSE(simtest::barrier_per_branch(out.data()).failed) << "without synccheck the barrier is merged";
  simt::ScopedChecks sync(simt::kSyncCheck);
  const auto err = simtest::barrier_per_branch(out.data());
  ASSERT_TRUE(err.failed) << "two __syncthreads() call sites in one barrier must be reported";
  EXPECT_TRUE(mentions(err, "synccheck") && mentions(err, "fidelity_kernels.cu:")) << err.message;
}

// The same rule: warps that call __syncthreads() different numbers of times before they exit.
TEST(SimFidelity, SynccheckReportsWarpsPassingDifferentNumbersOfBarriers) {
  std::vector<int> out(96, 0);
  simt::ScopedChecks sync(simt::kSyncCheck);
  const auto err = simtest::barrier_count_per_warp(out.data());
  ASSERT_TRUE(err.failed) << "warps passing 1 and 2 barriers must be reported";
  EXPECT_TRUE(mentions(err, "synccheck") && mentions(err, "exited after passing 1 __syncthreads")) << err.message;
}

// Threads that exit before their first barrier count as arrived (the usual `if (i >= n) return;` before a
// __syncthreads): synccheck is silent.
TEST(SimFidelity, SynccheckAcceptsThreadsThatExitBeforeTheirFirstBarrier) {
  simt::ScopedChecks sync(simt::kSyncCheck);
  std::vector<int> in(64, 1), out(64, 0);
  const auto err = simtest::early_exit_barrier(in.data(), out.data(), 40, 64);
  EXPECT_FALSE(err.failed) << err.message;
}

// Guide, "Warp Shuffle Functions": width must be a power of two in [1, warpSize]; otherwise the results are
// undefined. Strict mode reports it.
TEST(SimFidelity, StrictModeReportsAShuffleWidthThatIsNotAPowerOfTwo) {
  std::vector<int> out(32, 0);
  simt::ScopedStrict strict(true);
  ASSERT_FALSE(simtest::shuffle_width(out.data(), 16).failed);
  const auto err = simtest::shuffle_width(out.data(), 12);
  ASSERT_TRUE(err.failed) << "width 12 must be reported";
  EXPECT_TRUE(mentions(err, "width 12")) << err.message;
}

// PTX ISA, "fns": with offset 0 the result is base if bit base of mask is set, else 0xffffffff.
TEST(SimFidelity, FnsWithOffsetZeroReturnsBaseWhenItsBitIsSet) {
  const std::vector<unsigned> mask = {0x4u, 0x4u, 0x80000000u, 0xffu};
  const std::vector<unsigned> base = {2, 1, 31, 3};
  const std::vector<int> offset = {0, 0, 0, 2};
  std::vector<unsigned> out(mask.size(), 0);
  ASSERT_FALSE(simtest::fns(mask.data(), base.data(), offset.data(), out.data(), 4).failed);
  EXPECT_EQ(out[0], 2u);
  EXPECT_EQ(out[1], 0xffffffffu);
  EXPECT_EQ(out[2], 31u);
  EXPECT_EQ(out[3], 4u);
}

// Guide, "Floating-Point Standard": atomic single-precision adds on global memory operate in flush-to-zero
// mode (FADD.F32.FTZ.RN); on shared memory they keep denormals.
TEST(SimFidelity, FloatAtomicAddFlushesSubnormalsOnGlobalMemoryOnly) {
  const float tiny = 1e-40f;  // subnormal
  ASSERT_LT(tiny, 1.17549435e-38f);
  float global = 0.0f, out[2] = {-1.0f, -1.0f};
  ASSERT_FALSE(simtest::float_atomic_add(&global, tiny, 0.0f, out).failed);
  EXPECT_EQ(std::bit_cast<uint32_t>(global), 0u) << "global: the subnormal sum flushes to +0, got " << global;
  EXPECT_EQ(out[0], tiny) << "shared: the subnormal sum is kept";
  EXPECT_EQ(out[1], 0.0f);
  global = -2e-39f;  // a subnormal operand in memory flushes to -0 first: -0 + -0 = -0
  ASSERT_FALSE(simtest::float_atomic_add(&global, -0.0f, 0.0f, out).failed);
  EXPECT_EQ(std::bit_cast<uint32_t>(global), 0x80000000u) << global;
}

// PTX ISA, "cp.async": the destination is in the shared state space (cp.async.shared.global). Strict mode
// reports a global destination.
TEST(SimFidelity, StrictModeReportsACpAsyncIntoGlobalMemory) {
  std::vector<unsigned> src(128), dst(128, 0);
  std::iota(src.begin(), src.end(), 1u);
  simt::ScopedStrict strict(true);
  auto err = simtest::cp_async_destination(src.data(), dst.data(), false);
  ASSERT_FALSE(err.failed) << err.message;
  EXPECT_EQ(dst, src);
  err = simtest::cp_async_destination(src.data(), dst.data(), true);
  ASSERT_TRUE(err.failed) << "a cp.async into global memory must be reported";
  EXPECT_TRUE(mentions(err, "cp.async: the destination is not shared memory")) << err.message;
}

// The watchdog reports a worker that makes no progress while it runs (a spin-wait without __nanosleep), by
// the worker's CPU time: a launch whose process is stopped (SIGSTOP, a debugger) for longer than the timeout
// is not aborted when it resumes. (SimErrorsDeathTest.WatchdogAbortsASpinWaitWithoutNanosleep: it still
// aborts a real spin.)
TEST(SimFidelity, WatchdogIgnoresTimeTheProcessIsStopped) {
  const pid_t child = fork();
  if (child == 0) {
    simt::set_watchdog_seconds(2);
    int out = 0;
    const bool ok = !simtest::busy_for(1500, &out).failed && out == 1;
    std::_Exit(ok ? 0 : 1);
  }
  ASSERT_GT(child, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(child, SIGSTOP);
  std::this_thread::sleep_for(std::chrono::seconds(3));
  kill(child, SIGCONT);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the child " << (WIFSIGNALED(status) ? "died of signal " + std::to_string(WTERMSIG(status)) : "failed");
}

}  // namespace
