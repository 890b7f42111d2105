// The int_gemm family on the host device: IntGemm exactly against an independent int64 loop on ragged shapes
// and every (s8/u8)² pair; SmoothQuantLinear and QuantizedLinear against a double-precision recomputation,
// against the documented f32 epilogue bit for bit, and against the float x·Wᵀ within the derived
// quantization bound; the typed wrappers against the dynamic plans on host and sim; SmoothQuant's smoothing
// utilities against hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "int_gemm_test_support.hpp"
#include "support/doc_table.hpp"

namespace baracuda::test {
namespace {

// ------------------------------------------------------------------------------------------ IntGemm

const GemmShape kShapes[] = {{1, 1, 32}, {17, 33, 64}, {129, 65, 96}, {1, 40, 48}, {3, 1, 16}, {5, 7, 16 * 13}};

template <class TA, class TB>
void check_int_gemm(const GemmShape& sh, bool padded) {
  const Stream host = Stream::host();
  const GemmOperands<TA, TB> o(sh, padded, 1);
  auto plan = dynamic::IntGemmPlan::select(host, o.descriptor());
  ASSERT_TRUE(plan.is_ok()) << plan.error().to_string();
  ASSERT_TRUE(plan->run(host, Workspace{}, o.args()).is_ok());
  for (int64_t m = 0; m < sh.m; ++m)
    for (int64_t n = 0; n < o.ldc; ++n) {
      if (n >= sh.n) {  // the padding is untouched
        ASSERT_EQ(o.c[m * o.ldc + n], 0x5a5a5a5a);
        continue;
      }
      int64_t ref = 0;
      for (int64_t k = 0; k < sh.k; ++k) ref += int64_t(o.a[m * o.lda + k]) * int64_t(o.b[n * o.ldb + k]);
      ASSERT_EQ(o.c[m * o.ldc + n], ref) << sh.m << "x" << sh.n << "x" << sh.k << " at (" << m << ", " << n << ")";
    }
}

TEST(IntGemm, ExactOnRaggedShapesEveryKindPair) {
  for (const GemmShape& sh : kShapes)
    for (bool padded : {false, true}) {
      check_int_gemm<int8_t, int8_t>(sh, padded);
      check_int_gemm<uint8_t, int8_t>(sh, padded);
      check_int_gemm<int8_t, uint8_t>(sh, padded);
      check_int_gemm<uint8_t, uint8_t>(sh, padded);
    }
}

// The K bound is tight: at K = int_gemm_max_k the extreme sum still fits s32 exactly.
TEST(IntGemm, LargestKExtremeValues) {
  EXPECT_EQ(int_gemm_max_k(ElementKind::S8, ElementKind::S8), 131071);
  EXPECT_EQ(int_gemm_max_k(ElementKind::U8, ElementKind::U8), 33025);
  EXPECT_EQ(int_gemm_max_k(ElementKind::S8, ElementKind::S8, 255), 65793);
  EXPECT_EQ(int_gemm_max_k(ElementKind::F32, ElementKind::S8), 0);
  const int64_t k = 131056;  // the largest multiple of 16 ≤ 131071
  Arr<int8_t> a(k, -128), b(2 * k, -128);
  for (int64_t i = 0; i < k; ++i) b[k + i] = 127;
  Arr<int32_t> c(2);
  const Stream host = Stream::host();
  auto plan = dynamic::IntGemmPlan::select(host, IntGemmDescriptor{}.with_shape(1, 2, k));
  ASSERT_TRUE(plan.is_ok()) << plan.error().to_string();
  ASSERT_TRUE(plan->run(host, {}, {mat(a.data(), ElementKind::S8, 1, k, k), mat(b.data(), ElementKind::S8, 2, k, k),
                                   mat(c.data(), ElementKind::S32, 1, 2, 2)})
                  .is_ok());
  EXPECT_EQ(c[0], k * 16384);
  EXPECT_EQ(c[1], -k * 16256);
  EXPECT_EQ(plan->precision_guarantee().deterministic, true);
  EXPECT_EQ(to_string(plan->sku()).find("int_gemm") != std::string::npos, true) << to_string(plan->sku());
}

TEST(IntGemm, EmptyProblemsTouchNothing) {
  const Stream host = Stream::host();
  for (GemmShape sh : {GemmShape{0, 5, 16}, GemmShape{5, 0, 16}, GemmShape{3, 4, 0}}) {
    Arr<int8_t> a(std::max<int64_t>(sh.m * sh.k, 1)), b(std::max<int64_t>(sh.n * sh.k, 1));
    Arr<int32_t> c(std::max<int64_t>(sh.m * sh.n, 1), 7);
    auto plan = dynamic::IntGemmPlan::select(host, IntGemmDescriptor{}.with_shape(sh.m, sh.n, sh.k));
    ASSERT_TRUE(plan.is_ok()) << plan.error().to_string();
    ASSERT_TRUE(plan->run(host, {}, {mat(a.data(), ElementKind::S8, sh.m, sh.k, std::max<int64_t>(sh.k, 16)),
                                     mat(b.data(), ElementKind::S8, sh.n, sh.k, std::max<int64_t>(sh.k, 16)),
                                     mat(c.data(), ElementKind::S32, sh.m, sh.n, std::max<int64_t>(sh.n, 1))})
                    .is_ok());
    if (sh.k == 0)
      for (size_t i = 0; i < c.n; ++i) EXPECT_EQ(c[i], 0);  // an empty sum is 0
  }
}

// -------------------------------------------------------------------------------- SmoothQuantLinear

struct SqCase {
  GemmShape sh;
  ElementKind out;
  WeightScaleGranularity g;
  bool bias;
  LinearActivation act;
};

TEST(SmoothQuantLinear, AgainstDoubleRecomputation) {
  const Stream host = Stream::host();
  const SqCase cases[] = {
      {{17, 33, 64}, ElementKind::F32, WeightScaleGranularity::PerChannel, true, LinearActivation::None},
      {{1, 40, 48}, ElementKind::F16, WeightScaleGranularity::PerChannel, false, LinearActivation::Relu},
      {{129, 65, 96}, ElementKind::Bf16, WeightScaleGranularity::PerTensor, true, LinearActivation::Relu},
      {{5, 7, 32}, ElementKind::F64, WeightScaleGranularity::PerChannel, true, LinearActivation::None},
      {{4, 9, 32}, ElementKind::F32, WeightScaleGranularity::PerChannel, true, LinearActivation::Silu},
      {{4, 9, 32}, ElementKind::F32, WeightScaleGranularity::PerChannel, true, LinearActivation::GeluErf},
      {{4, 9, 32}, ElementKind::F32, WeightScaleGranularity::PerChannel, false, LinearActivation::GeluTanh},
  };
  for (const SqCase& c : cases) {
    const auto [M, N, K] = c.sh;
    const float x_scale = 0.0173f;
    const bool f64 = c.out == ElementKind::F64;
    const ElementKind sk = f64 ? ElementKind::F64 : ElementKind::F32;
    Arr<int8_t> a(M * K), w(N * K);
    fill_random(a, 11 + M), fill_random(w, 13 + N);
    const int64_t ns = c.g == WeightScaleGranularity::PerChannel ? N : 1;
    Arr<double> sw(ns), bias(N);
    Arr<uint8_t> sw_mem(ns * 8), bias_mem(N * 8), y(M * N * 8);
    std::mt19937_64 g(5);
    std::uniform_real_distribution<double> du(0.001, 0.01), db(-3, 3);
    for (int64_t i = 0; i < ns; ++i) {
      sw[i] = f64 ? du(g) : static_cast<float>(du(g));
      write_float(sk, sw_mem.data(), i, sw[i]);
    }
    for (int64_t i = 0; i < N; ++i) {
      write_float(c.out, bias_mem.data(), i, db(g));
      bias[i] = read_out(c.out, bias_mem.data(), i);  // the exact stored bias
    }
    const auto desc = SmoothQuantLinearDescriptor{}
                          .with_shape(M, N, K)
                          .with_x_scale(x_scale)
                          .with_output(c.out)
                          .with_weight_scale_granularity(c.g)
                          .with_bias(c.bias)
                          .with_activation(c.act);
    auto plan = dynamic::SmoothQuantLinearPlan::select(host, desc);
    ASSERT_TRUE(plan.is_ok()) << plan.error().to_string();
    EXPECT_EQ(plan->workspace_size(), 0u);
    dynamic::SmoothQuantLinearArgs t{mat(a.data(), ElementKind::S8, M, K, K), mat(w.data(), ElementKind::S8, N, K, K),
                                     vec(sw_mem.data(), sk, ns), c.bias ? vec(bias_mem.data(), c.out, N) : DynTensor{},
                                     mat(y.data(), c.out, M, N, N)};
    ASSERT_TRUE(plan->run(host, {}, t).is_ok());
    // Rounding errors of the f32 (f64) epilogue: the int → float conversion, two products and the fma each
    // contribute ≤ u·|value| (u the opmath unit roundoff), so |v − v_exact| ≤ 4u·(|s_a·s_w·acc| + |bias|);
    // the output rounding adds u_out·|v|; activations are 1-Lipschitz-ish (|f'| ≤ 1.13) plus their own libm
    // error (a few u·|v|).
    const double u = f64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        int64_t acc = 0;
        for (int64_t k = 0; k < K; ++k) acc += int64_t(a[m * K + k]) * w[n * K + k];
        const double prod = double(x_scale) * sw[ns == N ? n : 0] * double(acc);
        const double pre = prod + (c.bias ? bias[n] : 0.0);
        double ref = pre;
        switch (c.act) {
          case LinearActivation::Relu: ref = pre > 0 ? pre : 0; break;
          case LinearActivation::Silu: ref = pre / (1 + std::exp(-pre)); break;
          case LinearActivation::GeluErf: ref = 0.5 * pre * std::erfc(-pre / std::sqrt(2.0)); break;
          case LinearActivation::GeluTanh:
            ref = 0.5 * pre * (1 + std::tanh(std::sqrt(2 / M_PI) * (pre + 0.044715 * pre * pre * pre)));
            break;
          default: break;
        }
        const double got = read_out(c.out, y.data(), m * N + n);
        const double tol = 1.2 * 4 * u * (std::abs(prod) + (c.bias ? std::abs(bias[n]) : 0)) +
                           unit_roundoff(c.out) * std::abs(ref) + 8 * u * std::abs(ref) + 1e-300;
        ASSERT_NEAR(got, ref, tol) << to_string(c.out) << " " << M << "x" << N << "x" << K << " at (" << m << ", "
                                   << n << ") act " << to_string(c.act);
      }
  }
}

// The epilogue order of int_gemm.hpp, bit for bit: t = s_w·float(acc); v = fmaf(s_a, t, bias); one rounding.
// This is what the tensor-core kernel will be held to.
TEST(SmoothQuantLinear, EpilogueOrderBitExact) {
  const Stream host = Stream::host();
  const int64_t M = 9, N = 11, K = 16 * 70;
  Arr<int8_t> a(M * K), w(N * K);
  fill_random(a, 3), fill_random(w, 4);
  Arr<float> sw(N), bias(N), y(M * N);
  for (int64_t n = 0; n < N; ++n) sw[n] = 0.00123f * float(n + 1), bias[n] = 0.37f * float(n) - 1.9f;
  const float sa = 0.0371f;
  auto plan = dynamic::SmoothQuantLinearPlan::select(
      host,
      SmoothQuantLinearDescriptor{}.with_shape(M, N, K).with_x_scale(sa).with_output(ElementKind::F32).with_bias());
  ASSERT_TRUE(plan.is_ok());
  ASSERT_TRUE(plan->run(host, {}, {mat(a.data(), ElementKind::S8, M, K, K), mat(w.data(), ElementKind::S8, N, K, K),
                                   vec(sw.data(), ElementKind::F32, N), vec(bias.data(), ElementKind::F32, N),
                                   mat(y.data(), ElementKind::F32, M, N, N)})
                  .is_ok());
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      int32_t acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += int32_t(a[m * K + k]) * w[n * K + k];
      volatile float t = sw[n] * static_cast<float>(acc);
      const float want = std::fmaf(sa, t, bias[n]);
      uint32_t gb, wb;
      std::memcpy(&gb, &y[m * N + n], 4), std::memcpy(&wb, &want, 4);
      ASSERT_EQ(gb, wb) << "(" << m << ", " << n << "): " << y[m * N + n] << " vs " << want;
    }
}

