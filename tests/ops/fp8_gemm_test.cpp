// Fp8GemmPlan on every device (host: the reference; sim: the bespoke kernel under the emulator; cuda: the default
// backend, skipped without a GPU) against the f64 evaluation of fp8_gemm_test_support.hpp: ragged shapes, every operand
// and output kind, both scalings (Block128 with K and N not multiples of 128, and its a_scale stored M-major), every
// bias kind and activation, padded leading dimensions, the amax, empty problems, K = 0, NaN, and bit stability run to
// run.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "fp8_gemm_test_support.hpp"
#include "support/devices.hpp"

namespace baracuda::test::fp8_gemm {
namespace {

constexpr ElementKind E4 = ElementKind::Fp8E4M3, E5 = ElementKind::Fp8E5M2, F16 = ElementKind::F16,
                      Bf16 = ElementKind::Bf16, F32 = ElementKind::F32;

class Fp8GemmDevices : public ::testing::TestWithParam<DeviceKind> {};

/// Runs `g` on the parameter's device and checks it; the SKU's backend on host and sim.
void check_case(DeviceKind dev, const Stream& st, const Fp8GemmDescriptor& g, uint64_t seed) {
  const Data x(g, seed);
  auto o = run_on(st, x);
  ASSERT_TRUE(o.is_ok()) << o.status().to_string();
  const std::string what = std::string(to_string(dev)) + " " + std::to_string(g.m) + "x" + std::to_string(g.n) + "x" +
                           std::to_string(g.k) + " " + std::string(to_string(g.a_kind)) + "*" +
                           std::string(to_string(g.b_kind)) + "->" + std::string(to_string(g.output)) + " " +
                           std::string(to_string(g.scaling));
  EXPECT_EQ(check_outputs(x, *o, unit_of(dev), what), g.m * g.n);
}

// Every operand and output kind and both scalings on two small ragged shapes; the larger shapes (several tiles,
// K and N not multiples of 128, one K block and three) with one combination each, rotating through the kinds.
TEST_P(Fp8GemmDevices, ShapesKindsAndScalings) {
  const DeviceKind dev = GetParam();
  BARACUDA_TEST_STREAM(st, dev);
  const std::pair<ElementKind, ElementKind> operands[] = {{E4, E4}, {E4, E5}, {E5, E4}};
  const ElementKind outputs[] = {Bf16, F16, F32, E4, E5};
  const Fp8GemmScaling scalings[] = {Fp8GemmScaling::Tensor, Fp8GemmScaling::Block128};
  uint64_t seed = 1;
  for (const auto& [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 16}, {17, 33, 48}})
    for (const auto& [ka, kb] : operands)
      for (const ElementKind out : outputs)
        for (const Fp8GemmScaling sc : scalings) {
          check_case(dev, st, Fp8GemmDescriptor{}.with_shape(m, n, k).with_kinds(ka, kb, out).with_scaling(sc), ++seed);
          if (::testing::Test::HasFailure()) return;
        }
  int i = 0;
  for (const auto& [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{129, 65, 256}, {130, 200, 400}, {33, 129, 272}})
    for (const Fp8GemmScaling sc : scalings) {
      const auto& [ka, kb] = operands[i % 3];
      const Fp8GemmDescriptor g =
          Fp8GemmDescriptor{}.with_shape(m, n, k).with_kinds(ka, kb, outputs[i % 5]).with_scaling(sc).with_alpha(0.75);
      ++i;
      check_case(dev, st, g, ++seed);
      if (::testing::Test::HasFailure()) return;
    }
}

TEST_P(Fp8GemmDevices, EpiloguesAndLeadingDimensions) {
  const DeviceKind dev = GetParam();
  BARACUDA_TEST_STREAM(st, dev);
  const LinearActivation acts[] = {LinearActivation::None, LinearActivation::Relu, LinearActivation::Silu,
                                   LinearActivation::GeluErf, LinearActivation::GeluTanh};
  uint64_t seed = 100;
  for (const ElementKind bias : {F16, Bf16, F32})
    for (const LinearActivation a : acts)
      for (const ElementKind out : {Bf16, E4}) {
        Fp8GemmDescriptor g = Fp8GemmDescriptor{}
                                  .with_shape(37, 70, 160)
                                  .with_kinds(E4, E4, out)
                                  .with_bias(bias)
                                  .with_activation(a)
                                  .with_lda(176)
                                  .with_ldb(192)
                                  .with_ldd(75)
                                  .with_scaling(seed % 2 ? Fp8GemmScaling::Block128 : Fp8GemmScaling::Tensor);
        if (out == E4) g.with_amax();
        check_case(dev, st, g, ++seed);
        if (::testing::Test::HasFailure()) return;
      }
}

TEST_P(Fp8GemmDevices, BlockScalesStoredMMajor) {
  const DeviceKind dev = GetParam();
  BARACUDA_TEST_STREAM(st, dev);
  const Fp8GemmDescriptor g = Fp8GemmDescriptor{}
                                  .with_shape(45, 140, 400)
                                  .with_kinds(E4, E4, Bf16)
                                  .with_scaling(Fp8GemmScaling::Block128)
                                  .with_a_scale_m_major();
  check_case(dev, st, g, 7);
}

TEST_P(Fp8GemmDevices, AmaxOfEveryFp8Output) {
  const DeviceKind dev = GetParam();
  BARACUDA_TEST_STREAM(st, dev);
  uint64_t seed = 300;
  for (const ElementKind out : {E4, E5})
    for (const auto& [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1, 8, 32}, {70, 131, 128}, {200, 40, 64}}) {
      const Fp8GemmDescriptor g =
          Fp8GemmDescriptor{}.with_shape(m, n, k).with_kinds(E5, E4, out).with_amax().with_alpha(3.0);
      check_case(dev, st, g, ++seed);
    }
}

