// RopePlan: every style × kind × source of cos/sin (computed with each scaling,
// a cache of f32 and of the activation kind) × layout (dense, in place over a
// fused qkv buffer, padded and strided, offset from 16-byte alignment, reversed
// tokens) × head shape (GQA, MQA, q alone, partial rotary) on sim and cuda
// against the host reference, with positions of s32 and s64 (out of the cache's
// range too); the host reference against an f64 rotation of each pair, HF's
// rotate_half formulation and the interleaved complex multiply, with
// frequencies computed here from the scalings' formulas; forward then backward
// returns the input; clamped cache positions; determinism.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "baracuda/core/buffer.hpp"
#include "baracuda/core/stream.hpp"
#include "baracuda/ops/rope.hpp"
#include "ops/rope_test_support.hpp"
#include "support/devices.hpp"

namespace baracuda::test {
namespace {

using namespace rope;

/// A source of cos/sin: the descriptor's computed frequencies or a cache.
struct Source {
  const char *name;
  RopeDescriptor (*apply)(RopeDescriptor);
};

const Source kSources[] = {
    {"computed", [](RopeDescriptor d) { return d.with_theta(10000); }},
    {"linear",
     [](RopeDescriptor d) {
       return d.with_theta(10000, RopeScaling::Linear, 4);
     }},
    {"ntk",
     [](RopeDescriptor d) {
       return d.with_theta(10000, RopeScaling::NtkAware, 2);
     }},
    {"llama3",
     [](RopeDescriptor d) {
       return d.with_theta(500000).with_llama3(8, 1, 4, 8192);
     }},
    {"yarn",
     [](RopeDescriptor d) {
       return d.with_theta(10000).with_yarn(40, 4096).with_mscale(0.707, 1);
     }},
    {"cache_f32",
     [](RopeDescriptor d) { return d.with_cache(ElementKind::F32, 50); }},
    {"cache_kind",
     [](RopeDescriptor d) { return d.with_cache(d.element, 50); }},
};

/// Head shapes: (heads, kv heads, head dim, rot dim).
struct Heads {
  const char *name;
  int64_t heads, kv_heads, dim, rot;
};
const Heads kHeads[] = {{"gqa_4_2_d64", 4, 2, 64, 0},
                        {"mqa_3_1_partial_48of80", 3, 1, 80, 48},
                        {"q_only_2_partial_20of70", 2, 0, 70, 20}};

struct Case {
  RopeStyle style;
  K kind;
  int source;
  Layout layout;
  int heads;
  DeviceKind device;
  std::string name;
};

std::vector<Case> cases() {
  std::vector<Case> v;
  for (RopeStyle style : {RopeStyle::NeoX, RopeStyle::GptJ})
    for (K k : {K::F32, K::Bf16, K::F16})
      for (int src = 0; src < static_cast<int>(std::size(kSources)); ++src)
        for (Layout l : {Layout::Dense, Layout::FusedInPlace, Layout::Strided,
                         Layout::Offset, Layout::ReversedTokens})
          for (int h = 0; h < static_cast<int>(std::size(kHeads)); ++h) {
            // Every layout with the GQA heads; the other head shapes dense and
            // in place.
            if (h > 0 && l != Layout::Dense && l != Layout::FusedInPlace)
              continue;
            if (kHeads[h].kv_heads == 0 && l == Layout::FusedInPlace)
              continue;
            for (DeviceKind dev : {DeviceKind::Sim, DeviceKind::Cuda})
              v.push_back({style, k, src, l, h, dev,
                           std::string(to_string(style)) + "_" +
                               std::string(to_string(k)) + "_" +
                               kSources[src].name + "_" + to_string(l) + "_" +
                               kHeads[h].name + "_" +
                               std::string(to_string(dev))});
          }
  return v;
}

void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }

RopeDescriptor descriptor_of(const Case &c, int64_t tokens) {
  const Heads &h = kHeads[c.heads];
  RopeDescriptor d =
      RopeDescriptor()
          .with_style(c.style)
          .with_element(c.kind)
          .with_position_kind(c.source % 2 == 0 ? K::S64 : K::S32)
          .with_shape(tokens, h.heads, h.kv_heads, h.dim)
          .with_rot_dim(h.rot);
  return kSources[c.source].apply(d);
}

class RopeSweep : public ::testing::TestWithParam<Case> {};

TEST_P(RopeSweep, MatchesTheHost) {
  const Case &c = GetParam();
  BARACUDA_TEST_STREAM(stream, c.device);
  const RopeDescriptor d = descriptor_of(c, 9);
  auto probe = dynamic::RopePlan::select(stream, d);
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(probe, c.device);
  ASSERT_TRUE(probe) << probe.status().to_string();
  EXPECT_EQ(probe->sku().backend, backend_of(c.device));
  EXPECT_EQ(probe->workspace_size(), 0u);
  // Cache positions beyond both ends (clamped); computed ones negative and up
  // to 5000.
  const bool cached = d.source == CosSinSource::Cache;
  const Inputs in = make_inputs(
      d, cached ? -4 : -20, cached ? d.max_position + 4 : 5000, 11 + c.source);
  const Outputs want = run_rope(Stream::host(), d, in, Layout::Dense);
  const Outputs got = run_rope(stream, d, in, c.layout);
  ASSERT_TRUE(want.ok && got.ok);
  const double bound = cached ? 1.0 : probe->attention_factor();
  expect_rotated_close(d, got.q, want.q, in.q, bound, "q_out");
  expect_rotated_close(d, got.k, want.k, in.k, bound, "k_out");
  // The same bits again, and in every layout the same bits as dense.
  const Outputs again = run_rope(stream, d, in, c.layout);
  EXPECT_EQ(again.q, got.q);
  EXPECT_EQ(again.k, got.k);
  if (c.layout != Layout::Dense) {
    const Outputs dense = run_rope(stream, d, in, Layout::Dense);
    EXPECT_EQ(dense.q, got.q);
    EXPECT_EQ(dense.k, got.k);
  }
}

INSTANTIATE_TEST_SUITE_P(All, RopeSweep, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case> &i) {
                           return i.param.name;
                         });

