// Fp8GemmPlan against tests/data/fp8_gemm_golden.json (gen_fp8_gemm_golden.py: FP8 operands made by ml_dtypes, the
// exact result rounded once): the host reference bit for bit (D and the amax), the bespoke kernel on sim and the
// default backend on cuda within one rounding of D's kind beyond their f32 accumulation's bound.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "fp8_gemm_test_support.hpp"
#include "support/devices.hpp"
#include "support/golden.hpp"

namespace baracuda::test::fp8_gemm {
namespace {

ElementKind kind_named(const std::string& s) {
  for (ElementKind k :
       {ElementKind::F16, ElementKind::Bf16, ElementKind::F32, ElementKind::Fp8E4M3, ElementKind::Fp8E5M2})
    if (to_string(k) == s) return k;
  ADD_FAILURE() << "unknown kind " << s;
  return ElementKind::F32;
}

/// The golden case as a descriptor and its operand storages.
struct GoldenData {
  Fp8GemmDescriptor g;
  std::vector<uint8_t> a, b, sa, sb, bias, ds, d_want, amax_want;
};

GoldenData from_case(const GoldenCase& c) {
  GoldenData x;
  x.g.with_shape(c.param<int64_t>("m"), c.param<int64_t>("n"), c.param<int64_t>("k"))
      .with_kinds(kind_named(c.param<std::string>("a_kind")), kind_named(c.param<std::string>("b_kind")),
                  kind_named(c.param<std::string>("out")))
      .with_scaling(c.param<std::string>("scaling") == "block128" ? Fp8GemmScaling::Block128 : Fp8GemmScaling::Tensor)
      .with_alpha(c.param<double>("alpha"))
      .with_activation(c.param<std::string>("activation") == "relu" ? LinearActivation::Relu : LinearActivation::None);
  if (c.has_param("bias_kind")) {
    x.g.with_bias(kind_named(c.param<std::string>("bias_kind")));
    x.bias = c.tensor("bias").bytes();
  }
  x.a = c.tensor("a").bytes(), x.b = c.tensor("b").bytes();
  x.sa = c.tensor("a_scale").bytes(), x.sb = c.tensor("b_scale").bytes();
  x.d_want = c.tensor("d").bytes();
  if (is_fp8(x.g.output)) {
    x.g.with_amax();
    x.ds = c.tensor("d_scale").bytes();
    x.amax_want = c.tensor("amax").bytes();
  }
  return x;
}

std::vector<GoldenData> cases() { return load_golden_as<GoldenData>("fp8_gemm", nullptr, from_case); }

/// Runs a golden case on `st`; returns D's bytes and the amax's.
Result<std::pair<std::vector<uint8_t>, std::vector<uint8_t>>> run_case(const Stream& st, const GoldenData& x) {
  const Fp8GemmDescriptor& g = x.g;
  std::vector<Buffer> keep;
  auto up = [&](const std::vector<uint8_t>& s, size_t n) -> Result<void*> {
    auto b = Buffer::allocate(st, std::max<size_t>(n, 16));
    if (!b) return b.error();
    if (!s.empty()) BARACUDA_TRY(b->copy_from_host(s.data(), s.size()));
    keep.push_back(std::move(b).value());
    return keep.back().data();
  };
  const int64_t kb = blocks(g.k);
  dynamic::Fp8GemmArgs t;
  auto pa = up(x.a, x.a.size()), pb = up(x.b, x.b.size()), psa = up(x.sa, x.sa.size()), psb = up(x.sb, x.sb.size());
  auto pbias = up(x.bias, x.bias.size()), pds = up(x.ds, 4);
  auto pd = up({}, x.d_want.size()), pamax = up({}, 4);
  for (auto* r : {&pa, &pb, &psa, &psb, &pbias, &pds, &pd, &pamax})
    if (!*r) return r->error();
  t.a = ConstDynTensor::dense(*pa, g.a_kind, Shape{g.m, g.k});
  t.b = ConstDynTensor::dense(*pb, g.b_kind, Shape{g.n, g.k});
  const bool block = g.scaling == Fp8GemmScaling::Block128;
  t.a_scale = ConstDynTensor::dense(*psa, ElementKind::F32, block ? Shape{g.m, kb} : Shape{1});
  t.b_scale = ConstDynTensor::dense(*psb, ElementKind::F32, block ? Shape{blocks(g.n), kb} : Shape{1});
  if (g.has_bias) t.bias = ConstDynTensor::dense(*pbias, g.bias_kind, Shape{g.n});
  if (g.has_amax) {
    t.d_scale = ConstDynTensor::dense(*pds, ElementKind::F32, Shape{1});
    t.amax = DynTensor::dense(*pamax, ElementKind::F32, Shape{1});
  }
  t.d = DynTensor::dense(*pd, g.output, Shape{g.m, g.n});
  auto plan = dynamic::Fp8GemmPlan::select(st, g);
  if (!plan) return plan.error();
  auto ws = Buffer::allocate(st, plan->workspace_size());
  if (!ws) return ws.error();
  BARACUDA_TRY(plan->run(st, ws->as_workspace(), t));
  BARACUDA_TRY(st.synchronize());
  std::pair<std::vector<uint8_t>, std::vector<uint8_t>> out{std::vector<uint8_t>(x.d_want.size()),
                                                            std::vector<uint8_t>(4)};
  BARACUDA_TRY(keep[6].copy_to_host(out.first.data(), out.first.size()));
  BARACUDA_TRY(keep[7].copy_to_host(out.second.data(), 4));
  return out;
}

class Fp8GemmGolden : public ::testing::TestWithParam<DeviceKind> {};

TEST_P(Fp8GemmGolden, MatchesTheExactResult) {
  const DeviceKind dev = GetParam();
  BARACUDA_TEST_STREAM(st, dev);
  const std::vector<GoldenData> all = cases();
  ASSERT_GE(all.size(), 8u);
  for (const GoldenData& x : all) {
    auto o = run_case(st, x);
    ASSERT_TRUE(o.is_ok()) << o.status().to_string();
    const ElementKind out = x.g.output;
    const int64_t w = element_bytes(out);
    for (int64_t i = 0; i < x.g.m * x.g.n; ++i) {
      const double want = decode_value(out, x.d_want.data() + i * w), got = decode_value(out, o->first.data() + i * w);
      if (dev == DeviceKind::Host) {
        ASSERT_EQ(0, std::memcmp(x.d_want.data() + i * w, o->first.data() + i * w, static_cast<size_t>(w)))
            << "host d[" << i << "] = " << got << ", golden " << want;
      } else {  // one rounding of D's kind, and the f32 accumulation's part (K ≤
                // 400 terms here)
        const double tol = 2.0 * unit(out) * std::fabs(want) + 2.0 * tiny(out) + std::ldexp(std::fabs(want), -12);
        ASSERT_LE(std::fabs(got - want), tol) << to_string(dev) << " d[" << i << "] = " << got << ", golden " << want;
      }
    }
    if (x.g.has_amax) {
      float want = 0, got = 0;
      std::memcpy(&want, x.amax_want.data(), 4), std::memcpy(&got, o->second.data(), 4);
      if (dev == DeviceKind::Host)
        EXPECT_EQ(want, got);
      else
        EXPECT_NEAR(got, want, std::ldexp(want, -12));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, Fp8GemmGolden, ::testing::ValuesIn(kTestDevices),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace baracuda::test::fp8_gemm