// -------------------------------------------------------------------------------- QuantizedLinear

struct QlCase {
  GemmShape sh;
  ElementKind x;
  ElementKind out;
  DynamicRangeMode mode;
  ElementKind aq;
  bool bias;
};

TEST(QuantizedLinear, AgainstDoubleAndFloatReference) {
  const Stream host = Stream::host();
  const QlCase cases[] = {
      {{17, 33, 64}, ElementKind::F32, ElementKind::F32, DynamicRangeMode::Symmetric, ElementKind::S8, true},
      {{1, 40, 48}, ElementKind::F16, ElementKind::F16, DynamicRangeMode::Symmetric, ElementKind::S8, false},
      {{129, 65, 96}, ElementKind::Bf16, ElementKind::Bf16, DynamicRangeMode::Symmetric, ElementKind::S8, true},
      {{17, 33, 64}, ElementKind::F32, ElementKind::F32, DynamicRangeMode::Asymmetric, ElementKind::S8, true},
      {{9, 10, 32}, ElementKind::F16, ElementKind::F32, DynamicRangeMode::Asymmetric, ElementKind::U8, false},
      {{6, 7, 48}, ElementKind::F64, ElementKind::F64, DynamicRangeMode::Asymmetric, ElementKind::S8, true},
      {{6, 7, 48}, ElementKind::F64, ElementKind::F64, DynamicRangeMode::Symmetric, ElementKind::S8, false},
  };
  std::vector<std::pair<QlCase, QuantConvention>> runs;  // every case under every convention
  for (QuantConvention conv : {QuantConvention::PyTorch, QuantConvention::Exact, QuantConvention::Vllm})
    for (const QlCase& c : cases) runs.emplace_back(c, conv);
  for (const auto& [c, conv] : runs) {
    SCOPED_TRACE(std::string(to_string(conv)) + " " + std::string(to_string(c.x)) + " " + std::to_string(c.sh.m) + "x" +
                 std::to_string(c.sh.n) + "x" + std::to_string(c.sh.k) +
                 (c.mode == DynamicRangeMode::Asymmetric ? " asym " : " sym ") + std::string(to_string(c.aq)));
    const auto [M, N, K] = c.sh;
    const bool f64 = c.out == ElementKind::F64;
    const ElementKind sk = f64 ? ElementKind::F64 : ElementKind::F32;
    std::mt19937_64 g(M * 131 + N);
    // x with an outlier channel and (asymmetric) a positive shift, as LLM activations have.
    std::uniform_real_distribution<double> dx(-2, 2), dw(-0.5, 0.5), db(-1, 1);
    Arr<uint8_t> x(M * K * 8), y(M * N * 8), sw_mem(N * 8), bias_mem(N * 8);
    std::vector<double> xv(M * K), wf(N * K), sw(N), bias(N);
    for (int64_t i = 0; i < M * K; ++i) {
      double v = dx(g) * (i % K == 3 ? 20 : 1) + (c.mode == DynamicRangeMode::Asymmetric ? 1.5 : 0);
      write_float(c.x, x.data(), i, v);
      xv[i] = read_out(c.x, x.data(), i);
    }
    // The weight: float, quantized per output channel symmetric (s = max|w|/127).
    Arr<int8_t> wq(N * K);
    for (int64_t n = 0; n < N; ++n) {
      double mx = 0;
      for (int64_t k = 0; k < K; ++k) wf[n * K + k] = dw(g), mx = std::max(mx, std::abs(wf[n * K + k]));
      sw[n] = f64 ? mx / 127 : double(float(mx / 127));
      write_float(sk, sw_mem.data(), n, sw[n]);
      for (int64_t k = 0; k < K; ++k) wq[n * K + k] = static_cast<int8_t>(std::nearbyint(wf[n * K + k] / sw[n]));
      write_float(c.out, bias_mem.data(), n, db(g));
      bias[n] = read_out(c.out, bias_mem.data(), n);
    }
    const auto desc = QuantizedLinearDescriptor{}
                          .with_shape(M, N, K)
                          .with_element(c.x)
                          .with_output(c.out)
                          .with_mode(c.mode)
                          .with_x_quantized(c.aq)
                          .with_bias(c.bias)
                          .with_convention(conv);
    auto plan = dynamic::QuantizedLinearPlan::select(host, desc);
    if (conv == QuantConvention::Vllm && c.x == ElementKind::F64) {  // vLLM computes in f32
      expect_select_error(plan, ErrorCode::Unsupported, "vllm convention takes f16, bf16 or f32 x");
      continue;
    }
    ASSERT_TRUE(plan.is_ok()) << plan.error().to_string();
    ASSERT_GE(plan->workspace_size(), size_t(M * K + M * 8));
    Arr<uint8_t> ws(plan->workspace_size());
    const Workspace wsv(ws.data(), plan->workspace_size());
    dynamic::QuantizedLinearArgs t{mat(x.data(), c.x, M, K, K), mat(wq.data(), ElementKind::S8, N, K, K),
                                   vec(sw_mem.data(), sk, N), c.bias ? vec(bias_mem.data(), c.out, N) : DynTensor{},
                                   mat(y.data(), c.out, M, N, N)};
    ASSERT_TRUE(plan->run(host, wsv, t).is_ok());
    const DynTensor qa = plan->quantized_x(wsv), sa_t = plan->x_scale(wsv), zp_t = plan->x_zero_point(wsv);
    const double u = f64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
    // The per-token quantization of the convention (dynamic_range_quantize.hpp), recomputed independently
    // (tests/ops/dynamic_range_reference.hpp): the plan's quantized x, scales and zero points.
    const dynamic_range::Expected want_a = dynamic_range::reference(
        DynamicRangeQuantizeDescriptor{}.with_element(c.x).with_shape(Shape{M, K}).with_mode(c.mode).with_convention(conv),
        xv, c.aq == ElementKind::U8 ? 0 : -128, c.aq == ElementKind::U8 ? 255 : 127);
    for (int64_t m = 0; m < M; ++m) {
      const double sa = read_out(sk, sa_t.data, m);
      const int32_t zp = c.mode == DynamicRangeMode::Symmetric ? 0 : static_cast<const int32_t*>(zp_t.data)[m];
      ASSERT_TRUE(sa == want_a.scale[m] || (std::isnan(sa) && std::isnan(want_a.scale[m])))
          << m << ": " << sa << " vs " << want_a.scale[m];
      ASSERT_EQ(zp, want_a.zp[m]) << m;
      // (clang 14 cannot capture structured bindings: copies)
      const bool unsigned_q = c.aq == ElementKind::U8;
      const int64_t row = m * K;
      auto qv = [&](int64_t k) {
        return unsigned_q ? int(static_cast<const uint8_t*>(qa.data)[row + k])
                          : int(static_cast<const int8_t*>(qa.data)[row + k]);
      };
      for (int64_t k = 0; k < K; ++k) ASSERT_EQ(qv(k), want_a.q[m * K + k]) << "q[" << m << ", " << k << "]";
      for (int64_t n = 0; n < N; ++n) {
        // (1) vs the double recomputation from the plan's own quantized x.
        int64_t acc = 0, sabs = 0;
        double xa = 0, sum_abs_x = 0, sum_abs_wd = 0;
        for (int64_t k = 0; k < K; ++k) {
          acc += int64_t(qv(k) - zp) * wq[n * K + k];
          sabs += std::abs(wq[n * K + k]);
          xa += xv[m * K + k] * (sw[n] * wq[n * K + k]);
          sum_abs_x += std::abs(xv[m * K + k]);
          sum_abs_wd += std::abs(sw[n] * wq[n * K + k]);
        }
        const double prod = sa * sw[n] * double(acc);
        const double ref = prod + (c.bias ? bias[n] : 0.0);
        const double got = read_out(c.out, y.data(), m * N + n);
        const double tol_round = 4.8 * u * (std::abs(prod) + std::abs(bias[n])) + unit_roundoff(c.out) * std::abs(ref);
        ASSERT_NEAR(got, ref, tol_round + 1e-300) << "double recomputation (" << m << ", " << n << ")";
        // (2) vs the float x·Ŵᵀ (Ŵ the dequantized weight the plan was given): x's quantization
        // error is |x − s_a(q − zp)| ≤ s_a/2 per element (round to nearest, no clamping: the range is the row's
        // own), so |Σ x·ŵ − Σ x̂·ŵ| ≤ (s_a/2)·Σ|ŵ|.
        const double bound_a = 0.5 * sa * sum_abs_wd * (1 + 1e-6);
        ASSERT_NEAR(got, xa + (c.bias ? bias[n] : 0.0), bound_a + tol_round + 1e-12) << "vs x·Ŵᵀ (" << m << ", " << n << ")";
        // (3) vs the float x·Wᵀ of the unquantized weight: add |x|·|w − ŵ| ≤ (s_w/2)·Σ|x|.
        double xw = 0;
        for (int64_t k = 0; k < K; ++k) xw += xv[m * K + k] * wf[n * K + k];
        const double bound = bound_a + 0.5 * sw[n] * sum_abs_x * (1 + 1e-6) + 1e-7 * std::abs(xw);
        ASSERT_NEAR(got, xw + (c.bias ? bias[n] : 0.0), bound + tol_round + 1e-12) << "vs x·Wᵀ (" << m << ", " << n << ")";
        (void)sabs;
      }
    }
  }
}

