// The quantize family's host reference, written independently of the device code: it walks the logical
// shape by index arithmetic, finds each element's parameters from the granularity directly (not through
// the broadcast views of param_views.hpp), reads and writes packed nibbles by flat index, computes in the
// opmath type with std:: math (the convention fixes f32 arithmetic for f16/bf16/f32 data), and rounds
// results once with the reference formats of core/reference_formats.hpp.
#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/reference_formats.hpp"
#include "ops/quantize/tables.hpp"

namespace baracuda::reference {
namespace {

using detail::QuantizeLaunch;
using Index = std::array<int64_t, kMaxRank>;

template <class T>
using Opmath = std::conditional_t<std::is_same_v<T, double>, double, float>;

/// Calls f(idx) for every index of `shape`, row-major.
template <class F>
void for_each_index(const Shape& shape, F&& f) {
  const int64_t n = shape.numel();
  Index idx{};
  for (int64_t i = 0; i < n; ++i) {
    int64_t rem = i;
    for (int d = shape.rank - 1; d >= 0; --d) {
      idx[d] = rem % shape.dims[d];
      rem /= shape.dims[d];
    }
    f(idx);
  }
}

int64_t offset_of(const detail::DynTensorLayout& t, const Index& idx) {
  int64_t o = 0;
  for (int d = 0; d < t.shape.rank; ++d) o += idx[d] * t.stride[d];
  return o;
}

int64_t flat_of(const Shape& s, const Index& idx) {
  int64_t f = 0;
  for (int d = 0; d < s.rank; ++d) f = f * s.dims[d] + idx[d];
  return f;
}

/// The element offset, in parameter tensor `p`, of the parameters of data element `idx`.
int64_t param_offset(const QuantizeLaunch& a, const detail::DynTensorLayout& p, const Index& idx) {
  const QuantGranularity& g = a.layout.granularity;
  const int rank = a.layout.shape.rank;
  const int axis = g.axis < 0 ? g.axis + rank : g.axis;
  switch (g.kind) {
    case QuantGranularity::Kind::PerTensor: return 0;
    case QuantGranularity::Kind::PerChannel: return idx[axis] * p.stride[0];
    case QuantGranularity::Kind::PerToken: {
      int64_t o = 0;
      for (int d = 0; d + 1 < rank; ++d) o += idx[d] * p.stride[d];
      return o;
    }
    case QuantGranularity::Kind::PerGroup: {
      int64_t o = 0;
      for (int d = 0; d < rank; ++d) o += (d == axis ? idx[d] / g.group_size : idx[d]) * p.stride[d];
      return o;
    }
  }
  return 0;
}

/// Element `offset` of a read-only view, or of a writable one.
template <class T>
const T* at(const ConstDynTensor& t, int64_t offset) {
  return static_cast<const T*>(t.data) + offset;
}
template <class T>
T* at(const DynTensor& t, int64_t offset) {
  return static_cast<T*>(t.data) + offset;
}

/// Reads data element idx of a float tensor as its opmath type (exact).
template <class T>
Opmath<T> load(const ConstDynTensor& t, const Index& idx) {
  return static_cast<Opmath<T>>(value_of<T>(*at<T>(t, offset_of(t, idx))));
}
template <class T>
void store_value(const DynTensor& t, const Index& idx, long double v) {
  *at<T>(t, offset_of(t, idx)) = store<T>(v);
}

/// The quantized value of element idx (packed: the nibble of its flat index; even index low).
template <class TQ>
int32_t load_q(const ConstDynTensor& q, const Index& idx) {
  if constexpr (std::is_same_v<TQ, int4x2_t> || std::is_same_v<TQ, uint4x2_t>) {
    const int64_t f = flat_of(q.shape, idx);
    const uint8_t byte = static_cast<const uint8_t*>(q.data)[f / 2];
    int32_t n = (f % 2 == 0) ? (byte & 0xF) : (byte >> 4);
    if (std::is_same_v<TQ, int4x2_t> && n >= 8) n -= 16;
    return n;
  } else {
    return static_cast<int32_t>(*at<TQ>(q, offset_of(q, idx)));
  }
}
template <class TQ>
void store_q(const DynTensor& q, const Index& idx, int32_t v) {
  if constexpr (std::is_same_v<TQ, int4x2_t> || std::is_same_v<TQ, uint4x2_t>) {
    const int64_t f = flat_of(q.shape, idx);
    uint8_t& byte = static_cast<uint8_t*>(q.data)[f / 2];
    const uint8_t nib = static_cast<uint8_t>(v) & 0xF;
    byte = (f % 2 == 0) ? static_cast<uint8_t>((byte & 0xF0) | nib) : static_cast<uint8_t>((byte & 0x0F) | (nib << 4));
  } else {
    *at<TQ>(q, offset_of(q, idx)) = static_cast<TQ>(v);
  }
}

bool pytorch(const QuantizeLaunch& a) { return a.convention == QuantConvention::PyTorch && !a.scale_is_multiplier; }
bool vllm(const QuantizeLaunch& a) { return a.convention == QuantConvention::Vllm && !a.scale_is_multiplier; }
bool per_tensor(const QuantizeLaunch& a) { return a.layout.granularity.kind == QuantGranularity::Kind::PerTensor; }

/// The parameters of element idx: scale and zero point in opmath (the learnable zero point rounded as the
/// forward rounds it: nearbyint, then clamp; NaN counts as 0; PyTorch's per-tensor forward reads it as f32
/// first, `zero_point[0].item<float>()`).
template <class T, class ZP>
struct Params {
  Opmath<T> s;
  Opmath<T> zp;
};
template <class T, class ZP>
Params<T, ZP> params(const QuantizeLaunch& a, const Index& idx) {
  using M = Opmath<T>;
  const M s = *at<M>(a.t.scale, param_offset(a, a.t.scale, idx));
  ZP z = *at<ZP>(a.t.zero_point, param_offset(a, a.t.zero_point, idx));
  if constexpr (std::is_same_v<ZP, int32_t>) {
    return {s, static_cast<M>(z)};
  } else {
    if (pytorch(a) && per_tensor(a)) z = static_cast<M>(static_cast<float>(z));
    const M r = std::isnan(z) ? M(0) : std::nearbyint(z);
    return {s, std::fmin(std::fmax(r, static_cast<M>(a.qmin)), static_cast<M>(a.qmax))};
  }
}

/// a · b rounded on its own: std::fma with −0 as the addend is the rounded product, and no compiler
/// contracts it with the sum it feeds (the devices' `mul_rn`).
template <class M>
M product(M a, M b) {
  return std::fma(a, b, M(-0.0));
}

/// PyTorch's kernels take the scale as f32 (`float inv_scale = 1.0f / scale`): its reciprocal rounded to
/// f32, and the scale as they use it (rounded to f32 for f64 data).
template <class M>
M reciprocal_f32(M s) {
  return static_cast<M>(1.0f / static_cast<float>(s));
}
template <class M>
M scale_used(M s, const QuantizeLaunch& a) {
  return pytorch(a) ? static_cast<M>(static_cast<float>(s)) : s;
}

/// x against the scale operand: x / s (Exact), x · f32(1/s) (PyTorch, vLLM's azp kernel), or x · m (a
/// multiplier operand).
template <class M>
M scaled(M x, M s, const QuantizeLaunch& a) {
  if (a.scale_is_multiplier) return x * s;
  if (pytorch(a) || vllm(a)) return x * reciprocal_f32(s);
  return x / s;
}

/// nearbyint(scaled) + zp before clamping; a NaN quotient counts as 0.
template <class M>
M unclamped(M x, M s, M zp, const QuantizeLaunch& a) {
  const M r = scaled(x, s, a);
  return (std::isnan(r) ? M(0) : std::nearbyint(r)) + zp;
}
template <class M>
int32_t clamped(M v, const QuantizeLaunch& a) {
  if (v < static_cast<M>(a.qmin)) return a.qmin;
  if (v > static_cast<M>(a.qmax)) return a.qmax;
  return static_cast<int32_t>(v);
}
template <class M>
bool inside(M v, const QuantizeLaunch& a) {
  return v >= static_cast<M>(a.qmin) && v <= static_cast<M>(a.qmax);
}

/// vLLM's azp arithmetic: the rounded value saturated to int32 (NaN → 0, as cvt.rni.sat.s32.f32), plus the
/// zero point with 32-bit wrap-around, saturated to [qmin, qmax].
template <class M>
int32_t vllm_value(M x, M s, int32_t zp, const QuantizeLaunch& a) {
  const M r = scaled(x, s, a);
  int64_t t = 0;
  if (!std::isnan(r)) {
    const M v = std::nearbyint(r);
    t = v >= M(2147483648.0) ? INT32_MAX : (v <= M(-2147483648.0) ? INT32_MIN : static_cast<int64_t>(v));
  }
  const int64_t wrapped = static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>((t + zp) & 0xFFFFFFFF)));
  return static_cast<int32_t>(std::clamp<int64_t>(wrapped, a.qmin, a.qmax));
}

