// The dynamic-range family's host reference for the parameter pass, written independently of kernels.cuh:
// a plain row-major loop collects each segment's (min, max) in double (exact for every input kind), then
// std:: arithmetic follows the conventions of dynamic_range_quantize.hpp. For f32 opmath each operation is
// done in double and rounded to float: double has more than 2·24 + 2 significand bits, so this is exactly
// the correctly rounded f32 operation (the device's single rounding). f64 input uses double throughout.
// PyTorch and Exact share the parameters (NaN propagates, the range widens to 0); Vllm skips NaN, does not
// widen, and writes vLLM's multiplier for the symmetric quantize step when the launch asks for it.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/reference_formats.hpp"
#include "device/host_loop.hpp"
#include "ops/dynamic_range/dispatch.hpp"

namespace baracuda::reference {
namespace {

// Rounds a double to the opmath type M (float: the correctly rounded f32 result of the operation).
template <class M>
double to_m(double v) {
  return static_cast<double>(static_cast<M>(v));
}

/// cvt.rzi.s32 of an integral double: NaN → 0, saturating at the int32 bounds.
int32_t saturate_s32(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 2147483648.0) return std::numeric_limits<int32_t>::max();
  if (v <= -2147483648.0) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(v);
}

/// The parameters of one segment.
struct SegmentParams {
  double s;
  int32_t zp;
  double m;  // Vllm symmetric: the multiplier
};

/// PyTorch / Exact: over the range widened to 0; NaN propagates.
template <class M>
SegmentParams widened_params(const detail::DynamicRangeLaunch& a, double lo, double hi, bool nan) {
  if (nan) return {std::numeric_limits<double>::quiet_NaN(), 0, 0.0};
  lo = std::min(lo, 0.0);
  hi = std::max(hi, 0.0);
  double sc;
  int64_t z = 0;
  if (a.mode == DynamicRangeMode::Symmetric) {
    sc = to_m<M>(std::max(-lo, hi) / a.qmax);
  } else {
    sc = to_m<M>(to_m<M>(hi - lo) / (static_cast<double>(a.qmax) - a.qmin));
  }
  if (sc == 0.0) {
    sc = 1.0;
  } else if (a.mode == DynamicRangeMode::Asymmetric && std::isfinite(sc)) {
    z = static_cast<int64_t>(a.qmin) - static_cast<int64_t>(std::nearbyint(to_m<M>(lo / sc)));
    z = std::clamp<int64_t>(z, a.qmin, a.qmax);
  }
  return {sc, static_cast<int32_t>(z), 0.0};
}

/// Vllm: (lo, hi) over the non-NaN elements, from (FLT_MAX, −FLT_MAX); f32 arithmetic (f64 x is rejected
/// at select). The sign of a zero lo or hi does not reach the results: a zero amax or range is made +0.
SegmentParams vllm_params(const detail::DynamicRangeLaunch& a, double lo, double hi) {
  const double qmax = a.qmax, qmin = a.qmin;
  if (a.mode == DynamicRangeMode::Symmetric) {
    const double amax = std::max({0.0, -lo, hi});  // max |x|, +0 when every element is ±0
    return {to_m<float>(amax / qmax), 0, amax == 0.0 ? 0.0 : to_m<float>(qmax / amax)};
  }
  const double d = to_m<float>(hi - lo) + 0.0;  // + 0.0: a zero difference is +0
  const double s = to_m<float>(d / (qmax - qmin));
  const double z = std::nearbyint(to_m<float>(qmin - to_m<float>(lo / s)));
  return {s, saturate_s32(z), 0.0};
}

template <class T>
Status host_params(const detail::ExecContext&, const detail::DynamicRangeLaunch& a) {
  using M = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const detail::QuantLayout& l = a.layout;
  const bool vllm = a.convention == QuantConvention::Vllm;
  const int64_t segments = l.param_shape.numel();
  // Widened conventions start from 0 (the range always includes 0); Vllm from vLLM's starting values.
  std::vector<double> lo(segments, vllm ? static_cast<double>(FLT_MAX) : 0.0),
      hi(segments, vllm ? -static_cast<double>(FLT_MAX) : 0.0);
  std::vector<bool> nan(segments, false);

  // Segment number of each element: a dense param_shape tensor viewed over the iteration shape.
  DynTensor index;
  index.shape = l.param_shape;
  int64_t n = 1;
  for (int d = l.param_shape.rank - 1; d >= 0; --d) {
    index.stride[d] = n;
    n *= l.param_shape.dims[d];
  }
  const DynTensor seg_view = l.param_view(index);
  const ConstDynTensor x_view = l.data_view(a.x);
  const auto* x = static_cast<const T*>(a.x.data);
  detail::for_each_strided<2>(l.iter, {seg_view.stride.data(), x_view.stride.data()},
                              [&](const std::array<int64_t, 2>& off) {
                                const double v = static_cast<double>(value_of(x[off[1]]));
                                if (std::isnan(v)) {
                                  nan[off[0]] = true;
                                  return;
                                }
                                lo[off[0]] = std::min(lo[off[0]], v);
                                hi[off[0]] = std::max(hi[off[0]], v);
                              });

  auto* scale = static_cast<M*>(a.scale.data);
  auto* zp = static_cast<int32_t*>(a.zero_point.data);
  auto* mult = static_cast<float*>(a.multiplier.data);
  // Segment s (row-major over param_shape) at the parameter tensors' own strides.
  int64_t s = 0;
  detail::for_each_strided<2>(l.param_shape, {a.scale.stride.data(), a.zero_point.stride.data()},
                              [&](const std::array<int64_t, 2>& off) {
                                const SegmentParams p = vllm ? vllm_params(a, lo[s], hi[s])
                                                             : widened_params<M>(a, lo[s], hi[s], nan[s]);
                                scale[off[0]] = static_cast<M>(p.s);
                                zp[off[1]] = p.zp;
                                if (mult != nullptr) mult[s] = static_cast<float>(p.m);
                                ++s;
                              });
  return {};
}

}  // namespace

BARACUDA_DEFINE_KIND_TABLE(detail::DynamicRangeParamsTable, dynamic_range_params_table, detail::DynamicRangeTypes,
                           host_params)

}  // namespace baracuda::reference
