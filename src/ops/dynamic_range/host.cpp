// The dynamic-range family's host reference for the parameter pass, written independently of kernels.cuh:
// a plain row-major loop collects each segment's (min, max) in double (exact for every input kind), then
// std:: arithmetic follows the convention of dynamic_range_quantize.hpp. For f32 opmath each operation is
// done in double and rounded to float: double has more than 2·24 + 2 significand bits, so this is exactly
// the correctly rounded f32 operation (the device's single rounding). f64 input uses double throughout.
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

template <class T>
Status host_params(const detail::ExecContext&, const detail::DynamicRangeLaunch& a) {
  using M = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const detail::QuantLayout& l = a.layout;
  const int64_t segments = l.param_shape.numel();
  std::vector<double> lo(segments, 0.0), hi(segments, 0.0);  // 0: the range always includes 0
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
  const DynTensor x_view = l.data_view(a.x);
  const auto* x = static_cast<const T*>(a.x.data);
  detail::for_each_strided<2>(l.iter, {seg_view.stride.data(), x_view.stride.data()},
                              [&](const std::array<int64_t, 2>& off) {
                                const double v = static_cast<double>(value_of(x[off[1]]));
                                if (std::isnan(v)) nan[off[0]] = true;
                                lo[off[0]] = std::min(lo[off[0]], v);
                                hi[off[0]] = std::max(hi[off[0]], v);
                              });

  auto* scale = static_cast<M*>(a.scale.data);
  auto* zp = static_cast<int32_t*>(a.zero_point.data);
  for (int64_t s = 0; s < segments; ++s) {
    double sc;
    int64_t z = 0;
    if (nan[s]) {
      sc = std::numeric_limits<double>::quiet_NaN();
    } else {
      if (a.mode == DynamicRangeMode::Symmetric) {
        sc = to_m<M>(std::max(-lo[s], hi[s]) / a.qmax);
      } else {
        sc = to_m<M>(to_m<M>(hi[s] - lo[s]) / (static_cast<double>(a.qmax) - a.qmin));
      }
      if (sc == 0.0) {
        sc = 1.0;
      } else if (a.mode == DynamicRangeMode::Asymmetric && std::isfinite(sc)) {
        z = static_cast<int64_t>(a.qmin) - static_cast<int64_t>(std::nearbyint(to_m<M>(lo[s] / sc)));
        z = std::clamp<int64_t>(z, a.qmin, a.qmax);
      }
    }
    // The parameter tensors' own strides.
    int64_t so = 0, zo = 0, i = s;
    for (int d = l.param_shape.rank - 1; d >= 0; --d) {
      const int64_t c = i % l.param_shape.dims[d];
      i /= l.param_shape.dims[d];
      so += c * a.scale.stride[d];
      zo += c * a.zero_point.stride[d];
    }
    scale[so] = static_cast<M>(sc);
    zp[zo] = static_cast<int32_t>(z);
  }
  return {};
}

template <class T>
struct HostParamsEntry {
  static constexpr detail::DynamicRangeParamsFn fn = &host_params<T>;
};

}  // namespace

const detail::DynamicRangeParamsTable& dynamic_range_params_table() {
  static constexpr detail::DynamicRangeParamsTable table = [] {
    detail::DynamicRangeParamsTable t{};
    detail::add_kind_entries<detail::DynamicRangeParamsFn, HostParamsEntry>(t, detail::DynamicRangeTypes{});
    return t;
  }();
  return table;
}

}  // namespace baracuda::reference