template <class T, class TQ>
Status quantize(const detail::ExecContext&, const QuantizeLaunch& a) {
  for_each_index(a.layout.shape, [&](const Index& idx) {
    const auto p = params<T, int32_t>(a, idx);
    const auto x = load<T>(a.t.x, idx);
    const int32_t zp = *at<int32_t>(a.t.zero_point, param_offset(a, a.t.zero_point, idx));  // exact: |zp| may pass 2^24
    store_q<TQ>(a.t.y, idx, vllm(a) ? vllm_value(x, p.s, zp, a) : clamped(unclamped(x, p.s, p.zp, a), a));
  });
  return {};
}

template <class T, class TQ>
Status dequantize(const detail::ExecContext&, const QuantizeLaunch& a) {
  using M = Opmath<T>;
  for_each_index(a.layout.shape, [&](const Index& idx) {
    const M s = *at<M>(a.t.scale, param_offset(a, a.t.scale, idx));
    const int64_t zp = *at<int32_t>(a.t.zero_point, param_offset(a, a.t.zero_point, idx));
    // q − zp exactly in 64 bits (a vLLM zero point can be any int32), then one rounding to M
    const M v = static_cast<M>(load_q<TQ>(a.t.x, idx) - zp) * s;
    store_value<T>(a.t.y, idx, v);
  });
  return {};
}