/// Many tokens and heads: the blocks' head groups and the threads' loops over
/// units (sim and cuda).
class RopeLarge : public ::testing::TestWithParam<DeviceKind> {};

TEST_P(RopeLarge, ManyTokensAndHeads) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  for (RopeStyle style : {RopeStyle::NeoX, RopeStyle::GptJ})
    for (int64_t tokens : {int64_t{1}, int64_t{300}}) {
      const RopeDescriptor d = RopeDescriptor()
                                   .with_style(style)
                                   .with_element(K::Bf16)
                                   .with_shape(tokens, 32, 8, 128)
                                   .with_theta(500000)
                                   .with_llama3(8, 1, 4, 8192);
      auto probe = dynamic::RopePlan::select(stream, d);
      BARACUDA_SKIP_IF_NO_CUDA_KERNELS(probe, GetParam());
      const Inputs in = make_inputs(d, 0, 131072, 5);
      const Outputs want = run_rope(Stream::host(), d, in, Layout::Dense);
      const Outputs got = run_rope(stream, d, in, Layout::FusedInPlace);
      ASSERT_TRUE(want.ok && got.ok);
      expect_rotated_close(d, got.q, want.q, in.q, 1.0, "q_out");
      expect_rotated_close(d, got.k, want.k, in.k, 1.0, "k_out");
    }
}

INSTANTIATE_TEST_SUITE_P(Devices, RopeLarge,
                         ::testing::Values(DeviceKind::Sim, DeviceKind::Cuda),
                         [](const ::testing::TestParamInfo<DeviceKind> &i) {
                           return std::string(to_string(i.param));
                         });

// ---------------------------------------------------------------------------------------------------------
// The host reference against independent formulations
// ---------------------------------------------------------------------------------------------------------

constexpr double kPi = 3.14159265358979323846;

