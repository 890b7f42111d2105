// GemmPlan against PyTorch (tests/data/gemm_golden.json, gen_gemm_golden.py): F.linear, addmm, baddbmm with a
// broadcast op(A), the activations (F.relu, F.silu, F.gelu erf and tanh) with the pre-activation aux output, and a
// weight gradient dW = dYᵀ·X with its db as bias_grad, each evaluated by PyTorch in float64 and rounded once.
// The host reference (double or long double sums, one rounding) must be within one unit in the last place of the
// output kind (f64: plus the bound of PyTorch's own f64 sums); the other devices within the bound of
// gemm_test_support.hpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "gemm_test_support.hpp"
#include "support/devices.hpp"
#include "support/golden.hpp"

namespace baracuda::test::gemm {
namespace {

ElementKind kind_named(const std::string& s) {
  for (ElementKind k : {ElementKind::F16, ElementKind::Bf16, ElementKind::F32, ElementKind::F64})
    if (to_string(k) == s) return k;
  return ElementKind::S8;
}
MatrixLayout layout_named(const std::string& s) {
  return s == "row_major" ? MatrixLayout::RowMajor : MatrixLayout::ColMajor;
}
LinearActivation activation_named(const std::string& s) {
  for (size_t a = 0; a < kNumLinearActivations; ++a)
    if (to_string(static_cast<LinearActivation>(a)) == s) return static_cast<LinearActivation>(a);
  return LinearActivation::None;
}

/// Copies the logical row-major golden matrix `t` ([batch?, rows, cols]) into storage laid out as `m`.
void place(const GoldenTensor& t, ElementKind k, const Mat& m, int64_t batches, std::vector<uint8_t>& storage) {
  const std::vector<uint8_t> v = t.bytes();
  const size_t w = bytes_of(k);
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t i = 0; i < m.rows; ++i)
      for (int64_t j = 0; j < m.cols; ++j)
        std::memcpy(storage.data() + static_cast<size_t>(m.at(b, i, j)) * w,
                    v.data() + static_cast<size_t>((b * m.rows + i) * m.cols + j) * w, w);
}

class GemmGolden : public ::testing::TestWithParam<DeviceKind> {};

TEST_P(GemmGolden, AgainstPyTorch) {
  BARACUDA_TEST_STREAM(st, GetParam());
  const GoldenFile file = load_golden("gemm");
  ASSERT_TRUE(file.error.empty()) << file.error;
  ASSERT_GE(file.cases.size(), 10u);
  for (const GoldenCase& c : file.cases) {
    SCOPED_TRACE(c.name);
    const ElementKind in = kind_named(c.param<std::string>("in")), out = kind_named(c.param<std::string>("out"));
    const int64_t batch = c.param<int64_t>("batch");
    const GoldenTensor& gd = c.tensor("d");
    const auto& ds = gd.shape;
    const int64_t m = ds[ds.size() - 2], n = ds.back(), k = c.tensor("a").shape.back();
    GemmDescriptor g = GemmDescriptor{}
                           .with_shape(m, n, k)
                           .with_batch(batch)
                           .with_kinds(in, out)
                           .with_layouts(layout_named(c.param<std::string>("layout_a")),
                                         layout_named(c.param<std::string>("layout_b")))
                           .with_alpha_beta(c.param<double>("alpha"), c.param<double>("beta"))
                           .with_bias(c.param<bool>("has_bias"))
                           .with_activation(activation_named(c.param<std::string>("activation")))
                           .with_aux(c.param<bool>("has_aux"))
                           .with_bias_grad(c.param<bool>("bias_grad"));
    if (c.param<bool>("broadcast_a")) g.with_batch_stride_a(0);
    Data x(g, 1);
    place(c.tensor("a"), in, x.a, c.param<bool>("broadcast_a") ? 1 : batch, x.sa);
    place(c.tensor("b"), in, x.b, batch, x.sb);
    if (g.beta != 0.0) place(c.tensor("c"), out, x.c, batch, x.sc);
    if (g.has_bias) x.sbias = c.tensor("bias").bytes();
    auto o = run_on(st, x);
    ASSERT_TRUE(o.is_ok()) << o.error().to_string();
    const double ulp = 2.0 * unit(out);  // one unit in the last place, relative
    auto compare = [&](const char* name, const GoldenTensor& t, const std::vector<uint8_t>& got, const Mat* geo,
                       int64_t rows, int64_t cols, int64_t batches) {
      std::vector<uint8_t> want = t.bytes();
      for (int64_t b = 0; b < batches; ++b)
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j) {
            const double w = get(out, want, (b * rows + i) * cols + j);
            const double v = get(out, got, geo != nullptr ? geo->at(b, i, j) : j);
            // f64: PyTorch's own f64 sums round too (K·2^-53·Σ|a·b|, the bound of gemm_test_support.hpp)
            const double slack = out == ElementKind::F64 && geo != nullptr ? x.expect(b, i, j, host_unit()).d_tol : 0;
            EXPECT_LE(std::fabs(v - w), ulp * std::fabs(w) + 2 * tiny(out) + slack)
                << name << "[" << b << ", " << i << ", " << j << "] = " << v << ", PyTorch " << w;
          }
    };
    if (st.device() == DeviceKind::Host) {
      compare("d", gd, o->d, &x.d, m, n, batch);
      if (g.has_aux) compare("aux", c.tensor("aux"), o->aux, &x.aux, m, n, batch);
      if (g.bias_grad) compare("bias_grad", c.tensor("bias_grad"), o->bg, nullptr, 1, m, 1);
    } else {
      check_outputs(x, *o, kernel_unit(in), c.name);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, GemmGolden, ::testing::ValuesIn(kTestDevices),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace baracuda::test::gemm
