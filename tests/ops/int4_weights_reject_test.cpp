// The int4 weight packers' rejections: shapes, span sizes, values and g_idx, for every function.
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

// ------------------------------------------------------------------------------------------ rejections

TEST(Int4Rejections, Shapes) {
  const std::vector<float> w(64 * 64, 0.0f);
  expect_invalid(quantize_int4(w, {64, 64, 16}, kSym).status(), "quantize_int4", "group = 16 is not one of");
  expect_invalid(quantize_int4(w, {64, 64, 0}, kSym).status(), "quantize_int4", "group = 0 is not one of");
  expect_invalid(quantize_int4(w, {96, 64, 64}, kSym).status(), "quantize_int4", "not a multiple of group = 64");
  expect_invalid(quantize_int4(w, {-64, 64, -1}, kSym).status(), "quantize_int4", "must be >= 0");
  const std::vector<uint8_t> q(64 * 64, 0);
  expect_invalid(marlin_pack(q, 8, 64).status(), "marlin_pack", "K = 8 is not a multiple of 16");
  expect_invalid(marlin_pack(q, 64, 32).status(), "marlin_pack", "N = 32 is not a multiple of 64");
  expect_invalid(marlin_unpack({}, 24, 64).status(), "marlin_unpack", "K = 24 is not a multiple of 16");
  expect_invalid(marlin_permute_scales({}, {64, 96, -1}).status(), "marlin_permute_scales", "N = 96");
  expect_invalid(marlin_unpermute_scales({}, {64, 64, 48}).status(), "marlin_unpermute_scales", "group = 48");
  expect_invalid(marlin_pack_zeros({}, {8, 64, -1}).status(), "marlin_pack_zeros", "K = 8");
  expect_invalid(marlin_unpack_zeros({}, {64, 64, 128}).status(), "marlin_unpack_zeros", "group = 128");
  // GPTQ packs 8 rows / 8 columns per word; AWQ 8 columns.
  Int4Weights odd;
  odd.shape = {12, 8, -1};
  odd.q.assign(12 * 8, 8);
  odd.scales.assign(8, __float2half_rn(1.0f));
  expect_invalid(gptq_pack(odd).status(), "gptq_pack", "K = 12 is not a multiple of 8");
  odd.shape = {8, 12, -1};
  odd.scales.assign(12, __float2half_rn(1.0f));
  expect_invalid(gptq_pack(odd).status(), "gptq_pack", "N = 12 is not a multiple of 8");
  expect_invalid(awq_pack(odd).status(), "awq_pack", "N = 12 is not a multiple of 8");
  expect_invalid(gptq_unpack({}, {12, 8, -1}, kSym).status(), "gptq_unpack", "K = 12");
  expect_invalid(awq_unpack({}, {8, 12, -1}).status(), "awq_unpack", "N = 12");
  // Marlin converters need a Marlin shape (GPTQ/AWQ's own rules would allow 8 × 8).
  const Int4Weights small = random_weights({8, 8, -1}, kSym, false, 1);
  expect_invalid(marlin_from_int4(small, false).status(), "marlin_from_int4", "K = 8 is not a multiple of 16");
  auto g = gptq_pack(small);
  ASSERT_TRUE(g.is_ok());
  expect_invalid(gptq_to_marlin({g->qweight, g->qzeros, g->scales, g->g_idx}, small.shape, kSym, false).status(),
                 "gptq_to_marlin", "K = 8 is not a multiple of 16");
  auto a = awq_pack(small);
  ASSERT_TRUE(a.is_ok());
  expect_invalid(awq_to_marlin({a->qweight, a->qzeros, a->scales}, small.shape).status(), "awq_to_marlin",
                 "K = 8 is not a multiple of 16");
  expect_invalid(int4_from_marlin({}, {16, 32, -1}, kSym).status(), "int4_from_marlin", "N = 32");
}