/// The frequencies of `d` (computed cos/sin) from the scalings' formulas (HF
/// modeling_rope_utils), in double.
std::vector<double> frequencies(const RopeDescriptor &d) {
  const int64_t dim = d.rotary_dim();
  const double f = d.factor, l0 = static_cast<double>(d.original_max_position);
  double base = d.theta;
  if (d.scaling == RopeScaling::NtkAware)
    base = d.theta * std::pow(f, double(dim) / double(dim - 2));
  std::vector<double> inv;
  for (int64_t i = 0; i < dim; i += 2)
    inv.push_back(1.0 / std::pow(base, double(i) / double(dim)));
  if (d.scaling == RopeScaling::Linear)
    for (double &v : inv)
      v /= f;
  if (d.scaling == RopeScaling::Llama3)
    for (double &v : inv) {
      const double wavelen = 2 * kPi / v;
      if (wavelen > l0 / d.low_freq_factor) {
        v = v / f;
      } else if (!(wavelen < l0 / d.high_freq_factor)) {
        const double sm = (l0 / wavelen - d.low_freq_factor) /
                          (d.high_freq_factor - d.low_freq_factor);
        v = (1 - sm) * v / f + sm * v;
      }
    }
  if (d.scaling == RopeScaling::Yarn) {
    const auto cdim = [&](double r) {
      return double(dim) * std::log(l0 / (r * 2 * kPi)) /
             (2 * std::log(d.theta));
    };
    double low = cdim(d.beta_fast), high = cdim(d.beta_slow);
    if (d.truncate)
      low = std::floor(low), high = std::ceil(high);
    low = std::max(low, 0.0), high = std::min(high, double(dim - 1));
    if (low == high)
      high += 0.001;
    for (size_t i = 0; i < inv.size(); ++i) {
      const double extrapolation =
          1 - std::clamp((double(i) - low) / (high - low), 0.0, 1.0);
      inv[i] = inv[i] / f * (1 - extrapolation) + inv[i] * extrapolation;
    }
  }
  return inv;
}

TEST(RopeHost, FrequenciesFollowTheScalingFormulas) {
  const RopeDescriptor base =
      RopeDescriptor().with_element(K::F32).with_shape(1, 1, 0, 128);
  const RopeDescriptor ds[] = {
      RopeDescriptor(base).with_theta(10000),
      RopeDescriptor(base).with_theta(10000, RopeScaling::Linear, 4),
      RopeDescriptor(base).with_theta(10000, RopeScaling::NtkAware, 3),
      RopeDescriptor(base).with_theta(500000).with_llama3(8, 1, 4, 8192),
      RopeDescriptor(base).with_theta(500000).with_llama3(32, 1, 4, 8192),
      RopeDescriptor(base).with_theta(10000).with_yarn(4, 4096),
      RopeDescriptor(base).with_theta(150000).with_yarn(32, 4096).with_truncate(
          false),
      RopeDescriptor(base)
          .with_rot_dim(64)
          .with_theta(10000)
          .with_yarn(40, 4096, 32, 1)
          .with_mscale(1, 1)};
  for (const RopeDescriptor &d : ds) {
    auto plan = dynamic::RopePlan::select(Stream::host(), d);
    ASSERT_TRUE(plan) << plan.status().to_string();
    const std::vector<double> want = frequencies(d);
    ASSERT_EQ(plan->inv_freq().size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      const float w = static_cast<float>(
          want[i]); // within an ulp: the double formulas round before the float
      EXPECT_LE(std::fabs(plan->inv_freq()[i] - w),
                std::ldexp(std::fabs(w), -23))
          << to_string(d.scaling) << " " << i;
    }
  }
  // The anchors: Llama 3.1 keeps pairs 0-28 and divides 35-63 by 8; YaRN's
  // attention factor 0.1 ln f + 1, or the mscale ratio (1 for DeepSeek-V3's
  // equal mscales).
  auto llama = dynamic::RopePlan::select(Stream::host(), ds[3]);
  ASSERT_TRUE(llama);
  for (int i = 0; i < 64; ++i) {
    const double plain = std::pow(500000.0, -2.0 * i / 128);
    if (i <= 28)
      EXPECT_EQ(llama->inv_freq()[i], static_cast<float>(plain)) << i;
    if (i >= 35)
      EXPECT_EQ(llama->inv_freq()[i], static_cast<float>(plain / 8)) << i;
    if (i > 28 && i < 35)
      EXPECT_TRUE(llama->inv_freq()[i] < static_cast<float>(plain) &&
                  llama->inv_freq()[i] > static_cast<float>(plain / 8))
          << i;
  }
  EXPECT_EQ(
      dynamic::RopePlan::select(Stream::host(), ds[5])->attention_factor(),
      static_cast<float>(0.1 * std::log(4.0) + 1));
  EXPECT_EQ(
      dynamic::RopePlan::select(Stream::host(), ds[7])->attention_factor(),
      1.0f);
  EXPECT_EQ(
      dynamic::RopePlan::select(Stream::host(), ds[0])->attention_factor(),
      1.0f);
}

