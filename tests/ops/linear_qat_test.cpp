// A quantization-aware training step run entirely on baracuda, on host and sim: W fake-quantized per output
// channel (QuantizePlan FakeQuantize, s8, PyTorch's arithmetic) → LinearPlan → the gradient of a squared-error
// loss (BinaryPlan Sub: y − target) → LinearBackwardPlan (dx, dWq, db) → the straight-through estimator
// (QuantizePlan FakeQuantizeBackward: dW = dWq · mask), against the test's own f64 evaluation of the whole step.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <span>
#include <vector>

#include "baracuda/ops/binary.hpp"
#include "baracuda/ops/quantize.hpp"
#include "ops/linear_test_support.hpp"
#include "support/devices.hpp"

namespace baracuda::test::linear {
namespace {

constexpr ElementKind F32 = ElementKind::F32;

TEST(LinearQat, FakeQuantizedStepMatchesF64) {
  const int64_t m = 17, n = 33, k = 48;
  std::mt19937_64 rng(2026);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(m * k), w(n * k), bias(n), target(m * n), scale(n);
  std::vector<int32_t> zp(n, 0);
  for (float& v : x) v = u(rng);
  for (float& v : w) v = u(rng) * 0.3f;
  for (float& v : bias) v = u(rng);
  for (float& v : target) v = u(rng);
  // Scales that clamp the largest quarter of each row's range, so the mask is not all ones.
  for (int64_t j = 0; j < n; ++j) {
    float mx = 0;
    for (int64_t q = 0; q < k; ++q) mx = std::max(mx, std::fabs(w[j * k + q]));
    scale[j] = mx * 0.75f / 127.0f;
  }
  // The f64 reference: wq and the mask by quantize.hpp's PyTorch arithmetic (f32 inverse scale and product).
  std::vector<double> wq(n * k), mask(n * k), y(m * n), dy(m * n), dx(m * k, 0.0), dw(n * k, 0.0), db(n, 0.0);
  int clamped = 0;
  for (int64_t j = 0; j < n; ++j) {
    const float inv = 1.0f / scale[j];
    for (int64_t q = 0; q < k; ++q) {
      const float r = w[j * k + q] * inv;
      const double t = std::nearbyint(static_cast<double>(r));
      const double c = std::clamp(t, -128.0, 127.0);
      wq[j * k + q] = static_cast<double>(static_cast<float>(c) * scale[j]);
      mask[j * k + q] = t >= -128.0 && t <= 127.0 ? 1.0 : 0.0;
      clamped += mask[j * k + q] == 0.0;
    }
  }
  ASSERT_GT(clamped, 0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = bias[j];
      for (int64_t q = 0; q < k; ++q) acc += static_cast<double>(x[i * k + q]) * wq[j * k + q];
      y[i * n + j] = acc;
      dy[i * n + j] = acc - target[i * n + j];
    }
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      db[j] += dy[i * n + j];
      for (int64_t q = 0; q < k; ++q) {
        dx[i * k + q] += dy[i * n + j] * wq[j * k + q];
        dw[j * k + q] += dy[i * n + j] * x[i * k + q];
      }
    }
  for (int64_t e = 0; e < n * k; ++e) dw[e] *= mask[e];

