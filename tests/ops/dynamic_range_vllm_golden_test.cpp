// DynamicRangeQuantizePlan with QuantConvention::Vllm against a NumPy model of vLLM's dynamic int8 kernels
// (tests/data/dynamic_range_vllm_golden.json, made by tests/data/gen_dynamic_range_vllm_golden.py, which
// cites the vLLM source and documents the model). Each case is [tokens, hidden] per token, run on the host, sim
// and cuda devices:
// - per_token over x as given (sim: the fused warp or block row kernel, or the two passes for rows too long
//   for shared memory; the SKU variant is checked so that each path is known to run);
// - per_channel(1) over the transpose [hidden, tokens] (the two passes on every device, so the Vllm symmetric
//   multipliers go through the workspace).
// q, scale (bit for bit, any NaN equal to any NaN) and zero point (asymmetric; symmetric: 0) must match.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "ops/dynamic_range_test_support.hpp"
#include "support/devices.hpp"
#include "support/golden.hpp"
#include "support/numeric.hpp"
#include "support/tensor.hpp"

namespace baracuda::test::dynamic_range {
namespace {

struct GoldenCase {
  std::string line;
  ElementKind element = ElementKind::F32;
  ElementKind quantized = ElementKind::S8;
  DynamicRangeMode mode = DynamicRangeMode::Symmetric;
  int32_t qmin = 0, qmax = 0;
  int64_t tokens = 0, hidden = 0;
  std::vector<uint64_t> x_bits;  // the element type's bit patterns, row-major [tokens, hidden]
  std::vector<double> scale;
  std::vector<int32_t> zp, q;
};

ElementKind kind_named(const std::string& s) {
  ElementKind k = ElementKind::F32;
  EXPECT_TRUE(parse_element_kind(s, &k)) << "unknown kind " << s;
  return k;
}

std::vector<GoldenCase> golden_cases() {
  return load_golden_as<GoldenCase>("dynamic_range_vllm", nullptr, [](const test::GoldenCase& g) {
    GoldenCase c;
    c.line = g.name;
    c.element = kind_named(g.param<std::string>("element"));
    c.quantized = kind_named(g.param<std::string>("qdtype"));
    c.mode = g.param<std::string>("mode") == "symmetric" ? DynamicRangeMode::Symmetric : DynamicRangeMode::Asymmetric;
    c.qmin = g.param<int32_t>("qmin");
    c.qmax = g.param<int32_t>("qmax");
    c.tokens = g.param<int64_t>("tokens");
    c.hidden = g.param<int64_t>("hidden");
    c.x_bits = g.tensor("x").bits;
    for (float s : g.tensor("scale").as<float>()) c.scale.push_back(s);
    for (int64_t v : g.tensor("zp").ints()) c.zp.push_back(static_cast<int32_t>(v));
    for (int64_t v : g.tensor("q").ints()) c.q.push_back(static_cast<int32_t>(v));
    return c;
  });
}

class DynamicRangeVllmGolden : public ::testing::TestWithParam<DeviceKind> {};

TEST_P(DynamicRangeVllmGolden, MatchesTheModelOfVllmsKernels) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  const std::vector<GoldenCase> cases = golden_cases();
  ASSERT_EQ(cases.size(), 15u) << "tests/data/dynamic_range_vllm_golden.json missing or changed";
  int runs = 0;
  std::vector<std::string> variants;
  for (const GoldenCase& c : cases) {
    SCOPED_TRACE(c.line);
    const int64_t n = c.tokens * c.hidden;
    ASSERT_EQ(static_cast<int64_t>(c.x_bits.size()), n);
    ASSERT_EQ(static_cast<int64_t>(c.q.size()), n);
    ASSERT_EQ(static_cast<int64_t>(c.scale.size()), c.tokens);
    ASSERT_EQ(static_cast<int64_t>(c.zp.size()), c.tokens);
    const size_t eb = static_cast<size_t>(element_bytes(c.element));
    std::vector<uint8_t> x(static_cast<size_t>(n) * eb), xt(x.size());
    for (int64_t t = 0; t < c.tokens; ++t)
      for (int64_t h = 0; h < c.hidden; ++h) {
        const uint64_t bits = c.x_bits[static_cast<size_t>(t * c.hidden + h)];
        store_bits(c.element, x.data() + static_cast<size_t>(t * c.hidden + h) * eb, bits);
        store_bits(c.element, xt.data() + static_cast<size_t>(h * c.tokens + t) * eb, bits);
      }
    for (bool transposed : {false, true}) {
      SCOPED_TRACE(transposed ? "per_channel(1) over the transpose" : "per_token");
      const Shape shape = transposed ? Shape{c.hidden, c.tokens} : Shape{c.tokens, c.hidden};
      if (is_packed(c.quantized) && shape[1] % 2 != 0) continue;  // packed pairs along the last dimension
      const Desc d = Desc{}
                         .with_element(c.element)
                         .with_quantized(c.quantized)
                         .with_shape(shape)
                         .with_granularity(transposed ? QuantGranularity::per_channel(1) : QuantGranularity::per_token())
                         .with_mode(c.mode)
                         .with_range(c.qmin, c.qmax)
                         .with_convention(QuantConvention::Vllm);
      auto got = run_plan(stream, d, transposed ? xt : x, dense_layout(shape));
      ASSERT_TRUE(got.is_ok()) << got.error().to_string();
      ++runs;
      if (transposed) {  // back to [tokens, hidden]
        std::vector<int32_t> q(got->q.size());
        for (int64_t t = 0; t < c.tokens; ++t)
          for (int64_t h = 0; h < c.hidden; ++h)
            q[static_cast<size_t>(t * c.hidden + h)] = got->q[static_cast<size_t>(h * c.tokens + t)];
        got->q = q;
        if (stream.device() != DeviceKind::Host) {
          EXPECT_EQ(got->variant, "segment_reduce+quantize");
        }
      } else {
        variants.push_back(got->variant);
      }
      EXPECT_TRUE(same_outputs(*got, c.q, c.scale, c.zp));
    }
  }
  EXPECT_GE(runs, 28);
  if (stream.device() != DeviceKind::Host) {  // per token, each path ran: warp, block and the two passes
    for (const char* v : {"fused_rows_warp", "fused_rows_block", "segment_reduce+quantize"})
      EXPECT_NE(std::find(variants.begin(), variants.end(), v), variants.end()) << v;
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, DynamicRangeVllmGolden,
                         ::testing::Values(DeviceKind::Host, DeviceKind::Sim, DeviceKind::Cuda),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace baracuda::test::dynamic_range
