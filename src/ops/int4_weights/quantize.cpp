// The int4 quantizer (the formulas of vLLM's quantize_weights, computed in f32 with the f16 scale the formats
// store) and the exact dequantization.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "ops/int4_weights/common.hpp"

namespace baracuda {

using namespace int4;

namespace {

constexpr float kMaxQ = 7.0f, kMinQ = -8.0f;  // uint4b8 without its bias of 8
constexpr float kMaxU = 15.0f;                 // uint4

/// The f16 scale the formats store: one RNE rounding of the f32 scale.
__half to_f16(float s) { return __float2half_rn(s); }

}  // namespace

Result<Int4Weights> quantize_int4(std::span<const float> w, const Int4Shape& shape, Int4Scheme scheme,
                                  std::span<const int32_t> g_idx) {
  const std::string P = "quantize_int4";
  BARACUDA_TRY(check_shape_and_scheme(P, shape, scheme, kAnyShape));
  BARACUDA_TRY(check_size(P, "w", w.size(), shape.k * shape.n, "[K, N]"));
  BARACUDA_TRY(check_g_idx(P, g_idx, shape));
  const int64_t K = shape.k, N = shape.n, G = shape.num_groups(), rows = shape.group_rows();
  for (size_t i = 0; i < w.size(); ++i)
    if (!std::isfinite(w[i]))
      return Error::invalid(P + ": w[" + std::to_string(i) + "] is not finite");
  auto group_of = [&](int64_t k) -> int64_t { return g_idx.empty() ? k / rows : g_idx[k]; };
  if (!g_idx.empty()) {
    std::vector<int64_t> count(static_cast<size_t>(G), 0);
    for (int64_t k = 0; k < K; ++k) ++count[group_of(k)];
    for (int64_t g = 0; g < G; ++g)
      if (count[g] == 0) return Error::invalid(P + ": g_idx leaves group " + str(g) + " without rows");
  }

  // Per (group, column): the largest and smallest weight.
  std::vector<float> mx(static_cast<size_t>(G * N), -std::numeric_limits<float>::infinity());
  std::vector<float> mn(static_cast<size_t>(G * N), std::numeric_limits<float>::infinity());
  for (int64_t k = 0; k < K; ++k) {
    const int64_t g = group_of(k);
    for (int64_t n = 0; n < N; ++n) {
      const float v = w[k * N + n];
      mx[g * N + n] = std::max(mx[g * N + n], v);
      mn[g * N + n] = std::min(mn[g * N + n], v);
    }
  }

  Int4Weights out;
  out.shape = shape;
  out.scheme = scheme;
  out.g_idx.assign(g_idx.begin(), g_idx.end());
  out.scales.resize(static_cast<size_t>(G * N));
  std::vector<float> s(static_cast<size_t>(G * N));
  if (scheme == Int4Scheme::Asymmetric) out.zeros.resize(static_cast<size_t>(G * N));
  for (int64_t i = 0; i < G * N; ++i) {
    float s32;
    if (scheme == Int4Scheme::Symmetric) {
      s32 = std::max(std::fabs(mx[i] / kMaxQ), std::fabs(mn[i] / kMinQ));
    } else {
      s32 = std::max(mx[i] - mn[i], 1e-5f) / kMaxU;
    }
    __half s16 = to_f16(s32);
    float sf = __half2float(s16);
    if (!std::isfinite(sf))
      return Error::invalid(P + ": the scale of group " + str(i / N) + ", column " + str(i % N) + " (" +
                            std::to_string(s32) + ") overflows f16");
    if (sf == 0.0f) {  // symmetric only: an all-zero (or underflowing) group
      s16 = to_f16(1.0f);
      sf = 1.0f;
    }
    out.scales[i] = s16;
    s[i] = sf;
    if (scheme == Int4Scheme::Asymmetric)
      out.zeros[i] = static_cast<uint8_t>(std::clamp(std::nearbyint(std::fabs(mn[i] / sf)), 0.0f, kMaxU));
  }

  out.q.resize(static_cast<size_t>(K * N));
  for (int64_t k = 0; k < K; ++k) {
    const int64_t g = group_of(k);
    for (int64_t n = 0; n < N; ++n) {
      const float r = std::nearbyint(w[k * N + n] / s[g * N + n]);
      float v;
      if (scheme == Int4Scheme::Symmetric) {
        v = std::clamp(r, kMinQ, kMaxQ) + 8.0f;
      } else {
        v = std::clamp(r + static_cast<float>(out.zeros[g * N + n]), 0.0f, kMaxU);
      }
      out.q[k * N + n] = static_cast<uint8_t>(v);
    }
  }
  return out;
}

Result<std::vector<float>> dequantize_int4(const Int4Weights& w) {
  BARACUDA_TRY(validate_int4_weights(w, "dequantize_int4"));
  const int64_t K = w.shape.k, N = w.shape.n, rows = w.shape.group_rows();
  std::vector<float> out(static_cast<size_t>(K * N));
  for (int64_t k = 0; k < K; ++k) {
    const int64_t g = w.g_idx.empty() ? k / rows : w.g_idx[k];
    for (int64_t n = 0; n < N; ++n) {
      const float z = w.scheme == Int4Scheme::Symmetric ? 8.0f : static_cast<float>(w.zeros[g * N + n]);
      out[k * N + n] = (static_cast<float>(w.q[k * N + n]) - z) * __half2float(w.scales[g * N + n]);
    }
  }
  return out;
}

}  // namespace baracuda
