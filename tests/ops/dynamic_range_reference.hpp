// An independent reference for DynamicRangeQuantizePlan, written in the test from the formulas of
// include/baracuda/ops/dynamic_range_quantize.hpp (PyTorch, Exact and Vllm conventions), sharing no code with
// the library: each element's segment comes from the granularity's definition by index arithmetic, and the
// arithmetic is plain C++ in the opmath type M (float for f16/bf16/f32 x, double for f64 x; x86-64 SSE, so
// every float operation is one IEEE f32 operation).
#pragma once

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "baracuda/baracuda.hpp"

namespace baracuda::test::dynamic_range {

/// The expected outputs: q (row-major logical values), scale (the M value as a double) and zero point, per
/// segment in row-major order of the parameter shape.
struct Expected {
  std::vector<int32_t> q;
  std::vector<double> scale;
  std::vector<int32_t> zp;
};

/// The segment of every element of `shape` (row-major), numbered row-major over the parameter shape of `g`
/// (quant_granularity.hpp: per tensor one; per channel the axis' extent; per token every index but the
/// last; per group the axis' extent divided by the group size); the segment count in `*count`.
inline std::vector<int64_t> segments_of(const QuantGranularity& g, const Shape& shape, int64_t* count) {
  const int rank = shape.rank;
  const int axis = g.axis < 0 ? g.axis + rank : g.axis;
  Shape ps = shape;
  switch (g.kind) {
    case QuantGranularity::Kind::PerTensor: ps = Shape{1}; break;
    case QuantGranularity::Kind::PerChannel: ps = Shape{shape[axis]}; break;
    case QuantGranularity::Kind::PerToken: ps.rank = rank - 1; break;
    case QuantGranularity::Kind::PerGroup: ps.dims[axis] = shape[axis] / g.group_size; break;
  }
  *count = ps.numel();
  std::vector<int64_t> seg(static_cast<size_t>(shape.numel()));
  std::vector<int64_t> idx(static_cast<size_t>(rank));
  for (int64_t i = 0; i < shape.numel(); ++i) {
    int64_t rem = i;
    for (int d = rank - 1; d >= 0; --d) idx[d] = rem % shape[d], rem /= shape[d];
    int64_t s = 0;
    switch (g.kind) {
      case QuantGranularity::Kind::PerTensor: break;
      case QuantGranularity::Kind::PerChannel: s = idx[axis]; break;
      case QuantGranularity::Kind::PerToken:
        for (int d = 0; d + 1 < rank; ++d) s = s * shape[d] + idx[d];
        break;
      case QuantGranularity::Kind::PerGroup:
        for (int d = 0; d < rank; ++d) s = s * ps[d] + (d == axis ? idx[d] / g.group_size : idx[d]);
        break;
    }
    seg[static_cast<size_t>(i)] = s;
  }
  return seg;
}

/// −0 orders below +0 (vLLM's reduction order as the plan defines it).
template <class M>
bool below(M a, M b) {
  return a < b || (a == 0 && b == 0 && std::signbit(a) && !std::signbit(b));
}

template <class M>
M round_even(M v) {
  return std::nearbyint(v);  // the default rounding mode: half to even
}

/// int32 of an integral value, saturating, NaN → 0 (cvt.rzi / cvt.rni .sat.s32).
inline int32_t to_s32(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 2147483648.0) return std::numeric_limits<int32_t>::max();
  if (v <= -2147483648.0) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(v);
}

inline int32_t clamp_q(double v, int32_t qmin, int32_t qmax) {
  return v < qmin ? qmin : (v > qmax ? qmax : static_cast<int32_t>(v));
}

