// Errors the emulator reports instead of hanging or crashing: deadlocks with every thread's wait state,
// strict-mode violations, __trap(), invalid launch configurations; and the configuration API.
#include <gtest/gtest.h>

#include <cstdlib>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "selftest_kernels.hpp"
#include "sim/emu/runtime.hpp"

namespace {

namespace simt = baracuda::simt;

constexpr int kAnyCode = -1;              // failed_with: any error code
constexpr int kLaunchTimeout = 702;       // cudaErrorLaunchTimeout: deadlock
constexpr int kIllegalInstruction = 715;  // cudaErrorIllegalInstruction: strict-mode violation
constexpr int kLaunchFailure = 719;       // cudaErrorLaunchFailure: __trap()
constexpr int kInvalidConfiguration = 9;  // cudaErrorInvalidConfiguration
constexpr int kInvalidValue = 1;          // cudaErrorInvalidValue

// The launch failed with `code` (or kAnyCode), and its message holds each of `parts`.
::testing::AssertionResult failed_with(const baracuda::launch::LaunchError& err, int code,
                                       std::initializer_list<std::string_view> parts) {
  if (!err.failed) return ::testing::AssertionFailure() << "the launch did not fail";
  if (code != kAnyCode && err.code != code)
    return ::testing::AssertionFailure() << "error code " << err.code << ", not " << code << ": " << err.message;
  for (std::string_view part : parts)
    if (err.message.find(part) == std::string::npos)
      return ::testing::AssertionFailure() << "expected to find\n  " << part << "\nin\n  " << err.message;
  return ::testing::AssertionSuccess();
}

// A launch that must work (after an error) and leave no error behind.
void expect_healthy() {
  std::vector<int> in(64, 1), out(64, 0);
  const auto err = simtest::early_exit_barrier(in.data(), out.data(), 64, 64);
  ASSERT_FALSE(err.failed) << err.message;
  for (int i = 0; i < 64; ++i) ASSERT_EQ(out[i], 1 + 64 * 1000);
  EXPECT_FALSE(simt::take_last_error().failed);
}

TEST(SimErrors, DeadlockBetweenABarrierAndAShuffleIsReportedWithWaitStates) {
  std::vector<int> out(64, 0);
  ASSERT_TRUE(failed_with(simtest::barrier_vs_shuffle_deadlock(out.data()), kLaunchTimeout,
                          {"deadlock in block (0,0,0)", "threads 0-31: waiting at __syncthreads",
                           "threads 32-47: waiting in __shfl_sync at ", "block_kernels.cu:",
                           " with mask 0xffffffff (warp 1; lanes not in the same call: 0xffff0000)",
                           "threads 48-63: waiting at __syncthreads"}));
  EXPECT_FALSE(simt::take_last_error().failed) << "take_last_error must clear the error";
  expect_healthy();
}

TEST(SimErrors, StrictModeReportsAShuffleNamingExitedLanes) {
  std::vector<int> in(32), out(32, -1);
  for (int i = 0; i < 32; ++i) in[i] = 10 * i;
  {
    simt::ScopedStrict strict(true);
    ASSERT_TRUE(failed_with(simtest::shfl_exited_lanes(in.data(), out.data(), 0xffff0000u), kIllegalInstruction,
                            {"__shfl_xor_sync: mask 0xffffffff names exited or nonexistent lanes"}));
  }
  // Without strict mode the exited lanes are left out of the group and nothing is reported.
  simt::ScopedStrict lenient(false);
  std::fill(out.begin(), out.end(), -1);
  const auto err = simtest::shfl_exited_lanes(in.data(), out.data(), 0xffff0000u);
  ASSERT_FALSE(err.failed) << err.message;
  for (int i = 0; i < 16; ++i) EXPECT_EQ(out[i], 10 * (i ^ 1));
  expect_healthy();
}

TEST(SimErrors, StrictModeReportsALaneOutsideItsOwnMask) {
  std::vector<int> out(2, 0);
  simt::ScopedStrict strict(true);
  ASSERT_TRUE(failed_with(simtest::shfl_not_in_own_mask(out.data()), kIllegalInstruction,
                          {"mask 0x00000002 does not contain the calling lane"}));
  EXPECT_EQ(out[0], 7);  // ran alone: its own value
  EXPECT_EQ(out[1], 9);
}

TEST(SimErrors, StrictModeReportsAReadOfALaneOutsideTheGroup) {
  std::vector<int> in(32), out(32), b(32, 16);
  for (int i = 0; i < 32; ++i) in[i] = i;
  simt::ScopedStrict strict(true);
  ASSERT_TRUE(failed_with(simtest::shfl<int>(simtest::kShflXor, in.data(), out.data(), b.data(), 32, 0x0000ffffu, 32),
                          kAnyCode, {"__shfl_xor_sync: lane 0 reads lane 16, which is not in the group"}));
  for (int i = 0; i < 16; ++i) EXPECT_EQ(out[i], i);  // own value
}

TEST(SimErrors, LanesInDifferentCollectivesDeadlockAndStrictModeSaysTheyDisagree) {
  std::vector<int> out(32, 0);
  {
    simt::ScopedStrict lenient(false);
    ASSERT_TRUE(failed_with(simtest::warp_disagree(out.data()), kLaunchTimeout,
                            {"threads 0-15: waiting in __ballot_sync at ", "threads 16-31: waiting in __shfl_sync at ",
                             "warp_kernels.cu:", " with mask 0xffffffff"}));
  }
  simt::ScopedStrict strict(true);
  ASSERT_TRUE(failed_with(simtest::warp_disagree(out.data()), kAnyCode, {"lanes disagree", "deadlock"}));
  expect_healthy();
}

TEST(SimErrors, TrapAbandonsTheLaunchAndNamesTheThread) {
  std::vector<int> out(8 * 32, 0);
  simt::ScopedWorkers one(1);  // blocks in order: the ones after the trapping block never start
  simt::ScopedSchedule fwd(simt::Schedule::fwd());
  ASSERT_TRUE(failed_with(simtest::trap_in_block(out.data(), 8), kLaunchFailure,
                          {"block (3,0,0) thread (5,0,0)", "__trap()"}));
  for (int i = 0; i < 3 * 32; ++i) EXPECT_EQ(out[i], 1);
  for (int i = 4 * 32; i < 8 * 32; ++i) EXPECT_EQ(out[i], 0);
  expect_healthy();
}

TEST(SimErrors, InvalidLaunchConfigurationsDoNotRun) {
  int out = 0;
  struct Case {
    unsigned gx, bx, by, bz;
    std::size_t smem;
    int code;
  };
  const Case cases[] = {
      {1, 1025, 1, 1, 0, kInvalidConfiguration}, {0, 32, 1, 1, 0, kInvalidConfiguration},
      {1, 0, 1, 1, 0, kInvalidConfiguration},    {1, 1, 1, 65, 0, kInvalidConfiguration},
      {1, 64, 32, 1, 0, kInvalidConfiguration},  {1, 32, 1, 1, 227 * 1024 + 1, kInvalidValue},
  };
  for (const Case& c : cases) {
    const auto err = simtest::config_probe(&out, c.gx, c.bx, c.by, c.bz, c.smem);
    ASSERT_TRUE(err.failed) << c.gx << " " << c.bx << " " << c.by << " " << c.bz << " " << c.smem;
    EXPECT_EQ(err.code, c.code) << err.message;
    EXPECT_EQ(out, 0);
  }
  ASSERT_FALSE(simtest::config_probe(&out, 1, 1024, 1, 1, 227 * 1024).failed);
  EXPECT_EQ(out, 1);
}

TEST(SimConfig, ScheduleParsingAndEnvironment) {
  simt::Schedule s;
  ASSERT_TRUE(simt::parse_schedule("fwd", &s));
  EXPECT_EQ(s, simt::Schedule::fwd());
  ASSERT_TRUE(simt::parse_schedule("rev", &s));
  EXPECT_EQ(s, simt::Schedule::rev());
  ASSERT_TRUE(simt::parse_schedule("rand:7", &s));
  EXPECT_EQ(s, simt::Schedule::random(7));
  EXPECT_EQ(simt::to_string(s), "rand:7");
  EXPECT_FALSE(simt::parse_schedule("rand:", &s));
  EXPECT_FALSE(simt::parse_schedule("backwards", &s));
  // The test binary is registered once per schedule: the environment must have been picked up.
  if (const char* env = std::getenv("BARACUDA_SIM_SCHEDULE")) {
    ASSERT_TRUE(simt::parse_schedule(env, &s));
    EXPECT_EQ(simt::get_schedule(), s);
  }
  {
    simt::ScopedSchedule scoped(simt::Schedule::random(3));
    EXPECT_EQ(simt::get_schedule(), simt::Schedule::random(3));
  }
  EXPECT_GE(simt::get_workers(), 1u);
  EXPECT_GE(simt::stack_bytes(), 16u * 1024);
}

TEST(SimErrorsDeathTest, AForkedChildCanLaunch) {
  // fork() without exec (gtest's default death-test style) while the worker pool exists: the child must
  // get a working pool of its own instead of waiting for the parent's threads.
  simt::ScopedWorkers two(2);
  int errors = 0;
  ASSERT_FALSE(simtest::shared_isolation(8, 2, &errors).failed);
  GTEST_FLAG_SET(death_test_style, "fast");
  EXPECT_EXIT(
      {
        int child_errors = 0;
        const bool ok = !simtest::shared_isolation(8, 2, &child_errors).failed && child_errors == 0;
        std::_Exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(SimErrorsDeathTest, WatchdogAbortsASpinWaitWithoutNanosleep) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        simt::set_watchdog_seconds(1);
        std::vector<int> buf(3, 0);
        simtest::spin_without_sleep(buf.data());
      },
      "watchdog");
}

}  // namespace