TEST_P(Fp8GemmDevices, EmptyProblemsAndZeroK) {
  const DeviceKind dev = GetParam();
  BARACUDA_TEST_STREAM(st, dev);
  // M = 0 or N = 0: nothing written but the amax, which becomes 0.
  for (const auto& [m, n] : {std::pair<int64_t, int64_t>{0, 5}, {5, 0}}) {
    const Data x(Fp8GemmDescriptor{}.with_shape(m, n, 32).with_kinds(E4, E4, E4).with_amax(), 1);
    auto o = run_on(st, x);
    ASSERT_TRUE(o.is_ok()) << o.status().to_string();
    EXPECT_EQ(o->amax, 0.0f);
    EXPECT_EQ(o->d, x.d);
  }
  // K = 0: acc = 0, so d = act(α·0 + bias).
  const Fp8GemmDescriptor g = Fp8GemmDescriptor{}
                                  .with_shape(3, 9, 0)
                                  .with_kinds(E4, E4, F32)
                                  .with_bias(Bf16)
                                  .with_activation(LinearActivation::Silu);
  check_case(dev, st, g, 5);
}

TEST_P(Fp8GemmDevices, NanPropagatesToDAndAmax) {
  const DeviceKind dev = GetParam();
  BARACUDA_TEST_STREAM(st, dev);
  Data x(Fp8GemmDescriptor{}.with_shape(20, 24, 64).with_kinds(E4, E4, E4).with_amax(), 9);
  x.a[static_cast<size_t>(5 * x.lda + 17)] = 0x7F;  // e4m3 NaN in row 5
  auto o = run_on(st, x);
  ASSERT_TRUE(o.is_ok()) << o.status().to_string();
  EXPECT_TRUE(std::isnan(o->amax)) << o->amax;
  for (int64_t j = 0; j < 24; ++j) EXPECT_TRUE(std::isnan(value(E4, o->d, 5 * x.ldd + j))) << j;
  EXPECT_FALSE(std::isnan(value(E4, o->d, 4 * x.ldd)));
}

TEST_P(Fp8GemmDevices, BitStableRunToRun) {
  const DeviceKind dev = GetParam();
  BARACUDA_TEST_STREAM(st, dev);
  const Fp8GemmDescriptor g = Fp8GemmDescriptor{}
                                  .with_shape(130, 72, 512)
                                  .with_kinds(E4, E5, E4)
                                  .with_scaling(Fp8GemmScaling::Block128)
                                  .with_amax();
  const Data x(g, 11);
  auto o1 = run_on(st, x);
  auto o2 = run_on(st, x);
  ASSERT_TRUE(o1.is_ok() && o2.is_ok());
  auto plan = dynamic::Fp8GemmPlan::select(st, g);
  ASSERT_TRUE(plan.is_ok());
  if (!plan->precision_guarantee().bit_stable_on_same_hardware) GTEST_SKIP() << "the backend promises no bit stability";
  EXPECT_EQ(o1->d, o2->d);
  EXPECT_EQ(o1->amax, o2->amax);
}

