// The fused norms feeding the W8A8 linears, end to end on every device:
// - RMSNorm with the dynamic per-token output → QuantizedLinearPlan on that x_q: the same y, bit for bit, as
//   QuantizedLinearPlan on the unfused norm's float y (the fused output is exactly the linear's own
//   quantization), and within the quantization bound of an f64 reference;
// - fused add + RMSNorm with the static output → SmoothQuantLinearPlan: within the bound of an f64 reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "support/devices.hpp"
#include "support/numeric.hpp"
#include "support/random.hpp"
#include "support/tensor.hpp"

namespace baracuda::test {
namespace {

using K = ElementKind;

constexpr int64_t kM = 37, kN = 48, kK = 64;
constexpr double kEps = 1e-6;

/// Device tensors that stay alive for the test.
struct Tensors {
  explicit Tensors(const Stream& s) : stream(s) {}
  const Stream& stream;
  std::vector<DeviceTensor> held;
  DynTensor make(K k, const Shape& s, std::vector<uint8_t> init = {}) {
    if (init.empty()) init = sentinel_storage(k, s.numel());
    auto t = make_device_tensor(stream, k, s, dense_layout(s), init);
    EXPECT_TRUE(t) << t.status().to_string();
    if (!t) return {};
    held.push_back(std::move(t).value());
    return held.back().view;
  }
  std::vector<double> values(const DynTensor& v) const {
    for (const auto& t : held)
      if (t.view.data == v.data) {
        const std::vector<uint8_t> b = download(t);
        std::vector<double> out;
        for (size_t i = 0; i < b.size(); i += static_cast<size_t>(element_bytes(v.kind)))
          out.push_back(decode_value(v.kind, &b[i]));
        return out;
      }
    return {};
  }
};

Buffer workspace(const Stream& s, size_t bytes) {
  auto b = Buffer::allocate(s, std::max<size_t>(bytes, 1));
  EXPECT_TRUE(b);
  return b ? std::move(b).value() : Buffer{};
}

/// The layer's operands: x (and a residual), the norm's weight, an int8 weight with per-channel scales, a bias.
struct Layer {
  std::vector<double> x, residual, g, wq, sw, bias;
  std::vector<uint8_t> xb, rb, gb, wqb, swb, biasb;
};

Layer make_layer() {
  Layer l;
  l.xb = random_floats(K::Bf16, kM * kK, -2, 3, 21, &l.x);
  l.rb = random_floats(K::Bf16, kM * kK, -1, 1, 22, &l.residual);
  l.gb = random_floats(K::Bf16, kK, 0.5, 1.5, 23, &l.g);
  l.swb = random_floats(K::F32, kN, 0.002, 0.01, 24, &l.sw);
  l.biasb = random_floats(K::F32, kN, -1, 1, 25, &l.bias);
  std::vector<double> w;
  random_floats(K::F64, kN * kK, -127.49, 127.49, 26, &w);
  for (double v : w) l.wq.push_back(std::nearbyint(v));
  for (double v : l.wq) l.wqb.push_back(static_cast<uint8_t>(static_cast<int8_t>(v)));
  return l;
}

/// RMSNorm of rows of `h` in f64 with the norm weight g.
std::vector<double> rms_norm_f64(const std::vector<double>& h, const std::vector<double>& g) {
  std::vector<double> y(h.size());
  for (int64_t m = 0; m < kM; ++m) {
    double ss = 0;
    for (int64_t k = 0; k < kK; ++k) ss += h[m * kK + k] * h[m * kK + k];
    const double r = 1 / std::sqrt(ss / kK + kEps);
    for (int64_t k = 0; k < kK; ++k) y[m * kK + k] = h[m * kK + k] * r * g[k];
  }
  return y;
}

/// y against the f64 linear of the f64 norm: each output off by at most Σ_k |w[n,k]|·(the k-th input's
/// quantization half-step + its bf16 rounding), plus the f32 epilogue's rounding.
void expect_within_bound(const std::vector<double>& got, const std::vector<double>& normed, const Layer& l,
                         const std::vector<double>& half_step) {
  ASSERT_EQ(got.size(), static_cast<size_t>(kM * kN));
  for (int64_t m = 0; m < kM; ++m)
    for (int64_t n = 0; n < kN; ++n) {
      double ref = l.bias[n], bound = 0;
      for (int64_t k = 0; k < kK; ++k) {
        const double w = l.wq[n * kK + k] * l.sw[n], v = normed[m * kK + k];
        ref += v * w;
        bound += std::fabs(w) * (half_step[m] + std::fabs(v) * 0x1p-8);
      }
      EXPECT_NEAR(got[m * kN + n], ref, bound + 1e-5 * (std::fabs(ref) + 1)) << m << ", " << n;
    }
}

class NormLinear : public ::testing::TestWithParam<DeviceKind> {};

TEST_P(NormLinear, DynamicRmsNormFeedsQuantizedLinear) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  const Shape xs{kM, kK}, rows{kM};
  const NormDescriptor nd = NormDescriptor().with_element(K::Bf16).with_shape(xs).with_eps(kEps);
  auto fused = dynamic::NormPlan::select(stream, NormDescriptor(nd).with_quant(NormQuant::Dynamic));
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(fused, GetParam());
  auto plain = dynamic::NormPlan::select(stream, nd);
  auto linear = dynamic::QuantizedLinearPlan::select(
      stream, QuantizedLinearDescriptor().with_shape(kM, kN, kK).with_element(K::Bf16).with_output(K::F32).with_bias());
  ASSERT_TRUE(fused && plain && linear) << linear.status().to_string();
  const Layer l = make_layer();
  Tensors t(stream);
  const DynTensor x = t.make(K::Bf16, xs, l.xb), g = t.make(K::Bf16, Shape{kK}, l.gb);
  const DynTensor wq = t.make(K::S8, Shape{kN, kK}, l.wqb), sw = t.make(K::F32, Shape{kN}, l.swb);
  const DynTensor bias = t.make(K::F32, Shape{kN}, l.biasb);
  const DynTensor q = t.make(K::S8, xs), q_scale = t.make(K::F32, rows), y = t.make(K::Bf16, xs);
  const DynTensor out_fused = t.make(K::F32, Shape{kM, kN}), out_plain = t.make(K::F32, Shape{kM, kN});
  Buffer ws = workspace(stream, std::max({fused->workspace_size(), plain->workspace_size(), linear->workspace_size()}));

