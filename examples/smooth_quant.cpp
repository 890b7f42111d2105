// SmoothQuant W8A8 (Xiao et al. 2023) end to end with baracuda's plans, on the default device (the GPU
// when one is usable, else the host reference) or on the device named by the first argument (host, sim,
// cuda).
//
// Offline, once per layer:
//   1. calibrate: the per-input-channel maxima of |X| over a calibration batch and of |W|, and from them
//      the smoothing factors s = smooth_quant_factors(max|X|, max|W|, alpha);
//   2. smooth the weight, W' = W·diag(s) (BinaryPlan mul, s broadcast over the rows), and quantize it per
//      output channel (DynamicRangeQuantizePlan, symmetric): w_q s8 [N, K] and its scales s_w [N];
//   3. the static scale of x (x_scale): s_a = max|X_cal·diag(s)⁻¹| / 127 (BinaryPlan div, then
//      DynamicRangeQuantizePlan, symmetric, per tensor).
// Per forward pass:
//   4. X' = X·diag(s)⁻¹ (in a model this division is folded into the preceding LayerNorm) and
//      x_q = quantize(X', s_a) (QuantizePlan, per tensor, with the static scale of step 3);
//   5. y = s_a · s_w[n] · Σ_k x_q[m,k]·w_q[n,k] (SmoothQuantLinearPlan).
// y is checked against the float X·Wᵀ (double loops) within the worst-case quantization error, and the
// same recipe without smoothing (s = 1) shows what smoothing buys.
#include <baracuda/baracuda.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <span>
#include <vector>