  for (DeviceKind device : {DeviceKind::Host, DeviceKind::Sim}) {
    BARACUDA_TEST_STREAM(st, device);
    auto up = [&](const auto& v) { return Buffer::from_host(st, std::span(v)); };
    auto zeros = [&](int64_t count) {
      return Buffer::from_host(st, std::span<const float>(std::vector<float>(count)));
    };
    auto bx = up(x), bw = up(w), bb = up(bias), bt = up(target), bs = up(scale), bz = up(zp);
    auto bwq = zeros(n * k), by = zeros(m * n), bdy = zeros(m * n), bdx = zeros(m * k), bdwq = zeros(n * k),
         bdw = zeros(n * k), bdb = zeros(n);
    ASSERT_TRUE(bx && bw && bb && bt && bs && bz && bwq && by && bdy && bdx && bdwq && bdw && bdb);
    auto in = [](const Buffer& b, ElementKind kind, Shape s) { return ConstDynTensor::dense(b.data(), kind, s); };
    auto out = [](const Buffer& b, ElementKind kind, Shape s) { return DynTensor::dense(b.data(), kind, s); };
    const Shape sw{n, k}, sy{m, n}, sx{m, k};
    const QuantizeDescriptor qd = QuantizeDescriptor{}
                                      .with_element(F32)
                                      .with_quantized(ElementKind::S8)
                                      .with_shape(sw)
                                      .with_granularity(QuantGranularity::per_channel(0));
    // 1. Wq = fake_quantize(W).
    auto fq = dynamic::QuantizePlan::select(st, QuantizeDescriptor(qd).with_op(QuantizeOp::FakeQuantize));
    ASSERT_TRUE(fq) << fq.error().to_string();
    dynamic::QuantizeArgs qa;
    qa.x = in(*bw, F32, sw), qa.scale = in(*bs, F32, Shape{n}), qa.zero_point = in(*bz, ElementKind::S32, Shape{n});
    qa.y = out(*bwq, F32, sw);
    ASSERT_TRUE(fq->run(st, Workspace{}, qa));
    // 2. y = x·Wqᵀ + b.
    const LinearDescriptor d =
        LinearDescriptor{}.with_shape(m, k, n).with_kinds(F32, F32).with_bias().with_gradients(true, true, true);
    auto fwd = dynamic::LinearPlan::select(st, d);
    ASSERT_TRUE(fwd) << fwd.error().to_string();
    ASSERT_TRUE(
        fwd->run(st, Workspace{}, {in(*bx, F32, sx), in(*bwq, F32, sw), in(*bb, F32, Shape{n}), out(*by, F32, sy)}));
    // 3. The loss 0.5·Σ(y − target)²: dy = y − target.
    auto sub =
        dynamic::BinaryPlan::select(st, BinaryDescriptor{}.with_op(BinaryOp::Sub).with_element(F32).with_shape(sy));
    ASSERT_TRUE(sub) << sub.error().to_string();
    ASSERT_TRUE(sub->run(st, Workspace{}, {in(*by, F32, sy), in(*bt, F32, sy), out(*bdy, F32, sy)}));
    // 4. dx, dWq, db.
    auto bwd = dynamic::LinearBackwardPlan::select(st, d);
    ASSERT_TRUE(bwd) << bwd.error().to_string();
    ASSERT_TRUE(bwd->run(st, Workspace{},
                         {in(*bdy, F32, sy),
                          in(*bx, F32, sx),
                          in(*bwq, F32, sw),
                          {},
                          out(*bdx, F32, sx),
                          out(*bdwq, F32, sw),
                          out(*bdb, F32, Shape{n})}));
    // 5. dW = dWq · mask (straight through).
    auto fqb = dynamic::QuantizePlan::select(st, QuantizeDescriptor(qd).with_op(QuantizeOp::FakeQuantizeBackward));
    ASSERT_TRUE(fqb) << fqb.error().to_string();
    dynamic::QuantizeArgs ba;
    ba.x = in(*bw, F32, sw), ba.scale = qa.scale, ba.zero_point = qa.zero_point, ba.dy = in(*bdwq, F32, sw);
    ba.dx = out(*bdw, F32, sw);
    ASSERT_TRUE(fqb->run(st, Workspace{}, ba));
    ASSERT_TRUE(st.synchronize());

    auto check = [&](const char* what, const Buffer& b, const std::vector<double>& ref, double tol) {
      std::vector<float> got(ref.size());
      ASSERT_TRUE(b.copy_to_host(got.data(), got.size() * sizeof(float)));
      for (size_t e = 0; e < ref.size(); ++e)
        ASSERT_NEAR(got[e], ref[e], tol) << to_string(device) << " " << what << "[" << e << "]";
    };
    // Wq is exact (the same f32 operations); y, dy carry f32 sums over K (|terms| ≤ 1·0.3·48); the gradients
    // f32 sums over M or N of those.
    check("wq", *bwq, wq, 0.0);
    check("y", *by, y, 1e-5);
    check("dy", *bdy, dy, 1e-5);
    check("dx", *bdx, dx, 1e-4);
    check("db", *bdb, db, 1e-4);
    check("dw", *bdw, dw, 1e-4);
  }
}

}  // namespace
}  // namespace baracuda::test::linear