  dynamic::NormArgs na;
  na.x = x, na.weight = g, na.q = q, na.q_scale = q_scale;
  ASSERT_TRUE(fused->run(stream, Workspace(ws.data(), fused->workspace_size()), na));
  dynamic::QuantizedLinearArgs la{{}, wq, sw, bias, out_fused};
  la.x_q = q, la.x_scale = q_scale;
  const Workspace lws(ws.data(), linear->workspace_size());
  ASSERT_TRUE(linear->run(stream, lws, la));
  // The unfused chain: the norm's float y, quantized by the linear itself.
  dynamic::NormArgs pa;
  pa.x = x, pa.weight = g, pa.y = y;
  ASSERT_TRUE(plain->run(stream, Workspace(ws.data(), plain->workspace_size()), pa));
  ASSERT_TRUE(linear->run(stream, lws, {y, wq, sw, bias, out_plain}));
  ASSERT_TRUE(stream.synchronize());

  const std::vector<double> got = t.values(out_fused);
  EXPECT_EQ(got, t.values(out_plain));
  std::vector<double> half_step;
  for (double s : t.values(q_scale)) half_step.push_back(s / 2);
  expect_within_bound(got, rms_norm_f64(l.x, l.g), l, half_step);
}

TEST_P(NormLinear, FusedAddRmsNormStaticFeedsSmoothQuantLinear) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  const Shape xs{kM, kK};
  const Layer l = make_layer();
  std::vector<double> h(l.x.size());
  for (size_t i = 0; i < h.size(); ++i) h[i] = l.x[i] + l.residual[i];  // exact in f64
  const std::vector<double> normed = rms_norm_f64(h, l.g);
  double amax = 0;
  for (double v : normed) amax = std::max(amax, std::fabs(v));
  const auto scale = static_cast<float>(amax * 1.05 / 127);  // the calibrated static scale: nothing clamps
  auto norm = dynamic::NormPlan::select(
      stream, NormDescriptor().with_element(K::Bf16).with_shape(xs).with_eps(kEps).with_residual(true).with_quant(
                  NormQuant::Static));
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(norm, GetParam());
  auto linear = dynamic::SmoothQuantLinearPlan::select(
      stream, SmoothQuantLinearDescriptor().with_shape(kM, kN, kK).with_x_scale(scale).with_output(K::F32).with_bias());
  ASSERT_TRUE(norm && linear) << linear.status().to_string();
  Tensors t(stream);
  const DynTensor x = t.make(K::Bf16, xs, l.xb), r = t.make(K::Bf16, xs, l.rb);
  const DynTensor g = t.make(K::Bf16, Shape{kK}, l.gb), hv = t.make(K::Bf16, xs), q = t.make(K::S8, xs);
  std::vector<uint8_t> sb(4);
  std::memcpy(sb.data(), &scale, 4);
  const DynTensor s = t.make(K::F32, Shape{1}, sb);
  const DynTensor wq = t.make(K::S8, Shape{kN, kK}, l.wqb), sw = t.make(K::F32, Shape{kN}, l.swb);
  const DynTensor bias = t.make(K::F32, Shape{kN}, l.biasb), out = t.make(K::F32, Shape{kM, kN});
  Buffer ws = workspace(stream, std::max(norm->workspace_size(), linear->workspace_size()));
  dynamic::NormArgs na;
  na.x = x, na.weight = g, na.residual = r, na.h = hv, na.q = q, na.scale = s;
  ASSERT_TRUE(norm->run(stream, Workspace(ws.data(), norm->workspace_size()), na));
  ASSERT_TRUE(linear->run(stream, Workspace(ws.data(), linear->workspace_size()), {q, wq, sw, bias, out}));
  ASSERT_TRUE(stream.synchronize());
  // h is x + residual rounded once to bf16; the bound adds that rounding to the norm's input.
  const std::vector<double> h_got = t.values(hv);
  for (size_t i = 0; i < h.size(); ++i) EXPECT_NEAR(h_got[i], h[i], std::fabs(h[i]) * 0x1p-8) << i;
  expect_within_bound(t.values(out), normed, l, std::vector<double>(kM, scale / 2 + amax * 0x1p-8));
}

INSTANTIATE_TEST_SUITE_P(Devices, NormLinear, ::testing::ValuesIn(kTestDevices),
                         [](const ::testing::TestParamInfo<DeviceKind>& i) { return std::string(to_string(i.param)); });

}  // namespace
}  // namespace baracuda::test
