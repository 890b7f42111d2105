// QuantizedLinearPlan's activation-quantization convention (QuantizedLinearDescriptor::convention, forwarded to
// its DynamicRangeQuantizePlan): on host, sim and cuda,
// - rows of rounding ties where PyTorch's reciprocal and Exact's division give different q: an identity weight
//   makes y = s_a · q, so the output shows which rounding ran, checked against hand values and the
//   independent reference of dynamic_range_reference.hpp;
// - the Vllm asymmetric zero point, unclamped, takes the zero-point correction past s32 on rows far from zero
//   and on constant rows: the host follows the documented wrap-around and the kernel matches it bit for bit;
// - the rejections the convention adds (also for empty problems, which run no quantization).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "ops/dynamic_range_reference.hpp"
#include "support/devices.hpp"
#include "support/tensor.hpp"

namespace baracuda::test {
namespace {

/// Runs a QuantizedLinear (f32 x and output, per-channel f32 weight scales, no bias) on `stream`; y row-major.
Result<std::vector<float>> run_linear(const Stream& stream, const QuantizedLinearDescriptor& d,
                                      const std::vector<float>& x, const std::vector<int8_t>& w,
                                      const std::vector<float>& sw) {
  auto plan = dynamic::QuantizedLinearPlan::select(stream, d);
  if (!plan) return plan.error();
  auto bytes = [](const auto& v) {
    std::vector<uint8_t> b(v.size() * sizeof(v[0]));
    std::memcpy(b.data(), v.data(), b.size());
    return b;
  };
  auto dx = make_device_tensor(stream, ElementKind::F32, Shape{d.m, d.k}, dense_layout(Shape{d.m, d.k}), bytes(x));
  auto dw = make_device_tensor(stream, ElementKind::S8, Shape{d.n, d.k}, dense_layout(Shape{d.n, d.k}), bytes(w));
  auto ds = make_device_tensor(stream, ElementKind::F32, Shape{d.n}, dense_layout(Shape{d.n}), bytes(sw));
  auto dy = make_device_tensor(stream, ElementKind::F32, Shape{d.m, d.n}, dense_layout(Shape{d.m, d.n}), {});
  if (!dx || !dw || !ds || !dy) return Error::internal("allocation failed");
  auto ws = Buffer::allocate(stream, plan->workspace_size());
  if (!ws) return ws.error();
  BARACUDA_TRY(plan->run(stream, Workspace(ws->data(), plan->workspace_size()),
                         {dx->view, dw->view, ds->view, DynTensor{}, dy->view}));
  BARACUDA_TRY(stream.synchronize());
  const std::vector<uint8_t> yb = download(*dy);
  std::vector<float> y(static_cast<size_t>(d.m * d.n));
  std::memcpy(y.data(), yb.data(), y.size() * 4);
  return y;
}

class QuantizedLinearConvention : public ::testing::TestWithParam<DeviceKind> {};

// max|x| = 127·s with s = 7·2⁻⁷ = 0.0546875 (exact), and x = (k + 0.5)·s: exact ties of x / s (Exact rounds them
// half to even) that x · f32(1/s) (PyTorch; Vllm's f32(127 / max|x|) is the same value) puts just past
// |k + 0.5|. With the identity weight and s_w = 1, y[m, n] = s_a · q[m, n], exact in f32.
TEST_P(QuantizedLinearConvention, TiesShowWhichRoundingRan) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  auto probe = dynamic::QuantizedLinearPlan::select(stream, QuantizedLinearDescriptor{}.with_shape(1, 1, 16));
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(probe, GetParam());
  const int64_t M = 3, N = 16, K = 16;
  const double s = 0.0546875;
  const int ks[] = {-127, -125, -123, -121, -119, 50, 2, -3, 3, 101, -117, -115, -113, -111, -109};
  std::vector<float> x(static_cast<size_t>(M * K));
  std::vector<double> xv(x.size());
  for (int64_t m = 0; m < M; ++m) {
    xv[static_cast<size_t>(m * K)] = (m == 1 ? -127 : 127) * s;
    for (int64_t k = 1; k < K; ++k) xv[static_cast<size_t>(m * K + k)] = (ks[(k - 1 + 5 * m) % 15] + 0.5) * s;
  }
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(xv[i]);
  std::vector<int8_t> w(static_cast<size_t>(N * K), 0);
  for (int64_t n = 0; n < N; ++n) w[static_cast<size_t>(n * K + n)] = 1;
  const std::vector<float> sw(static_cast<size_t>(N), 1.0f);
  std::vector<int32_t> q_pytorch, q_exact;
  for (QuantConvention conv : {QuantConvention::PyTorch, QuantConvention::Exact, QuantConvention::Vllm}) {
    SCOPED_TRACE(std::string(to_string(conv)));
    const auto d = QuantizedLinearDescriptor{}.with_shape(M, N, K).with_element(ElementKind::F32)
                       .with_output(ElementKind::F32).with_convention(conv);
    auto y = run_linear(stream, d, x, w, sw);
    ASSERT_TRUE(y.is_ok()) << y.error().to_string();
    const dynamic_range::Expected want = dynamic_range::reference(
        DynamicRangeQuantizeDescriptor{}.with_shape(Shape{M, K}).with_convention(conv), xv, -128, 127);
    for (int64_t m = 0; m < M; ++m) {
      ASSERT_EQ(want.scale[static_cast<size_t>(m)], s);
      for (int64_t n = 0; n < N; ++n)
        EXPECT_EQ((*y)[static_cast<size_t>(m * N + n)], static_cast<float>(s * want.q[static_cast<size_t>(m * K + n)]))
            << m << ", " << n;
    }
    // By hand (row 0): −126.5 → Exact −126 (even), PyTorch −127; 50.5 → 50 / 51; 2.5 → 2 / 2; 3.5 → 4 / 4.
    const bool exact = conv == QuantConvention::Exact;
    EXPECT_EQ((*y)[1], static_cast<float>((exact ? -126 : -127) * s));
    EXPECT_EQ((*y)[6], static_cast<float>((exact ? 50 : 51) * s));
    EXPECT_EQ((*y)[7], static_cast<float>(2 * s));
    EXPECT_EQ((*y)[9], static_cast<float>(4 * s));
    if (conv == QuantConvention::PyTorch) q_pytorch = want.q;
    if (conv == QuantConvention::Exact) q_exact = want.q;
  }
  int differ = 0;
  for (size_t i = 0; i < q_exact.size(); ++i) differ += q_exact[i] != q_pytorch[i];
  EXPECT_GE(differ, 20);  // the conventions are told apart on most of the data
}

// Vllm asymmetric on rows far from zero (x = ±(1000 + j·2⁻¹⁰): |zp| ≈ 6.5·10⁶) and a constant row (s = 0,
// zp = INT32_MIN): zp · Σ_k w[n,k] leaves s32, and the correction wraps (int_gemm.hpp, step 1). The host
// equals the documented epilogue recomputed here with that wrap; the kernel equals the host bit for bit.
TEST_P(QuantizedLinearConvention, VllmZeroPointCorrectionWraps) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  auto probe = dynamic::QuantizedLinearPlan::select(stream, QuantizedLinearDescriptor{}.with_shape(1, 1, 16));
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(probe, GetParam());
  const int64_t M = 5, N = 24, K = 64;
  std::mt19937_64 g(17);
  std::uniform_int_distribution<int> dj(0, 40), dw(-127, 127);
  std::uniform_real_distribution<double> dn(-2, 2);
  std::vector<double> xv(static_cast<size_t>(M * K));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t k = 0; k < K; ++k) {
      double v = 1000 + dj(g) * std::ldexp(1.0, -10);   // rows 0, 1: far from zero
      if (m == 2) v = 5.0;                               // constant: s = 0, zp = INT32_MIN
      if (m == 3) v = -(1000 + dj(g) * std::ldexp(1.0, -10));
      if (m == 4) v = static_cast<float>(dn(g));         // ordinary: no wrap
      xv[static_cast<size_t>(m * K + k)] = v;
    }
  std::vector<float> x(xv.begin(), xv.end());
  std::vector<int8_t> w(static_cast<size_t>(N * K));
  for (auto& v : w) v = static_cast<int8_t>(dw(g));
  std::vector<float> sw(static_cast<size_t>(N));
  for (int64_t n = 0; n < N; ++n) sw[static_cast<size_t>(n)] = 0.001f * static_cast<float>(n + 1);
  for (ElementKind aq : {ElementKind::S8, ElementKind::U8}) {
    SCOPED_TRACE(std::string(to_string(aq)));
    const auto d = QuantizedLinearDescriptor{}.with_shape(M, N, K).with_element(ElementKind::F32)
                       .with_output(ElementKind::F32).with_mode(DynamicRangeMode::Asymmetric)
                       .with_x_quantized(aq).with_convention(QuantConvention::Vllm);
    const int32_t qmin = aq == ElementKind::U8 ? 0 : -128, qmax = aq == ElementKind::U8 ? 255 : 127;
    const dynamic_range::Expected a = dynamic_range::reference(
        DynamicRangeQuantizeDescriptor{}.with_shape(Shape{M, K}).with_mode(DynamicRangeMode::Asymmetric)
            .with_convention(QuantConvention::Vllm),
        xv, qmin, qmax);
    EXPECT_EQ(a.zp[2], std::numeric_limits<int32_t>::min());
    int wrapped = 0;
    std::vector<float> want(static_cast<size_t>(M * N));
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        int64_t dot = 0, colsum = 0;
        for (int64_t k = 0; k < K; ++k) {
          dot += int64_t{a.q[static_cast<size_t>(m * K + k)]} * w[static_cast<size_t>(n * K + k)];
          colsum += w[static_cast<size_t>(n * K + k)];
        }
        const int64_t exact = dot - int64_t{a.zp[static_cast<size_t>(m)]} * colsum;
        const auto acc = static_cast<int32_t>(static_cast<uint32_t>(exact & 0xFFFFFFFF));  // wrap-around s32
        wrapped += exact != acc;
        const float t = sw[static_cast<size_t>(n)] * static_cast<float>(acc);  // step 2
        want[static_cast<size_t>(m * N + n)] = static_cast<float>(a.scale[static_cast<size_t>(m)]) * t;  // step 3
      }
    EXPECT_GT(wrapped, N);  // the correction does leave s32
    auto y = run_linear(stream, d, x, w, sw);
    ASSERT_TRUE(y.is_ok()) << y.error().to_string();
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_EQ(std::memcmp(&(*y)[i], &want[i], 4), 0) << i << ": " << (*y)[i] << " vs " << want[i];
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, QuantizedLinearConvention,
                         ::testing::Values(DeviceKind::Host, DeviceKind::Sim, DeviceKind::Cuda),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(QuantizedLinearConventionRejects, ConventionRules) {
  const auto ok = QuantizedLinearDescriptor{}.with_shape(4, 5, 32).with_element(ElementKind::F32).with_output(ElementKind::F32);
  auto expect = [](const QuantizedLinearDescriptor& d, ErrorCode code, const std::string& words) {
    auto p = dynamic::QuantizedLinearPlan::select(Stream::host(), d);
    ASSERT_FALSE(p.is_ok());
    EXPECT_EQ(p.error().code, code) << p.error().to_string();
    EXPECT_NE(p.error().message.find(words), std::string::npos) << p.error().message;
    EXPECT_EQ(p.error().message.rfind("QuantizedLinearPlan: ", 0), 0u) << p.error().message;
  };
  // Empty problems (no quantization runs) answer as the others do.
  using Mnk = std::array<int64_t, 3>;
  for (const Mnk& shape : {Mnk{4, 5, 32}, Mnk{4, 5, 0}, Mnk{0, 5, 32}}) {
    const auto d = QuantizedLinearDescriptor{ok}.with_shape(shape[0], shape[1], shape[2]);
    expect(QuantizedLinearDescriptor{d}.with_convention(QuantConvention::TransformerEngine), ErrorCode::Unsupported,
           "transformer_engine convention applies to FP8 quantization only");
    expect(QuantizedLinearDescriptor{d}.with_convention(QuantConvention::Vllm).with_element(ElementKind::F64)
               .with_output(ElementKind::F64),
           ErrorCode::Unsupported, "vllm convention takes f16, bf16 or f32 x");
    expect(QuantizedLinearDescriptor{d}.with_convention(static_cast<QuantConvention>(5)), ErrorCode::InvalidProblem,
           "invalid QuantConvention");
    for (QuantConvention c : {QuantConvention::PyTorch, QuantConvention::Exact, QuantConvention::Vllm})
      EXPECT_TRUE(
          dynamic::QuantizedLinearPlan::select(Stream::host(), QuantizedLinearDescriptor{d}.with_convention(c)).is_ok());
  }
  EXPECT_EQ(QuantizedLinearDescriptor{}.convention, QuantConvention::PyTorch);
  EXPECT_NE(ok, QuantizedLinearDescriptor{ok}.with_convention(QuantConvention::Exact));
  EXPECT_NE(ok.hash(), QuantizedLinearDescriptor{ok}.with_convention(QuantConvention::Exact).hash());
}

}  // namespace
}  // namespace baracuda::test