// An empty reduction (K = 0) gives y = act(bias); M = 0 touches nothing.
TEST(QuantizedLinear, EmptyProblems) {
  const Stream host = Stream::host();
  auto plan = dynamic::QuantizedLinearPlan::select(
      host, QuantizedLinearDescriptor{}.with_shape(2, 3, 0).with_element(ElementKind::F32).with_output(ElementKind::F32)
                .with_bias().with_activation(LinearActivation::Relu));
  ASSERT_TRUE(plan.is_ok()) << plan.error().to_string();
  EXPECT_EQ(plan->workspace_size(), 0u);
  Arr<float> x(1), sw(3, 0.5f), bias(3), y(6, 9.0f);
  Arr<int8_t> w(16);
  bias[0] = -1, bias[1] = 2, bias[2] = 0.25f;
  ASSERT_TRUE(plan->run(host, {}, {mat(x.data(), ElementKind::F32, 2, 0, 1), mat(w.data(), ElementKind::S8, 3, 0, 16),
                                   vec(sw.data(), ElementKind::F32, 3), vec(bias.data(), ElementKind::F32, 3),
                                   mat(y.data(), ElementKind::F32, 2, 3, 3)})
                  .is_ok());
  EXPECT_EQ(std::vector<float>(y.data(), y.data() + 6), (std::vector<float>{0, 2, 0.25f, 0, 2, 0.25f}));
}

