// The gated-activation family's host reference, written independently of the device code: its own split of
// x (from split_dim and the layout, by index arithmetic, not the plan's half views), each activation and
// gradient in double with std:: math (not device/activation_math.cuh), and one rounding to the element type
// without the CUDA conversion functions (f32: the IEEE double → float conversion; bf16: rounded to its
// precision in double; f16: the cast family's reference formats). α and limit are first rounded to the
// devices' opmath type (f32, or f64 for f64), so both sides solve the same problem (a clamp bound of 0.1 is
// 0.1f for f16/bf16/f32 data).
#include <algorithm>
#include <array>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "core/reference_formats.hpp"
#include "ops/gated_activation/dispatch.hpp"

namespace baracuda::reference {
namespace {
namespace gated {

// The activations, in double. σ in the form that never overflows; GELU's erf form through erfc, which
// keeps the left tail's relative precision (1 + erf(x/√2) would cancel).
double sigmoid(double x) {
  if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
  const double e = std::exp(x);  // NaN lands here and propagates
  return e / (1.0 + e);
}
double relu(double x) { return std::isnan(x) ? x : (x > 0 ? x : 0.0); }
double silu(double x) { return x * sigmoid(x); }
double silu_derivative(double x) {
  const double s = sigmoid(x);
  return s * (1.0 + x * (1.0 - s));
}
constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
double normal_cdf(double x) { return 0.5 * std::erfc(-x * kInvSqrt2); }
double normal_pdf(double x) { return kInvSqrt2Pi * std::exp(-0.5 * x * x); }
double gelu(double x) { return x * normal_cdf(x); }
double gelu_derivative(double x) { return normal_cdf(x) + x * normal_pdf(x); }
double gelu_tanh_t(double x) { return std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)); }
double gelu_tanh(double x) { return 0.5 * x * (1.0 + gelu_tanh_t(x)); }
double gelu_tanh_derivative(double x) {
  const double t = gelu_tanh_t(x);
  return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * kSqrt2OverPi * (1.0 + 3 * 0.044715 * x * x);
}

struct Params {
  double alpha;
  double limit;
};

// One struct per catalog line (the same names as the device functors, in this namespace):
//   forward(g, l, p) = y;  backward(g, l, dy, p, dg, dl).
struct Glu {
  static double forward(double g, double l, const Params&) { return l * sigmoid(g); }
  static void backward(double g, double l, double dy, const Params&, double& dg, double& dl) {
    const double s = sigmoid(g);
    dl = dy * s;
    dg = dy * l * (s * (1.0 - s));
  }
};
struct ReGlu {
  static double forward(double g, double l, const Params&) { return l * relu(g); }
  static void backward(double g, double l, double dy, const Params&, double& dg, double& dl) {
    dl = dy * relu(g);
    dg = (g > 0 || std::isnan(g)) ? dy * l : 0.0;  // PyTorch: threshold_backward on relu(g)
  }
};
/// y = act(g)·l: dl = dy·act(g), dg = dy·l·act'(g).
template <double (*Act)(double), double (*Derivative)(double)>
struct GatedBy {
  static double forward(double g, double l, const Params&) { return l * Act(g); }
  static void backward(double g, double l, double dy, const Params&, double& dg, double& dl) {
    dl = dy * Act(g);
    dg = dy * l * Derivative(g);
  }
};
using SwiGlu = GatedBy<silu, silu_derivative>;
using GeGlu = GatedBy<gelu, gelu_derivative>;
using GeGluTanh = GatedBy<gelu_tanh, gelu_tanh_derivative>;
// gpt-oss: the gate is clamped from above, the linear half on both sides, then + 1. torch.clamp keeps NaN;
// its gradient passes on the closed interval (NaN compares false, so it gets 0).
struct SwiGluClamped {
  static double gate_clamped(double g, const Params& p) { return std::isnan(g) ? g : std::min(g, p.limit); }
  static double linear_clamped(double l, const Params& p) {
    return std::isnan(l) ? l : std::max(-p.limit, std::min(l, p.limit));
  }
  static double forward(double g, double l, const Params& p) {
    const double c = gate_clamped(g, p);
    return c * sigmoid(p.alpha * c) * (linear_clamped(l, p) + 1.0);
  }
  static void backward(double g, double l, double dy, const Params& p, double& dg, double& dl) {
    const double c = gate_clamped(g, p);
    const double s = sigmoid(p.alpha * c);
    // d/dc [c·σ(αc)] = σ(αc) + αc·σ(αc)·(1 − σ(αc))
    dg = g <= p.limit ? dy * (linear_clamped(l, p) + 1.0) * (s + p.alpha * c * s * (1.0 - s)) : 0.0;
    dl = (-p.limit <= l && l <= p.limit) ? dy * c * s : 0.0;
  }
};

#include "ops/gated_activation/gate_of.inc"  // GateOf<kind>::type, the functors above

}  // namespace gated

