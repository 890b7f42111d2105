// Block-level behaviour of the emulator: barriers with exited threads, shared-memory isolation between
// concurrent blocks, dynamic shared memory, spin-waits, schedules exposing a planted race, performance.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "selftest_kernels.hpp"
#include "sim/emu/runtime.hpp"

namespace {

namespace simt = baracuda::simt;

TEST(SimBlock, BarrierIgnoresThreadsThatExitedEarly) {
  std::mt19937 rng(5);
  for (int n : {77, 100, 1, 2}) {
    const int threads = 100;
    std::vector<int> in(threads), out(threads, -7);
    for (auto& x : in) x = static_cast<int>(rng() % 11) - 5;
    const auto err = simtest::early_exit_barrier(in.data(), out.data(), n, threads);
    ASSERT_FALSE(err.failed) << err.message;
    int positive = 0;
    for (int i = 0; i < n; ++i) positive += in[i] > 0;
    for (int i = 0; i < threads; ++i) {
      if (i >= n) {
        EXPECT_EQ(out[i], -7);
        continue;
      }
      const int partner = i ^ 1;
      EXPECT_EQ(out[i], (partner < n ? in[partner] : in[i]) + positive * 1000) << "n " << n << " i " << i;
    }
  }
}

TEST(SimBlock, SyncthreadsCountAndOr) {
  std::mt19937 rng(6);
  for (int live : {96, 70, 1}) {
    for (int all_ones = 0; all_ones < 2; ++all_ones) {
      std::vector<int> pred(96), out(96 * 3, -1);
      for (auto& p : pred) p = all_ones ? 3 : static_cast<int>(rng() % 2) * (1 + static_cast<int>(rng() % 5));
      const auto err = simtest::barrier_predicates(pred.data(), out.data(), live, 96);
      ASSERT_FALSE(err.failed) << err.message;
      int count = 0;
      for (int t = 0; t < live; ++t) count += pred[t] != 0;
      for (int t = 0; t < live; ++t) {
        EXPECT_EQ(out[t * 3 + 0], count);
        EXPECT_EQ(out[t * 3 + 1], count == live ? 1 : 0);
        EXPECT_EQ(out[t * 3 + 2], count > 0 ? 1 : 0);
      }
      for (int t = live; t < 96; ++t) EXPECT_EQ(out[t * 3], -1);
    }
  }
}

TEST(SimBlock, SharedMemoryIsPerBlockWithConcurrentWorkers) {
  simt::ScopedWorkers workers(2);
  int errors = 0;
  const auto err = simtest::shared_isolation(64, 20, &errors);
  ASSERT_FALSE(err.failed) << err.message;
  EXPECT_EQ(errors, 0);
}

TEST(SimBlock, DynamicSharedMemory) {
  const int blocks = 16, threads = 128;
  std::vector<float> in(blocks * threads), out(blocks, -1.0f);
  for (int i = 0; i < blocks * threads; ++i) in[i] = static_cast<float>((i * 37) % 101);
  const auto err = simtest::dynamic_smem_sum(in.data(), out.data(), blocks, threads);
  ASSERT_FALSE(err.failed) << err.message;
  for (int b = 0; b < blocks; ++b) {
    double sum = 0;
    for (int t = 0; t < threads; ++t) sum += in[b * threads + t];
    EXPECT_EQ(out[b], static_cast<float>(sum)) << b;
  }
}

TEST(SimBlock, NanosleepSpinWaitOnAFlagSetByAnotherThreadCompletes) {
  const int blocks = 8;
  for (int threads : {64, 2, 256}) {
    std::vector<int> buf(3 * blocks, 0);  // out, flags, data
    const auto err = simtest::nanosleep_flag(buf.data(), blocks, threads);
    ASSERT_FALSE(err.failed) << err.message;
    for (int b = 0; b < blocks; ++b) EXPECT_EQ(buf[b], 42 + b);
  }
}

int wrong_block_sums(bool with_barrier, int blocks, int threads) {
  std::vector<int> in(blocks * threads), out(blocks, 0);
  for (int i = 0; i < blocks * threads; ++i) in[i] = 1 + i % threads + 3 * (i / threads);
  const auto err = simtest::last_thread_sum(in.data(), out.data(), blocks, threads, with_barrier);
  EXPECT_FALSE(err.failed) << err.message;
  int wrong = 0;
  for (int b = 0; b < blocks; ++b) {
    int sum = 0;
    for (int t = 0; t < threads; ++t) sum += in[b * threads + t];
    wrong += out[b] != sum;
  }
  return wrong;
}

TEST(SimBlock, ReverseScheduleExposesAMissingSyncthreads) {
  const int blocks = 8, threads = 128;
  {
    // The race is hidden in forward order: the reading thread runs last.
    simt::ScopedSchedule s(simt::Schedule::fwd());
    EXPECT_EQ(wrong_block_sums(false, blocks, threads), 0);
  }
  {
    simt::ScopedSchedule s(simt::Schedule::rev());
    EXPECT_EQ(wrong_block_sums(false, blocks, threads), blocks);
  }
  for (auto sched : {simt::Schedule::fwd(), simt::Schedule::rev(), simt::Schedule::random(7)}) {
    simt::ScopedSchedule s(sched);
    EXPECT_EQ(wrong_block_sums(true, blocks, threads), 0) << simt::to_string(sched);
  }
}

TEST(SimBlock, BarrierFreeBlocksRunOnOneFiberEach) {
  // The fast path: threads that never block run back to back on one fiber, in schedule order, so a
  // block costs two switches (into its fiber and back) whatever its size.
  int out = 0;
  const auto before = simt::stats();
  ASSERT_FALSE(simtest::config_probe(&out, 64, 256, 1, 1, 0).failed);
  const auto after = simt::stats();
  EXPECT_EQ(out, 1);
  EXPECT_EQ(after.blocks - before.blocks, 64u);
  EXPECT_EQ(after.threads - before.threads, 64u * 256u);
  EXPECT_EQ(after.switches - before.switches, 2u * 64u);
}

TEST(SimBlock, ReductionOfOneMillionElements) {
  const int threads = 256, blocks = 4096, n = threads * blocks;
  std::vector<float> in(n);
  double expect = 0;
  for (int i = 0; i < n; ++i) {
    in[i] = static_cast<float>(i % 7);
    expect += in[i];
  }
  float out = 0.0f;
  const auto before = simt::stats();
  const auto t0 = std::chrono::steady_clock::now();
  const auto err = simtest::block_reduce_sum(in.data(), &out, n, blocks, threads);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const auto after = simt::stats();
  ASSERT_FALSE(err.failed) << err.message;
  EXPECT_EQ(static_cast<double>(out), expect);
  std::printf("[ perf     ] 4096x256 block reduction: %.1f ms, %llu fiber switches, %u workers, schedule %s\n", ms,
              static_cast<unsigned long long>(after.switches - before.switches), simt::get_workers(),
              simt::to_string(simt::get_schedule()).c_str());
  RecordProperty("reduction_ms", static_cast<int>(ms));
}

}  // namespace
