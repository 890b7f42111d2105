// Warp intrinsics of the emulator against the documented CUDA semantics, computed independently here.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "selftest_kernels.hpp"
#include "sim/emu/runtime.hpp"

namespace {

using simtest::kShflDown;
using simtest::kShflIdx;
using simtest::kShflUp;
using simtest::kShflXor;

// Partial masks and partial warps read lanes outside the group on purpose: the lenient semantics are
// tested here (strict mode, which reports them, is tested in test_errors.cpp).
using Lenient = baracuda::simt::ScopedStrict;

bool in_mask(unsigned mask, int lane) { return ((mask >> lane) & 1u) != 0; }

// CUDA programming guide semantics: lanes are split into segments of `width`; __shfl_sync reads lane
// srcLane modulo width of the caller's segment, __shfl_up/down_sync shift within the segment and keep the
// caller's value past its edge, __shfl_xor_sync reads lane ^ laneMask unless that lies in a later
// segment. A source lane that does not take part gives the caller's own value (emulator convention).
int reference_source(int mode, int lane, int b, int width) {
  const int seg = lane / width * width;
  const int pos = lane - seg;
  switch (mode) {
    case kShflIdx: return seg + ((b % width) + width) % width;
    case kShflUp: return pos >= b ? lane - b : lane;
    case kShflDown: return pos + b < width ? lane + b : lane;
    default: {
      const int j = lane ^ b;
      return j < seg + width ? j : lane;
    }
  }
}

template <class T>
T pattern(int i) {
  T v;
  std::uint64_t bits = 0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(i + 1);
  bits ^= bits >> 29;
  std::memcpy(static_cast<void*>(&v), &bits, sizeof(T));
  return v;
}

template <class T>
void check_shfl(int mode, int width, unsigned mask, const std::vector<int>& b, int threads) {
  std::vector<T> in(threads), out(threads);
  for (int i = 0; i < threads; ++i) {
    in[i] = pattern<T>(i);
    out[i] = pattern<T>(1000 + i);
  }
  const auto err = simtest::shfl<T>(mode, in.data(), out.data(), b.data(), width, mask, threads);
  ASSERT_FALSE(err.failed) << err.message;
  for (int i = 0; i < threads; ++i) {
    const int lane = i % 32, base = i - lane;
    const int live_lanes = std::min(32, threads - base);  // lanes that exist in this warp
    if (!in_mask(mask, lane)) {  // did not call: untouched
      const T untouched = pattern<T>(1000 + i);
      ASSERT_EQ(0, std::memcmp(static_cast<const void*>(&untouched), static_cast<const void*>(&out[i]), sizeof(T)));
      continue;
    }
    int src = reference_source(mode, lane, b[i], width);
    if (!in_mask(mask, src) || src >= live_lanes) src = lane;
    const T* expect = &in[base + src];
    ASSERT_EQ(0, std::memcmp(static_cast<const void*>(expect), static_cast<const void*>(&out[i]), sizeof(T)))
        << "mode " << mode << " width " << width << " mask " << std::hex << mask << std::dec << " thread " << i
        << " b " << b[i] << " expected lane " << src;
  }
}

std::vector<int> operands(int mode, int pattern_kind, int threads, std::mt19937& rng) {
  std::vector<int> b(threads);
  const int uniform[] = {0, 1, 3, 5, 8, 16, 31};
  for (int i = 0; i < threads; ++i) {
    if (pattern_kind < 7) {
      b[i] = uniform[pattern_kind];
    } else if (mode == kShflIdx) {
      b[i] = static_cast<int>(rng() % 81) - 40;  // any srcLane, also negative and >= 32
    } else {
      b[i] = static_cast<int>(rng() % 32);
    }
  }
  return b;
}

TEST(SimWarp, ShuffleIntAllModesWidthsAndMasks) {
  Lenient lenient(false);
  std::mt19937 rng(1);
  const unsigned masks[] = {0xffffffffu, 0x0000ffffu, 0xa5a5f00fu};
  for (int threads : {64, 48}) {
    for (int mode : {kShflIdx, kShflUp, kShflDown, kShflXor})
      for (int width : {32, 16, 8, 4, 2, 1})
        for (unsigned mask : masks)
          for (int kind = 0; kind < 8; ++kind) {
            const auto b = operands(mode, kind, threads, rng);
            check_shfl<int>(mode, width, mask, b, threads);
            if (HasFatalFailure()) return;
          }
  }
}

TEST(SimWarp, ShuffleIdxReadsSrcLaneModuloWidthOfOwnSegment) {
  // __shfl_sync(v, 10, 8): every lane reads lane 10 % 8 = 2 of its own group of 8.
  std::vector<int> in(32), out(32), b(32, 10);
  for (int i = 0; i < 32; ++i) in[i] = 100 + i;
  ASSERT_FALSE(simtest::shfl<int>(kShflIdx, in.data(), out.data(), b.data(), 8, 0xffffffffu, 32).failed);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(out[i], 100 + (i / 8) * 8 + 2) << i;
}

TEST(SimWarp, ShuffleUpDownClampAtSegmentEdges) {
  std::vector<int> in(32), out(32), b(32, 3);
  for (int i = 0; i < 32; ++i) in[i] = i;
  ASSERT_FALSE(simtest::shfl<int>(kShflUp, in.data(), out.data(), b.data(), 16, 0xffffffffu, 32).failed);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(out[i], (i % 16) < 3 ? i : i - 3) << i;
  ASSERT_FALSE(simtest::shfl<int>(kShflDown, in.data(), out.data(), b.data(), 16, 0xffffffffu, 32).failed);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(out[i], (i % 16) + 3 >= 16 ? i : i + 3) << i;
}

template <class T>
class SimWarpTyped : public ::testing::Test {};
using ShuffleTypes = ::testing::Types<unsigned, long long, unsigned long long, float, double, __half, __half2,
                                      __nv_bfloat16, __nv_bfloat162>;
TYPED_TEST_SUITE(SimWarpTyped, ShuffleTypes);

TYPED_TEST(SimWarpTyped, ShuffleAllModes) {
  Lenient lenient(false);
  std::mt19937 rng(2);
  for (int mode : {kShflIdx, kShflUp, kShflDown, kShflXor})
    for (int width : {32, 8})
      for (unsigned mask : {0xffffffffu, 0x3c3c3c3cu})
        for (int kind : {1, 5, 7}) {
          const auto b = operands(mode, kind, 64, rng);
          check_shfl<TypeParam>(mode, width, mask, b, 64);
          if (this->HasFatalFailure()) return;
        }
}

TEST(SimWarp, VoteAndMatch) {
  Lenient lenient(false);
  std::mt19937 rng(3);
  for (int threads : {64, 40}) {
    for (unsigned mask : {0xffffffffu, 0x0f0f0f0fu, 0xffff0000u, 0x00000001u}) {
      std::vector<int> pred(threads);
      for (auto& p : pred) p = static_cast<int>(rng() % 3);
      if (mask == 0x0f0f0f0fu)
        for (auto& p : pred) p = 2;  // uniform: __all_sync true, __match_all_sync complete
      std::vector<unsigned> out(threads * 8, 0xdeadbeefu);
      const auto err = simtest::vote(pred.data(), out.data(), mask, threads);
      ASSERT_FALSE(err.failed) << err.message;
      for (int i = 0; i < threads; ++i) {
        const int lane = i % 32, base = i - lane, live = std::min(32, threads - base);
        if (!in_mask(mask, lane)) continue;
        unsigned group = 0, ballot = 0, same = 0;
        for (int l = 0; l < live; ++l) {
          if (!in_mask(mask, l)) continue;
          group |= 1u << l;
          if (pred[base + l] != 0) ballot |= 1u << l;
          if (pred[base + l] == pred[i]) same |= 1u << l;
        }
        const unsigned* o = &out[i * 8];
        EXPECT_EQ(o[0], ballot) << i;
        EXPECT_EQ(o[1], ballot != 0 ? 1u : 0u) << i;
        EXPECT_EQ(o[2], ballot == group ? 1u : 0u) << i;
        EXPECT_EQ(o[3], same) << i;
        const bool all_same = same == group;
        EXPECT_EQ(o[4], all_same ? group : 0u) << i;
        EXPECT_EQ(o[5], all_same ? 1u : 0u) << i;
        EXPECT_EQ(o[6], same) << i;
        EXPECT_EQ(o[7], same) << i;
      }
    }
  }
}

TEST(SimWarp, Reduce) {
  std::mt19937 rng(4);
  for (unsigned mask : {0xffffffffu, 0x80000001u, 0x00ff00ffu}) {
    std::vector<int> v(64);
    for (auto& x : v) x = static_cast<int>(rng());  // large values: the sums wrap
    std::vector<unsigned> out(64 * 9);
    const auto err = simtest::reduce(v.data(), out.data(), mask, 64);
    ASSERT_FALSE(err.failed) << err.message;
    for (int i = 0; i < 64; ++i) {
      const int lane = i % 32, base = i - lane;
      if (!in_mask(mask, lane)) continue;
      unsigned add = 0, umin = ~0u, umax = 0, band = ~0u, bor = 0, bxor = 0;
      int imin = INT32_MAX, imax = INT32_MIN;
      for (int l = 0; l < 32; ++l) {
        if (!in_mask(mask, l)) continue;
        const int x = v[base + l];
        const unsigned u = static_cast<unsigned>(x);
        add += u;
        umin = std::min(umin, u);
        umax = std::max(umax, u);
        imin = std::min(imin, x);
        imax = std::max(imax, x);
        band &= u;
        bor |= u;
        bxor ^= u;
      }
      const unsigned* o = &out[i * 9];
      EXPECT_EQ(o[0], add);
      EXPECT_EQ(o[1], umin);
      EXPECT_EQ(o[2], umax);
      EXPECT_EQ(o[3], add);
      EXPECT_EQ(static_cast<int>(o[4]), imin);
      EXPECT_EQ(static_cast<int>(o[5]), imax);
      EXPECT_EQ(o[6], band);
      EXPECT_EQ(o[7], bor);
      EXPECT_EQ(o[8], bxor);
    }
  }
}

TEST(SimWarp, ActivemaskIsTheConvergedLanesUnderEverySchedule) {
  const std::vector<int> keep = {5, 32, 1};
  std::vector<unsigned> out(96, 0);
  const auto err = simtest::activemask(keep.data(), out.data(), 96);
  ASSERT_FALSE(err.failed) << err.message;
  for (int i = 0; i < 96; ++i) {
    const int k = keep[i / 32];
    const unsigned expect = k == 32 ? 0xffffffffu : ((1u << k) - 1);
    EXPECT_EQ(out[i], i % 32 < k ? expect : 0u) << i;
  }
}

TEST(SimWarp, ThreadLayoutOfThreeDimensionalBlocks) {
  std::vector<int> out(64 * 4, -1);
  ASSERT_FALSE(simtest::thread_layout(out.data()).failed);
  for (int l = 0; l < 64; ++l) {
    EXPECT_EQ(out[l * 4 + 0], l % 8);
    EXPECT_EQ(out[l * 4 + 1], (l / 8) % 4);
    EXPECT_EQ(out[l * 4 + 2], l / 32);
    EXPECT_EQ(out[l * 4 + 3], l / 32 * 32);
  }
}

}  // namespace
