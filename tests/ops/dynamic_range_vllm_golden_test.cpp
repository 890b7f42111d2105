// DynamicRangeQuantizePlan with QuantConvention::Vllm against a NumPy model of vLLM's dynamic int8 kernels
// (tests/data/dynamic_range_vllm_golden.txt, made by tests/data/gen_dynamic_range_vllm_golden.py, whose header
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
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "ops/dynamic_range_test_support.hpp"
#include "support/devices.hpp"
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
  if (s == "f32") return ElementKind::F32;
  if (s == "f16") return ElementKind::F16;
  if (s == "bf16") return ElementKind::Bf16;
  if (s == "s8") return ElementKind::S8;
  if (s == "u8") return ElementKind::U8;
  if (s == "s4") return ElementKind::S4;
  if (s == "u4") return ElementKind::U4;
  ADD_FAILURE() << "unknown kind " << s;
  return ElementKind::F32;
}

std::vector<GoldenCase> golden_cases() {
  std::ifstream file(std::string(BARACUDA_TEST_DATA_DIR) + "/dynamic_range_vllm_golden.txt");
  std::vector<GoldenCase> cases;
  std::string line;
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::string tag, tok;
    in >> tag;
    if (tag == "case") {
      GoldenCase c;
      c.line = line;
      std::string e, q, m;
      in >> e >> q >> m >> c.qmin >> c.qmax >> c.tokens >> c.hidden;
      c.element = kind_named(e);
      c.quantized = kind_named(q);
      c.mode = m == "symmetric" ? DynamicRangeMode::Symmetric : DynamicRangeMode::Asymmetric;
      cases.push_back(c);
      continue;
    }
    if (cases.empty()) continue;
    GoldenCase& c = cases.back();
    while (in >> tok) {
      if (tag == "x") {
        c.x_bits.push_back(std::stoull(tok, nullptr, 16));
      } else if (tag == "scale") {
        const auto bits = static_cast<uint32_t>(std::stoul(tok, nullptr, 16));
        float f;
        std::memcpy(&f, &bits, 4);
        c.scale.push_back(f);
      } else if (tag == "zp") {
        c.zp.push_back(static_cast<int32_t>(std::stoll(tok)));
      } else if (tag == "q") {
        c.q.push_back(static_cast<int32_t>(std::stoll(tok)));
      }
    }
  }
  return cases;
}

class DynamicRangeVllmGolden : public ::testing::TestWithParam<DeviceKind> {};

TEST_P(DynamicRangeVllmGolden, MatchesTheModelOfVllmsKernels) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  const std::vector<GoldenCase> cases = golden_cases();
  ASSERT_EQ(cases.size(), 15u) << "tests/data/dynamic_range_vllm_golden.txt missing or changed";
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
