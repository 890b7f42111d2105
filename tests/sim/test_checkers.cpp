// The emulator's checkers (BARACUDA_SIM_CHECK: synccheck, initcheck, racecheck) against planted bugs, each also
// written correctly: the checker must report the bug and stay silent on the correct kernel.
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include "fidelity_kernels.hpp"
#include "race_kernels.hpp"
#include "selftest_kernels.hpp"
#include "sim/emu/runtime.hpp"

namespace {

namespace simt = baracuda::simt;

bool mentions(const baracuda::launch::LaunchError& e, std::string_view part) {
  return e.message.find(part) != std::string::npos;
}

class SimCheckers : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!simt::memcheck_available()) GTEST_SKIP() << "initcheck and racecheck need a clang build";
  }
};

// A block reduction whose last thread reads every slot, without the __syncthreads after the writes.
TEST_F(SimCheckers, RacecheckReportsAMissingSyncthreadsInASharedMemoryReduction) {
  simt::ScopedChecks race(simt::kRaceCheck);
  const int blocks = 2, threads = 64;
  std::vector<int> in(blocks * threads, 1), out(blocks, 0);
  auto err = simtest::last_thread_sum(in.data(), out.data(), blocks, threads, /*with_barrier=*/true);
  ASSERT_FALSE(err.failed) << err.message;
  err = simtest::last_thread_sum(in.data(), out.data(), blocks, threads, /*with_barrier=*/false);
  ASSERT_TRUE(err.failed) << "the missing __syncthreads must be reported";
  // RAW when the writers run first (fwd), WAR when the reading thread does (rev).
  EXPECT_TRUE(mentions(err, "racecheck: ") && mentions(err, " hazard on static shared variable")) << err.message;
  EXPECT_TRUE(mentions(err, "block_kernels.cu:")) << "the source line of the access: " << err.message;
  EXPECT_TRUE(mentions(err, "[kernel ") && mentions(err, "last_sum_kernel")) << "the kernel: " << err.message;
}

// Shared writes, a shuffle (which orders no memory), then a read of the neighbour's slot: a __syncwarp is
// needed between the write and the read (Guide, "Warp Shuffle Functions" / "__syncwarp").
TEST_F(SimCheckers, RacecheckReportsAMissingSyncwarpAfterASharedWrite) {
  simt::ScopedChecks race(simt::kRaceCheck);
  std::vector<int> out(32, -1);
  auto err = simtest::neighbour_after_shuffle(out.data(), /*with_syncwarp=*/true);
  ASSERT_FALSE(err.failed) << err.message;
  for (int l = 0; l < 32; ++l) EXPECT_EQ(out[l], (l + 1) % 32);
  err = simtest::neighbour_after_shuffle(out.data(), /*with_syncwarp=*/false);
  ASSERT_TRUE(err.failed) << "a shuffle is not a memory fence: the missing __syncwarp must be reported";
  EXPECT_TRUE(mentions(err, "racecheck: RAW hazard")) << err.message;
  EXPECT_TRUE(mentions(err, "fidelity_kernels.cu:")) << err.message;
}

// A shared counter read before anything wrote it (Guide, "__shared__": not initialised).
TEST_F(SimCheckers, InitcheckReportsAnUninitialisedSharedCounter) {
  simt::ScopedChecks init(simt::kInitCheck);
  unsigned out[2] = {0, 0};
  const auto err = simtest::uninitialised_shared_counter(out);
  ASSERT_TRUE(err.failed) << "the read of the uninitialised counter must be reported";
  EXPECT_TRUE(mentions(err, "initcheck:") && mentions(err, "that no thread of the block has written")) << err.message;
}

TEST_F(SimCheckers, InitcheckReportsSlotsThatNoThreadWrote) {
  simt::ScopedChecks init(simt::kInitCheck);
  std::vector<int> out(64, -1);
  auto err = simtest::partly_written_shared(out.data(), /*initialise_all=*/true);
  ASSERT_FALSE(err.failed) << err.message;
  err = simtest::partly_written_shared(out.data(), /*initialise_all=*/false);
  ASSERT_TRUE(err.failed) << "odd threads read slots that no thread wrote";
  EXPECT_TRUE(mentions(err, "initcheck:")) << err.message;
}

// A double-buffered tile loop (the attention backward's): a stage may be refilled only after the barrier that
// follows its last read. cp.async's shared write is checked as the thread's store, ldmatrix's rows as its reads.
TEST_F(SimCheckers, RacecheckReportsAStageRefilledBeforeItsReadersPassTheBarrier) {
  simt::ScopedChecks race(simt::kRaceCheck);
  const int steps = 5;
  std::vector<unsigned> in(32 * steps), out(32, 0), want(32, 0);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned>(i * 2654435761u);
  for (int s = 0; s < steps; ++s)
    for (int l = 0; l < 32; ++l) want[l] += in[32 * s + l];
  auto err = simtest::double_buffered_tiles(in.data(), out.data(), steps, /*refill_before_barrier=*/false);
  ASSERT_FALSE(err.failed) << err.message;
  EXPECT_EQ(out, want);
  err = simtest::double_buffered_tiles(in.data(), out.data(), steps, /*refill_before_barrier=*/true);
  ASSERT_TRUE(err.failed) << "the refill of a stage that warp 0 may still read must be reported";
  EXPECT_TRUE(mentions(err, "racecheck: WAR hazard on dynamic shared memory")) << err.message;
}

