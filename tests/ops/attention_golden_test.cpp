// FlashAttentionPlan against PyTorch (tests/data/attention_golden.json, written by gen_attention_golden.py: float64
// matmul / softmax / logsumexp with explicit bottom-right masks): padded and packed batches, causal with rows that
// see no key, sliding windows, GQA 2, 4 and 8, head dims 64, 96, 128 and 256, f16 and bf16, an explicit sharp scale.
// The test's own f64 evaluation (attention_test_support.hpp) must agree with PyTorch within one rounding, the host
// reference within one unit in the last place, sim and cuda within the kernels' bound.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "attention_test_support.hpp"
#include "support/devices.hpp"
#include "support/golden.hpp"

namespace baracuda::test::attention {
namespace {

class AttentionGolden : public ::testing::TestWithParam<DeviceKind> {};

TEST_P(AttentionGolden, AgainstPyTorch) {
  std::string why;
  const auto st = stream_for(GetParam(), &why);
  if (!st) GTEST_SKIP() << why;
  const GoldenFile file = load_golden("attention");
  ASSERT_TRUE(file.error.empty()) << file.error;
  ASSERT_GE(file.cases.size(), 8u);
  for (const GoldenCase& c : file.cases) {
    SCOPED_TRACE(c.name);
    Problem p = golden_problem(c);
    p.d.with_lse();
    const ElementKind e = p.d.element;
    Data x(p, 0);
    x.q = c.tensor("q").bytes(), x.k = c.tensor("k").bytes(), x.v = c.tensor("v").bytes();
    ASSERT_EQ(x.q.size(), static_cast<size_t>(p.d.tokens_q() * p.d.heads * p.d.head_dim * 2));
    Data got = x;
    const Status s = run_on(*st, x, got);
    ASSERT_TRUE(s.is_ok()) << s.to_string();
    const std::vector<uint8_t> go = c.tensor("o").bytes(), gl = c.tensor("lse").bytes();
    ASSERT_EQ(go.size(), got.o.size());
    ASSERT_EQ(gl.size(), got.lse.size());
    const std::vector<int64_t> cq = p.bounds(true);
    const double u = unit(e), tn = tiny(e);
    int64_t rows = 0;
    for (int64_t b = 0; b < p.d.batch; ++b)
      for (int64_t h = 0; h < p.d.heads; ++h)
        for (int64_t i = 0; i < cq[b + 1] - cq[b]; ++i, ++rows) {
          const RowExpect r = x.expect(b, h, i);
          for (int64_t ch = 0; ch < p.d.head_dim; ++ch) {
            const int64_t at = ((cq[b] + i) * p.d.heads + h) * p.d.head_dim + ch;
            const double g = get(e, go, at), mine = r.o[static_cast<size_t>(ch)], dev = get(e, got.o, at);
            ASSERT_LE(std::fabs(mine - g), u * std::fabs(g) + tn + 1e-12) << "the test's f64 evaluation, o " << at;
            const double tol = GetParam() == DeviceKind::Host
                                   ? 2 * u * std::fabs(g) + 2 * tn
                                   : (3 * u + 2 * r.serr) * r.vmax + 2 * u * std::fabs(g) + 1e-6;
            ASSERT_LE(std::fabs(dev - g), tol) << "o[" << cq[b] + i << ", " << h << ", " << ch << "]";
          }
          const int64_t li = p.lse_index(b, h, p.d.varlen ? cq[b] + i : i);
          float gv, dv;
          std::memcpy(&gv, gl.data() + li * 4, 4);
          std::memcpy(&dv, got.lse.data() + li * 4, 4);
          if (std::isinf(gv)) {
            EXPECT_TRUE(r.empty);
            EXPECT_TRUE(std::isinf(dv) && dv > 0) << "lse of a row that sees no key: " << dv;
            continue;
          }
          ASSERT_LE(std::fabs(r.lse - gv), std::ldexp(std::fabs(gv), -24) + 1e-12) << "the test's f64 lse";
          const double tol = GetParam() == DeviceKind::Host ? std::ldexp(std::fabs(gv), -23)
                                                            : std::ldexp(1.0 + std::fabs(gv), -16) + 2 * r.serr;
          ASSERT_LE(std::fabs(dv - gv), tol) << "lse " << li;
        }
    EXPECT_GT(rows, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, AttentionGolden, ::testing::ValuesIn(kTestDevices),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace baracuda::test::attention
