// The Marlin layout (host only) against an independent construction (vLLM's marlin_weights recipe: 16×16 tile
// reshape, a 1024-entry fragment permutation list, the nibble interleave, packing — built here differently
// from the library's per-word index map), exact round trips for several shapes and every group size,
// hand-checked words (lane 0 of the first tile, a single 0xF nibble per fragment element, the f16 0x6400
// dequantization of a word, scale and zero-point orders), and the logical ↔ Marlin converters.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "int4_weights_test_support.hpp"
#include "baracuda/ops/int4_marlin_repack.hpp"
#include "support/doc_table.hpp"

namespace baracuda::test {
namespace {

// ------------------------------------------------------------------------------------------ the independent Marlin construction

/// vLLM's marlin_weights recipe, built as data: (1) q [K, N] viewed as [K/16, 16, N/16, 16], tiles moved
/// next to each other ([K/16, N/16, 16, 16] = rows of 16N values); (2) the 1024-entry permutation list of
/// get_weight_perm — for lane i: col = i/4, for block 0, 1 the rows 2(i%4), 2(i%4)+1, 2(i%4+4), 2(i%4+4)+1
/// give 16·row + col + 8·block, repeated for the four 16×16 tiles (+256 each); then (3) each run of 8 of the
/// list reordered {0, 2, 4, 6, 1, 3, 5, 7}; (4) every 1024-chunk of each row gathered by the list and packed
/// 8 per word, element i at bits 4i.
std::vector<int32_t> reference_marlin(const std::vector<uint8_t>& q, int64_t K, int64_t N) {
  std::vector<int> perm;
  for (int i = 0; i < 32; ++i) {
    std::vector<int> one;
    const int col = i / 4;
    for (int block = 0; block < 2; ++block)
      for (int row : {2 * (i % 4), 2 * (i % 4) + 1, 2 * (i % 4 + 4), 2 * (i % 4 + 4) + 1})
        one.push_back(16 * row + col + 8 * block);
    for (int j = 0; j < 4; ++j)
      for (int p : one) perm.push_back(p + 256 * j);
  }
  const int inter[8] = {0, 2, 4, 6, 1, 3, 5, 7};
  std::vector<int> perm2(perm.size());
  for (size_t r = 0; r < perm.size(); r += 8)
    for (int i = 0; i < 8; ++i) perm2[r + i] = perm[r + inter[i]];
  // (1) the tiled rows
  std::vector<uint8_t> tiled(q.size());
  for (int64_t kt = 0; kt < K / 16; ++kt)
    for (int64_t nt = 0; nt < N / 16; ++nt)
      for (int r = 0; r < 16; ++r)
        for (int c = 0; c < 16; ++c)
          tiled[kt * 16 * N + nt * 256 + r * 16 + c] = q[(kt * 16 + r) * N + nt * 16 + c];
  // (4) gather and pack
  std::vector<int32_t> out;
  for (size_t base = 0; base < tiled.size(); base += 1024)
    for (int w = 0; w < 128; ++w) {
      uint32_t word = 0;
      for (int i = 0; i < 8; ++i) word |= static_cast<uint32_t>(tiled[base + perm2[8 * w + i]]) << (4 * i);
      out.push_back(static_cast<int32_t>(word));
    }
  return out;
}

// ------------------------------------------------------------------------------------------ Marlin weights

TEST(MarlinPack, MatchesTheIndependentConstruction) {
  uint64_t seed = 1;
  for (const KN& s : kMarlinShapes) {
    SCOPED_TRACE("K " + std::to_string(s.k) + " N " + std::to_string(s.n));
    const auto q = random_q(s.k * s.n, seed++);
    auto p = marlin_pack(q, s.k, s.n);
    ASSERT_TRUE(p.is_ok()) << p.error().to_string();
    EXPECT_EQ(p.value().size(), static_cast<size_t>(s.k / 16 * 2 * s.n));
    EXPECT_EQ(p.value(), reference_marlin(q, s.k, s.n));
  }
}

TEST(MarlinPack, UnpackInvertsPackExactly) {
  uint64_t seed = 100;
  for (const KN& s : kMarlinShapes) {
    const auto q = random_q(s.k * s.n, seed++);
    auto p = marlin_pack(q, s.k, s.n);
    ASSERT_TRUE(p.is_ok());
    auto u = marlin_unpack(p.value(), s.k, s.n);
    ASSERT_TRUE(u.is_ok()) << u.error().to_string();
    EXPECT_EQ(u.value(), q) << "K " << s.k << " N " << s.n;
    // and pack(unpack(words)) == words for arbitrary words (the layout is a bijection)
    Rng rng(seed++);
    std::vector<int32_t> words(p.value().size());
    for (auto& v : words) v = static_cast<int32_t>(static_cast<uint32_t>(rng.next()));
    auto uq = marlin_unpack(words, s.k, s.n);
    ASSERT_TRUE(uq.is_ok());
    auto back = marlin_pack(uq.value(), s.k, s.n);
    ASSERT_TRUE(back.is_ok());
    EXPECT_EQ(back.value(), words);
  }
}

TEST(MarlinPack, Lane0OfTheFirstTileHoldsItsFragmentInInterleavedOrder) {
  // Lane 0, sub-tile 0: rows 0, 1, 8, 9 of columns 0 and 8. Fragment element e: e = 0..3 → column 0 rows
  // {0, 1, 8, 9}; e = 4..7 → column 8. Nibble p holds element {0, 2, 4, 6, 1, 3, 5, 7}[p].
  const int64_t K = 32, N = 128;
  std::vector<uint8_t> q(K * N, 0);
  auto at = [&](int64_t r, int64_t c) -> uint8_t& { return q[r * N + c]; };
  at(0, 0) = 1;  // e0 → nibble 0
  at(8, 0) = 2;  // e2 → nibble 1
  at(0, 8) = 3;  // e4 → nibble 2
  at(8, 8) = 4;  // e6 → nibble 3
  at(1, 0) = 5;  // e1 → nibble 4
  at(9, 0) = 6;  // e3 → nibble 5
  at(1, 8) = 7;  // e5 → nibble 6
  at(9, 8) = 8;  // e7 → nibble 7
  auto p = marlin_pack(q, K, N);
  ASSERT_TRUE(p.is_ok());
  EXPECT_EQ(static_cast<uint32_t>(p.value()[0]), 0x87654321u);
  for (size_t i = 1; i < p.value().size(); ++i) EXPECT_EQ(p.value()[i], 0) << "word " << i;
}

TEST(MarlinPack, EachFragmentElementLandsInItsNibble) {
  // Lane 5 (rows 2(5 % 4) + {0, 1, 8, 9} = 2, 3, 10, 11; column 5/4 = 1 and 9) of sub-tile 2 (+32 columns)
  // in k-tile 1 and 64-column block 1 of a 32 × 128 weight: word 1·2N + 128 + 4·5 + 2. A single 15 at
  // fragment element e shows up as 0xF in nibble p with {0, 2, 4, 6, 1, 3, 5, 7}[p] = e.
  const int64_t K = 32, N = 128;
  const int rows[4] = {2, 3, 10, 11};
  const int nib_of_e[8] = {0, 4, 1, 5, 2, 6, 3, 7};
  const size_t word = 1 * 2 * N + 128 + 4 * 5 + 2;
  for (int e = 0; e < 8; ++e) {
    std::vector<uint8_t> q(K * N, 0);
    q[(16 + rows[e % 4]) * N + 64 + 32 + 1 + 8 * (e / 4)] = 15;
    auto p = marlin_pack(q, K, N);
    ASSERT_TRUE(p.is_ok());
    EXPECT_EQ(static_cast<uint32_t>(p.value()[word]), 0xFu << (4 * nib_of_e[e])) << "element " << e;
  }
}

TEST(MarlinPack, F16MagicDequantizationRecoversFragments) {
  // The kernel's dequantization (the FasterTransformer trick): (w & 0x000F000F) | 0x64006400 is the half2
  // (1024 + e0, 1024 + e1); (w & 0x00F000F0) | 0x64006400 is (1024 + 16·e2, 1024 + 16·e3); w >> 8 gives
  // e4..e7 the same way. Subtracting 1032, or scaling by 1/16 and adding −72, gives q − 8.
  const int64_t K = 16, N = 64;
  const auto q = random_q(K * N, 7);
  auto p = marlin_pack(q, K, N);
  ASSERT_TRUE(p.is_ok());
  for (int t = 0; t < 32; ++t)
    for (int j = 0; j < 4; ++j) {
      const auto w = static_cast<uint32_t>(p.value()[4 * t + j]);
      float e[8];
      for (int half = 0; half < 2; ++half) {
        const uint32_t v = w >> (8 * half);
        const uint32_t lo = (v & 0x000F000Fu) | 0x64006400u, hi = (v & 0x00F000F0u) | 0x64006400u;
        e[4 * half + 0] = __half2float(from_bits(static_cast<uint16_t>(lo))) - 1032.0f;
        e[4 * half + 1] = __half2float(from_bits(static_cast<uint16_t>(lo >> 16))) - 1032.0f;
        e[4 * half + 2] = __half2float(from_bits(static_cast<uint16_t>(hi))) / 16.0f - 72.0f;
        e[4 * half + 3] = __half2float(from_bits(static_cast<uint16_t>(hi >> 16))) / 16.0f - 72.0f;
      }
      const int row[4] = {0, 1, 8, 9};
      for (int i = 0; i < 8; ++i) {
        const int64_t r = 2 * (t % 4) + row[i % 4], c = 16 * j + t / 4 + 8 * (i / 4);
        EXPECT_EQ(e[i], static_cast<float>(q[r * N + c]) - 8.0f) << "lane " << t << " sub-tile " << j;
      }
    }
}

// ------------------------------------------------------------------------------------------ scales and zero points

TEST(MarlinScales, GroupedIsAnEightByEightTranspose) {
  const Int4Shape shape{256, 128, 128};  // G = 2 > 1: grouped
  ASSERT_TRUE(shape.marlin_grouped());
  std::vector<__half> s(2 * 128);
  for (size_t i = 0; i < s.size(); ++i) s[i] = __float2half_rn(static_cast<float>(i));
  auto p = marlin_permute_scales(s, shape);
  ASSERT_TRUE(p.is_ok());
  for (int run = 0; run < 4; ++run)
    for (int i = 0; i < 64; ++i)
      EXPECT_EQ(__half2float(p.value()[run * 64 + i]), static_cast<float>(run * 64 + i / 8 + 8 * (i % 8)));
  EXPECT_EQ(__half2float(p.value()[1]), 8.0f);
  EXPECT_EQ(__half2float(p.value()[8]), 1.0f);
}

TEST(MarlinScales, PerChannelUsesTheSinglePermutation) {
  // group −1 and group == K (one group) both take the 32-entry permutation.
  for (const Int4Shape shape : {Int4Shape{64, 128, -1}, Int4Shape{128, 128, 128}}) {
    ASSERT_FALSE(shape.marlin_grouped());
    std::vector<__half> s(128);
    for (size_t i = 0; i < s.size(); ++i) s[i] = __float2half_rn(static_cast<float>(i));
    auto p = marlin_permute_scales(s, shape);
    ASSERT_TRUE(p.is_ok());
    const float first[9] = {0, 1, 8, 9, 16, 17, 24, 25, 2};
    for (int i = 0; i < 9; ++i) EXPECT_EQ(__half2float(p.value()[i]), first[i]);
    EXPECT_EQ(__half2float(p.value()[32]), 32.0f);  // runs of 32
    EXPECT_EQ(__half2float(p.value()[31]), 31.0f);  // last of the first run: 2·3 + 25
  }
}

TEST(MarlinScales, RoundTripEveryGroup) {
  uint64_t seed = 300;
  for (const Int4Shape& shape : grouped_marlin_shapes()) {
    const auto sc = random_scales(shape.num_groups() * shape.n, seed++);
    auto p = marlin_permute_scales(sc, shape);
    ASSERT_TRUE(p.is_ok()) << p.error().to_string();
    EXPECT_NE(bits(p.value()), bits(sc));
    auto u = marlin_unpermute_scales(p.value(), shape);
    ASSERT_TRUE(u.is_ok());
    EXPECT_EQ(bits(u.value()), bits(sc)) << "K " << shape.k << " N " << shape.n << " group " << shape.group;
  }
}

TEST(MarlinZeros, HandCheckedWordAndRoundTrip) {
  // z[g, c] = c / 8 for the first 64 columns: after the 64-entry permutation positions 0..7 hold columns
  // 0, 8, ..., 56 (values 0..7), and the interleave puts value {0, 2, 4, 6, 1, 3, 5, 7}[i] in nibble i.
  const Int4Shape shape{128, 64, -1};
  std::vector<uint8_t> z(64);
  for (int c = 0; c < 64; ++c) z[c] = static_cast<uint8_t>(c / 8);
  auto p = marlin_pack_zeros(z, shape);
  ASSERT_TRUE(p.is_ok());
  ASSERT_EQ(p.value().size(), 8u);
  EXPECT_EQ(static_cast<uint32_t>(p.value()[0]), 0x75316420u);
  uint64_t seed = 400;
  for (const Int4Shape& sh : grouped_marlin_shapes()) {
    const auto zz = random_q(sh.num_groups() * sh.n, seed++);
    auto pz = marlin_pack_zeros(zz, sh);
    ASSERT_TRUE(pz.is_ok());
    EXPECT_EQ(pz.value().size(), static_cast<size_t>(sh.num_groups() * sh.n / 8));
    auto u = marlin_unpack_zeros(pz.value(), sh);
    ASSERT_TRUE(u.is_ok());
    EXPECT_EQ(u.value(), zz);
  }
}

// ------------------------------------------------------------------------------------------ logical ↔ Marlin

TEST(MarlinConvert, RoundTripEveryShapeGroupAndScheme) {
  uint64_t seed = 500;
  for (const Int4Shape& shape : grouped_marlin_shapes())
    for (Int4Scheme scheme : {kSym, kAsym}) {
      SCOPED_TRACE("K " + std::to_string(shape.k) + " N " + std::to_string(shape.n) + " group " +
                   std::to_string(shape.group));
      const Int4Weights w = random_weights(shape, scheme, false, seed += 10);
      auto m = marlin_from_int4(w, false);
      ASSERT_TRUE(m.is_ok()) << m.error().to_string();
      EXPECT_TRUE(m->perm.empty());
      EXPECT_EQ(m->zeros.empty(), scheme == kSym);
      auto back = int4_from_marlin({m->qweight, m->scales, m->zeros, m->perm, m->g_idx}, shape, scheme);
      ASSERT_TRUE(back.is_ok()) << back.error().to_string();
      expect_same(back.value(), w);
    }
}

TEST(MarlinConvert, ActOrderSortsRowsStablyAndRoundTrips) {
  uint64_t seed = 600;
  for (const KN& s : kMarlinShapes)
    for (int64_t g : {32, 64, 128}) {
      if (s.k % g != 0 || s.k == g) continue;
      const Int4Shape shape{s.k, s.n, g};
      const Int4Weights w = random_weights(shape, kAsym, true, seed += 10);
      auto m = marlin_from_int4(w, true);
      ASSERT_TRUE(m.is_ok()) << m.error().to_string();
      ASSERT_EQ(m->perm.size(), static_cast<size_t>(s.k));
      for (int64_t i = 0; i < s.k; ++i) {
        EXPECT_EQ(m->g_idx[i], i / g);  // every group has g rows, so sorted g_idx = i / g
        EXPECT_EQ(m->g_idx[i], w.g_idx[m->perm[i]]);
        if (i > 0 && m->g_idx[i] == m->g_idx[i - 1]) {
          EXPECT_LT(m->perm[i - 1], m->perm[i]) << "not stable";
        }
      }
      // The packed weight is marlin_pack of the gathered rows.
      std::vector<uint8_t> rows(w.q.size());
      for (int64_t i = 0; i < s.k; ++i)
        std::copy_n(w.q.begin() + m->perm[i] * s.n, s.n, rows.begin() + i * s.n);
      EXPECT_EQ(m->qweight, marlin_pack(rows, s.k, s.n).value());
      auto back = int4_from_marlin({m->qweight, m->scales, m->zeros, m->perm, m->g_idx}, shape, kAsym);
      ASSERT_TRUE(back.is_ok()) << back.error().to_string();
      expect_same(back.value(), w);
    }
}

TEST(MarlinConvert, ActOrderPermIsTheStableArgsortAndRejectsBadGroups) {
  const Int4Shape shape{64, 64, 32};
  // Hand-made: odd rows in group 0, even rows in group 1 → group 0's rows first, each group in row order.
  std::vector<int32_t> g(64);
  for (int k = 0; k < 64; ++k) g[k] = (k % 2 == 0) ? 1 : 0;
  auto perm = marlin_act_order_perm(g, shape);
  ASSERT_TRUE(perm.is_ok()) << perm.error().to_string();
  for (int i = 0; i < 32; ++i) {
    EXPECT_EQ(perm.value()[i], 2 * i + 1);
    EXPECT_EQ(perm.value()[32 + i], 2 * i);
  }
  // It is the perm marlin_from_int4 uses.
  const Int4Weights w = random_weights({128, 64, 32}, kSym, true, 650);
  auto m = marlin_from_int4(w, true);
  ASSERT_TRUE(m.is_ok()) << m.error().to_string();
  EXPECT_EQ(marlin_act_order_perm(w.g_idx, w.shape).value(), m->perm);
  // Rejections: size, range, unequal groups, shape.
  expect_invalid(marlin_act_order_perm(std::vector<int32_t>(63, 0), shape).status(), "marlin_act_order_perm",
                 "g_idx has 63 elements, expected 64");
  std::vector<int32_t> bad = g;
  bad[3] = 2;
  expect_invalid(marlin_act_order_perm(bad, shape).status(), "marlin_act_order_perm", "outside [0, G = 2)");
  bad = g;
  bad[1] = 1;  // group 1 gets 33 rows, group 0 31
  expect_invalid(marlin_act_order_perm(bad, shape).status(), "marlin_act_order_perm",
                 "act-order needs exactly group_rows = 32 per group");
  expect_invalid(marlin_act_order_perm(g, Int4Shape{64, 64, 48}).status(), "marlin_act_order_perm", "group");
}

TEST(MarlinConvert, ActOrderWithOneGroupIsIgnored) {
  Int4Weights w = random_weights({128, 64, -1}, kSym, false, 700);
  w.g_idx.assign(128, 0);
  auto m = marlin_from_int4(w, true);
  ASSERT_TRUE(m.is_ok()) << m.error().to_string();
  EXPECT_TRUE(m->perm.empty());
  EXPECT_TRUE(m->g_idx.empty());
}

TEST(MarlinConvert, EmptyProblems) {
  for (const Int4Shape shape : {Int4Shape{0, 64, -1}, Int4Shape{16, 0, -1}, Int4Shape{0, 0, 32}}) {
    Int4Weights w;
    w.shape = shape;
    w.q.resize(static_cast<size_t>(shape.k * shape.n));
    w.scales.resize(static_cast<size_t>(shape.num_groups() * shape.n));
    auto m = marlin_from_int4(w, false);
    ASSERT_TRUE(m.is_ok()) << m.error().to_string();
    EXPECT_TRUE(m->qweight.empty());
    auto d = dequantize_int4(w);
    ASSERT_TRUE(d.is_ok());
    EXPECT_TRUE(d->empty());
    auto q = quantize_int4({}, shape, kAsym);
    ASSERT_TRUE(q.is_ok()) << q.error().to_string();
  }
}

// The catalog table of docs/ops/int4_weights.md is baracuda/ops/int4_formats.def's, with the schemes' and
// formats' names as to_string gives them.
TEST(Int4Formats, DocTableIsTheCatalog) {
  std::string t = "| catalog | name | rule | meaning |\n|---|---|---|---|\n";
#define BARACUDA_INT4_SCHEME(name, Enum, zero_points, doc) \
  t += "| scheme | `" + std::string(to_string(Int4Scheme::Enum)) + "` | zero points: " #zero_points " | " doc " |\n";
#define BARACUDA_INT4_GROUP(rows, doc) t += "| group | `" + std::to_string(rows) + "` | | " doc " |\n";
#define BARACUDA_INT4_CHECKPOINT(name, Enum, scheme_rule, doc)                                          \
  t += "| checkpoint | `" + std::string(to_string(Int4CheckpointFormat::Enum)) + "` | schemes: " #scheme_rule \
       " | " doc " |\n";
#include "baracuda/ops/int4_formats.def"
#undef BARACUDA_INT4_SCHEME
#undef BARACUDA_INT4_GROUP
#undef BARACUDA_INT4_CHECKPOINT
  expect_doc_table("int4_weights.md", "int4_formats.def", "int4_weights_test", t);
  EXPECT_EQ(to_string(static_cast<Int4Scheme>(kNumInt4Schemes)), "?");
  EXPECT_EQ(to_string(static_cast<Int4CheckpointFormat>(kNumInt4CheckpointFormats)), "?");
  EXPECT_TRUE(is_int4_group(-1) && is_int4_group(128) && !is_int4_group(0) && !is_int4_group(16));
}

}  // namespace
}  // namespace baracuda::test