// A copy read by another thread after the barrier but before its issuer waited for it. cp.async lands at the wait
// that retires it (the latest moment a GPU may), so the read is in flight whatever the schedule.
TEST_F(SimCheckers, RacecheckReportsACopyReadBeforeItsIssuerWaited) {
  simt::ScopedChecks race(simt::kRaceCheck);
  std::vector<unsigned> in(4 * 64), out(64, 0), want(64);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned>(i * 2654435761u + 1u);
  for (int t = 0; t < 64; ++t) want[t] = in[4 * ((t + 1) % 64)];
  auto err = simtest::neighbour_copy(in.data(), out.data(), /*wait=*/true);
  ASSERT_FALSE(err.failed) << err.message;
  EXPECT_EQ(out, want);
  err = simtest::neighbour_copy(in.data(), out.data(), /*wait=*/false);
  ASSERT_TRUE(err.failed) << "the read of a copy in flight must be reported";
  EXPECT_TRUE(mentions(err, "racecheck: cp.async in flight")) << err.message;
  EXPECT_TRUE(mentions(err, "no cp.async.wait_group of that thread retired it")) << err.message;
}

// ---- racecheck on global memory ----

// Thread 0 sums what every thread wrote to global memory, with and without the __syncthreads between.
TEST_F(SimCheckers, RacecheckReportsAMissingSyncthreadsOnGlobalMemory) {
  simt::ScopedChecks race(simt::kRaceCheck);
  std::vector<int> data(128, 0);
  int out = 0;
  auto err = simtest::global_sum_after_writes(data.data(), &out, 128, /*with_barrier=*/true);
  ASSERT_FALSE(err.failed) << err.message;
  EXPECT_EQ(out, 128 * 129 / 2);
  err = simtest::global_sum_after_writes(data.data(), &out, 128, /*with_barrier=*/false);
  ASSERT_TRUE(err.failed) << "the missing __syncthreads must be reported";
  EXPECT_TRUE(mentions(err, "racecheck: ") && mentions(err, " hazard on global memory at ")) << err.message;
  EXPECT_TRUE(mentions(err, "race_kernels.cu:")) << "the source line of the access: " << err.message;
  EXPECT_TRUE(mentions(err, "sum_after_writes_kernel")) << "the kernel: " << err.message;
}

// Lanes read their neighbour's global slot: a __syncwarp orders the write before the read.
TEST_F(SimCheckers, RacecheckReportsAMissingSyncwarpOnGlobalMemory) {
  simt::ScopedChecks race(simt::kRaceCheck);
  std::vector<int> data(32, 0), out(32, 0);
  auto err = simtest::global_neighbour_in_warp(data.data(), out.data(), /*with_syncwarp=*/true);
  ASSERT_FALSE(err.failed) << err.message;
  for (int l = 0; l < 32; ++l) EXPECT_EQ(out[l], 100 + (l + 1) % 32);
  err = simtest::global_neighbour_in_warp(data.data(), out.data(), /*with_syncwarp=*/false);
  ASSERT_TRUE(err.failed) << "the missing __syncwarp must be reported";
  EXPECT_TRUE(mentions(err, "hazard on global memory")) << err.message;
}

// The planted bug of test_fidelity.cpp: block b reads block b - 1's output. Under fwd the read follows the
// write (RAW), under rev it precedes it (WAR); either way one launch, one worker, no other block order needed.
TEST_F(SimCheckers, RacecheckReportsBlocksDependingOnEachOther) {
  simt::ScopedChecks race(simt::kRaceCheck);
  simt::ScopedWorkers one(1);
  for (const auto& sched : {simt::Schedule::fwd(), simt::Schedule::rev()}) {
    simt::ScopedSchedule s(sched);
    std::vector<int> out(16, 0);
    const auto err = simtest::blocks_depending_on_each_other(out.data(), 16);
    ASSERT_TRUE(err.failed) << "blocks reading each other's output must be reported, " << simt::to_string(sched);
    EXPECT_TRUE(mentions(err, sched.kind == simt::ScheduleKind::Forward ? "racecheck: RAW hazard on global memory"
                                                                         : "racecheck: WAR hazard on global memory"))
        << err.message;
    EXPECT_TRUE(mentions(err, "in another block of the launch")) << err.message;
  }
}

