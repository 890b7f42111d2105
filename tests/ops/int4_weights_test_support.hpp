// Helpers shared by the int4_weights tests (int4_weights_*test.cpp): random q/scales/weights, comparisons, shapes.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "support/random.hpp"

namespace baracuda::test {

inline constexpr Int4Scheme kSym = Int4Scheme::Symmetric;
inline constexpr Int4Scheme kAsym = Int4Scheme::Asymmetric;
inline constexpr const auto& kGroups = kInt4Groups;  // every group size of the catalog

// ------------------------------------------------------------------------------------------ helpers

/// Non-uniform random nibbles: mostly near the middle, with every value 0..15 present.
inline std::vector<uint8_t> random_q(int64_t count, uint64_t seed) {
  Rng rng(seed);
  std::vector<uint8_t> q(static_cast<size_t>(count));
  for (auto& v : q) {
    const uint64_t r = rng.below(4);
    v = static_cast<uint8_t>(r == 0 ? rng.below(16) : 8 + static_cast<int>(rng.below(7)) - 3);
  }
  for (int64_t i = 0; i < std::min<int64_t>(count, 16); ++i) q[rng.below(count)] = static_cast<uint8_t>(i);
  return q;
}

inline std::vector<__half> random_scales(int64_t count, uint64_t seed) {
  Rng rng(seed);
  std::vector<__half> s(static_cast<size_t>(count));
  for (auto& v : s) v = __float2half_rn(static_cast<float>(rng.uniform(1e-4, 1e-1)));
  return s;
}

inline uint16_t bits(__half h) { return static_cast<__half_raw>(h).x; }
inline __half from_bits(uint16_t b) {
  __half_raw r;
  r.x = b;
  return __half(r);
}
inline std::vector<uint16_t> bits(const std::vector<__half>& v) {
  std::vector<uint16_t> out;
  for (const __half& h : v) out.push_back(bits(h));
  return out;
}

/// Random logical weights of a shape: q, scales, zeros (asymmetric, in 1..15 so GPTQ can hold them), and
/// optionally an act-order g_idx (a random permutation of the plain grouping, as GPTQ's desc_act makes).
inline Int4Weights random_weights(const Int4Shape& shape, Int4Scheme scheme, bool act_order, uint64_t seed) {
  Int4Weights w;
  w.shape = shape;
  w.scheme = scheme;
  w.q = random_q(shape.k * shape.n, seed);
  w.scales = random_scales(shape.num_groups() * shape.n, seed + 1);
  if (scheme == kAsym) {
    Rng rng(seed + 2);
    w.zeros.resize(static_cast<size_t>(shape.num_groups() * shape.n));
    for (auto& z : w.zeros) z = static_cast<uint8_t>(1 + rng.below(15));
  }
  if (act_order) {
    std::vector<int32_t> order(static_cast<size_t>(shape.k));
    std::iota(order.begin(), order.end(), 0);
    Rng rng(seed + 3);
    for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
    w.g_idx.resize(static_cast<size_t>(shape.k));
    for (int64_t i = 0; i < shape.k; ++i) w.g_idx[order[i]] = static_cast<int32_t>(i / shape.group_rows());
  }
  return w;
}

inline void expect_same(const Int4Weights& a, const Int4Weights& b) {
  EXPECT_EQ(a.shape.k, b.shape.k);
  EXPECT_EQ(a.shape.n, b.shape.n);
  EXPECT_EQ(a.shape.group, b.shape.group);
  EXPECT_EQ(a.scheme, b.scheme);
  EXPECT_EQ(a.q, b.q);
  EXPECT_EQ(bits(a.scales), bits(b.scales));
  EXPECT_EQ(a.zeros, b.zeros);
  EXPECT_EQ(a.g_idx, b.g_idx);
}

/// `s` is an InvalidProblem whose message names `fn` and contains `phrase`.
inline void expect_invalid(const Status& s, const std::string& fn, const std::string& phrase) {
  ASSERT_FALSE(s.is_ok()) << fn << ": expected a rejection containing \"" << phrase << "\"";
  EXPECT_EQ(s.code(), ErrorCode::InvalidProblem) << s.to_string();
  EXPECT_NE(s.error().message.find(fn), std::string::npos) << s.to_string();
  EXPECT_NE(s.error().message.find(phrase), std::string::npos) << s.to_string();
}

struct KN {
  int64_t k, n;
};
const KN kMarlinShapes[] = {{16, 64}, {32, 128}, {128, 64}, {256, 192}, {384, 320}, {128, 512}};
/// Every Marlin shape with every group size of the catalog that divides its K.
inline std::vector<Int4Shape> grouped_marlin_shapes() {
  std::vector<Int4Shape> v;
  for (const KN& s : kMarlinShapes)
    for (int64_t g : kGroups)
      if (g <= 0 || s.k % g == 0) v.push_back({s.k, s.n, g});
  return v;
}

}  // namespace baracuda::test