/// What the host plan gives for d (f32) over `in`, against three formulations
/// of the rotation in double from the plan's frequencies and the contract's f32
/// angle: a 2×2 rotation of each pair, HF's rotate_half (NeoX) and the complex
/// multiply (GPT-J).
void expect_formulations(const RopeDescriptor &d, const Inputs &in) {
  auto plan = dynamic::RopePlan::select(Stream::host(), d);
  ASSERT_TRUE(plan) << plan.status().to_string();
  const Outputs got = run_rope(Stream::host(), d, in, Layout::Dense);
  ASSERT_TRUE(got.ok);
  const int64_t D = d.head_dim, rot = d.rotary_dim(), half = rot / 2;
  const double m = plan->attention_factor(), sign = d.inverse ? -1 : 1;
  for (int64_t t = 0; t < d.num_tokens; ++t) {
    std::vector<double> c(half), s(half);
    for (int64_t j = 0; j < half; ++j) {
      const float angle =
          static_cast<float>(in.positions[t]) * plan->inv_freq()[j];
      c[j] = std::cos(double(angle)) * m,
      s[j] = sign * std::sin(double(angle)) * m;
    }
    for (int64_t h = 0; h < d.num_heads; ++h) {
      const double *x = &in.q[(t * d.num_heads + h) * D];
      const double *y = &got.q[(t * d.num_heads + h) * D];
      std::vector<double> rotation(x, x + D), formulation(x, x + D);
      for (int64_t j = 0; j < half;
           ++j) { // the rotation matrix [[c, −s], [s, c]] on the pair
        const int64_t a = d.style == RopeStyle::NeoX ? j : 2 * j,
                      b = d.style == RopeStyle::NeoX ? j + half : 2 * j + 1;
        rotation[a] = c[j] * x[a] - s[j] * x[b];
        rotation[b] = s[j] * x[a] + c[j] * x[b];
      }
      if (d.style ==
          RopeStyle::NeoX) { // x·cat(cos, cos) + rotate_half(x)·cat(sin, sin)
        for (int64_t e = 0; e < rot; ++e) {
          const double rh = e < half ? -x[e + half] : x[e - half];
          formulation[e] = x[e] * c[e % half] + rh * s[e % half];
        }
      } else { // (x_2j + i·x_2j+1)·(c + i·s)
        for (int64_t j = 0; j < half; ++j) {
          const std::complex<double> z =
              std::complex<double>(x[2 * j], x[2 * j + 1]) *
              std::complex<double>(c[j], s[j]);
          formulation[2 * j] = z.real(), formulation[2 * j + 1] = z.imag();
        }
      }
      for (int64_t e = 0; e < D; ++e) {
        const double tol =
            std::ldexp(std::fabs(double(static_cast<float>(rotation[e]))), -23);
        EXPECT_LE(std::fabs(y[e] - double(static_cast<float>(rotation[e]))),
                  tol)
            << "rotation " << t << " " << h << " " << e;
        EXPECT_LE(std::fabs(y[e] - double(static_cast<float>(formulation[e]))),
                  2 * tol)
            << "formulation " << t << " " << h << " " << e;
      }
    }
  }
}

TEST(RopeHost, AgreesWithIndependentFormulations) {
  for (RopeStyle style : {RopeStyle::NeoX, RopeStyle::GptJ})
    for (bool inverse : {false, true}) {
      const RopeDescriptor full = RopeDescriptor()
                                      .with_style(style)
                                      .with_element(K::F32)
                                      .with_shape(6, 3, 0, 32)
                                      .with_inverse(inverse)
                                      .with_theta(10000);
      expect_formulations(full, make_inputs(full, -100, 20000, 3));
      const RopeDescriptor partial = RopeDescriptor(full)
                                         .with_shape(5, 2, 0, 40)
                                         .with_rot_dim(24)
                                         .with_theta(10000)
                                         .with_yarn(8, 2048);
      expect_formulations(partial, make_inputs(partial, 0, 60000, 4));
    }
}

