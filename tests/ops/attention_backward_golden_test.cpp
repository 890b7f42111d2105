// FlashAttentionBackwardPlan against PyTorch autograd (tests/data/attention_backward_golden.json, written by
// gen_attention_backward_golden.py: the float64 forward with explicit bottom-right masks, torch.autograd.grad of
// Σ o·dO): padded and packed batches, causal with rows that see no key, sliding windows with keys no query sees, GQA
// 2, 4 and 8, head dims 64, 96 and 128, f16 and bf16. PyTorch's gradients are those of the exact forward; the
// library's use the rounded o and lse it is given, so every bound adds those roundings' effect (2u of the terms'
// magnitude). The test's own f64 evaluation (attention_backward_test_support.hpp) must agree with PyTorch within
// that, the host reference too, sim and cuda within the kernels' bound.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "attention_backward_test_support.hpp"
#include "support/devices.hpp"
#include "support/golden.hpp"

namespace baracuda::test::attention {
namespace {

class AttentionBackwardGolden : public ::testing::TestWithParam<DeviceKind> {};

TEST_P(AttentionBackwardGolden, AgainstPyTorchAutograd) {
  std::string why;
  const auto st = stream_for(GetParam(), &why);
  if (!st) GTEST_SKIP() << why;
  const GoldenFile file = load_golden("attention_backward");
  ASSERT_TRUE(file.error.empty()) << file.error;
  ASSERT_GE(file.cases.size(), 8u);
  for (const GoldenCase& c : file.cases) {
    SCOPED_TRACE(c.name);
    const Problem p = golden_problem(c);
    const ElementKind e = p.d.element;
    BwdData x(p, 0);
    x.x.q = c.tensor("q").bytes(), x.x.k = c.tensor("k").bytes(), x.x.v = c.tensor("v").bytes();
    x.x.ready_ = false;  // decode the golden inputs
    x.o = c.tensor("o").bytes(), x.d_o = c.tensor("do").bytes(), x.lse = c.tensor("lse").bytes();
    ASSERT_EQ(x.d_o.size(), x.dq.size());
    BwdData got = x;
    const Status s = run_backward(*st, x, got);
    ASSERT_TRUE(s.is_ok()) << s.to_string();
    const BwdExpect r = expect_backward(x);
    const double u = unit(e), tn = tiny(e);
    const bool host = GetParam() == DeviceKind::Host;
    int64_t n = 0;
    for (const char* name : {"dq", "dk", "dv"}) {
      const std::string nm = name;
      const std::vector<uint8_t> gold = c.tensor(name).bytes();
      const std::vector<uint8_t>& dev = nm == "dq" ? got.dq : nm == "dk" ? got.dk : got.dv;
      const std::vector<double>& mine = nm == "dq" ? r.dq : nm == "dk" ? r.dk : r.dv;
      const std::vector<double>& mag = nm == "dq" ? r.mq : nm == "dk" ? r.mk : r.mv;
      ASSERT_EQ(gold.size(), dev.size()) << name;
      for (size_t i = 0; i < gold.size() / 2; ++i, ++n) {
        const double g = get(e, gold, static_cast<int64_t>(i)), d = get(e, dev, static_cast<int64_t>(i));
        const double ours = u * std::fabs(g) + 2 * u * mag[i] + tn;  // PyTorch's rounding + o's and lse's
        ASSERT_LE(std::fabs(mine[i] - g), ours) << "the test's f64 evaluation, " << name << " element " << i;
        const double tol = host ? 2 * u * std::fabs(g) + 2 * u * mag[i] + 2 * tn
                                : (6 * u + r.p_err) * mag[i] + 2 * u * std::fabs(g) + 3 * tn;
        ASSERT_LE(std::fabs(d - g), tol) << name << " element " << i << " (term magnitude " << mag[i] << ")";
      }
    }
    EXPECT_GT(n, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, AttentionBackwardGolden, ::testing::ValuesIn(kTestDevices),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace baracuda::test::attention