// The activations table of docs/ops/int_gemm.md is the catalog (baracuda/ops/linear_activations.def), with
// each activation's SKU epilogue read from a selected plan (with a bias), so the table also checks the wiring.
TEST(LinearActivations, DocTableIsTheCatalogAndTheSkus) {
  std::string t = "| `LinearActivation` | name | SKU epilogue with a bias | act(v) |\n|---|---|---|---|\n";
  const auto sku_epilogue = [](LinearActivation a) -> std::string {
    auto plan = dynamic::QuantizedLinearPlan::select(
        Stream::host(), QuantizedLinearDescriptor{}.with_shape(2, 3, 16).with_bias().with_activation(a));
    if (!plan) return plan.error().to_string();
    return plan->sku().epilogue ? "`" + std::string(to_string(*plan->sku().epilogue)) + "`" : "none";
  };
#define BARACUDA_LINEAR_ACTIVATION(name, Enum, epilogue, doc)                                                    \
  t += "| `" #Enum "` | `" + std::string(to_string(LinearActivation::Enum)) + "` | " +                         \
       sku_epilogue(LinearActivation::Enum) + " | " + doc + " |\n";
#include "baracuda/ops/linear_activations.def"
#undef BARACUDA_LINEAR_ACTIVATION
  expect_doc_table("int_gemm.md", "linear_activations.def", "int_gemm_test", t);
  EXPECT_EQ(to_string(static_cast<LinearActivation>(kNumLinearActivations)), "?");
}

