// Device code of the softmax family: each direction is a per-slice statistic by the segmented-reduction
// engine, written to the workspace, then one elementwise pass that reads it through a stride-0 view.
// Forward: the online softmax's (max, Σ exp(z − max)) of z = x·(1/T) + mask; then y = exp(z − max) / Σ or
// (z − max) − log Σ (subtracting the max first keeps y exact to f32 rounding for large logits, where
// exp(z − lse) would lose |lse| · eps). Backward: Σ dy·y (softmax) or Σ dy (log-softmax); then dx.
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <cstdint>

#include "device/convert.cuh"
#include "device/elementwise.cuh"
#include "device/precise_math.cuh"
#include "device/running_stats.cuh"
#include "device/segment_reduce.cuh"
#include "device/shift.cuh"
#include "ops/softmax/dispatch.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace softmax {

/// z of one element: x/T, plus the mask's value when there is one.
template <class T>
__host__ __device__ inline convert::opmath_t<T> logit(T x, convert::opmath_t<T> inv_t) {
  return convert::to_opmath(x) * inv_t;
}

/// The forward statistic: a running (max, Σ exp(z − max)) per slice (the online softmax), stored as the pair.
/// NaN anywhere makes the slice's max NaN; all −inf leaves (−inf, 0).
template <class T, bool kMask>
struct LseOp {
  using M = convert::opmath_t<T>;
  struct Acc {
    M max, sum;
  };
  M inv_t;
  M* stats;  ///< (max, sum) per slice
  __host__ __device__ Acc identity() const { return {static_cast<M>(-INFINITY), M(0)}; }
  __host__ __device__ Acc map(T x) const { return {logit(x, inv_t), M(1)}; }
  __host__ __device__ Acc map(T x, T mask) const { return {logit(x, inv_t) + convert::to_opmath(mask), M(1)}; }
  // An infinite logit makes every y NaN, as PyTorch's exp(inf − inf) in its sum does.
  __host__ __device__ Acc combine(Acc a, Acc b) const {
    return running_stats::online_softmax_merge(a, b, static_cast<M>(NAN));
  }
  __device__ void finish(int64_t s, Acc acc) const {
    stats[2 * s] = acc.max;
    stats[2 * s + 1] = acc.sum;
  }
};

/// y from x (and the mask) and the slice's (max, sum).
template <class T, bool kMask>
struct ForwardOp {
  using M = convert::opmath_t<T>;
  M inv_t;
  bool log;
  __host__ __device__ T apply(M z, M max, M sum) const {
    return convert::from_opmath<T>(log ? (z - max) - pmath::log(sum) : pmath::exp(z - max) / sum);
  }
  __host__ __device__ T operator()(T x, M max, M sum) const { return apply(logit(x, inv_t), max, sum); }
  __host__ __device__ T operator()(T x, T mask, M max, M sum) const {
    return apply(logit(x, inv_t) + convert::to_opmath(mask), max, sum);
  }
};

/// The backward's per-slice sum: Σ dy·y (softmax) or Σ dy (log-softmax), in opmath.
template <class T>
struct DotOp {
  using M = convert::opmath_t<T>;
  using Acc = M;
  bool log;
  M* sums;
  __host__ __device__ Acc identity() const { return M(0); }
  __host__ __device__ Acc map(T dy, T y) const {
    return log ? convert::to_opmath(dy) : convert::to_opmath(dy) * convert::to_opmath(y);
  }
  __host__ __device__ Acc combine(Acc a, Acc b) const { return a + b; }
  __device__ void finish(int64_t s, Acc acc) const { sums[2 * s] = acc; }
};

/// dx from dy, y and the slice's sum.
template <class T>
struct BackwardOp {
  using M = convert::opmath_t<T>;
  M inv_t;
  bool log;
  __host__ __device__ T operator()(T dy, T y, M sum) const {
    const M g = convert::to_opmath(dy), v = convert::to_opmath(y);
    return convert::from_opmath<T>((log ? g - pmath::exp(v) * sum : v * (g - sum)) * inv_t);
  }
};

/// Value `which` of the statistics' pairs as a tensor over the problem's shape: row-major over the other
/// dimensions, stride 0 along `dim`.
template <class M>
ConstDynTensor stats_view(const detail::SoftmaxLaunch& a, int which) {
  ConstDynTensor v;
  v.data = static_cast<M*>(a.stats) + which;
  v.kind = kind_of<M>;
  v.shape = a.in.shape;
  int64_t stride = 2;
  for (int d = a.in.shape.rank - 1; d >= 0; --d) {
    if (d == a.dim) {
      v.stride[d] = 0;
      continue;
    }
    v.stride[d] = stride;
    stride *= a.in.shape.dims[d];
  }
  return v;
}

inline uint32_t kept_mask(const detail::SoftmaxLaunch& a) {
  const uint32_t all = shift::left(1u, static_cast<unsigned>(a.in.shape.rank)) - 1u;
  return all & ~shift::left(1u, static_cast<unsigned>(a.dim));
}

template <class T>
Status forward(const ::baracuda::detail::ExecContext& ctx, const detail::SoftmaxLaunch& a) {
  using M = convert::opmath_t<T>;
  constexpr std::string_view kPlan = "SoftmaxPlan";
  const M inv_t = static_cast<M>(a.inv_temperature);
  const bool log = a.op == SoftmaxOp::LogSoftmax;
  M* const stats = static_cast<M*>(a.stats);
  const ConstDynTensor max = stats_view<M>(a, 0), sum = stats_view<M>(a, 1);
  if (a.aux.data != nullptr) {
    BARACUDA_TRY((segment_reduce::launch_segment_reduce<LseOp<T, true>, T, T>(
        kPlan, ctx, LseOp<T, true>{inv_t, stats}, a.in.shape, kept_mask(a), a.partials, a.in, a.aux)));
    return elementwise::launch_elementwise<ForwardOp<T, true>, T, T, T, M, M>(
        kPlan, ctx, ForwardOp<T, true>{inv_t, log}, a.out, a.in, a.aux, max, sum);
  }
  BARACUDA_TRY((segment_reduce::launch_segment_reduce<LseOp<T, false>, T>(kPlan, ctx, LseOp<T, false>{inv_t, stats},
                                                                          a.in.shape, kept_mask(a), a.partials, a.in)));
  return elementwise::launch_elementwise<ForwardOp<T, false>, T, T, M, M>(kPlan, ctx, ForwardOp<T, false>{inv_t, log},
                                                                          a.out, a.in, max, sum);
}

template <class T>
Status backward(const ::baracuda::detail::ExecContext& ctx, const detail::SoftmaxLaunch& a) {
  using M = convert::opmath_t<T>;
  constexpr std::string_view kPlan = "SoftmaxBackwardPlan";
  const bool log = a.op == SoftmaxOp::LogSoftmax;
  BARACUDA_TRY((segment_reduce::launch_segment_reduce<DotOp<T>, T, T>(
      kPlan, ctx, DotOp<T>{log, static_cast<M*>(a.stats)}, a.in.shape, kept_mask(a), a.partials, a.in, a.aux)));
  return elementwise::launch_elementwise<BackwardOp<T>, T, T, T, M>(
      kPlan, ctx, BackwardOp<T>{static_cast<M>(a.inv_temperature), log}, a.out, a.in, a.aux, stats_view<M>(a, 0));
}

}  // namespace softmax
BARACUDA_DEVICE_NAMESPACE_END
