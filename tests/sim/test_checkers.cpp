// The emulator's checkers (BARACUDA_SIM_CHECK: synccheck, initcheck, racecheck) against planted bugs, each also
// written correctly: the checker must report the bug and stay silent on the correct kernel.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "fidelity_kernels.hpp"
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

}  // namespace