TEST(Int4Rejections, SpanSizes) {
  const Int4Shape shape{32, 64, -1};
  const std::vector<uint8_t> q(32 * 64 - 1, 0);
  expect_invalid(marlin_pack(q, 32, 64).status(), "marlin_pack", "q has 2047 elements, expected 2048");
  const std::vector<int32_t> words(32 * 64 / 8 + 1, 0);
  expect_invalid(marlin_unpack(words, 32, 64).status(), "marlin_unpack", "packed has 257 elements, expected 256");
  const std::vector<__half> s(63);
  expect_invalid(marlin_permute_scales(s, shape).status(), "marlin_permute_scales", "scales has 63 elements");
  expect_invalid(marlin_unpermute_scales(s, shape).status(), "marlin_unpermute_scales", "scales has 63 elements");
  expect_invalid(marlin_pack_zeros(std::vector<uint8_t>(65), shape).status(), "marlin_pack_zeros",
                 "zeros has 65 elements");
  expect_invalid(marlin_unpack_zeros(std::vector<int32_t>(7), shape).status(), "marlin_unpack_zeros",
                 "packed has 7 elements, expected 8");
  expect_invalid(quantize_int4(std::vector<float>(10), shape, kSym).status(), "quantize_int4",
                 "w has 10 elements");
  // Logical weights (validate_int4_weights, through every consumer).
  const Int4Weights good = random_weights(shape, kAsym, false, 2);
  Int4Weights bad = good;
  bad.q.pop_back();
  expect_invalid(dequantize_int4(bad).status(), "dequantize_int4", "q has 2047 elements");
  bad = good;
  bad.scales.push_back(__half());
  expect_invalid(marlin_from_int4(bad, false).status(), "marlin_from_int4", "scales has 65 elements");
  bad = good;
  bad.zeros.clear();
  expect_invalid(gptq_pack(bad).status(), "gptq_pack", "zeros has 0 elements, expected 64");
  bad = random_weights(shape, kSym, false, 3);
  bad.zeros.assign(64, 8);
  expect_invalid(awq_pack(bad).status(), "awq_pack", "zeros has 64 elements, expected 0");
  expect_invalid(validate_int4_weights(bad), "validate_int4_weights", "none for Symmetric");
  // Checkpoint views.
  auto g = gptq_pack(good);
  ASSERT_TRUE(g.is_ok());
  std::vector<int32_t> short_qw(g->qweight.begin(), g->qweight.end() - 1);
  expect_invalid(gptq_unpack({short_qw, g->qzeros, g->scales, g->g_idx}, shape, kAsym).status(), "gptq_unpack",
                 "qweight has 255 elements, expected 256");
  expect_invalid(gptq_unpack({g->qweight, {}, g->scales, g->g_idx}, shape, kAsym).status(), "gptq_unpack",
                 "qzeros has 0 elements, expected 8");
  expect_invalid(gptq_unpack({g->qweight, std::vector<int32_t>(3), g->scales, g->g_idx}, shape, kSym).status(),
                 "gptq_unpack", "qzeros has 3 elements");
  expect_invalid(gptq_unpack({g->qweight, g->qzeros, std::vector<__half>(5), g->g_idx}, shape, kAsym).status(),
                 "gptq_unpack", "scales has 5 elements");
  expect_invalid(gptq_unpack({g->qweight, g->qzeros, g->scales, std::vector<int32_t>(31)}, shape, kAsym).status(),
                 "gptq_unpack", "g_idx has 31 elements, expected 32");
  auto a = awq_pack(good);
  ASSERT_TRUE(a.is_ok());
  expect_invalid(awq_unpack({short_qw, a->qzeros, a->scales}, shape).status(), "awq_unpack",
                 "qweight has 255 elements");
  expect_invalid(awq_unpack({a->qweight, std::vector<int32_t>(9), a->scales}, shape).status(), "awq_unpack",
                 "qzeros has 9 elements");
  expect_invalid(awq_unpack({a->qweight, a->qzeros, std::vector<__half>(1)}, shape).status(), "awq_unpack",
                 "scales has 1 elements");
  // Marlin views.
  auto m = marlin_from_int4(good, false);
  ASSERT_TRUE(m.is_ok());
  expect_invalid(int4_from_marlin({short_qw, m->scales, m->zeros, {}, {}}, shape, kAsym).status(),
                 "int4_from_marlin", "qweight has 255 elements");
  expect_invalid(int4_from_marlin({m->qweight, std::vector<__half>(2), m->zeros, {}, {}}, shape, kAsym).status(),
                 "int4_from_marlin", "scales has 2 elements");
  expect_invalid(int4_from_marlin({m->qweight, m->scales, m->zeros, {}, {}}, shape, kSym).status(),
                 "int4_from_marlin", "zeros has 8 elements, expected 0");
  expect_invalid(int4_from_marlin({m->qweight, m->scales, m->zeros, std::vector<int32_t>(32), {}}, shape, kAsym)
                     .status(),
                 "int4_from_marlin", "g_idx has 0 elements, expected 32");
  expect_invalid(int4_from_marlin({m->qweight, m->scales, m->zeros, {}, std::vector<int32_t>(32)}, shape, kAsym)
                     .status(),
                 "int4_from_marlin", "perm has 0 elements, expected 32");
}