TEST_P(Fp8GemmDevices, SkuNamesTheBackend) {
  const DeviceKind dev = GetParam();
  BARACUDA_TEST_STREAM(st, dev);
  auto p = dynamic::Fp8GemmPlan::select(st, Fp8GemmDescriptor{}.with_shape(16, 16, 32));
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  EXPECT_EQ(p->sku().op, "fp8_gemm");
  if (dev == DeviceKind::Host) EXPECT_EQ(p->sku().variant, "reference");
  if (dev == DeviceKind::Sim) EXPECT_EQ(p->sku().variant, "mma_m16n8k32_fp8");
  // Only cuBLASLt may ask for workspace (its algorithm's; on an H100 it asked for none: docs/perf/2026-11-27-h100).
  if (dev != DeviceKind::Cuda || p->sku().backend != BackendKind::CublasLt) EXPECT_EQ(p->workspace_size(), 0u);
}

TEST(Fp8GemmTyped, WrapperRunsOnSim) {
  BARACUDA_TEST_STREAM(st, DeviceKind::Sim);
  const Fp8GemmDescriptor g = Fp8GemmDescriptor{}.with_shape(5, 7, 32).with_kinds(E4, E4, F32).with_bias(F32);
  const Data x(g, 21);
  auto up = [&](const void* p, size_t n) {
    auto b = Buffer::allocate(st, n);
    EXPECT_TRUE(b.is_ok());
    EXPECT_TRUE(b->copy_from_host(p, n).is_ok());
    return std::move(b).value();
  };
  Buffer ba = up(x.a.data(), x.a.size()), bb = up(x.b.data(), x.b.size()), bsa = up(x.sa.data(), 4),
         bsb = up(x.sb.data(), 4), bbias = up(x.bias.data(), x.bias.size()), bd = up(x.d.data(), x.d.size());
  auto plan = Fp8GemmPlan<__nv_fp8_e4m3, __nv_fp8_e4m3, float, float>::select(st, g);
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  Fp8GemmArgs<__nv_fp8_e4m3, __nv_fp8_e4m3, float, float> args;
  args.a = TensorRef<__nv_fp8_e4m3, 2>::dense(static_cast<const __nv_fp8_e4m3*>(ba.data()), {5, 32});
  args.b = TensorRef<__nv_fp8_e4m3, 2>::dense(static_cast<const __nv_fp8_e4m3*>(bb.data()), {7, 32});
  args.a_scale = TensorRef<float, 2>::dense(static_cast<const float*>(bsa.data()), {1, 1});
  args.b_scale = TensorRef<float, 2>::dense(static_cast<const float*>(bsb.data()), {1, 1});
  args.bias = TensorRef<float, 1>::dense(static_cast<const float*>(bbias.data()), {7});
  args.d = TensorMut<float, 2>::dense(static_cast<float*>(bd.data()), {5, 7});
  ASSERT_TRUE(plan->run(st, Workspace{}, args).is_ok());
  ASSERT_TRUE(st.synchronize().is_ok());
  Outputs o;
  o.d.resize(x.d.size());
  o.amax = -1.0f;
  ASSERT_TRUE(bd.copy_to_host(o.d.data(), o.d.size()).is_ok());
  EXPECT_EQ(check_outputs(x, o, unit_of(DeviceKind::Sim), "typed"), 35);
  // A typed plan whose types disagree with the descriptor is refused.
  EXPECT_FALSE((Fp8GemmPlan<__nv_fp8_e5m2, __nv_fp8_e4m3, float, float>::select(st, g).is_ok()));
  EXPECT_FALSE((Fp8GemmPlan<__nv_fp8_e4m3, __nv_fp8_e4m3, __half, float>::select(st, g).is_ok()));
  EXPECT_FALSE((Fp8GemmPlan<__nv_fp8_e4m3, __nv_fp8_e4m3, float, __half>::select(st, g).is_ok()));
}

INSTANTIATE_TEST_SUITE_P(Devices, Fp8GemmDevices, ::testing::ValuesIn(kTestDevices),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace baracuda::test::fp8_gemm
