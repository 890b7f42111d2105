// Device code of the dynamic-range family's first pass: each segment's (min, max) by the segmented
// reduction engine, turned into (scale, zero point) by the convention of dynamic_range_quantize.hpp in
// opmath (f32, or f64 for f64 x).
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <cstdint>
#include <type_traits>

#include "device/convert.cuh"
#include "device/segment_reduce.cuh"
#include "ops/dynamic_range/dispatch.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace dynamic_range {

/// Offsets of a dense parameter index in the scale and zero-point tensors (their own strides).
struct ParamOffsets {
  int rank;
  int64_t sizes[kMaxRank];
  int64_t scale_stride[kMaxRank];
  int64_t zp_stride[kMaxRank];
};

/// (min, max) of a segment with NaN propagation, then its (scale, zero point).
template <class T>
struct RangeOp {
  using M = convert::opmath_t<T>;  // f32, or f64 for f64
  struct Acc {
    M lo, hi;
  };
  M* scale;
  int32_t* zero_point;
  ParamOffsets params;
  bool symmetric;
  int32_t qmin, qmax;

  __host__ __device__ Acc identity() const {
    return {static_cast<M>(INFINITY), static_cast<M>(-INFINITY)};
  }
  __host__ __device__ Acc map(T x) const {
    const M v = convert::to_opmath(x);
    return {v, v};
  }
  /// NaN wins (either side); otherwise the smaller / larger value.
  __host__ __device__ Acc combine(Acc a, Acc b) const {
    return {(a.lo != a.lo || a.lo < b.lo) ? a.lo : b.lo, (a.hi != a.hi || a.hi > b.hi) ? a.hi : b.hi};
  }
  __device__ void finish(int64_t segment, Acc acc) const {
    M s;
    int32_t zp = 0;
    if (acc.lo != acc.lo || acc.hi != acc.hi) {
      s = static_cast<M>(NAN);  // a canonical NaN, whichever element held one
    } else {
      const M lo = acc.lo < M(0) ? acc.lo : M(0);  // the range widened to include 0 (+0, never −0)
      const M hi = acc.hi > M(0) ? acc.hi : M(0);
      if (symmetric) {
        const M amax = -lo > hi ? -lo : hi;
        s = amax / static_cast<M>(qmax);
      } else {
        s = (hi - lo) / static_cast<M>(qmax - qmin);
      }
      if (s == M(0)) {
        s = M(1);  // all-zero or empty segment, or a range whose scale underflows
      } else if (!symmetric && s - s == M(0)) {  // finite s: an infinite one keeps zp = 0
        M r;                                     // half to even; |lo / s| ≤ qmax − qmin
        if constexpr (std::is_same_v<M, double>)
          r = rint(lo / s);
        else
          r = rintf(lo / s);
        const int64_t z = static_cast<int64_t>(qmin) - static_cast<int64_t>(r);
        zp = static_cast<int32_t>(z < qmin ? qmin : (z > qmax ? qmax : z));
      }
    }
    int64_t so = 0, zo = 0, i = segment;
    for (int d = params.rank - 1; d >= 0; --d) {
      const int64_t c = i % params.sizes[d];
      i /= params.sizes[d];
      so += c * params.scale_stride[d];
      zo += c * params.zp_stride[d];
    }
    scale[so] = s;
    zero_point[zo] = zp;
  }
};

template <class T>
Status params_launch(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::DynamicRangeLaunch& a) {
  using M = convert::opmath_t<T>;
  RangeOp<T> op{};
  op.scale = static_cast<M*>(a.scale.data);
  op.zero_point = static_cast<int32_t*>(a.zero_point.data);
  op.params.rank = a.layout.param_shape.rank;
  for (int d = 0; d < op.params.rank; ++d) {
    op.params.sizes[d] = a.layout.param_shape.dims[d];
    op.params.scale_stride[d] = a.scale.stride[d];
    op.params.zp_stride[d] = a.zero_point.stride[d];
  }
  op.symmetric = a.mode == DynamicRangeMode::Symmetric;
  op.qmin = a.qmin;
  op.qmax = a.qmax;
  return segment_reduce::launch_segment_reduce<RangeOp<T>, T>("DynamicRangeQuantizePlan", ctx, op, a.layout.iter,
                                                              a.layout.param_dims_mask(), a.workspace,
                                                              a.layout.data_view(a.x));
}

template <class T>
struct ParamsEntry {
  static constexpr ::baracuda::detail::DynamicRangeParamsFn fn = &params_launch<T>;
};

constexpr ::baracuda::detail::DynamicRangeParamsTable make_params_table() {
  ::baracuda::detail::DynamicRangeParamsTable t{};
  ::baracuda::detail::add_kind_entries<::baracuda::detail::DynamicRangeParamsFn, ParamsEntry>(
      t, ::baracuda::detail::DynamicRangeTypes{});
  return t;
}

}  // namespace dynamic_range
BARACUDA_DEVICE_NAMESPACE_END