/// v rounded once, to nearest even, to `mant` fraction bits with minimum normal exponent `emin` (no
/// overflow handling). Exact arithmetic in double for the 16-bit formats: v / quantum only scales by a power
/// of two, and nearbyint rounds once.
double round_to_precision(double v, int mant, int emin) {
  if (!std::isfinite(v) || v == 0) return v;
  int e2 = 0;
  (void)std::frexp(v, &e2);  // |v| = f·2^e2, f in [0.5, 1)
  const double quantum = std::ldexp(1.0, std::max(e2 - 1, emin) - mant);
  return std::nearbyint(v / quantum) * quantum;
}

template <class T>
double load(const void* base, int64_t offset) {
  const T* p = static_cast<const T*>(base) + offset;
  if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
    return *p;  // exact
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    uint16_t b = 0;
    std::memcpy(&b, p, 2);
    const uint32_t f = static_cast<uint32_t>(b) << 16;  // bf16 is the top half of an f32
    float v;
    std::memcpy(&v, &f, 4);
    return v;
  } else {
    uint64_t b = 0;
    std::memcpy(&b, p, sizeof(T));
    return static_cast<double>(decode(b, format_of<T>()));  // exact
  }
}

/// The one rounding of a result to T (nearest even; overflow to ±inf; NaN stays NaN).
template <class T>
void store(void* base, int64_t offset, double v) {
  void* p = static_cast<void*>(static_cast<T*>(base) + offset);
  if constexpr (std::is_same_v<T, double>) {
    std::memcpy(p, &v, 8);
  } else if constexpr (std::is_same_v<T, float>) {
    const float f = static_cast<float>(v);  // IEEE conversion: rounds to nearest even
    std::memcpy(p, &f, 4);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    // Rounded to bf16's precision (subnormals included) in double, the value is an f32 (or beyond f32's
    // range, where the conversion gives ±inf, as bf16 overflow must); its top 16 bits are the bf16.
    const float f = static_cast<float>(round_to_precision(v, 7, -126));
    uint32_t b = 0;
    std::memcpy(&b, &f, 4);
    const uint16_t h = static_cast<uint16_t>(b >> 16);
    std::memcpy(p, &h, 2);
  } else {
    const uint64_t b = encode(v, format_of<T>());
    std::memcpy(p, &b, sizeof(T));
  }
}

template <class T>
gated::Params params_for(const detail::GatedParams& p) {
  if constexpr (std::is_same_v<T, double>)
    return {p.alpha, p.limit};
  else
    return {static_cast<float>(p.alpha), static_cast<float>(p.limit)};
}