TEST(Int4Rejections, Values) {
  const Int4Shape shape{32, 64, 32};
  std::vector<uint8_t> q(32 * 64, 3);
  q[77] = 16;
  expect_invalid(marlin_pack(q, 32, 64).status(), "marlin_pack", "q[77] = 16 is not a 4-bit value");
  std::vector<uint8_t> z(64, 1);
  z[5] = 200;
  expect_invalid(marlin_pack_zeros(z, shape).status(), "marlin_pack_zeros", "zeros[5] = 200 is not a 4-bit value");
  Int4Weights w = random_weights(shape, kAsym, false, 4);
  w.q[9] = 31;
  expect_invalid(gptq_pack(w).status(), "gptq_pack", "q[9] = 31");
  w = random_weights(shape, kAsym, false, 5);
  w.zeros[2] = 16;
  expect_invalid(awq_pack(w).status(), "awq_pack", "zeros[2] = 16");
  // Non-finite weights, an f16-overflowing scale.
  std::vector<float> x(32 * 64, 0.5f);
  x[100] = NAN;
  expect_invalid(quantize_int4(x, shape, kSym).status(), "quantize_int4", "w[100] is not finite");
  x[100] = INFINITY;
  expect_invalid(quantize_int4(x, shape, kAsym).status(), "quantize_int4", "w[100] is not finite");
  x[100] = 1e6f;  // 1e6 / 7 > 65504
  expect_invalid(quantize_int4(x, shape, kSym).status(), "quantize_int4", "overflows f16");
  x[100] = 3e38f;
  x[100 + 64] = -3e38f;  // same column: mx − mn overflows f32
  expect_invalid(quantize_int4(x, {32, 64, -1}, kAsym).status(), "quantize_int4", "overflows f16");
  expect_invalid(quantize_int4(std::vector<float>(32 * 64), shape, static_cast<Int4Scheme>(7)).status(),
                 "quantize_int4", "unknown Int4Scheme");
  // GPTQ's z − 1 storage: z = 0 cannot be packed, a stored 15 (z = 16) cannot be unpacked.
  w = random_weights(shape, kAsym, false, 6);
  w.zeros[10] = 0;
  expect_invalid(gptq_pack(w).status(), "gptq_pack", "zeros[10] = 0 cannot be stored");
  w.zeros[10] = 1;
  auto g = gptq_pack(w);
  ASSERT_TRUE(g.is_ok());
  std::vector<int32_t> qz = g->qzeros;
  qz[0] |= 0xF;
  expect_invalid(gptq_unpack({g->qweight, qz, g->scales, g->g_idx}, shape, kAsym).status(), "gptq_unpack",
                 "is 15: z = 16");
  expect_invalid(gptq_unpack({g->qweight, qz, g->scales, g->g_idx}, shape, static_cast<Int4Scheme>(2)).status(),
                 "gptq_unpack", "unknown Int4Scheme");
  expect_invalid(int4_from_marlin({}, {0, 0, -1}, static_cast<Int4Scheme>(2)).status(), "int4_from_marlin",
                 "unknown Int4Scheme");
}