/// Rotation by θ then by −θ returns the input: within the f32 rounding for f32
/// (the kinds' rounding twice for 16-bit data); YaRN's attention factor m
/// scales the round trip by m².
TEST(RopeHost, ForwardThenBackwardReturnsTheInput) {
  for (DeviceKind dev : {DeviceKind::Host, DeviceKind::Sim})
    for (RopeStyle style : {RopeStyle::NeoX, RopeStyle::GptJ})
      for (K kind : {K::F32, K::Bf16})
        for (bool yarn : {false, true}) {
          RopeDescriptor d = RopeDescriptor()
                                 .with_style(style)
                                 .with_element(kind)
                                 .with_shape(7, 2, 1, 48)
                                 .with_rot_dim(32)
                                 .with_theta(10000);
          if (yarn)
            d.with_yarn(16, 2048);
          const Inputs in = make_inputs(d, 0, 30000, 9);
          const Stream stream =
              dev == DeviceKind::Host ? Stream::host() : Stream::sim();
          const Outputs fwd = run_rope(stream, d, in, Layout::Dense);
          ASSERT_TRUE(fwd.ok);
          Inputs back = in;
          back.q = fwd.q, back.k = fwd.k;
          const Outputs round =
              run_rope(stream, RopeDescriptor(d).with_inverse(true), back,
                       Layout::Dense);
          ASSERT_TRUE(round.ok);
          const double m =
              dynamic::RopePlan::select(Stream::host(), d)->attention_factor();
          const double eps = kind == K::F32 ? 0x1p-20 : 0x1p-6;
          for (size_t i = 0; i < in.q.size(); ++i)
            EXPECT_NEAR(round.q[i],
                        in.q[i] * (int64_t(i) % 48 < 32 ? m * m : 1),
                        4 * eps * m * m)
                << i;
          for (size_t i = 0; i < in.k.size(); ++i)
            EXPECT_NEAR(round.k[i],
                        in.k[i] * (int64_t(i) % 48 < 32 ? m * m : 1),
                        4 * eps * m * m)
                << i;
        }
}

/// A cache position below 0 reads row 0 and one at or past max_position the
/// last row, on every device.
TEST(RopeHost, CachePositionsAreClamped) {
  for (DeviceKind dev : {DeviceKind::Host, DeviceKind::Sim}) {
    const Stream stream =
        dev == DeviceKind::Host ? Stream::host() : Stream::sim();
    const RopeDescriptor d = RopeDescriptor()
                                 .with_element(K::F32)
                                 .with_shape(4, 1, 1, 16)
                                 .with_cache(K::F32, 10);
    Inputs in = make_inputs(d, 0, 10, 2);
    in.positions = {-5, 0, 9, 1000000};
    Inputs same = in;
    same.positions = {0, 0, 9, 9};
    const Outputs a = run_rope(stream, d, in, Layout::Dense),
                  b = run_rope(stream, d, same, Layout::Dense);
    ASSERT_TRUE(a.ok && b.ok);
    EXPECT_EQ(a.q, b.q);
    EXPECT_EQ(a.k, b.k);
  }
}

/// Exact values: position 0 leaves x unchanged, and a quarter turn maps (a, b)
/// to (−b, a) up to cos(π/2)'s rounding.
TEST(RopeHost, PositionZeroIsTheIdentity) {
  for (DeviceKind dev : {DeviceKind::Host, DeviceKind::Sim})
    for (RopeStyle style : {RopeStyle::NeoX, RopeStyle::GptJ}) {
      const RopeDescriptor d = RopeDescriptor()
                                   .with_style(style)
                                   .with_element(K::F16)
                                   .with_shape(3, 2, 2, 64)
                                   .with_theta(10000);
      Inputs in = make_inputs(d, 0, 1, 1);
      const Outputs r =
          run_rope(dev == DeviceKind::Host ? Stream::host() : Stream::sim(), d,
                   in, Layout::Dense);
      ASSERT_TRUE(r.ok);
      EXPECT_EQ(r.q, in.q);
      EXPECT_EQ(r.k, in.k);
    }
}

} // namespace
} // namespace baracuda::test