/// Calls f(o, gate_pos, linear_pos) for every index o of the output shape (row-major), with the positions
/// of the gate and linear elements along split_dim `sd` of the input.
template <class F>
void for_each_output(const Shape& out, int sd, GateLayout layout, F&& f) {
  const int64_t n = out.numel();
  const int64_t half = out.dims[sd];
  std::array<int64_t, kMaxRank> idx{};
  for (int64_t i = 0; i < n; ++i) {
    int64_t rem = i;
    for (int d = out.rank - 1; d >= 0; --d) {
      idx[d] = rem % out.dims[d];
      rem /= out.dims[d];
    }
    const int64_t j = idx[sd];
    int64_t gate_pos = 0, linear_pos = 0;
    switch (layout) {
      case GateLayout::SecondHalf: linear_pos = j; gate_pos = half + j; break;
      case GateLayout::FirstHalf: gate_pos = j; linear_pos = half + j; break;
      case GateLayout::Interleaved: gate_pos = 2 * j; linear_pos = 2 * j + 1; break;
    }
    f(idx, gate_pos, linear_pos);
  }
}

/// Element offset of `idx` in `t`, with position `pos` along `sd` (or idx[sd] when pos < 0).
int64_t offset_of(const detail::DynTensorLayout& t, const std::array<int64_t, kMaxRank>& idx, int sd,
                  int64_t pos = -1) {
  int64_t off = 0;
  for (int d = 0; d < t.shape.rank; ++d) off += (d == sd && pos >= 0 ? pos : idx[d]) * t.stride[d];
  return off;
}

/// for_each_output, with the index's gate and linear inputs of `x` loaded: f(idx, gate_pos, linear_pos, g, l).
template <class T, class F>
void for_each_gate_pair(const Shape& out, const ConstDynTensor& x, int sd, GateLayout layout, F&& f) {
  for_each_output(out, sd, layout, [&](const std::array<int64_t, kMaxRank>& idx, int64_t gp, int64_t lp) {
    f(idx, gp, lp, load<T>(x.data, offset_of(x, idx, sd, gp)), load<T>(x.data, offset_of(x, idx, sd, lp)));
  });
}

template <class Gate, class T>
Status host_forward(const detail::ExecContext&, const detail::GatedForwardLaunch& a) {
  const gated::Params p = params_for<T>(a.params);
  const int sd = a.split_dim;
  for_each_gate_pair<T>(a.y.shape, a.x, sd, a.layout, [&](const auto& idx, int64_t, int64_t, double g, double l) {
    store<T>(a.y.data, offset_of(a.y, idx, sd), Gate::forward(g, l, p));
  });
  return {};
}

template <class Gate, class T>
Status host_backward(const detail::ExecContext&, const detail::GatedBackwardLaunch& a) {
  const gated::Params p = params_for<T>(a.params);
  const int sd = a.split_dim;
  const auto grads = [&](const auto& idx, int64_t gp, int64_t lp, double g, double l) {
    const double dy = load<T>(a.dy.data, offset_of(a.dy, idx, sd));
    double dg = 0, dl = 0;
    Gate::backward(g, l, dy, p, dg, dl);
    store<T>(a.dx.data, offset_of(a.dx, idx, sd, gp), dg);  // after the loads: dx may be x
    store<T>(a.dx.data, offset_of(a.dx, idx, sd, lp), dl);
  };
  for_each_gate_pair<T>(a.dy.shape, a.x, sd, a.layout, grads);
  return {};
}

/// The host function of kind K for T.
constexpr auto kForward = []<GatedActivationKind K, class T>(detail::EnumTag<K>, std::type_identity<T>) {
  return &host_forward<typename gated::GateOf<K>::type, T>;
};
constexpr auto kBackward = []<GatedActivationKind K, class T>(detail::EnumTag<K>, std::type_identity<T>) {
  return &host_backward<typename gated::GateOf<K>::type, T>;
};

}  // namespace

BARACUDA_DEFINE_TABLE(detail::GatedForwardTable, gated_forward_table,
    detail::make_gated_table<detail::GatedForwardTable>(kForward))

BARACUDA_DEFINE_TABLE(detail::GatedBackwardTable, gated_backward_table,
    detail::make_gated_table<detail::GatedBackwardTable>(kBackward))

}  // namespace baracuda::reference
