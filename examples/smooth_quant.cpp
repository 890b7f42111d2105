// SmoothQuant W8A8 end to end on the host device (the reference; the same plans run the int8 tensor-core
// kernel on sim and cuda):
// smooth (migrate the activation outliers into the weight) → quantize the weight per output channel →
// quantize the activation per tensor with a static scale → SmoothQuantLinearPlan → compare with the float
// x·Wᵀ, with and without smoothing.
#include <baracuda/baracuda.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

namespace {
using namespace baracuda;
constexpr int64_t M = 16, N = 64, K = 128;

/// Mean relative error of the int8 path against the float x·Wᵀ; returns < 0 on failure.
double w8a8_error(const std::vector<float>& x0, const std::vector<float>& w0, bool smooth) {
  std::vector<float> x = x0, w = w0;
  if (smooth) {
    std::vector<double> mx(K, 0), mw(K, 0);
    for (int64_t i = 0; i < M * K; ++i) mx[i % K] = std::max(mx[i % K], double(std::abs(x[i])));
    for (int64_t i = 0; i < N * K; ++i) mw[i % K] = std::max(mw[i % K], double(std::abs(w[i])));
    auto s = smooth_quant_factors(mx, mw, 0.5);
    if (!s || !smooth_quant_scale_weight(w, *s) || !smooth_quant_scale_activation(x, *s)) return -1;
  }
  // Weight: per output channel, symmetric, s_w = max|w| / 127.
  std::vector<int8_t> wq(N * K);
  std::vector<float> sw(N);
  for (int64_t n = 0; n < N; ++n) {
    float mx = 0;
    for (int64_t k = 0; k < K; ++k) mx = std::max(mx, std::abs(w[n * K + k]));
    sw[n] = mx / 127.0f;
    for (int64_t k = 0; k < K; ++k) wq[n * K + k] = static_cast<int8_t>(std::nearbyint(w[n * K + k] / sw[n]));
  }
  // Activation: per tensor, static (here calibrated on the batch itself), s_a = max|x| / 127.
  float xmax = 0;
  for (float v : x) xmax = std::max(xmax, std::abs(v));
  const float sa = xmax / 127.0f;
  std::vector<int8_t> xq(M * K);
  for (int64_t i = 0; i < M * K; ++i) xq[i] = static_cast<int8_t>(std::clamp(std::nearbyint(x[i] / sa), -128.0f, 127.0f));

  const Stream host = Stream::host();
  auto plan = dynamic::SmoothQuantLinearPlan::select(
      host, SmoothQuantLinearDescriptor{}.with_shape(M, N, K).with_act_scale(sa).with_output(ElementKind::F32));
  if (!plan) return std::fprintf(stderr, "%s\n", plan.error().to_string().c_str()), -1;
  std::vector<float> y(M * N);
  const SmoothQuantLinearTensors t{DynTensor::dense(xq.data(), ElementKind::S8, Shape{M, K}),
                                   DynTensor::dense(wq.data(), ElementKind::S8, Shape{N, K}),
                                   DynTensor::dense(sw.data(), ElementKind::F32, Shape{N}), DynTensor{},
                                   DynTensor::dense(y.data(), ElementKind::F32, Shape{M, N})};
  // run rejects int8 operands that are not 16-byte aligned (operator new gives 16 on 64-bit platforms).
  if (Status s = plan->run(host, Workspace{}, t); !s) return std::fprintf(stderr, "%s\n", s.to_string().c_str()), -1;

  double err = 0, ref_norm = 0;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double ref = 0;
      for (int64_t k = 0; k < K; ++k) ref += double(x0[m * K + k]) * w0[n * K + k];
      err += std::abs(y[m * N + n] - ref), ref_norm += std::abs(ref);
    }
  return err / ref_norm;
}
}  // namespace

int main() {
  // LLM-like activations: a few input channels carry outliers 50× the rest.
  std::mt19937 g(7);
  std::normal_distribution<float> d(0, 1);
  std::vector<float> x(M * K), w(N * K);
  for (int64_t i = 0; i < M * K; ++i) x[i] = d(g) * ((i % K) % 37 == 5 ? 50.0f : 1.0f);
  for (float& v : w) v = 0.05f * d(g);
  const double plain = w8a8_error(x, w, false), smoothed = w8a8_error(x, w, true);
  if (plain < 0 || smoothed < 0) return 1;
  std::printf("W8A8 per-tensor activations, relative L1 error vs float x*W^T: %.4f without smoothing, %.4f with "
              "SmoothQuant (alpha = 0.5)\n", plain, smoothed);
  return smoothed < plain && smoothed < 0.05 ? 0 : 1;
}