namespace {
using namespace baracuda;

constexpr int64_t M = 16, N = 64, K = 128;  // one decode step of a small layer
constexpr int64_t M_CAL = 64;               // calibration tokens
constexpr double ALPHA = 0.5;               // SmoothQuant's migration strength

// select is the caller's; then the rest of every plan's contract: can_implement, workspace_size, run, each
// taking the plan's argument struct (`Plan::Args`: its operands, inputs first).
template <class Plan>
Status run_plan(const Stream& stream, const Result<Plan>& plan, bool show, const typename Plan::Args& args) {
  if (!plan) return plan.error();
  if (show) std::printf("  %s\n", to_string(plan->sku()).c_str());
  BARACUDA_TRY(plan->can_implement(args));
  auto ws = Buffer::allocate(stream, plan->workspace_size());
  if (!ws) return ws.error();
  return plan->run(stream, ws->as_workspace(), args);
}

DynTensor view(const Buffer& b, ElementKind kind, const Shape& shape) {
  return DynTensor::dense(b.data(), kind, shape);
}

// out = a ∘ s with s [K] broadcast over the rows of a [rows, K]: a·diag(s) or a·diag(s)⁻¹.
Status scale_columns(const Stream& st, BinaryOp op, const Buffer& a, const Buffer& s, const Buffer& out, int64_t rows,
                     bool show) {
  const auto d = BinaryDescriptor().with_op(op).with_element(ElementKind::F32).with_shapes(Shape{rows, K}, Shape{K});
  return run_plan(st, dynamic::BinaryPlan::select(st, d), show,
                  {view(a, ElementKind::F32, Shape{rows, K}), view(s, ElementKind::F32, Shape{K}),
                   view(out, ElementKind::F32, Shape{rows, K})});
}

// Symmetric s8 quantization with scales measured from the data: s = max|x| / 127 and q = rint(x · (1/s))
// per segment of `g`. zp may be null (symmetric: all zero, and the plan keeps it in its workspace).
Status quantize_dynamic(const Stream& st, const Buffer& x, int64_t rows, QuantGranularity g, const Buffer& q,
                        const Buffer& scale, const Buffer* zp, bool show) {
  auto plan = dynamic::DynamicRangeQuantizePlan::select(
      st, DynamicRangeQuantizeDescriptor().with_element(ElementKind::F32).with_quantized(ElementKind::S8)
              .with_shape(Shape{rows, K}).with_granularity(g).with_mode(DynamicRangeMode::Symmetric));
  if (!plan) return plan.error();
  const dynamic::DynamicRangeQuantizeArgs t{view(x, ElementKind::F32, Shape{rows, K}),
                                            view(q, ElementKind::S8, Shape{rows, K}),
                                            view(scale, ElementKind::F32, plan->param_shape()),
                                            zp ? view(*zp, ElementKind::S32, plan->param_shape()) : DynTensor{}};
  return run_plan(st, plan, show, t);
}

struct W8A8Result {
  std::vector<float> y;    // [M, N]
  float x_scale = 0;       // s_a
  std::vector<float> sw;   // s_w [N]
};

// Steps 2–5 for smoothing factors `s` (all ones: no smoothing).
Result<W8A8Result> smooth_quant_linear(const Stream& st, const std::vector<float>& x, const std::vector<float>& x_cal,
                                       const std::vector<float>& w, const std::vector<float>& s, bool show) {
  // Device buffers (each 256-byte aligned: the int8 GEMM needs 16-byte-aligned rows).
  auto x_d = Buffer::from_host<float>(st, x), xcal_d = Buffer::from_host<float>(st, x_cal);
  auto w_d = Buffer::from_host<float>(st, w), s_d = Buffer::from_host<float>(st, s);
  auto x_s = Buffer::allocate_for<float>(st, M * K), xcal_s = Buffer::allocate_for<float>(st, M_CAL * K);
  auto w_s = Buffer::allocate_for<float>(st, N * K);
  auto xq = Buffer::allocate_for<int8_t>(st, M * K), xcal_q = Buffer::allocate_for<int8_t>(st, M_CAL * K);
  auto wq = Buffer::allocate_for<int8_t>(st, N * K), sw = Buffer::allocate_for<float>(st, N);
  auto sa = Buffer::allocate_for<float>(st, 1), zp = Buffer::allocate_for<int32_t>(st, 1);
  auto y = Buffer::allocate_for<float>(st, M * N);
  for (const auto* b : {&x_d, &xcal_d, &w_d, &s_d, &x_s, &xcal_s, &w_s, &xq, &xcal_q, &wq, &sw, &sa, &zp, &y})
    if (!*b) return b->error();

  // 2. W' = W·diag(s), quantized per output channel (axis 0 of [N, K]).
  BARACUDA_TRY(scale_columns(st, BinaryOp::Mul, *w_d, *s_d, *w_s, N, show));
  BARACUDA_TRY(quantize_dynamic(st, *w_s, N, QuantGranularity::per_channel(0), *wq, *sw, nullptr, show));
  // 3. The static scale of x, from the smoothed calibration batch (its q is not needed).
  BARACUDA_TRY(scale_columns(st, BinaryOp::Div, *xcal_d, *s_d, *xcal_s, M_CAL, show));
  BARACUDA_TRY(quantize_dynamic(st, *xcal_s, M_CAL, QuantGranularity::per_tensor(), *xcal_q, *sa, &*zp, show));
  auto x_scale = sa->to_host<float>();  // the linear plan takes it as a descriptor constant
  if (!x_scale) return x_scale.error();

  // 4. X' = X·diag(s)⁻¹, quantized with the calibrated scale (and its zero point, 0).
  BARACUDA_TRY(scale_columns(st, BinaryOp::Div, *x_d, *s_d, *x_s, M, false));
  dynamic::QuantizeArgs qt;
  qt.x = view(*x_s, ElementKind::F32, Shape{M, K});
  qt.scale = view(*sa, ElementKind::F32, Shape{1});
  qt.zero_point = view(*zp, ElementKind::S32, Shape{1});
  qt.y = view(*xq, ElementKind::S8, Shape{M, K});
  const auto qdesc = QuantizeDescriptor().with_op(QuantizeOp::Quantize).with_element(ElementKind::F32)
                         .with_quantized(ElementKind::S8).with_shape(Shape{M, K})
                         .with_granularity(QuantGranularity::per_tensor());
  BARACUDA_TRY(run_plan(st, dynamic::QuantizePlan::select(st, qdesc), show, qt));

  // 5. The int8 GEMM with the dequantizing epilogue.
  const auto ldesc = SmoothQuantLinearDescriptor().with_shape(M, N, K).with_x_scale((*x_scale)[0])
                         .with_output(ElementKind::F32)
                         .with_weight_scale_granularity(WeightScaleGranularity::PerChannel);
  const dynamic::SmoothQuantLinearArgs lt{view(*xq, ElementKind::S8, Shape{M, K}),
                                          view(*wq, ElementKind::S8, Shape{N, K}),
                                          view(*sw, ElementKind::F32, Shape{N}), {},
                                          view(*y, ElementKind::F32, Shape{M, N})};
  BARACUDA_TRY(run_plan(st, dynamic::SmoothQuantLinearPlan::select(st, ldesc), show, lt));

  auto y_host = y->to_host<float>();
  auto sw_host = sw->to_host<float>();
  if (!y_host) return y_host.error();
  if (!sw_host) return sw_host.error();
  return W8A8Result{std::move(*y_host), (*x_scale)[0], std::move(*sw_host)};
}

struct Check {
  double rel_l1 = 0;     // Σ|y − ref| / Σ|ref|
  double bound_used = 0; // max over elements of |y − ref| / bound
};

// y against the float reference X·Wᵀ. Per element, with x' = x/s and w' = w·s (so Σ x'w' = Σ xw), the int8
// operands are x' and w' rounded to the grids s_a·ℤ and s_w[n]·ℤ: |e_w| ≤ s_w/2 (the weight's own scale,
// no clipping), |e_x| ≤ s_a/2, or |x'| − 127·s_a where a value beyond the calibrated range is clipped. So
//   |y − ref| ≤ Σ_k |x'_k|·|e_w| + |w'_k|·|e_x,k| + |e_x,k|·|e_w| =: bound.
// The f32 roundings (smoothing, 1/s_a, the epilogue's two products) add a few 2⁻²⁴·Σ|x'w'|, and since
// s_w ≥ |w'|/127 the bound is at least Σ|x'w'|/254: they are below 1e-4 of it. 1% covers them.
Check check(const W8A8Result& r, const std::vector<float>& x, const std::vector<float>& w,
            const std::vector<float>& s) {
  Check c;
  double err = 0, norm = 0;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double ref = 0, bound = 0;
      const double ew = r.sw[n] / 2.0;
      for (int64_t k = 0; k < K; ++k) {
        const double xs = std::abs(double(x[m * K + k]) / s[k]), wk = std::abs(double(w[n * K + k]) * s[k]);
        const double ex = std::max(r.x_scale / 2.0, xs - 127.0 * r.x_scale);
        ref += double(x[m * K + k]) * w[n * K + k];
        bound += xs * ew + wk * ex + ex * ew;
      }
      const double e = std::abs(r.y[m * N + n] - ref);
      err += e, norm += std::abs(ref);
      c.bound_used = std::max(c.bound_used, e / (1.01 * bound));
    }
  c.rel_l1 = err / norm;
  return c;
}
}  // namespace

