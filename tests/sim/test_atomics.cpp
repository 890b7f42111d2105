// Atomics under contention from many blocks on two workers: exact integer totals and CAS loops.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "selftest_kernels.hpp"
#include "sim/emu/runtime.hpp"

namespace {

TEST(SimAtomics, ContentionFromManyBlocksGivesExactResults) {
  baracuda::simt::ScopedWorkers workers(2);
  const int blocks = 64, threads = 128, n = blocks * threads;
  simtest::AtomicCounters c;
  std::memset(static_cast<void*>(&c), 0, sizeof c);
  c.i_max = INT_MIN;
  c.i_min = INT_MAX;
  c.i_and = -1;
  c.exch_slot = -5;
  c.u_min = ~0u;
  c.ull_cas_mul = 7;
  c.ll_min = LLONG_MAX;
  c.ll_max = LLONG_MIN;
  c.h_add = __float2half(0.0f);
  c.h2_add = __floats2half2_rn(0.0f, 0.0f);
  c.bf_add = __float2bfloat16(0.0f);
  c.bf2_add = __floats2bfloat162_rn(0.0f, 0.0f);

  const auto err = simtest::atomics_contention(&c, blocks, threads);
  ASSERT_FALSE(err.failed) << err.message;

  long long sum_g = 0;
  int xor_g = 0;
  unsigned umax = 0, umin = ~0u;
  unsigned long long ull_add = 0, ull_max = 0, mul = 7;
  long long ll_min = LLONG_MAX, ll_max = LLONG_MIN;
  for (int g = 0; g < n; ++g) {
    const unsigned ug = static_cast<unsigned>(g);
    sum_g += g;
    xor_g ^= g;
    umax = std::max(umax, ug * 2654435761u);
    umin = std::min(umin, ug * 2654435761u + 12345u);
    ull_add += static_cast<unsigned long long>(g) << 20;
    ull_max = std::max(ull_max, static_cast<unsigned long long>(ug * 2654435761u) << 16);
    ll_min = std::min(ll_min, -static_cast<long long>(g) * 1000000007LL);
    ll_max = std::max(ll_max, static_cast<long long>(g % 1000) * 1000000007LL);
    mul *= 3;
  }
  EXPECT_EQ(c.i_add, n);
  EXPECT_EQ(c.i_sub, -2 * n);
  EXPECT_EQ(c.i_max, n - 1);
  EXPECT_EQ(c.i_min, -(n - 1));
  EXPECT_EQ(c.i_and, INT_MIN);  // bits 0..30 cleared
  EXPECT_EQ(c.i_or, INT_MAX);
  EXPECT_EQ(c.i_xor, xor_g);
  EXPECT_EQ(static_cast<long long>(c.i_exch_sum) + c.exch_slot, sum_g - 5);  // every value seen exactly once
  EXPECT_EQ(c.u_add, 3u * n);
  EXPECT_EQ(c.u_inc, static_cast<unsigned>(n % 10));
  EXPECT_EQ(c.u_dec, static_cast<unsigned>((10 - n % 10) % 10));
  EXPECT_EQ(c.u_max, umax);
  EXPECT_EQ(c.u_min, umin);
  EXPECT_EQ(c.ull_add, ull_add);
  EXPECT_EQ(c.ull_max, ull_max);
  EXPECT_EQ(c.ll_min, ll_min);
  EXPECT_EQ(c.ll_max, ll_max);
  EXPECT_EQ(c.ull_cas_mul, mul);
  EXPECT_EQ(c.i_cas_add, n);
  EXPECT_EQ(c.f_add, static_cast<float>(n));
  EXPECT_EQ(c.d_add, 0.5 * n);
  EXPECT_EQ(__half2float(c.h_add), 64.0f);
  EXPECT_EQ(__low2float(c.h2_add), 64.0f);
  EXPECT_EQ(__high2float(c.h2_add), 128.0f);
  EXPECT_EQ(__bfloat162float(c.bf_add), 64.0f);
  EXPECT_EQ(__low2float(c.bf2_add), 64.0f);
  EXPECT_EQ(__high2float(c.bf2_add), 128.0f);
}

}  // namespace
