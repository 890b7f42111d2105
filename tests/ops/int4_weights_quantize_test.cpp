// quantize_int4: its formulas on hand-made columns (ties, all-zero groups, the f16 scale rounding), its error
// bound on random weights, and act-order (g_idx) as quantizing the sorted rows.
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

// ------------------------------------------------------------------------------------------ quantizer

TEST(QuantizeInt4, SymmetricHandMadeColumn) {
  // One group of 32 rows, 8 columns. Column 0: max 7, min −8 → s = max(7/7, 8/8) = 1; ties round to even.
  const Int4Shape shape{32, 8, 32};
  std::vector<float> w(32 * 8, 0.0f);
  const float col0[] = {-8, 7, 3.5f, 2.5f, -0.5f, 0.5f, 1.5f, -2.5f, 6.49f, -7.5f};
  const int q0[] = {0, 15, 12, 10, 8, 8, 10, 6, 14, 0};  // −7.5 → −8 (even) → 0
  for (int i = 0; i < 10; ++i) w[i * 8 + 0] = col0[i];
  // Column 1: positive only: max 1.0, min 0.25 → s = max(1/7, 0.25/8) = f16(1/7).
  for (int k = 0; k < 32; ++k) w[k * 8 + 1] = k == 0 ? 1.0f : 0.25f;
  // Column 2 stays all zero → s = 1, q = 8.
  // Column 3: a scale that overflows nothing but is not exact in f16: max 0.3 → s = f16(0.3f / 7).
  for (int k = 0; k < 32; ++k) w[k * 8 + 3] = (k % 2 ? 0.3f : -0.1f);
  auto r = quantize_int4(w, shape, kSym);
  ASSERT_TRUE(r.is_ok()) << r.error().to_string();
  const Int4Weights& q = r.value();
  EXPECT_TRUE(q.zeros.empty());
  EXPECT_EQ(__half2float(q.scales[0]), 1.0f);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(q.q[i * 8 + 0], q0[i]) << "w = " << col0[i];
  EXPECT_EQ(bits(q.scales[1]), bits(__float2half_rn(1.0f / 7.0f)));
  EXPECT_EQ(bits(q.scales[2]), bits(__float2half_rn(1.0f)));
  for (int k = 0; k < 32; ++k) EXPECT_EQ(q.q[k * 8 + 2], 8);
  EXPECT_EQ(bits(q.scales[3]), bits(__float2half_rn(0.3f / 7.0f)));
  const float s3 = __half2float(q.scales[3]);
  EXPECT_EQ(q.q[1 * 8 + 3], static_cast<uint8_t>(std::nearbyint(0.3f / s3) + 8));
  EXPECT_EQ(q.q[0 * 8 + 3], static_cast<uint8_t>(std::nearbyint(-0.1f / s3) + 8));
}

TEST(QuantizeInt4, AsymmetricHandMadeColumn) {
  const Int4Shape shape{32, 8, -1};
  std::vector<float> w(32 * 8, 0.0f);
  // Column 0: min −1.5, max 6: s = 7.5 / 15 = 0.5, z = round(|−1.5 / 0.5|) = 3; q = round(w / 0.5) + 3.
  const float col0[] = {-1.5f, 6.0f, 0.25f, 0.75f, -0.25f, 1.0f};
  const int q0[] = {0, 15, 3, 5, 3, 5};  // 0.5 → 0, 1.5 → 2, −0.5 → −0 (ties to even)
  for (int i = 0; i < 6; ++i) w[i * 8] = col0[i];
  // Column 1 all zero: s = f16(1e-5 / 15) (a subnormal, 0x000b), z = 0, q = 0.
  auto r = quantize_int4(w, shape, kAsym);
  ASSERT_TRUE(r.is_ok()) << r.error().to_string();
  const Int4Weights& q = r.value();
  EXPECT_EQ(__half2float(q.scales[0]), 0.5f);
  EXPECT_EQ(q.zeros[0], 3);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(q.q[i * 8], q0[i]) << "w = " << col0[i];
  EXPECT_EQ(bits(q.scales[1]), 0x000b);
  EXPECT_EQ(q.zeros[1], 0);
  for (int k = 0; k < 32; ++k) EXPECT_EQ(q.q[k * 8 + 1], 0);
}

TEST(QuantizeInt4, ErrorBoundAndDequantizeOnRandomWeights) {
  // |w − dequant| ≤ s/2 wherever the value is inside the clamp range, for every group and both schemes.
  Rng rng(1400);
  for (int64_t g : kGroups)
    for (Int4Scheme scheme : {kSym, kAsym}) {
      const Int4Shape shape{256, 64, g};
      std::vector<float> w(256 * 64);
      for (auto& v : w) v = static_cast<float>(rng.uniform(-1, 1) * rng.uniform(0, 0.1));
      auto r = quantize_int4(w, shape, scheme);
      ASSERT_TRUE(r.is_ok()) << r.error().to_string();
      auto d = dequantize_int4(r.value());
      ASSERT_TRUE(d.is_ok());
      int64_t clamped = 0;
      for (int64_t k = 0; k < 256; ++k)
        for (int64_t n = 0; n < 64; ++n) {
          const int64_t gi = k / shape.group_rows();
          const float s = __half2float(r->scales[gi * 64 + n]);
          const float z = scheme == kSym ? 8.0f : r->zeros[gi * 64 + n];
          const uint8_t qv = r->q[k * 64 + n];
          EXPECT_EQ(d.value()[k * 64 + n], (static_cast<float>(qv) - z) * s);
          if (qv == 0 || qv == 15) {
            ++clamped;
            continue;
          }
          EXPECT_LE(std::fabs(w[k * 64 + n] - d.value()[k * 64 + n]), 0.5f * s * (1 + 1e-6f));
        }
      EXPECT_LT(clamped, 256 * 64 / 8);
    }
}

TEST(QuantizeInt4, GIdxEqualsQuantizingTheSortedRows) {
  // Quantizing with an act-order g_idx gives, row for row, what plain groups give on the rows sorted by group.
  const Int4Shape shape{128, 64, 32};
  const Int4Weights ref = random_weights(shape, kSym, true, 1500);  // only its g_idx is used
  Rng rng(1501);
  std::vector<float> w(128 * 64);
  for (auto& v : w) v = static_cast<float>(rng.uniform(-0.05, 0.05));
  std::vector<int32_t> perm(128);
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(), [&](int a, int b) { return ref.g_idx[a] < ref.g_idx[b]; });
  std::vector<float> sorted(w.size());
  for (int i = 0; i < 128; ++i) std::copy_n(w.begin() + perm[i] * 64, 64, sorted.begin() + i * 64);
  for (Int4Scheme scheme : {kSym, kAsym}) {
    auto a = quantize_int4(w, shape, scheme, ref.g_idx);
    auto b = quantize_int4(sorted, shape, scheme);
    ASSERT_TRUE(a.is_ok() && b.is_ok());
    EXPECT_EQ(bits(a->scales), bits(b->scales));
    EXPECT_EQ(a->zeros, b->zeros);
    EXPECT_EQ(a->g_idx, ref.g_idx);
    for (int i = 0; i < 128; ++i)
      for (int n = 0; n < 64; ++n) EXPECT_EQ(a->q[perm[i] * 64 + n], b->q[i * 64 + n]);
  }
}

}  // namespace
}  // namespace baracuda::test