// ---------------------------------------------------------------------------------- typed wrappers

/// The host stream, then the sim stream (whose device memory is host memory, so host arrays serve both).
Stream stream_of(DeviceKind d) { return d == DeviceKind::Host ? Stream::host() : Stream::sim(); }

template <class T>
bool same_bytes(const Arr<T>& x, const Arr<T>& y) {
  return x.n == y.n && std::memcmp(x.data(), y.data(), x.n * sizeof(T)) == 0;
}

/// On host and sim: the dynamic plan Dynamic and the typed plan Typed, selected for `desc`, both succeed with the
/// same SKU; then check(stream, dynamic plan, typed plan) compares their runs.
template <class Dynamic, class Typed, class Descriptor, class Check>
void expect_typed_matches_dynamic(const Descriptor& desc, Check check) {
  for (DeviceKind d : {DeviceKind::Host, DeviceKind::Sim}) {
    SCOPED_TRACE(std::string(to_string(d)));
    const Stream st = stream_of(d);
    auto dp = Dynamic::select(st, desc);
    auto tp = Typed::select(st, desc);
    ASSERT_TRUE(dp.is_ok() && tp.is_ok()) << (dp ? tp.error() : dp.error()).to_string();
    EXPECT_EQ(tp->sku(), dp->sku());
    check(st, *dp, *tp);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

/// The typed plan Plan rejects `desc` at select on the host: the kind `needle` names is not the descriptor's.
template <class Plan, class Descriptor>
void expect_kind_mismatch(const Descriptor& desc, const std::string& needle) {
  expect_select_error(Plan::select(Stream::host(), desc), ErrorCode::InvalidProblem, needle);
}

// IntGemmPlan<TA, TB> forwards to dynamic::IntGemmPlan: the same SKU and bytes on host and sim; the kinds
// are checked against the descriptor's at select.
TEST(IntGemm, TypedPlanMatchesDynamic) {
  const int64_t M = 5, N = 7, K = 64;
  Arr<uint8_t> a(M * K);
  Arr<int8_t> b(N * K);
  fill_random(a, 31), fill_random(b, 32);
  const auto desc = IntGemmDescriptor{}.with_shape(M, N, K).with_kinds(ElementKind::U8, ElementKind::S8);
  auto same_runs = [&](const Stream& st, const auto& dp, const auto& tp) {
    ASSERT_EQ(tp.workspace_size(), dp.workspace_size());
    Arr<uint8_t> ws(tp.workspace_size());
    const Workspace wsv(ws.data(), tp.workspace_size());
    Arr<int32_t> want(M * N, 7), got(M * N, 7);
    ASSERT_TRUE(dp.run(st, wsv, {mat(a.data(), ElementKind::U8, M, K, K), mat(b.data(), ElementKind::S8, N, K, K),
                                  mat(want.data(), ElementKind::S32, M, N, N)})
                    .is_ok());
    const IntGemmArgs<uint8_t, int8_t> args{TensorRef<uint8_t, 2>::dense(a.data(), {M, K}),
                                            TensorRef<int8_t, 2>::dense(b.data(), {N, K}),
                                            TensorMut<int32_t, 2>::dense(got.data(), {M, N})};
    ASSERT_TRUE(tp.can_implement(args).is_ok());
    ASSERT_TRUE(tp.run(st, wsv, args).is_ok());
    EXPECT_TRUE(same_bytes(got, want));
    EXPECT_NE(want[0], 7);
  };
  expect_typed_matches_dynamic<dynamic::IntGemmPlan, IntGemmPlan<uint8_t, int8_t>>(desc, same_runs);
  expect_kind_mismatch<IntGemmPlan<int8_t, int8_t>>(desc, "the descriptor's a kind");
  expect_kind_mismatch<IntGemmPlan<uint8_t, uint8_t>>(desc, "the descriptor's b kind");
}

// QuantizedLinearPlan<T, TOut> (f16 x, f32 y, no bias: the default TensorRef is "no bias"): the same y and the
// same quantized x as the dynamic plan on host and sim; a mismatched kind is rejected at select.
TEST(QuantizedLinear, TypedPlanMatchesDynamic) {
  const int64_t M = 6, N = 9, K = 48;
  Arr<__half> x(M * K);
  for (int64_t i = 0; i < M * K; ++i) write_float(ElementKind::F16, x.data(), i, std::sin(0.37 * double(i)) * 3.0);
  Arr<int8_t> w(N * K);
  fill_random(w, 33);
  Arr<float> sw(N);
  for (int64_t n = 0; n < N; ++n) sw[n] = 0.001f * float(n + 2);
  const auto desc = QuantizedLinearDescriptor{}
                        .with_shape(M, N, K)
                        .with_element(ElementKind::F16)
                        .with_output(ElementKind::F32)
                        .with_mode(DynamicRangeMode::Asymmetric)
                        .with_x_quantized(ElementKind::U8);
  auto same_runs = [&](const Stream& st, const auto& dp, const auto& tp) {
    ASSERT_EQ(tp.workspace_size(), dp.workspace_size());
    Arr<uint8_t> dws(dp.workspace_size()), tws(tp.workspace_size());
    const Workspace dwsv(dws.data(), dp.workspace_size()), twsv(tws.data(), tp.workspace_size());
    Arr<float> want(M * N, -1.0f), got(M * N, -1.0f);
    ASSERT_TRUE(dp.run(st, dwsv,
                        {mat(x.data(), ElementKind::F16, M, K, K), mat(w.data(), ElementKind::S8, N, K, K),
                         vec(sw.data(), ElementKind::F32, N), {}, mat(want.data(), ElementKind::F32, M, N, N)})
                    .is_ok());
    const QuantizedLinearArgs<__half, float> args{
        TensorRef<__half, 2>::dense(x.data(), {M, K}), TensorRef<int8_t, 2>::dense(w.data(), {N, K}),
        TensorRef<float, 1>::dense(sw.data(), {N}), {}, TensorMut<float, 2>::dense(got.data(), {M, N})};
    ASSERT_TRUE(tp.can_implement(args).is_ok());
    ASSERT_TRUE(tp.run(st, twsv, args).is_ok());
    EXPECT_TRUE(same_bytes(got, want));
    EXPECT_EQ(std::memcmp(tp.quantized_x(twsv).data, dp.quantized_x(dwsv).data, M * K), 0);
    EXPECT_EQ(std::memcmp(tp.x_scale(twsv).data, dp.x_scale(dwsv).data, M * 4), 0);
    EXPECT_EQ(std::memcmp(tp.x_zero_point(twsv).data, dp.x_zero_point(dwsv).data, M * 4), 0);
  };
  expect_typed_matches_dynamic<dynamic::QuantizedLinearPlan, QuantizedLinearPlan<__half, float>>(desc, same_runs);
  expect_kind_mismatch<QuantizedLinearPlan<float, float>>(desc, "the descriptor's x kind");
  expect_kind_mismatch<QuantizedLinearPlan<__half, __half>>(desc, "the descriptor's y kind");
}

// SmoothQuantLinearPlan<TOut> (bf16 y with bias): the same y as the dynamic plan on host and sim; a
// mismatched output kind is rejected at select.
TEST(SmoothQuantLinear, TypedPlanMatchesDynamic) {
  const int64_t M = 4, N = 11, K = 32;
  Arr<int8_t> a(M * K), w(N * K);
  fill_random(a, 34), fill_random(w, 35);
  Arr<float> sw(N);
  Arr<__nv_bfloat16> bias(N);
  for (int64_t n = 0; n < N; ++n) sw[n] = 0.002f * float(n + 1), bias[n] = __float2bfloat16(0.25f * float(n) - 1.0f);
  const auto desc = SmoothQuantLinearDescriptor{}
                        .with_shape(M, N, K)
                        .with_x_scale(0.0173f)
                        .with_output(ElementKind::Bf16)
                        .with_bias()
                        .with_activation(LinearActivation::Relu);
  auto same_runs = [&](const Stream& st, const auto& dp, const auto& tp) {
    Arr<uint8_t> ws(tp.workspace_size());
    const Workspace wsv(ws.data(), tp.workspace_size());
    Arr<__nv_bfloat16> want(M * N), got(M * N);
    ASSERT_TRUE(dp.run(st, wsv,
                        {mat(a.data(), ElementKind::S8, M, K, K), mat(w.data(), ElementKind::S8, N, K, K),
                         vec(sw.data(), ElementKind::F32, N), vec(bias.data(), ElementKind::Bf16, N),
                         mat(want.data(), ElementKind::Bf16, M, N, N)})
                    .is_ok());
    const SmoothQuantLinearArgs<__nv_bfloat16> args{
        TensorRef<int8_t, 2>::dense(a.data(), {M, K}), TensorRef<int8_t, 2>::dense(w.data(), {N, K}),
        TensorRef<float, 1>::dense(sw.data(), {N}), TensorRef<__nv_bfloat16, 1>::dense(bias.data(), {N}),
        TensorMut<__nv_bfloat16, 2>::dense(got.data(), {M, N})};
    ASSERT_TRUE(tp.can_implement(args).is_ok());
    ASSERT_TRUE(tp.run(st, wsv, args).is_ok());
    EXPECT_TRUE(same_bytes(got, want));
  };
  expect_typed_matches_dynamic<dynamic::SmoothQuantLinearPlan, SmoothQuantLinearPlan<__nv_bfloat16>>(desc, same_runs);
  expect_kind_mismatch<SmoothQuantLinearPlan<float>>(desc, "the descriptor's y kind");
}

// ---------------------------------------------------------------------------------- smoothing utilities

TEST(SmoothQuant, FactorsHandComputed) {
  // α = 0.5: √4/√1 = 2; √1/√4 = 0.5; 0 → clamped to 1e-5; √9/√(max(0, 1e-5)) = 3/√1e-5.
  const std::vector<double> x{4, 1, 0, 9}, w{1, 4, 2, 0};
  auto s = smooth_quant_factors(x, w, 0.5);
  ASSERT_TRUE(s.is_ok());
  EXPECT_DOUBLE_EQ((*s)[0], 2.0);
  EXPECT_DOUBLE_EQ((*s)[1], 0.5);
  EXPECT_DOUBLE_EQ((*s)[2], 1e-5);
  EXPECT_DOUBLE_EQ((*s)[3], 3.0 / std::sqrt(1e-5));
  // α = 0.8 on one channel: 16^0.8 / 2^0.2 = 2^3.2 / 2^0.2 = 8.
  auto s8 = smooth_quant_factors(std::vector<double>{16}, std::vector<double>{2}, 0.8);
  ASSERT_TRUE(s8.is_ok());
  EXPECT_NEAR((*s8)[0], 8.0, 1e-12);
  // α = 0: 1/max|W|; α = 1: max|X|.
  EXPECT_DOUBLE_EQ((*smooth_quant_factors(std::vector<double>{5}, std::vector<double>{4}, 0.0))[0], 0.25);
  EXPECT_DOUBLE_EQ((*smooth_quant_factors(std::vector<double>{5}, std::vector<double>{4}, 1.0))[0], 5.0);

  expect_error(smooth_quant_factors(x, std::vector<double>{1}, 0.5).status(), ErrorCode::InvalidProblem, "channels");
  expect_error(smooth_quant_factors(x, w, 1.5).status(), ErrorCode::InvalidProblem, "alpha");
  expect_error(smooth_quant_factors(x, w, NAN).status(), ErrorCode::InvalidProblem, "alpha");
  expect_error(smooth_quant_factors(std::vector<double>{-1}, std::vector<double>{1}, 0.5).status(),
               ErrorCode::InvalidProblem, "finite and >= 0");
  expect_error(smooth_quant_factors(std::vector<double>{1}, std::vector<double>{NAN}, 0.5).status(),
               ErrorCode::InvalidProblem, "finite and >= 0");
}

TEST(SmoothQuant, ApplyToWeightAndActivation) {
  const std::vector<double> s{2, 0.5};
  std::vector<float> w{1, 2, 3, 4};  // [2, 2]
  ASSERT_TRUE(smooth_quant_scale_weight(w, s).is_ok());
  EXPECT_EQ(w, (std::vector<float>{2, 1, 6, 2}));
  std::vector<float> x{1, 2, 3, 4, 5, 6};  // [3, 2]
  ASSERT_TRUE(smooth_quant_scale_activation(x, s).is_ok());
  EXPECT_EQ(x, (std::vector<float>{0.5f, 4, 1.5f, 8, 2.5f, 12}));
  std::vector<float> odd{1, 2, 3};
  expect_error(smooth_quant_scale_weight(odd, s), ErrorCode::InvalidProblem, "multiple of K");
  expect_error(smooth_quant_scale_activation(x, std::vector<double>{1, 0}), ErrorCode::InvalidProblem, "> 0");
  expect_error(smooth_quant_scale_weight(w, std::vector<double>{}), ErrorCode::InvalidProblem, "no factors");
}

}  // namespace
}  // namespace baracuda::test
