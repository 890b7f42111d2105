// The GPTQ and AWQ checkpoint formats: hand-checked nibble positions, round trips and the converters to Marlin.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "int4_weights_test_support.hpp"

namespace baracuda::test {
namespace {

// ------------------------------------------------------------------------------------------ GPTQ and AWQ

TEST(Gptq, HandCheckedWords) {
  const Int4Shape shape{16, 8, -1};
  Int4Weights w = random_weights(shape, kSym, false, 800);
  for (int64_t k = 0; k < 16; ++k) w.q[k * 8 + 3] = static_cast<uint8_t>(k % 8 + 1);  // column 3: 1..8, 1..8
  auto c = gptq_pack(w);
  ASSERT_TRUE(c.is_ok()) << c.error().to_string();
  ASSERT_EQ(c->qweight.size(), 2u * 8u);
  EXPECT_EQ(static_cast<uint32_t>(c->qweight[0 * 8 + 3]), 0x87654321u);  // row 0 of qweight: k = 0..7
  EXPECT_EQ(static_cast<uint32_t>(c->qweight[1 * 8 + 3]), 0x87654321u);  // k = 8..15
  ASSERT_EQ(c->qzeros.size(), 1u);
  EXPECT_EQ(static_cast<uint32_t>(c->qzeros[0]), 0x77777777u);  // z = 8 stored as 7
  EXPECT_EQ(c->g_idx, std::vector<int32_t>(16, 0));
  // Asymmetric: z − 1 in natural nibble order.
  Int4Weights a = random_weights(shape, kAsym, false, 801);
  for (int i = 0; i < 8; ++i) a.zeros[i] = static_cast<uint8_t>(i + 1);
  auto ca = gptq_pack(a);
  ASSERT_TRUE(ca.is_ok());
  EXPECT_EQ(static_cast<uint32_t>(ca->qzeros[0]), 0x76543210u);
}

TEST(Gptq, RoundTripEveryGroupSchemeAndActOrder) {
  uint64_t seed = 900;
  for (const Int4Shape& shape : grouped_marlin_shapes())
    for (Int4Scheme scheme : {kSym, kAsym})
      for (bool act : {false, true}) {
        if (act && (shape.group == -1 || shape.group == shape.k)) continue;
        const Int4Weights w = random_weights(shape, scheme, act, seed += 10);
        auto c = gptq_pack(w);
        ASSERT_TRUE(c.is_ok()) << c.error().to_string();
        EXPECT_EQ(c->qweight.size(), static_cast<size_t>(shape.k / 8 * shape.n));
        EXPECT_EQ(c->qzeros.size(), static_cast<size_t>(shape.num_groups() * shape.n / 8));
        auto u = gptq_unpack({c->qweight, c->qzeros, c->scales, c->g_idx}, shape, scheme);
        ASSERT_TRUE(u.is_ok()) << u.error().to_string();
        Int4Weights expect = w;
        if (!act) {  // gptq_pack writes the plain g_idx explicitly
          expect.g_idx.resize(static_cast<size_t>(shape.k));
          for (int64_t k = 0; k < shape.k; ++k) expect.g_idx[k] = static_cast<int32_t>(k / shape.group_rows());
        }
        expect_same(u.value(), expect);
        // GPTQ → Marlin equals logical → Marlin.
        auto m1 = gptq_to_marlin({c->qweight, c->qzeros, c->scales, c->g_idx}, shape, scheme, act);
        auto m2 = marlin_from_int4(w, act);
        ASSERT_TRUE(m1.is_ok() && m2.is_ok());
        EXPECT_EQ(m1->qweight, m2->qweight);
        EXPECT_EQ(bits(m1->scales), bits(m2->scales));
        EXPECT_EQ(m1->zeros, m2->zeros);
        EXPECT_EQ(m1->perm, m2->perm);
      }
}

TEST(Gptq, SymmetricIgnoresQzeros) {
  // vLLM's GPTQ-Marlin path does not read qzeros for sym=True (v1 checkpoints store 7s, v2 8s, or none).
  const Int4Shape shape{64, 64, 32};
  const Int4Weights w = random_weights(shape, kSym, false, 1000);
  auto c = gptq_pack(w);
  ASSERT_TRUE(c.is_ok());
  std::vector<int32_t> v2(c->qzeros.size(), static_cast<int32_t>(0x88888888u));
  auto a = gptq_unpack({c->qweight, v2, c->scales, {}}, shape, kSym);
  auto b = gptq_unpack({c->qweight, {}, c->scales, {}}, shape, kSym);
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  EXPECT_EQ(a->q, w.q);
  EXPECT_EQ(b->q, w.q);
  EXPECT_TRUE(a->zeros.empty());
}

TEST(Awq, HandCheckedWords) {
  // Nibble i of a word holds column {0, 2, 4, 6, 1, 3, 5, 7}[i] of its run of 8.
  const Int4Shape shape{32, 16, -1};
  Int4Weights w = random_weights(shape, kAsym, false, 1100);
  for (int c = 0; c < 8; ++c) w.q[8 + c] = static_cast<uint8_t>(c + 1);  // row 0, columns 8..15: 1..8
  for (int c = 0; c < 8; ++c) w.zeros[c] = static_cast<uint8_t>(c);      // group 0, columns 0..7: 0..7
  auto a = awq_pack(w);
  ASSERT_TRUE(a.is_ok()) << a.error().to_string();
  ASSERT_EQ(a->qweight.size(), 32u * 2u);
  EXPECT_EQ(static_cast<uint32_t>(a->qweight[1]), 0x86427531u);
  EXPECT_EQ(static_cast<uint32_t>(a->qzeros[0]), 0x75316420u);  // raw zero points, no −1
  // Symmetric weights are stored with z = 8.
  auto s = awq_pack(random_weights(shape, kSym, false, 1101));
  ASSERT_TRUE(s.is_ok());
  for (int32_t z : s->qzeros) EXPECT_EQ(static_cast<uint32_t>(z), 0x88888888u);
}

TEST(Awq, RoundTripEveryGroupAndToMarlin) {
  uint64_t seed = 1200;
  for (const Int4Shape& shape : grouped_marlin_shapes()) {
    Int4Weights w = random_weights(shape, kAsym, false, seed += 10);
    for (size_t i = 0; i < w.zeros.size(); i += 7) w.zeros[i] = 0;  // AWQ stores z = 0 fine
    auto a = awq_pack(w);
    ASSERT_TRUE(a.is_ok()) << a.error().to_string();
    EXPECT_EQ(a->qweight.size(), static_cast<size_t>(shape.k * shape.n / 8));
    auto u = awq_unpack({a->qweight, a->qzeros, a->scales}, shape);
    ASSERT_TRUE(u.is_ok()) << u.error().to_string();
    expect_same(u.value(), w);
    auto m1 = awq_to_marlin({a->qweight, a->qzeros, a->scales}, shape);
    auto m2 = marlin_from_int4(w, false);
    ASSERT_TRUE(m1.is_ok() && m2.is_ok());
    EXPECT_EQ(m1->qweight, m2->qweight);
    EXPECT_EQ(bits(m1->scales), bits(m2->scales));
    EXPECT_EQ(m1->zeros, m2->zeros);
    EXPECT_EQ(m1->scheme, kAsym);
  }
}

TEST(Awq, SymmetricThroughAwqDequantizesAlike) {
  const Int4Shape shape{128, 64, 64};
  const Int4Weights w = random_weights(shape, kSym, false, 1300);
  auto a = awq_pack(w);
  ASSERT_TRUE(a.is_ok());
  auto u = awq_unpack({a->qweight, a->qzeros, a->scales}, shape);
  ASSERT_TRUE(u.is_ok());
  auto d1 = dequantize_int4(w), d2 = dequantize_int4(u.value());
  ASSERT_TRUE(d1.is_ok() && d2.is_ok());
  EXPECT_EQ(d1.value(), d2.value());
}

}  // namespace
}  // namespace baracuda::test
