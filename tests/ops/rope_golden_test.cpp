// RopePlan against PyTorch (tests/data/rope_golden.json, made by
// tests/data/gen_rope_golden.py): HF's rotate_half and GPT-J's rotate_every_two
// applied with torch in float32, the frequencies of every scaling as HF's
// modeling_rope_utils computes them (in float32, and the same formulas in
// float64), vLLM's cos_sin_cache. The plan's frequencies equal the float64 ones
// rounded (within an ulp); its outputs, on the host and sim, in f32, bf16 and
// f16, equal torch's within the rounding of both computations and the angle
// that a different last bit of a float32 frequency gives at the case's
// positions.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "baracuda/core/buffer.hpp"
#include "baracuda/core/stream.hpp"
#include "baracuda/ops/rope.hpp"
#include "ops/rope_test_support.hpp"
#include "support/golden.hpp"

namespace baracuda::test {
namespace {

using namespace rope;

RopeScaling scaling_of(const std::string &s) {
  return s == "linear"      ? RopeScaling::Linear
         : s == "ntk_aware" ? RopeScaling::NtkAware
         : s == "llama3"    ? RopeScaling::Llama3
         : s == "yarn"      ? RopeScaling::Yarn
                            : RopeScaling::None;
}

RopeDescriptor descriptor_of(const GoldenCase &c, K kind) {
  const auto &q = c.tensor("q");
  RopeDescriptor d =
      RopeDescriptor()
          .with_style(c.param<std::string>("style") == "gptj" ? RopeStyle::GptJ
                                                              : RopeStyle::NeoX)
          .with_element(kind)
          .with_position_kind(K::S64)
          .with_shape(q.shape[0], q.shape[1], c.tensor("k").shape[1],
                      c.param<int64_t>("head_dim"))
          .with_rot_dim(c.param<int64_t>("rot_dim"));
  if (c.param<std::string>("source") == "cache")
    return d.with_cache(K::F32, c.param<int64_t>("max_position"));
  d.with_theta(c.param<double>("theta"),
               scaling_of(c.param<std::string>("scaling")),
               c.param<double>("factor"));
  d.low_freq_factor = c.param<double>("low_freq_factor"),
  d.high_freq_factor = c.param<double>("high_freq_factor");
  d.original_max_position = c.param<int64_t>("original_max_position");
  d.beta_fast = c.param<double>("beta_fast"),
  d.beta_slow = c.param<double>("beta_slow");
  d.mscale = c.param<double>("mscale"),
  d.mscale_all_dim = c.param<double>("mscale_all_dim");
  d.truncate = c.param<bool>("truncate");
  return d;
}

std::vector<double> values(const GoldenTensor &t) {
  std::vector<double> v;
  if (t.kind == K::F64)
    for (double x : t.as<double>())
      v.push_back(x);
  else
    for (float x : t.as<float>())
      v.push_back(x);
  return v;
}

TEST(RopeGolden, MatchesPyTorch) {
  const GoldenFile file = load_golden("rope");
  ASSERT_TRUE(file.error.empty()) << file.error;
  ASSERT_GE(file.cases.size(), 15u);
  for (const GoldenCase &c : file.cases)
    for (K kind : {K::F32, K::Bf16, K::F16})
      for (DeviceKind dev : {DeviceKind::Host, DeviceKind::Sim}) {
        SCOPED_TRACE(c.name + " " + std::string(to_string(kind)) + " " +
                     std::string(to_string(dev)));
        const RopeDescriptor d = descriptor_of(c, kind);
        const Stream stream =
            dev == DeviceKind::Host ? Stream::host() : Stream::sim();
        auto plan = dynamic::RopePlan::select(stream, d);
        ASSERT_TRUE(plan) << plan.status().to_string();
        const int64_t half = d.rotary_dim() / 2;
        std::vector<double> dinv(static_cast<size_t>(half), 0.0);
        const bool cached = d.source == CosSinSource::Cache;
        if (!cached) {
          const std::vector<double> f64 = values(c.tensor("inv_freq_f64")),
                                    hf = values(c.tensor("inv_freq"));
          ASSERT_EQ(plan->inv_freq().size(), f64.size());
          for (int64_t j = 0; j < half; ++j) {
            const float want = static_cast<float>(f64[j]);
            EXPECT_LE(std::fabs(plan->inv_freq()[j] - want),
                      std::ldexp(std::fabs(want), -23))
                << "inv_freq " << j;
            // HF's float32 steps stay within a few ulps of it; the difference
            // moves the angle (below).
            EXPECT_LE(std::fabs(plan->inv_freq()[j] - hf[j]),
                      std::ldexp(std::fabs(hf[j]), -20))
                << "HF inv " << j;
            dinv[j] = std::fabs(plan->inv_freq()[j] - hf[j]);
          }
          EXPECT_EQ(plan->attention_factor(),
                    static_cast<float>(c.param<double>("attention_factor")));
        }
        Inputs in;
        in.positions = c.tensor("positions").ints();
        in.q = values(c.tensor("q")), in.k = values(c.tensor("k"));
        if (cached)
          in.cache = values(c.tensor("cos_sin_cache"));
        const Outputs got = run_rope(stream, d, in, Layout::Dense);
        ASSERT_TRUE(got.ok);
        const double m = cached ? 1.0 : plan->attention_factor();
        const auto check = [&](const std::vector<double> &out,
                               const std::vector<double> &want,
                               const std::vector<double> &x, int64_t heads,
                               const char *what) {
          const int64_t D = d.head_dim, rot = d.rotary_dim();
          int bad = 0;
          for (size_t i = 0; i < out.size() && bad < 5; ++i) {
            const int64_t e = static_cast<int64_t>(i) % D,
                          row = static_cast<int64_t>(i) - e;
            const int64_t t = static_cast<int64_t>(i) / (heads * D);
            if (e >= rot) {
              if (out[i] != want[i])
                ++bad, ADD_FAILURE() << what << " pass-through " << i;
              continue;
            }
            const bool neox = d.style == RopeStyle::NeoX;
            const int64_t j = neox ? e % half : e / 2,
                          partner =
                              neox ? (e < half ? e + half : e - half) : e ^ 1;
            const double terms =
                (std::fabs(x[i]) + std::fabs(x[row + partner])) *
                std::max(m, 1.0);
            const double p = std::fabs(static_cast<double>(in.positions[t]));
            // Both computations' f32 roundings, and the angle a frequency's
            // last bit moves (with its own rounding).
            double tol = 0x1p-20 * terms +
                         std::ldexp(std::fabs(want[i]), -mantissa(kind)) +
                         0x1p-24;
            if (dinv[j] != 0)
              tol += (p * dinv[j] * 1.01 + 0x1p-23 * p * plan->inv_freq()[j]) *
                     terms;
            if (!(std::fabs(out[i] - want[i]) <= tol))
              ++bad, ADD_FAILURE()
                         << what << " " << i << ": " << out[i] << " vs torch "
                         << want[i] << " (tolerance " << tol << ", position "
                         << in.positions[t] << ")";
          }
        };
        check(got.q, values(c.tensor("q_out")), in.q, d.num_heads, "q_out");
        check(got.k, values(c.tensor("k_out")), in.k, d.num_kv_heads, "k_out");
      }
}

} // namespace
} // namespace baracuda::test