TEST(Int4Rejections, GIdx) {
  const Int4Shape shape{64, 64, 32};  // G = 2
  std::vector<int32_t> g_idx(64, 0);
  g_idx[40] = 2;
  const std::vector<float> w(64 * 64, 0.25f);
  expect_invalid(quantize_int4(w, shape, kSym, g_idx).status(), "quantize_int4",
                 "g_idx[40] = 2 is outside [0, G = 2)");
  g_idx[40] = -1;
  expect_invalid(quantize_int4(w, shape, kSym, g_idx).status(), "quantize_int4", "g_idx[40] = -1");
  expect_invalid(quantize_int4(w, shape, kSym, std::vector<int32_t>(63)).status(), "quantize_int4",
                 "g_idx has 63 elements, expected 64");
  expect_invalid(quantize_int4(w, shape, kSym, std::vector<int32_t>(64, 0)).status(), "quantize_int4",
                 "leaves group 1 without rows");
  Int4Weights act = random_weights(shape, kSym, true, 7);
  Int4Weights bad = act;
  bad.g_idx[3] = 5;
  expect_invalid(dequantize_int4(bad).status(), "dequantize_int4", "g_idx[3] = 5");
  expect_invalid(gptq_pack(bad).status(), "gptq_pack", "g_idx[3] = 5");
  auto g = gptq_pack(act);
  ASSERT_TRUE(g.is_ok());
  std::vector<int32_t> gi = g->g_idx;
  gi[0] = 9;
  expect_invalid(gptq_unpack({g->qweight, g->qzeros, g->scales, gi}, shape, kSym).status(), "gptq_unpack",
                 "g_idx[0] = 9");
  expect_invalid(gptq_to_marlin({g->qweight, g->qzeros, g->scales, gi}, shape, kSym, true).status(), "gptq_unpack",
                 "g_idx[0] = 9");
  // A permuted grouping needs act_order (Marlin) and is not AWQ's.
  expect_invalid(marlin_from_int4(act, false).status(), "marlin_from_int4", "convert with act_order = true");
  expect_invalid(gptq_to_marlin({g->qweight, g->qzeros, g->scales, g->g_idx}, shape, kSym, false).status(),
                 "marlin_from_int4", "convert with act_order = true");
  expect_invalid(awq_pack(act).status(), "awq_pack", "AWQ has no act-order");
  // Marlin's perm must be a permutation, its g_idx in range.
  auto m = marlin_from_int4(act, true);
  ASSERT_TRUE(m.is_ok());
  std::vector<int32_t> perm = m->perm;
  perm[1] = perm[0];
  expect_invalid(int4_from_marlin({m->qweight, m->scales, m->zeros, perm, m->g_idx}, shape, kSym).status(),
                 "int4_from_marlin", "perm is not a permutation of [0, K): perm[1]");
  perm[1] = 64;
  expect_invalid(int4_from_marlin({m->qweight, m->scales, m->zeros, perm, m->g_idx}, shape, kSym).status(),
                 "int4_from_marlin", "perm[1] = 64");
  std::vector<int32_t> sg = m->g_idx;
  sg[63] = 2;
  expect_invalid(int4_from_marlin({m->qweight, m->scales, m->zeros, m->perm, sg}, shape, kSym).status(),
                 "int4_from_marlin", "g_idx[63] = 2");
}

}  // namespace
}  // namespace baracuda::test