template <class T>
Status dequantize_backward(const detail::ExecContext&, const QuantizeLaunch& a) {
  using M = Opmath<T>;
  for_each_index(a.layout.shape, [&](const Index& idx) {
    const M s = *at<M>(a.t.scale, param_offset(a, a.t.scale, idx));
    store_value<T>(a.t.dx, idx, static_cast<M>(load<T>(a.t.dy, idx) * s));
  });
  return {};
}

/// The straight-through estimators: dx = dy where x quantizes inside the range, 0 outside; the quantize
/// backward divides dy by s first (`kDivideByScale`), the fake-quantize one does not.
template <class T, bool kDivideByScale>
Status straight_through(const detail::ExecContext&, const QuantizeLaunch& a) {
  using M = Opmath<T>;
  for_each_index(a.layout.shape, [&](const Index& idx) {
    const auto p = params<T, int32_t>(a, idx);
    const M mask = inside(unclamped(load<T>(a.t.x, idx), p.s, p.zp, a), a) ? M(1) : M(0);
    const M dy = load<T>(a.t.dy, idx);
    store_value<T>(a.t.dx, idx, (kDivideByScale ? static_cast<M>(dy / p.s) : dy) * mask);
  });
  return {};
}

template <class T, class ZP>
Status fake_quantize(const detail::ExecContext&, const QuantizeLaunch& a) {
  using M = Opmath<T>;
  for_each_index(a.layout.shape, [&](const Index& idx) {
    const auto p = params<T, ZP>(a, idx);
    const int32_t q = clamped(unclamped(load<T>(a.t.x, idx), p.s, p.zp, a), a);
    store_value<T>(a.t.y, idx, static_cast<M>((static_cast<M>(q) - p.zp) * scale_used(p.s, a)));
  });
  return {};
}

/// The learnable backward's view of element idx: its scale, the zero point zp' the backward uses and the
/// unclamped v. Exact: the forward's (zp' = clamp(nearbyint(zp)), v = nearbyint(x / s) + zp'). PyTorch:
/// its backward kernels' — per tensor zp' = trunc(clamp(f32(zp) + 0.5f)) in f32 (`_get_zero_point_from_tensor`
/// with is_forward false), otherwise clamp(nearbyint(zp)); v = nearbyint(fma(x, f32(1/s), zp')): zp' added
/// before rounding, to the unrounded product (PyTorch's x86-64 build contracts `zp' + x * inv` into an fma).
/// A NaN zero point counts as 0, a NaN v as zp'.
template <class T>
struct LearnablePoint {
  Opmath<T> s, zp, v;
};
template <class T>
LearnablePoint<T> learnable_point(const QuantizeLaunch& a, const Index& idx) {
  using M = Opmath<T>;
  const M x = load<T>(a.t.x, idx);
  if (!pytorch(a)) {
    const auto p = params<T, M>(a, idx);
    return {p.s, p.zp, unclamped(x, p.s, p.zp, a)};
  }
  const M s = *at<M>(a.t.scale, param_offset(a, a.t.scale, idx));
  const M z = *at<M>(a.t.zero_point, param_offset(a, a.t.zero_point, idx));
  const M lo = static_cast<M>(a.qmin), hi = static_cast<M>(a.qmax);
  M zp = 0;
  if (!std::isnan(z)) {
    if (per_tensor(a))
      zp = std::trunc(std::fmin(std::fmax(static_cast<float>(z) + 0.5f, static_cast<float>(lo)),
                                static_cast<float>(hi)));
    else
      zp = std::fmin(std::fmax(std::nearbyint(z), lo), hi);
  }
  const M r = std::fma(x, reciprocal_f32(s), zp);
  return {s, zp, std::isnan(r) ? zp : std::nearbyint(r)};
}

