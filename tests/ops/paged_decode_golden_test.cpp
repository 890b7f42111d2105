// PagedDecodePlan against PyTorch (tests/data/paged_decode_golden.json, written by gen_paged_decode_golden.py: a
// float64 gather through the block tables, then matmul / softmax / logsumexp with the bottom-right causal mask):
// mixed lengths with an empty sequence, GQA 2, 4 and 8, q_len 1, 2 and 3, a window, FP8 and s8 caches per tensor and
// per head, pages of 8, 16 and 32, an invalid page id, over-long and negative context lengths. The test's own f64
// evaluation (paged_decode_test_support.hpp) must agree with PyTorch within one rounding, the host reference within
// one unit in the last place, sim and cuda within the kernels' bound.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "paged_decode_test_support.hpp"
#include "support/devices.hpp"
#include "support/golden.hpp"

namespace baracuda::test::paged {
namespace {

ElementKind kind_named(const std::string& s) {
  return s == "bf16"      ? ElementKind::Bf16
         : s == "fp8e4m3" ? ElementKind::Fp8E4M3
         : s == "s8"      ? ElementKind::S8
                          : ElementKind::F16;
}

class PagedDecodeGolden : public ::testing::TestWithParam<DeviceKind> {};

TEST_P(PagedDecodeGolden, AgainstPyTorch) {
  std::string why;
  const auto st = stream_for(GetParam(), &why);
  if (!st) GTEST_SKIP() << why;
  const GoldenFile file = load_golden("paged_decode");
  ASSERT_TRUE(file.error.empty()) << file.error;
  ASSERT_GE(file.cases.size(), 6u);
  for (const GoldenCase& c : file.cases) {
    SCOPED_TRACE(c.name);
    Problem p;
    const ElementKind e = kind_named(c.param<std::string>("kind"));
    const ElementKind ck = kind_named(c.param<std::string>("cache_kind"));
    p.d =
        PagedDecodeDescriptor{}
            .with_kinds(e, ck)
            .with_shape(c.param<int64_t>("batch"), c.param<int64_t>("q_len"), c.param<int64_t>("heads"),
                        c.param<int64_t>("kv_heads"), c.param<int64_t>("head_dim"))
            .with_pages(c.param<int64_t>("num_blocks"), c.param<int64_t>("block_size"), c.param<int64_t>("max_blocks"))
            .with_window(c.param<int64_t>("window_left"))
            .with_scale(c.param<double>("scale"))
            .with_scale_layout(c.param<bool>("per_head") ? KvScaleLayout::PerHead : KvScaleLayout::PerTensor)
            .with_lse()
            .with_splits(3);
    for (int64_t v : c.tensor("context_lens").ints()) p.ctx.push_back(static_cast<int32_t>(v));
    for (int64_t v : c.tensor("block_tables").ints()) p.table.push_back(static_cast<int32_t>(v));
    Data x(p, 0);
    const auto fill = [](std::vector<uint8_t>& dst, const std::vector<uint8_t>& src) {
      ASSERT_LE(src.size(), dst.size());
      std::memcpy(dst.data(), src.data(), src.size());
    };
    fill(x.q, c.tensor("q").bytes());
    fill(x.k, c.tensor("key_cache").bytes());
    fill(x.v, c.tensor("value_cache").bytes());
    if (p.d.quantized()) {
      const auto ks = c.tensor("k_scale").as<float>(), vs = c.tensor("v_scale").as<float>();
      for (size_t h = 0; h < ks.size(); ++h) x.k_scale[2 * h] = ks[h], x.v_scale[2 * h] = vs[h];
    }
    Outputs got;
    const Status s = run_on(*st, x, got);
    ASSERT_TRUE(s.is_ok()) << s.to_string();
    const std::vector<uint8_t> go = c.tensor("o").bytes(), gl = c.tensor("lse").bytes();
    const double u = unit(e), tn = tiny(e);
    int64_t rows = 0;
    for (int64_t b = 0; b < p.d.batch; ++b)
      for (int64_t i = 0; i < p.d.q_len; ++i)
        for (int64_t h = 0; h < p.d.heads; ++h, ++rows) {
          const RowExpect r = x.expect(b, i, h);
          const int64_t tok = b * p.d.q_len + i;
          for (int64_t ch = 0; ch < p.d.head_dim; ++ch) {
            const int64_t at = (tok * p.d.heads + h) * p.d.head_dim + ch;
            const double g = get(e, go, at), mine = r.o[static_cast<size_t>(ch)], dev = get(e, got.o, at);
            ASSERT_LE(std::fabs(mine - g), u * std::fabs(g) + tn + 1e-12) << "the test's f64 evaluation, o " << at;
            const double tol = GetParam() == DeviceKind::Host ? 2 * u * std::fabs(g) + 2 * tn
                                                              : kernel_bound(r) + 2 * u * std::fabs(g) + 2 * tn;
            ASSERT_LE(std::fabs(dev - g), tol) << "o[" << tok << ", " << h << ", " << ch << "]";
          }
          float gv, dv;
          std::memcpy(&gv, gl.data() + (tok * p.d.heads + h) * 4, 4);
          std::memcpy(&dv, got.lse.data() + (tok * p.d.heads + h) * 4, 4);
          if (std::isinf(gv)) {
            EXPECT_TRUE(r.empty);
            EXPECT_TRUE(std::isinf(dv) && dv > 0) << "lse of a row that sees no key: " << dv;
            continue;
          }
          ASSERT_LE(std::fabs(r.lse - gv), std::ldexp(std::fabs(gv), -24) + 1e-12) << "the test's f64 lse";
          const double tol = GetParam() == DeviceKind::Host ? std::ldexp(std::fabs(gv), -23) + 1e-30
                                                            : std::ldexp(1.0 + std::fabs(gv), -20) + 2 * r.serr;
          ASSERT_LE(std::fabs(dv - gv), tol) << "lse " << tok << ", " << h;
        }
    EXPECT_GT(rows, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, PagedDecodeGolden, ::testing::ValuesIn(kTestDevices),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace baracuda::test::paged