// The Guide's last-block reduction ("Memory Fence Functions"): the atomic counter orders every block's
// partial before the last block's reads. Choosing the last block by its index instead is a race.
TEST_F(SimCheckers, RacecheckFollowsAtomicsBetweenBlocks) {
  simt::ScopedChecks race(simt::kRaceCheck);
  constexpr int kBlocks = 12;
  std::vector<int> in(kBlocks * 64);
  std::iota(in.begin(), in.end(), 1);
  const int expected = std::accumulate(in.begin(), in.end(), 0);
  for (const auto& sched : {simt::Schedule::fwd(), simt::Schedule::rev(), simt::Schedule::random(3)}) {
    simt::ScopedSchedule s(sched);
    simt::ScopedWorkers two(2);
    std::vector<int> partial(kBlocks, 0);
    unsigned counter = 0;
    int out = 0;
    auto err = simtest::last_block_sum(in.data(), partial.data(), &counter, &out, kBlocks, /*with_atomic=*/true);
    ASSERT_FALSE(err.failed) << simt::to_string(sched) << ": " << err.message;
    EXPECT_EQ(out, expected);
  }
  std::vector<int> partial(kBlocks, 0);
  unsigned counter = 0;
  int out = 0;
  const auto err = simtest::last_block_sum(in.data(), partial.data(), &counter, &out, kBlocks, false);
  ASSERT_TRUE(err.failed) << "a last block chosen by index must be reported";
  EXPECT_TRUE(mentions(err, "hazard on global memory") && mentions(err, "in another block")) << err.message;
}

// A flag set by one thread and awaited by another: through atomics the handshake orders the data; through
// volatile accesses it is reported, because the instrumentation does not tell volatile from plain accesses
// (docs/sim.md).
TEST_F(SimCheckers, RacecheckFollowsAnAtomicFlagAndReportsAVolatileOne) {
  simt::ScopedChecks race(simt::kRaceCheck);
  int data = 0, flag = 0, out = 0;
  auto err = simtest::flag_handshake(&data, &flag, &out, /*atomic_flag=*/true);
  ASSERT_FALSE(err.failed) << err.message;
  EXPECT_EQ(out, 7);
  data = flag = out = 0;
  err = simtest::flag_handshake(&data, &flag, &out, /*atomic_flag=*/false);
  ASSERT_TRUE(err.failed);
  EXPECT_TRUE(mentions(err, "hazard on global memory")) << err.message;
}

// Bytes of one word written by different threads and blocks are different locations; a second launch over
// the same bytes follows the first.
TEST_F(SimCheckers, RacecheckTracksBytesAndLaunches) {
  simt::ScopedChecks race(simt::kRaceCheck);
  simt::ScopedWorkers two(2);
  std::vector<unsigned char> bytes(8 * 32, 0);
  for (int launch = 0; launch < 2; ++launch) {
    const auto err = simtest::byte_per_thread(bytes.data() + 3, 7);  // unaligned: words span two blocks
    ASSERT_FALSE(err.failed) << err.message;
  }
  for (int i = 0; i < 7 * 32; ++i) EXPECT_EQ(bytes[3 + i], i & 0xff);
}

// The checkers together stay silent on the emulator self-test's correct kernels.
TEST_F(SimCheckers, AllCheckersAcceptCorrectKernels) {
  simt::ScopedChecks all(simt::kAllChecks);
  std::vector<float> in(16 * 256, 0.5f);  // one element per thread
  float sum = 0.0f;
  auto err = simtest::block_reduce_sum(in.data(), &sum, static_cast<int>(in.size()), 16, 256);
  ASSERT_FALSE(err.failed) << err.message;
  EXPECT_EQ(sum, 0.5f * static_cast<float>(in.size()));
  std::vector<int> ein(64, 1), eout(64, 0);
  err = simtest::early_exit_barrier(ein.data(), eout.data(), 40, 64);
  EXPECT_FALSE(err.failed) << err.message;
}

// Without any checker: the missing wait gives the stale bytes it may give on a GPU (the first thread to run after
// the barrier reads a neighbour that has not waited), and strict mode reports the copies no wait retired.
TEST(SimAsyncCopies, AStageReadWithoutItsWaitHoldsItsOldBytes) {
  simt::ScopedChecks none(0);
  simt::ScopedStrict lax(false);
  std::vector<unsigned> in(4 * 64), out(64, 0);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned>(i * 2654435761u + 1u);
  auto err = simtest::neighbour_copy(in.data(), out.data(), /*wait=*/false);
  ASSERT_FALSE(err.failed) << err.message;
  int stale = 0;
  for (int t = 0; t < 64; ++t) stale += out[t] != in[4 * ((t + 1) % 64)];
  EXPECT_GT(stale, 0) << "every read saw its copy: the copies landed before their wait";
}

TEST(SimAsyncCopies, StrictModeReportsCopiesThatNoWaitRetired) {
  simt::ScopedChecks none(0);
  simt::ScopedStrict strict(true);
  std::vector<unsigned> in(4 * 64, 7u), out(64, 0);
  auto err = simtest::neighbour_copy(in.data(), out.data(), /*wait=*/true);
  ASSERT_FALSE(err.failed) << err.message;
  err = simtest::neighbour_copy(in.data(), out.data(), /*wait=*/false);
  ASSERT_TRUE(err.failed) << "a thread that exits with copies in flight must be reported";
  EXPECT_TRUE(mentions(err, "strict: ") && mentions(err, "exited with 1 cp.async copy that no wait_group retired"))
      << err.message;
}

}  // namespace
