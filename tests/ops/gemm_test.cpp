// GemmPlan on every device (host, sim, and cuda when a GPU is usable: the default plan and the bespoke kernels)
// against an explicit f64 evaluation of gemm.hpp's contract (gemm_test_support.hpp), within the bound derived
// there:
//   |computed − v| ≤ 2·(K + 3)·u·(|α|·Σ_k|a·b| + |β·c| + |bias|), then the activation (slope ≤ 1.2, libm
//   16·u·(|act(v)| + |v|)) and one rounding to the output kind (u_out·|d| + half the smallest subnormal),
// with u the opmath unit roundoff of the backend (2^-24 for the bespoke kernel's f32, 2^-53 for f64 and for the
// host reference, which sums in double or long double). Ragged shapes 1×1×16, 17×33×48, 129×65×96, every kind
// combination and layout, leading dimensions above packed, batches with a broadcast operand, every epilogue
// combination, α/β and D in place over C, K = 0 and empty problems; the kernel bit-stable run to run.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gemm_test_support.hpp"
#include "support/devices.hpp"

namespace baracuda::test::gemm {
namespace {

struct Kinds {
  ElementKind in, out;
};
constexpr Kinds kKinds[] = {{ElementKind::F16, ElementKind::F16},   {ElementKind::F16, ElementKind::F32},
                            {ElementKind::Bf16, ElementKind::Bf16}, {ElementKind::Bf16, ElementKind::F32},
                            {ElementKind::F32, ElementKind::F32},   {ElementKind::F64, ElementKind::F64}};
constexpr MatrixLayout kR = MatrixLayout::RowMajor, kC = MatrixLayout::ColMajor;
constexpr MatrixLayout kLayouts[4][2] = {{kR, kR}, {kR, kC}, {kC, kR}, {kC, kC}};

std::string name_of(const GemmDescriptor& g) {
  return std::to_string(g.batch) + "x" + std::to_string(g.m) + "x" + std::to_string(g.n) + "x" + std::to_string(g.k) +
         " " + std::string(to_string(g.input)) + "->" + std::string(to_string(g.output)) + " " +
         std::string(to_string(g.layout_a)) + "/" + std::string(to_string(g.layout_b)) + " act " +
         std::string(to_string(g.activation)) + (g.has_bias ? " bias" : "") + (g.has_aux ? " aux" : "") +
         (g.bias_grad ? " bias_grad" : "") + " alpha " + std::to_string(g.alpha) + " beta " + std::to_string(g.beta);
}

double unit_for(DeviceKind d, ElementKind in) { return d == DeviceKind::Host ? host_unit() : kernel_unit(in); }

/// Runs `g` on `st` and checks it (see the file comment); on cuda twice: the default plan (cuBLASLt where it
/// serves) and the bespoke kernels by preference. Returns the (last) outputs.
Outputs run_and_check(const Stream& st, const GemmDescriptor& g, uint64_t seed, bool in_place = false) {
  const Data x(g, seed);
  Outputs last;
  for (bool bespoke : {false, true}) {
    if (bespoke && st.device() != DeviceKind::Cuda) break;
    const PlanPreference pref = bespoke ? PlanPreference{}.with_backend(BackendKind::Bespoke) : PlanPreference{};
    auto o = run_on(st, x, pref, in_place);
    EXPECT_TRUE(o.is_ok()) << name_of(g) << ": " << o.error().to_string();
    if (!o) return {};
    // cuBLASLt's epilogue rounds α·A·B, β·C and the bias's sum to the output kind in between (measured on an
    // H100: docs/perf/2026-11-27-h100, runs 6 and 9), which gemm.hpp allows that backend.
    auto plan = dynamic::GemmPlan::select(st, g, pref);
    const bool lt = plan && plan->sku().backend == BackendKind::CublasLt;
    check_outputs(x, *o, unit_for(st.device(), g.input),
                  name_of(g) + " on " + std::string(to_string(st.device())) + (bespoke ? " (bespoke)" : ""), in_place,
                  lt ? kCublasLtEpilogueUlps : 0);
    last = std::move(o).value();
  }
  return last;
}

class Gemm : public ::testing::TestWithParam<DeviceKind> {};

// Every kind combination × every layout × the ragged shapes, with β·C, a bias and ReLU.
TEST_P(Gemm, EveryKindLayoutAndRaggedShape) {
  BARACUDA_TEST_STREAM(st, GetParam());
  const int64_t shapes[][3] = {{1, 1, 16}, {17, 33, 48}, {129, 65, 96}};
  uint64_t seed = 1;
  for (const Kinds& kd : kKinds)
    for (const auto& lay : kLayouts)
      for (const auto& sh : shapes) {
        const auto g = GemmDescriptor{}
                           .with_shape(sh[0], sh[1], sh[2])
                           .with_kinds(kd.in, kd.out)
                           .with_layouts(lay[0], lay[1])
                           .with_alpha_beta(0.75, -0.5)
                           .with_bias()
                           .with_activation(LinearActivation::Relu);
        run_and_check(st, g, seed++);
        if (HasFailure()) return;
      }
}

// Leading dimensions above packed in every operand, every layout.
TEST_P(Gemm, LeadingDimensionsAbovePacked) {
  BARACUDA_TEST_STREAM(st, GetParam());
  for (const auto& lay : kLayouts) {
    const bool ra = lay[0] == kR, rb = lay[1] == kR;
    const int64_t m = 17, n = 33, k = 48;
    const auto g = GemmDescriptor{}
                       .with_shape(m, n, k)
                       .with_kinds(ElementKind::Bf16, ElementKind::F32)
                       .with_layouts(lay[0], lay[1])
                       .with_lda((ra ? k : m) + 5)
                       .with_ldb((rb ? n : k) + 3)
                       .with_ldc(n + 7)
                       .with_ldd(n + 2)
                       .with_ld_aux(n + 9)
                       .with_alpha_beta(1.0, 1.0)
                       .with_aux();
    run_and_check(st, g, 100);
  }
}

// Batches of 3: packed, A broadcast (batch stride 0), B broadcast, C broadcast, and explicit strides with gaps.
TEST_P(Gemm, BatchesWithABroadcastOperand) {
  BARACUDA_TEST_STREAM(st, GetParam());
  const auto base = [] {
    return GemmDescriptor{}.with_shape(17, 33, 48).with_batch(3).with_alpha_beta(1.0, 0.25).with_bias();
  };
  for (const Kinds& kd : {Kinds{ElementKind::F32, ElementKind::F32}, Kinds{ElementKind::F16, ElementKind::F16}}) {
    run_and_check(st, base().with_kinds(kd.in, kd.out), 200);
    run_and_check(st, base().with_kinds(kd.in, kd.out).with_batch_stride_a(0).with_layouts(kC, kR), 201);
    run_and_check(st, base().with_kinds(kd.in, kd.out).with_batch_stride_b(0).with_layouts(kR, kC), 202);
    run_and_check(st, base().with_kinds(kd.in, kd.out).with_batch_stride_c(0), 203);
    run_and_check(st,
                  base()
                      .with_kinds(kd.in, kd.out)
                      .with_batch_stride_a(17 * 48 + 11)
                      .with_batch_stride_b(48 * 33 + 1)
                      .with_batch_stride_d(17 * 33 + 40)
                      .with_aux()
                      .with_batch_stride_aux(17 * 33 + 3),
                  204);
  }
}

// Every epilogue combination: bias × activation × aux × bias_grad, on two kind combinations.
TEST_P(Gemm, EveryEpilogueCombination) {
  BARACUDA_TEST_STREAM(st, GetParam());
  uint64_t seed = 300;
  for (const Kinds& kd : {Kinds{ElementKind::Bf16, ElementKind::F32}, Kinds{ElementKind::F16, ElementKind::F16}})
    for (bool bias : {false, true})
      for (size_t a = 0; a < kNumLinearActivations; ++a)
        for (bool aux : {false, true})
          for (bool bg : {false, true}) {
            const auto g = GemmDescriptor{}
                               .with_shape(17, 33, 48)
                               .with_kinds(kd.in, kd.out)
                               .with_layouts(kC, kR)  // dW = dYᵀ·X: bias_grad is db
                               .with_bias(bias)
                               .with_activation(static_cast<LinearActivation>(a))
                               .with_aux(aux)
                               .with_bias_grad(bg)
                               .with_alpha_beta(1.5, 0.0);
            run_and_check(st, g, seed++);
            if (HasFailure()) return;
          }
}

// The activations on f32 and f64 (the exact-f32 and f64 paths), with values spread over [-4, 4]·K^½ (α = 4).
TEST_P(Gemm, ActivationsOnF32AndF64) {
  BARACUDA_TEST_STREAM(st, GetParam());
  for (ElementKind k : {ElementKind::F32, ElementKind::F64})
    for (size_t a = 0; a < kNumLinearActivations; ++a)
      run_and_check(st,
                    GemmDescriptor{}
                        .with_shape(9, 70, 33)
                        .with_kinds(k, k)
                        .with_activation(static_cast<LinearActivation>(a))
                        .with_alpha_beta(4.0, 0.0)
                        .with_aux()
                        .with_bias_grad(),
                    400 + a);
}

// α and β: β = 0 (C absent), β = 1, negative α, α = 0 (D = β·C), and D in place over C exactly.
TEST_P(Gemm, AlphaBetaAndInPlace) {
  BARACUDA_TEST_STREAM(st, GetParam());
  const double ab[][2] = {{1.0, 0.0}, {1.0, 1.0}, {-2.0, 0.5}, {0.0, 3.0}};
  for (const auto& v : ab)
    run_and_check(st,
                  GemmDescriptor{}
                      .with_shape(33, 17, 40)
                      .with_kinds(ElementKind::F32, ElementKind::F32)
                      .with_alpha_beta(v[0], v[1]),
                  500);
  for (ElementKind k : {ElementKind::F32, ElementKind::Bf16})
    run_and_check(st,
                  GemmDescriptor{}
                      .with_shape(33, 17, 40)
                      .with_batch(2)
                      .with_kinds(k, k)
                      .with_ldc(20)
                      .with_ldd(20)
                      .with_alpha_beta(1.0, -1.0)
                      .with_activation(LinearActivation::Silu),
                  501, /*in_place=*/true);
}

// K = 0: acc = 0 and the epilogue still runs (d = act(β·c + bias)); bias_grad = 0.
TEST_P(Gemm, EmptySumRunsTheEpilogue) {
  BARACUDA_TEST_STREAM(st, GetParam());
  run_and_check(st,
                GemmDescriptor{}
                    .with_shape(5, 7, 0)
                    .with_kinds(ElementKind::F32, ElementKind::F32)
                    .with_alpha_beta(2.0, 0.5)
                    .with_bias()
                    .with_activation(LinearActivation::GeluTanh)
                    .with_bias_grad(),
                600);
}

// M, N or batch = 0: the run succeeds and writes nothing; N = 0 with bias_grad still writes bias_grad.
TEST_P(Gemm, EmptyProblemsWriteNothing) {
  BARACUDA_TEST_STREAM(st, GetParam());
  for (const auto& sh : {std::array<int64_t, 4>{0, 5, 8, 1}, {5, 0, 8, 1}, {5, 7, 8, 0}}) {
    const auto g = GemmDescriptor{}
                       .with_shape(sh[0], sh[1], sh[2])
                       .with_batch(sh[3])
                       .with_kinds(ElementKind::F32, ElementKind::F32);
    const Data x(g, 700);
    auto o = run_on(st, x);
    ASSERT_TRUE(o.is_ok()) << o.error().to_string();
    for (uint8_t byte : o->d) EXPECT_EQ(byte, 0xA5);
  }
  const auto g = GemmDescriptor{}.with_shape(5, 0, 8).with_kinds(ElementKind::F32, ElementKind::F32).with_bias_grad();
  const Data x(g, 701);
  auto o = run_on(st, x);
  ASSERT_TRUE(o.is_ok()) << o.error().to_string();
  check_outputs(x, *o, unit_for(st.device(), g.input), "N = 0 with bias_grad");
}

// The same inputs give the same bits on every run (a fixed summation order, no atomics): the bespoke kernels
// (on cuda selected by the preference: cuBLASLt promises no order).
TEST_P(Gemm, BitStableRunToRun) {
  BARACUDA_TEST_STREAM(st, GetParam());
  PlanPreference pref;
  if (st.device() == DeviceKind::Cuda) pref.with_backend(BackendKind::Bespoke);
  for (const Kinds& kd : kKinds) {
    const auto g = GemmDescriptor{}
                       .with_shape(129, 65, 96)
                       .with_kinds(kd.in, kd.out)
                       .with_layouts(kC, kR)
                       .with_bias()
                       .with_aux()
                       .with_bias_grad()
                       .with_activation(LinearActivation::GeluErf);
    const Data x(g, 800);
    auto o1 = run_on(st, x, pref), o2 = run_on(st, x, pref);
    ASSERT_TRUE(o1.is_ok() && o2.is_ok());
    EXPECT_EQ(o1->d, o2->d);
    EXPECT_EQ(o1->aux, o2->aux);
    EXPECT_EQ(o1->bg, o2->bg);
    auto plan = dynamic::GemmPlan::select(st, g, pref);
    ASSERT_TRUE(plan.is_ok());
    EXPECT_TRUE(plan->precision_guarantee().deterministic);
    EXPECT_TRUE(plan->precision_guarantee().bit_stable_on_same_hardware);
  }
}

// The SKU names the device's backend, the kinds, the layout and the variant: on cuda cuBLASLt by default and the
// bespoke kernel by preference; f16/bf16 on the tensor-core kernel, f32/f64 (and shapes the tensor-core kernel
// does not take) on the CUDA-core one.
TEST_P(Gemm, SkuNamesTheBackend) {
  BARACUDA_TEST_STREAM(st, GetParam());
  const bool cuda = st.device() == DeviceKind::Cuda;
  const auto f32 =
      GemmDescriptor{}.with_shape(8, 8, 8).with_kinds(ElementKind::F32, ElementKind::F32).with_layouts(kR, kC);
  auto p = dynamic::GemmPlan::select(st, f32);
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(p, GetParam());
  ASSERT_TRUE(p.is_ok()) << p.error().to_string();
  const KernelSku sku = p->sku();
  EXPECT_EQ(sku.backend, cuda ? BackendKind::CublasLt : backend_of(st.device()));
  EXPECT_EQ(sku.category, OpCategory::Gemm);
  EXPECT_EQ(sku.layout, LayoutKind::Rcr);
  EXPECT_EQ(sku.epilogue, EpilogueKind::Identity);
  const std::string s = to_string(sku);
  EXPECT_EQ(s.rfind("gemm/f32->f32/rcr/identity/", 0), 0u) << s;
  EXPECT_NE(s.find(st.device() == DeviceKind::Host ? "reference" : cuda ? "cublaslt" : "simt"), std::string::npos) << s;
  EXPECT_EQ(p->precision_guarantee().math_precision,
            st.device() == DeviceKind::Host ? MathPrecision::F64 : MathPrecision::F32);
  if (st.device() == DeviceKind::Host) {
    EXPECT_EQ(p->workspace_size(), 0u);
    return;
  }
  const PlanPreference bespoke = PlanPreference{}.with_backend(backend_of(st.device()));
  auto simt = dynamic::GemmPlan::select(st, f32, bespoke);
  ASSERT_TRUE(simt.is_ok());
  EXPECT_EQ(simt->sku().variant, "simt");
  EXPECT_EQ(simt->workspace_size(), 0u);
  for (ElementKind k : {ElementKind::F16, ElementKind::Bf16}) {
    auto tc = dynamic::GemmPlan::select(st, GemmDescriptor{}.with_shape(8, 8, 8).with_kinds(k, k), bespoke);
    ASSERT_TRUE(tc.is_ok());
    EXPECT_EQ(tc->sku().variant, "tc_m16n8k16");
    auto wide = dynamic::GemmPlan::select(
        st, GemmDescriptor{}.with_shape(1, (int64_t{1} << 31) - 255, 8).with_kinds(k, ElementKind::F32), bespoke);
    ASSERT_TRUE(wide.is_ok());
    EXPECT_EQ(wide->sku().variant, "simt");
  }
  auto f64 = dynamic::GemmPlan::select(
      st, GemmDescriptor{}.with_shape(8, 8, 8).with_kinds(ElementKind::F64, ElementKind::F64), bespoke);
  ASSERT_TRUE(f64.is_ok());
  EXPECT_EQ(f64->sku().variant, "simt");
  EXPECT_EQ(f64->precision_guarantee().accumulator, MathPrecision::F64);
}

INSTANTIATE_TEST_SUITE_P(Devices, Gemm, ::testing::ValuesIn(kTestDevices),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// The typed wrapper against the erased plan: the same bits, and its kind and rank checks.
TEST(GemmTyped, SameBitsAsTheErasedPlan) {
  for (const Stream& st : {Stream::host(), Stream::sim()}) {
    const int64_t m = 5, n = 6, k = 7;
    const auto g = GemmDescriptor{}.with_shape(m, n, k).with_kinds(ElementKind::F32, ElementKind::F32).with_bias();
    const Data x(g, 900);
    auto erased = run_on(st, x);
    ASSERT_TRUE(erased.is_ok());
    std::vector<float> a(m * k), b(k * n), bias(n), d(m * n);
    std::memcpy(a.data(), x.sa.data(), a.size() * 4);
    std::memcpy(b.data(), x.sb.data(), b.size() * 4);
    std::memcpy(bias.data(), x.sbias.data(), bias.size() * 4);
    auto plan = GemmPlan<float, float>::select(st, g);
    ASSERT_TRUE(plan.is_ok()) << plan.error().to_string();
    GemmArgs<float, float> args;
    args.a = TensorRef<float, 2>::dense(a.data(), {m, k});
    args.b = TensorRef<float, 2>::dense(b.data(), {k, n});
    args.bias = TensorRef<float, 1>::dense(bias.data(), {n});
    args.d = TensorMut<float, 2>::dense(d.data(), {m, n});
    ASSERT_TRUE(plan->run(st, {}, args).is_ok());
    EXPECT_EQ(std::memcmp(d.data(), erased->d.data(), d.size() * 4), 0);
  }
  const auto g = GemmDescriptor{}.with_shape(2, 2, 2).with_kinds(ElementKind::F16, ElementKind::F32);
  EXPECT_EQ((GemmPlan<float, float>::select(Stream::host(), g).status().code()), ErrorCode::InvalidProblem);
  EXPECT_EQ((GemmPlan<__half, __half>::select(Stream::host(), g).status().code()), ErrorCode::InvalidProblem);
  EXPECT_EQ((GemmPlan<__half, float, 2>::select(Stream::host(), GemmDescriptor(g).with_batch(2)).status().code()),
            ErrorCode::InvalidProblem);
  EXPECT_TRUE((GemmPlan<__half, float, 3>::select(Stream::host(), GemmDescriptor(g).with_batch(2)).is_ok()));
}

// The descriptor is a hashable value; every field takes part.
TEST(GemmDescriptorValue, HashAndEquality) {
  const GemmDescriptor a = GemmDescriptor{}.with_shape(3, 4, 5);
  EXPECT_EQ(a, GemmDescriptor{}.with_shape(3, 4, 5));
  EXPECT_EQ(a.hash(), GemmDescriptor{}.with_shape(3, 4, 5).hash());
  for (const GemmDescriptor& b :
       {GemmDescriptor(a).with_batch(2), GemmDescriptor(a).with_ldd(9), GemmDescriptor(a).with_batch_stride_b(0),
        GemmDescriptor(a).with_alpha_beta(1, 1), GemmDescriptor(a).with_bias_grad(), GemmDescriptor(a).with_tf32(),
        GemmDescriptor(a).with_layouts(kC, kR), GemmDescriptor(a).with_activation(LinearActivation::Silu)}) {
    EXPECT_FALSE(a == b);
    EXPECT_NE(a.hash(), b.hash());
  }
}

}  // namespace
}  // namespace baracuda::test::gemm
