// KvCacheAppendPlan: every key kind (f16, bf16, f32) × cache kind (a copy, fp8e4m3, s8) × scale layout (per
// tensor, per head) × layout (dense, a fused qkv buffer with combined [N, 2, B, H, D] caches, padded rows,
// misaligned views) × head dim (vectorised, and one that is not a whole 16-byte unit) on host, sim and cuda:
// every byte of the cache buffer is the contract's value (computed here: x / s as one float division, the
// nearest E4M3 code by search, half-to-even s8) at the targeted slots and the sentinel everywhere else; pages
// out of order, padded (-1) and out-of-range slots skipped, s32 and s64 slots; sim equals host byte for byte
// and reruns are bit-stable; special values (NaN, ±inf, −0, saturation, ties); a zero scale; empty problems.
#include "baracuda/ops/kv_cache.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "ops/kv_cache_test_support.hpp"
#include "support/devices.hpp"
#include "support/random.hpp"

namespace baracuda::test {
namespace {

using namespace kv;

/// Slots for 13 tokens over 5 pages of 4: pages visited out of order, two paddings (-1, -7), two out of
/// range (exactly num_slots, and far past), the rest distinct.
std::vector<int64_t> slot_list(int64_t num_slots) {
  return {9, 2, -1, 17, num_slots, 4, 14, -7, 0, 19, num_slots + 1000000, 11, 6};
}

/// Random values in [-6, 6) rounded to the kind, with special values at fixed places (in the unquantized
/// sections' range too): NaN, ±inf, −0, ±(beyond saturation), and halves that tie for s8 with scale 1/2.
std::vector<double> values(K k, int64_t n, uint64_t seed) {
  std::vector<double> v;
  random_floats(k, n, -6, 6, seed, &v);
  const double big = k == K::F16 ? 60000.0 : 0x1p99;
  const double special[] = {NAN, INFINITY, -INFINITY, -0.0, big, -big, 1.25, -1.25, 0.75, 3.5, 1000.0, -1000.0};
  for (size_t i = 0; i < std::size(special) && i * 7 < v.size(); ++i) v[i * 7] = special[i];
  return v;
}

Problem make_problem(K kind, K cache, KvScaleLayout sl, int64_t dim, K slot_kind, uint64_t seed) {
  Problem p;
  p.d = KvCacheAppendDescriptor()
            .with_kinds(kind, cache, slot_kind)
            .with_scale_layout(sl)
            .with_tokens(13, 3, dim)
            .with_pages(5, 4);
  p.key = values(kind, 13 * 3 * dim, seed);
  p.value = values(kind, 13 * 3 * dim, seed + 1);
  p.slots = slot_list(20);
  if (p.d.quantized()) {
    // Not powers of two, so the division rounds; one of 1/2 makes the s8 ties.
    p.k_scale = sl == KvScaleLayout::PerHead ? std::vector<float>{0.5f, 0.037f, 1.7f} : std::vector<float>{0.043f};
    p.v_scale = sl == KvScaleLayout::PerHead ? std::vector<float>{0.11f, 0.5f, 2.3f} : std::vector<float>{0.5f};
  }
  return p;
}

struct Case {
  K kind, cache;
  KvScaleLayout scales;
  Layout layout;
  int64_t dim;
  DeviceKind device;
  std::string name;
};

std::vector<Case> cases() {
  std::vector<Case> v;
  for (K k : {K::F16, K::Bf16, K::F32})
    for (K c : {k, K::Fp8E4M3, K::S8})
      for (KvScaleLayout sl : {KvScaleLayout::PerTensor, KvScaleLayout::PerHead}) {
        if (c == k && sl == KvScaleLayout::PerHead) continue;
        for (Layout l : {Layout::Dense, Layout::Combined, Layout::Padded, Layout::Offset})
          for (int64_t dim : {64, 40})
            for (DeviceKind dev : kTestDevices)
              v.push_back({k, c, sl, l, dim, dev,
                           std::string(to_string(k)) + "_" + std::string(to_string(c)) + "_" +
                               std::string(to_string(sl)) + "_" + to_string(l) + "_d" + std::to_string(dim) + "_" +
                               std::string(to_string(dev))});
      }
  return v;
}

class KvCacheAppend : public ::testing::TestWithParam<Case> {};

TEST_P(KvCacheAppend, WritesTheContractsValuesAtTheSlotsAndNothingElse) {
  const Case& c = GetParam();
  BARACUDA_TEST_STREAM(stream, c.device);
  auto probe = dynamic::KvCacheAppendPlan::select(stream, KvCacheAppendDescriptor().with_kinds(c.kind, c.cache));
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(probe, c.device);
  const K slot_kind = c.dim == 64 ? K::S64 : K::S32;
  const Problem p = make_problem(c.kind, c.cache, c.scales, c.dim, slot_kind, 100 + c.dim);
  const Outcome o = run_append(stream, p, c.layout);
  ASSERT_TRUE(o.ok);
  expect_cache(p, o, c.name);
  // Bit-stable: a rerun over fresh caches writes the same bytes; sim and cuda equal the host byte for byte.
  const Outcome again = run_append(stream, p, c.layout);
  EXPECT_EQ(again.cache, o.cache) << c.name << ": rerun";
  if (c.device != DeviceKind::Host) {
    const Outcome host = run_append(Stream::host(), p, c.layout);
    EXPECT_EQ(host.cache, o.cache) << c.name << ": against the host";
  }
}

INSTANTIATE_TEST_SUITE_P(All, KvCacheAppend, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

/// A scale of zero: x / 0 is ±inf (saturated: 448, 127 / −128) and 0 / 0 NaN (fp8 NaN, s8 0).
TEST(KvCacheAppendValues, ZeroScaleSaturatesAndNanIsTheKindsNan) {
  for (DeviceKind dev : {DeviceKind::Host, DeviceKind::Sim})
    for (K cache : {K::Fp8E4M3, K::S8}) {
      std::string why;
      auto stream = stream_for(dev, &why);
      ASSERT_TRUE(stream) << why;
      Problem p;
      p.d = KvCacheAppendDescriptor().with_kinds(K::F16, cache).with_tokens(1, 1, 16).with_pages(1, 1);
      p.key.assign(16, 0.0), p.value.assign(16, 0.0);
      p.key[1] = 2, p.key[2] = -3, p.key[3] = -0.0;
      p.slots = {0}, p.k_scale = {0.0f}, p.v_scale = {0.0f};
      const Outcome o = run_append(*stream, p, Layout::Dense);
      ASSERT_TRUE(o.ok);
      const auto* kc = &o.cache[static_cast<size_t>(o.kc.offset)];
      if (cache == K::Fp8E4M3) {
        EXPECT_EQ(kc[0], 0x7F);  // 0 / 0
        EXPECT_EQ(kc[1], 0x7E);  // +448
        EXPECT_EQ(kc[2], 0xFE);  // -448
        EXPECT_EQ(kc[3], 0x7F);  // -0 / 0
      } else {
        EXPECT_EQ(kc[0], 0);
        EXPECT_EQ(kc[1], 127);
        EXPECT_EQ(kc[2], 0x80);  // -128
        EXPECT_EQ(kc[3], 0);
      }
      expect_cache(p, o, "zero scale");
    }
}

/// Hand-computed values: fp8 rounding to nearest even at the division's f32 result (the reciprocal would
/// differ), s8 ties to even, saturation.
TEST(KvCacheAppendValues, HandComputedQuantization) {
  for (DeviceKind dev : {DeviceKind::Host, DeviceKind::Sim}) {
    std::string why;
    auto stream = stream_for(dev, &why);
    ASSERT_TRUE(stream) << why;
    Problem p;
    p.d = KvCacheAppendDescriptor().with_kinds(K::F32, K::S8).with_tokens(1, 1, 8).with_pages(2, 1);
    p.key = {1.0, 1.5, 2.5, -2.5, -0.5, 300, -300, std::nextafter(0.5f, 0.0f)};
    p.value = {4.5, 5.5, 0, 0, 0, 0, 0, 0};
    p.slots = {1}, p.k_scale = {1.0f}, p.v_scale = {1.0f};
    Outcome o = run_append(*stream, p, Layout::Dense);
    ASSERT_TRUE(o.ok);
    const auto at = [&](const View& v, int e) {
      return static_cast<int8_t>(o.cache[static_cast<size_t>(v.at(1, 0, 0, e))]);
    };
    const int8_t want[] = {1, 2, 2, -2, 0, 127, -128, 0};
    for (int e = 0; e < 8; ++e) EXPECT_EQ(at(o.kc, e), want[e]) << e;
    EXPECT_EQ(at(o.vc, 0), 4);
    EXPECT_EQ(at(o.vc, 1), 6);
    // fp8 (E4M3 steps of 2^-5 in [0.25, 0.5), subnormals of 2^-9): 0.328125 and 0.359375 are midpoints
    // (to the even codes 0x2A, 0x2C), 448 is the largest, 464 and 480 saturate, 2^-9 is the least subnormal
    // and 1.5·2^-9 ties to 2^-8.
    p.d.with_kinds(K::F32, K::Fp8E4M3);
    p.key = {0.328125, 0.359375, 448, 464, 480, -1e6, 1.0 / 512, 3.0 / 1024};
    o = run_append(*stream, p, Layout::Dense);
    ASSERT_TRUE(o.ok);
    const uint8_t want8[] = {0x2A, 0x2C, 0x7E, 0x7E, 0x7E, 0xFE, 0x01, 0x02};
    for (int e = 0; e < 8; ++e) EXPECT_EQ(o.cache[static_cast<size_t>(o.kc.at(1, 0, 0, e))], want8[e]) << e;
    expect_cache(p, o, "hand-computed");
  }
}

/// The quotient is x / s, not x times a rounded reciprocal: for s = 0.1f these keys (from NumPy) give an f32
/// quotient on one side of an s8 or E4M3 rounding boundary and x·f32(1/s) on the other (-72 vs -73, …).
TEST(KvCacheAppendValues, DividesByTheScaleRatherThanMultiplyingByItsReciprocal) {
  const uint32_t s8_keys[] = {0xC0E80001u, 0xC1326666u, 0xC1026666u};
  const int8_t s8_want[] = {-72, -111, -81};
  const uint32_t fp8_keys[] = {0xC1C66666u, 0xC0C66666u, 0xBFC66666u};
  const uint8_t fp8_want[] = {0xF7, 0xE7, 0xD7};
  for (DeviceKind dev : {DeviceKind::Host, DeviceKind::Sim})
    for (K cache : {K::S8, K::Fp8E4M3}) {
      std::string why;
      auto stream = stream_for(dev, &why);
      ASSERT_TRUE(stream) << why;
      Problem p;
      p.d = KvCacheAppendDescriptor().with_kinds(K::F32, cache).with_tokens(1, 1, 16).with_pages(1, 1);
      p.key.assign(16, 0.0), p.value.assign(16, 0.0);
      for (int i = 0; i < 3; ++i) {
        float x;
        std::memcpy(&x, cache == K::S8 ? &s8_keys[i] : &fp8_keys[i], 4);
        p.key[static_cast<size_t>(i)] = x;
      }
      p.slots = {0}, p.k_scale = {0.1f}, p.v_scale = {0.1f};
      const Outcome o = run_append(*stream, p, Layout::Dense);
      ASSERT_TRUE(o.ok);
      for (int i = 0; i < 3; ++i) {
        const uint8_t got = o.cache[static_cast<size_t>(o.kc.at(0, 0, 0, i))];
        if (cache == K::S8)
          EXPECT_EQ(static_cast<int8_t>(got), s8_want[i]) << to_string(dev) << " key " << i;
        else
          EXPECT_EQ(got, fp8_want[i]) << to_string(dev) << " key " << i;
      }
      expect_cache(p, o, "division");
    }
}

TEST(KvCacheAppendValues, EmptyProblemWritesNothing) {
  for (DeviceKind dev : {DeviceKind::Host, DeviceKind::Sim}) {
    std::string why;
    auto stream = stream_for(dev, &why);
    ASSERT_TRUE(stream) << why;
    Problem p;
    p.d = KvCacheAppendDescriptor().with_kinds(K::Bf16, K::Fp8E4M3).with_tokens(0, 2, 32).with_pages(3, 16);
    p.k_scale = {1.0f}, p.v_scale = {1.0f};
    const Outcome o = run_append(*stream, p, Layout::Combined);
    ASSERT_TRUE(o.ok);
    for (uint8_t b : o.cache) ASSERT_EQ(b, kSentinel);
  }
}

/// Every slot of a larger cache written once, in a shuffled order, with vLLM's page size 16: the caches are
/// then the tokens in slot order.
TEST(KvCacheAppendValues, FillsEverySlotInAnyOrder) {
  for (DeviceKind dev : {DeviceKind::Host, DeviceKind::Sim}) {
    std::string why;
    auto stream = stream_for(dev, &why);
    ASSERT_TRUE(stream) << why;
    Problem p;
    p.d = KvCacheAppendDescriptor().with_kinds(K::F16, K::F16).with_tokens(96, 2, 128).with_pages(6, 16);
    random_floats(K::F16, 96 * 2 * 128, -2, 2, 7, &p.key);
    random_floats(K::F16, 96 * 2 * 128, -2, 2, 8, &p.value);
    for (int64_t t = 0; t < 96; ++t) p.slots.push_back((t * 37) % 96);
    const Outcome o = run_append(*stream, p, Layout::Combined);
    ASSERT_TRUE(o.ok);
    expect_cache(p, o, "every slot");
  }
}

}  // namespace
}  // namespace baracuda::test