int main(int argc, char** argv) {
  Stream stream = Stream::default_stream();
  if (argc > 1) {
    DeviceKind kind;
    if (!parse_device_kind(argv[1], &kind)) return std::fprintf(stderr, "usage: %s [host|sim|cuda]\n", argv[0]), 2;
    auto st = Stream::for_device(kind);
    if (!st) return std::fprintf(stderr, "%s\n", st.error().to_string().c_str()), 1;
    stream = *st;
  }

  // LLM-like activations: every 37th input channel carries outliers 50× the rest; small weights.
  std::mt19937 g(7);
  std::normal_distribution<float> d(0, 1);
  auto activations = [&](int64_t rows) {
    std::vector<float> v(rows * K);
    for (int64_t i = 0; i < rows * K; ++i) v[i] = d(g) * ((i % K) % 37 == 5 ? 50.0f : 1.0f);
    return v;
  };
  const std::vector<float> x_cal = activations(M_CAL), x = activations(M);
  std::vector<float> w(N * K);
  for (float& v : w) v = 0.05f * d(g);

  // 1. Calibration statistics and the smoothing factors (offline, on the host).
  std::vector<double> max_x(K, 0.0), max_w(K, 0.0);
  for (int64_t i = 0; i < M_CAL * K; ++i) max_x[i % K] = std::max(max_x[i % K], double(std::abs(x_cal[i])));
  for (int64_t i = 0; i < N * K; ++i) max_w[i % K] = std::max(max_w[i % K], double(std::abs(w[i])));
  auto factors = smooth_quant_factors(max_x, max_w, ALPHA);
  if (!factors) return std::fprintf(stderr, "%s\n", factors.error().to_string().c_str()), 1;
  const std::vector<float> s(factors->begin(), factors->end()), ones(K, 1.0f);

  std::printf("device: %s; plans:\n", std::string(to_string(stream.device())).c_str());
  auto smoothed = smooth_quant_linear(stream, x, x_cal, w, s, true);
  auto plain = smooth_quant_linear(stream, x, x_cal, w, ones, false);
  if (!smoothed || !plain)
    return std::fprintf(stderr, "%s\n", (!smoothed ? smoothed : plain).error().to_string().c_str()), 1;

  const Check cs = check(*smoothed, x, w, s), cp = check(*plain, x, w, ones);
  std::printf("W8A8, static per-tensor scale of x, y against the float X*W^T (M=%lld N=%lld K=%lld):\n",
              static_cast<long long>(M), static_cast<long long>(N), static_cast<long long>(K));
  std::printf("  without smoothing:            relative L1 error %.4f, worst element at %.0f%% of its bound\n",
              cp.rel_l1, 100 * cp.bound_used);
  std::printf("  SmoothQuant (alpha = %.1f):    relative L1 error %.4f, worst element at %.0f%% of its bound\n",
              ALPHA, cs.rel_l1, 100 * cs.bound_used);
  const bool ok = cs.bound_used <= 1 && cp.bound_used <= 1 && cs.rel_l1 < cp.rel_l1;
  if (!ok) std::fprintf(stderr, "FAILED: an element outside its error bound, or smoothing did not help\n");
  return ok ? 0 : 1;
}
