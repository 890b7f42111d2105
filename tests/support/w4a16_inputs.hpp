// Test support for the W4A16 families (int4_weights, int4_gemm, int4_marlin_repack): the 16-bit activation
// kinds as template parameters (conversions, rounding constants, names), and the non-uniform weights and
// act-order groupings the tests quantize.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <type_traits>
#include <vector>

#include "baracuda/ops/int4_weights.hpp"

namespace baracuda::test {

/// f32 → T (f16 or bf16), rounded to nearest-even: the kinds' float constructors round so.
template <class T>
T to_t(float v) {
  return T(v);
}
/// T → f32 (exact).
template <class T>
float from_t(T v) {
  return static_cast<float>(v);
}
/// Unit roundoff of T (half an ulp at 1).
template <class T>
constexpr double unit_roundoff_t() {
  return std::is_same_v<T, __half> ? 0x1p-11 : 0x1p-8;
}
/// Half the smallest subnormal of T (the absolute rounding error floor).
template <class T>
constexpr double abs_floor_t() {
  return std::is_same_v<T, __half> ? 0x1p-25 : 0x1p-134;
}
template <class T>
const char* name_t() {
  return std::is_same_v<T, __half> ? "f16" : "bf16";
}

/// Runs `check.template operator()<T>(seed)` for T = f16, then bf16 with the next seed (advancing `seed` past
/// both); false, after f16's, when a fatal failure stopped it.
template <class Check>
bool check_f16_and_bf16(uint64_t& seed, Check check) {
  check.template operator()<__half>(seed++);
  if (::testing::Test::HasFatalFailure()) return false;
  check.template operator()<__nv_bfloat16>(seed++);
  return !::testing::Test::HasFatalFailure();
}

/// A non-uniform f32 weight [K, N]: normal values with per-column scales spanning a decade, one input channel
/// ×4, a few ×8 outliers, and (when `positive_column`) one column of positive values only.
inline std::vector<float> random_int4_source_weight(int64_t K, int64_t N, uint64_t seed, bool positive_column = false) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> nd(0.0, 1.0);
  std::uniform_real_distribution<double> col(0.005, 0.05);
  std::vector<double> cs(static_cast<size_t>(N));
  for (auto& c : cs) c = col(g);
  std::vector<float> w(static_cast<size_t>(K * N));
  const int64_t hot_k = static_cast<int64_t>(seed % static_cast<uint64_t>(K));
  const int64_t pos_n = static_cast<int64_t>((seed / 7) % static_cast<uint64_t>(N));
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n) {
      double v = nd(g) * cs[n] * (k == hot_k ? 4.0 : 1.0);
      if (positive_column && n == pos_n) v = std::fabs(v) + 0.01;
      w[k * N + n] = static_cast<float>(v);
    }
  for (int i = 0; i < 6; ++i) w[(g() % K) * N + g() % N] *= 8.0f;
  return w;
}

/// GPTQ act-order's grouping: equal-sized groups over a random permutation of the rows.
inline std::vector<int32_t> random_act_order_g_idx(const Int4Shape& s, uint64_t seed) {
  std::vector<int32_t> rows(static_cast<size_t>(s.k));
  std::iota(rows.begin(), rows.end(), 0);
  std::shuffle(rows.begin(), rows.end(), std::mt19937_64(seed));
  std::vector<int32_t> g(rows.size());
  for (size_t k = 0; k < g.size(); ++k) g[k] = static_cast<int32_t>(rows[k] / s.group_rows());
  return g;
}

}  // namespace baracuda::test