template <class T>
Status learnable_backward_dx(const detail::ExecContext&, const QuantizeLaunch& a) {
  using M = Opmath<T>;
  for_each_index(a.layout.shape, [&](const Index& idx) {
    const M mask = inside(learnable_point<T>(a, idx).v, a) ? M(1) : M(0);
    store_value<T>(a.t.dx, idx, load<T>(a.t.dy, idx) * mask);
  });
  return {};
}

/// dscale and dzp of the learnable backward: per-element terms in opmath (as the devices compute them),
/// summed per parameter in long double and rounded once to the scale's type. Exact: grad_factor multiplies
/// each sum. PyTorch: its kernels' expressions left to right, grad_factor (as f32) on each term, y − x
/// fused as its x86-64 build computes it (fma(v − zp', s, −x)).
template <class T>
Status learnable_backward_grads(const detail::ExecContext&, const QuantizeLaunch& a) {
  using M = Opmath<T>;
  const Shape& ps = a.layout.param_shape;
  std::vector<long double> ds(static_cast<size_t>(ps.numel()), 0.0L), dz(ds.size(), 0.0L);
  // The row-major parameter number of element idx, from the same offsets a dense param tensor would have.
  DynTensor dense_params = DynTensor::dense(nullptr, a.t.scale.kind, ps);
  const M lo = static_cast<M>(a.qmin), hi = static_cast<M>(a.qmax);
  const bool torch = pytorch(a);
  const M gf = static_cast<M>(static_cast<float>(a.grad_factor));
  for_each_index(a.layout.shape, [&](const Index& idx) {
    const LearnablePoint<T> p = learnable_point<T>(a, idx);
    const M x = load<T>(a.t.x, idx), dy = load<T>(a.t.dy, idx);
    M gs = 0, gz = 0;
    if (torch) {
      const M sc = scale_used(p.s, a);
      if (p.v < lo || p.v > hi) {
        gs = dy * ((p.v < lo ? lo : hi) - p.zp) * gf;
        gz = dy * M(-1) * sc * gf;
      } else {
        gs = dy * std::fma(p.v - p.zp, sc, -x) * reciprocal_f32(p.s) * gf;
      }
    } else if (p.v < lo || p.v > hi) {
      gs = dy * ((p.v < lo ? lo : hi) - p.zp);
      gz = -dy * p.s;
    } else {
      gs = dy * (product(p.v - p.zp, p.s) - x) / p.s;
    }
    const auto k = static_cast<size_t>(param_offset(a, dense_params, idx));
    ds[k] += gs;
    dz[k] += gz;
  });
  const long double factor = torch ? 1.0L : static_cast<long double>(a.grad_factor);
  Index pidx{};
  for_each_index(ps, [&](const Index& i) {
    pidx = i;
    const auto k = static_cast<size_t>(flat_of(ps, pidx));
    *at<M>(a.t.dscale, offset_of(a.t.dscale, pidx)) = static_cast<M>(ds[k] * factor);
    *at<M>(a.t.dzero_point, offset_of(a.t.dzero_point, pidx)) = static_cast<M>(dz[k] * factor);
  });
  return {};
}

detail::QuantizeTables make_tables() {
  detail::QuantizeTables t{};
  for_each_type(detail::QuantizeFloatTypes{}, [&]<class T>() {
    using M = Opmath<T>;
    const size_t e = detail::kind_index(kind_of<T>);
    t.quantize_backward[e] = &straight_through<T, true>;
    t.dequantize_backward[e] = &dequantize_backward<T>;
    t.fake_quantize[e] = &fake_quantize<T, int32_t>;
    t.fake_quantize_backward[e] = &straight_through<T, false>;
    t.learnable[e] = &fake_quantize<T, M>;
    t.learnable_backward_dx[e] = &learnable_backward_dx<T>;
    t.learnable_backward_grads[e] = &learnable_backward_grads<T>;
    for_each_type(detail::QuantizedTypes{}, [&]<class TQ>() {
      const size_t q = detail::kind_index(kind_of<TQ>);
      t.quantize[e][q] = &quantize<T, TQ>;
      t.dequantize[e][q] = &dequantize<T, TQ>;
    });
  });
  return t;
}

}  // namespace

const detail::QuantizeTables& quantize_tables() {
  static const detail::QuantizeTables tables = make_tables();
  return tables;
}

}  // namespace baracuda::reference