/// PyTorch / Exact over one segment's values.
template <class M>
void widened(const std::vector<M>& v, bool symmetric, bool pytorch, int32_t qmin, int32_t qmax, std::vector<int32_t>& q,
             double* scale, int32_t* zero_point) {
  bool nan = false;
  M lo = 0, hi = 0;  // the range widened to include 0
  for (M x : v) {
    if (std::isnan(x)) nan = true;
    else lo = std::min(lo, x), hi = std::max(hi, x);
  }
  M s;
  int32_t zp = 0;
  if (nan) {
    s = std::numeric_limits<M>::quiet_NaN();
  } else {
    s = symmetric ? std::max(-lo, hi) / static_cast<M>(qmax) : (hi - lo) / static_cast<M>(qmax - qmin);
    if (s == 0) {
      s = 1;
    } else if (!symmetric && std::isfinite(s)) {
      const double z = static_cast<double>(qmin) - static_cast<double>(round_even<M>(lo / s));
      zp = clamp_q(z, qmin, qmax);
    }
  }
  for (size_t i = 0; i < v.size(); ++i) {
    const M r = pytorch ? v[i] * static_cast<M>(1.0f / static_cast<float>(s)) : v[i] / s;
    q[i] = clamp_q((std::isnan(r) ? 0.0 : static_cast<double>(round_even<M>(r))) + zp, qmin, qmax);
  }
  *scale = static_cast<double>(s);
  *zero_point = zp;
}

/// Vllm over one segment's values (f32 arithmetic).
inline void vllm(const std::vector<float>& v, bool symmetric, int32_t qmin, int32_t qmax, std::vector<int32_t>& q,
                 double* scale, int32_t* zero_point) {
  if (symmetric) {
    float amax = 0.0f;
    for (float x : v)
      if (!std::isnan(x) && std::fabs(x) > amax) amax = std::fabs(x);
    const float m = amax == 0.0f ? 0.0f : static_cast<float>(qmax) / amax;
    for (size_t i = 0; i < v.size(); ++i) {
      const float r = v[i] * m;
      q[i] = clamp_q(std::isnan(r) ? 0.0 : static_cast<double>(round_even(r)), qmin, qmax);
    }
    *scale = amax / static_cast<float>(qmax);
    *zero_point = 0;
    return;
  }
  float lo = FLT_MAX, hi = -FLT_MAX;
  for (float x : v) {
    if (std::isnan(x)) continue;
    if (below(x, lo)) lo = x;
    if (below(hi, x)) hi = x;
  }
  const float s = (hi - lo) / static_cast<float>(qmax - qmin);
  const int32_t zp = to_s32(round_even(static_cast<float>(qmin) - lo / s));
  const float inv = 1.0f / s;
  for (size_t i = 0; i < v.size(); ++i) {
    const float r = v[i] * inv;
    const int32_t t = to_s32(std::isnan(r) ? 0.0 : static_cast<double>(round_even(r)));
    const auto sum = static_cast<int32_t>(static_cast<uint32_t>(t) + static_cast<uint32_t>(zp));
    q[i] = clamp_q(sum, qmin, qmax);
  }
  *scale = s;
  *zero_point = zp;
}

/// The expected outputs of `d` (range [qmin, qmax]) over x's row-major values (exact in d.element).
inline Expected reference(const DynamicRangeQuantizeDescriptor& d, const std::vector<double>& x, int32_t qmin,
                          int32_t qmax) {
  int64_t count = 0;
  const std::vector<int64_t> seg = segments_of(d.granularity, d.shape, &count);
  std::vector<std::vector<size_t>> members(static_cast<size_t>(count));
  for (size_t i = 0; i < seg.size(); ++i) members[static_cast<size_t>(seg[i])].push_back(i);
  Expected e{std::vector<int32_t>(x.size()), std::vector<double>(static_cast<size_t>(count)),
             std::vector<int32_t>(static_cast<size_t>(count))};
  const bool symmetric = d.mode == DynamicRangeMode::Symmetric;
  for (size_t s = 0; s < members.size(); ++s) {
    std::vector<int32_t> q(members[s].size());
    if (d.element == ElementKind::F64) {
      std::vector<double> v;
      for (size_t i : members[s]) v.push_back(x[i]);
      widened<double>(v, symmetric, d.convention == QuantConvention::PyTorch, qmin, qmax, q, &e.scale[s], &e.zp[s]);
    } else {
      std::vector<float> v;
      for (size_t i : members[s]) v.push_back(static_cast<float>(x[i]));
      if (d.convention == QuantConvention::Vllm)
        vllm(v, symmetric, qmin, qmax, q, &e.scale[s], &e.zp[s]);
      else
        widened<float>(v, symmetric, d.convention == QuantConvention::PyTorch, qmin, qmax, q, &e.scale[s], &e.zp[s]);
    }
    for (size_t j = 0; j < q.size(); ++j) e.q[members[s][j]] = q[j];
  }
  return e;
}

}  // namespace baracuda::test::dynamic_range
