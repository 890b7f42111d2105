// GroupNormPlan, BatchNormPlan and their backward against PyTorch 1.13's CPU kernels and autograd
// (tests/data/channel_norm_golden.json, made by tests/data/gen_channel_norm_golden.py; its docstring says which
// PyTorch function made each tensor): F.group_norm, F.instance_norm (GroupNorm with groups = C), F.batch_norm in
// training (the saved statistics and the running statistics' update) and inference, each with dx, dweight and
// dbias, in f64, f32 and bf16, on the host, sim and cuda devices. Tolerances: f64 and f32 within 4 units of the
// last place of each value plus 16 of the problem's condition, as PyTorch sums in another order (and in f64 for
// f32 batch norm); bf16 within one unit of the last place (PyTorch rounds its float results once, as baracuda).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "ops/channel_norm_test_support.hpp"
#include "support/devices.hpp"
#include "support/golden.hpp"

namespace baracuda::test::channel_norm {
namespace {

struct Golden {
  std::string name, op;
  K kind = K::F32;
  Shape shape;
  int64_t groups = 0;
  double eps = 0, momentum = 0;
  bool training = true, affine = true;
  Values in;
  Outputs want;
};

std::vector<double> values_of(const GoldenCase& c, const char* name) {
  if (!c.has(name)) return {};
  const GoldenTensor& t = c.tensor(name);
  return decode(t.kind, t.bytes(), t.numel());
}

std::vector<Golden> golden_cases() {
  return load_golden_as<Golden>("channel_norm", nullptr, [](const GoldenCase& c) {
    Golden g;
    g.name = c.name;
    g.op = c.param<std::string>("op");
    const std::string dtype = c.param<std::string>("dtype");
    g.kind = dtype == "f64" ? K::F64 : dtype == "bf16" ? K::Bf16 : K::F32;
    const std::vector<int64_t>& dims = c.tensor("x").shape;
    g.shape.rank = static_cast<int>(dims.size());
    for (size_t d = 0; d < dims.size(); ++d) g.shape.dims[d] = dims[d];
    g.groups = c.param<int64_t>("groups");
    g.eps = c.param<double>("eps");
    g.momentum = c.param<double>("momentum");
    g.training = c.param<bool>("training");
    g.affine = c.param<bool>("affine");
    g.in.x = values_of(c, "x"), g.in.dy = values_of(c, "dy");
    const auto channels = static_cast<size_t>(dims[1]);
    g.in.w = c.has("weight") ? values_of(c, "weight") : std::vector<double>(channels, 1.0);
    g.in.b = c.has("bias") ? values_of(c, "bias") : std::vector<double>(channels, 0.0);
    g.in.rm = c.has("running_mean") ? values_of(c, "running_mean") : std::vector<double>(channels, 0.0);
    g.in.rv = c.has("running_var") ? values_of(c, "running_var") : std::vector<double>(channels, 1.0);
    g.want.y = values_of(c, "y"), g.want.mean = values_of(c, "mean"), g.want.rstd = values_of(c, "rstd");
    g.want.rm = values_of(c, "running_mean_out"), g.want.rv = values_of(c, "running_var_out");
    g.want.dx = values_of(c, "dx"), g.want.dw = values_of(c, "dweight"), g.want.db = values_of(c, "dbias");
    return g;
  });
}

struct Param {
  Golden golden;
  DeviceKind device;
};

std::vector<Param> params() {
  std::vector<Param> v;
  for (const Golden& g : golden_cases())
    for (DeviceKind d : kTestDevices) v.push_back({g, d});
  return v;
}

class ChannelNormGolden : public ::testing::TestWithParam<Param> {};

TEST_P(ChannelNormGolden, MatchesPyTorch) {
  const Golden& g = GetParam().golden;
  BARACUDA_TEST_STREAM(stream, GetParam().device);
  // PyTorch's own rounding and summation order: a few units of the kind's last place of each value and of the
  // problem's condition — y and dx: max rstd · max |x| · max |w| (PyTorch's y = x·(rstd·w) + (b − mean·rstd·w)
  // loses |mean|·rstd·|w| ulps where a group is constant and rstd is 1/sqrt(eps)); dweight and dbias: that
  // times the largest Σ|dy| of a channel.
  const double ulp = g.kind == K::F64 ? 0x1p-52 : g.kind == K::Bf16 ? 0x1p-8 : 0x1p-23;
  // bf16: 2^-8 is half its unit in the last place at 1, so 2 of them are one unit.
  const double rel_ulps = g.kind == K::Bf16 ? 2 : 4, abs_ulps = g.kind == K::Bf16 ? 1 : 16;
  const auto max_abs = [](const std::vector<double>& v) {
    double m = 1;
    for (double e : v) m = std::max(m, std::fabs(e));
    return m;
  };
  double rstd = g.want.rstd.empty() ? 0 : max_abs(g.want.rstd);
  for (double rv : g.in.rv) rstd = std::max(rstd, 1 / std::sqrt(rv + g.eps));
  const double cond = rstd * max_abs(g.in.x) * max_abs(g.in.w);
  const int64_t channels = g.shape.dims[1], spatial = g.shape.numel() / (g.shape.dims[0] * channels);
  double dy_sum = 1;
  for (int64_t c = 0; c < channels; ++c) {
    double sum = 0;
    for (int64_t n = 0; n < g.shape.dims[0]; ++n)
      for (int64_t j = 0; j < spatial; ++j)
        sum += std::fabs(g.in.dy[static_cast<size_t>((n * channels + c) * spatial + j)]);
    dy_sum = std::max(dy_sum, sum);
  }
  const auto check = [&](const std::vector<double>& got, const std::vector<double>& want, const char* what,
                         double condition = 1) {
    expect_close(got, want, rel_ulps * ulp, abs_ulps * ulp * std::max(max_abs(want), condition), what);
  };
  Outputs got;
  if (g.op == "batch_norm") {
    const BatchNormDescriptor d = BatchNormDescriptor()
                                      .with_element(g.kind)
                                      .with_shape(g.shape)
                                      .with_eps(g.eps)
                                      .with_momentum(g.momentum)
                                      .with_training(g.training)
                                      .with_weight(g.affine)
                                      .with_bias(g.affine);
    auto probe = dynamic::BatchNormPlan::select(stream, d);
    BARACUDA_SKIP_IF_NO_CUDA_KERNELS(probe, GetParam().device);
    got = run_both(stream, d, g.in);
    check(got.rm, g.want.rm, "running_mean");
    check(got.rv, g.want.rv, "running_var");
  } else {
    const GroupNormDescriptor d = GroupNormDescriptor()
                                      .with_element(g.kind)
                                      .with_shape(g.shape)
                                      .with_groups(g.groups)
                                      .with_eps(g.eps)
                                      .with_weight(g.affine)
                                      .with_bias(g.affine);
    auto probe = dynamic::GroupNormPlan::select(stream, d);
    BARACUDA_SKIP_IF_NO_CUDA_KERNELS(probe, GetParam().device);
    got = run_both(stream, d, g.in);
  }
  if (!g.want.mean.empty()) {
    check(got.mean, g.want.mean, "mean");
    check(got.rstd, g.want.rstd, "rstd");
  }
  check(got.y, g.want.y, "y", cond);
  check(got.dx, g.want.dx, "dx", cond);
  check(got.dw, g.want.dw, "dweight", cond * dy_sum);
  check(got.db, g.want.db, "dbias", dy_sum);
}

INSTANTIATE_TEST_SUITE_P(PyTorch, ChannelNormGolden, ::testing::ValuesIn(params()),
                         [](const ::testing::TestParamInfo<Param>& i) {
                           return i.param.golden.name + "_" + std::string(to_string(i.param.device));
                         });

}  // namespace
}  // namespace baracuda::test::channel_norm
