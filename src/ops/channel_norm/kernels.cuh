// Device code of the channel_norm family (GroupNorm, BatchNorm), on the two engines, over the view of
// dispatch.hpp (GroupNorm's x `[N, C, S...]` seen as `[N, G, C/G, S...]`): the segmented reduction for the
// statistics (Welford's merge; BatchNorm's running statistics updated in its finish) and the backward's sums,
// the elementwise engine for y and dx, which read the per-segment and per-channel values through views with
// stride 0 along the other dimensions.
// Backward: (Σg, Σg·(x − mean)) per segment, g = dy·w, turned into dx = p·g + q·x + r (p, q, r in the
// workspace; BatchNorm folds w into them and finishes dweight and dbias in the same reduction), then dx;
// GroupNorm's dweight and dbias by a second reduction over the channels.
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <cstdint>

#include "device/convert.cuh"
#include "device/elementwise.cuh"
#include "device/norm_affine.cuh"
#include "device/precise_math.cuh"
#include "device/running_stats.cuh"
#include "device/segment_reduce.cuh"
#include "device/shift.cuh"
#include "ops/channel_norm/dispatch.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace channel_norm {

/// Where segment s's value lives in a tensor of any strides (s row-major over its shape).
using Offsets = running_stats::IndexOffsets;

inline Offsets offsets_of(const ::baracuda::detail::DynTensorLayout& t) {
  Offsets o{};
  o.rank = t.shape.rank;
  for (int d = 0; d < t.shape.rank; ++d) o.sizes[d] = t.shape.dims[d], o.strides[d] = t.stride[d];
  return o;
}

/// The geometry of one launch: the view's shape, whether GroupNorm's extra dimension is there, its width.
struct View {
  Shape shape;
  bool batch;
  int64_t per_group;  ///< C/G (GroupNorm)
};

inline View view_of(const detail::ChannelNormLaunch& a) {
  const Shape& x = a.x.shape;
  return {::baracuda::detail::channel_norm_view_shape(x, a.batch, a.groups), a.batch,
          a.batch ? 1 : x.dims[1] / a.groups};
}

/// A tensor of x's shape seen over the view.
template <class Tensor>
Tensor full_view(const View& v, const Tensor& t) {
  if (v.batch) return t;
  Tensor r = t;
  r.shape = v.shape;
  r.stride = {};
  r.stride[0] = t.stride[0], r.stride[1] = t.stride[1] * v.per_group, r.stride[2] = t.stride[1];
  for (int d = 2; d < t.shape.rank; ++d) r.stride[d + 1] = t.stride[d];
  return r;
}

/// A `[C]` vector seen over the view (stride 0 along every other dimension).
inline ConstDynTensor channel_view(const View& v, const ConstDynTensor& t) {
  ConstDynTensor r = t;
  r.shape = v.shape;
  r.stride = {};
  r.stride[1] = t.stride[0] * v.per_group;
  if (!v.batch) r.stride[2] = t.stride[0];
  return r;
}

/// A statistic (GroupNorm `[N, G]`, BatchNorm `[C]`, any strides) seen over the view.
inline ConstDynTensor stats_view(const View& v, const ConstDynTensor& t) {
  ConstDynTensor r = t;
  r.shape = v.shape;
  r.stride = {};
  if (v.batch) {
    r.stride[1] = t.stride[0];
  } else {
    r.stride[0] = t.stride[0], r.stride[1] = t.stride[1];
  }
  return r;
}

/// Value `which` of the dense `[segments, 3]` coefficients seen over the view.
template <class M>
ConstDynTensor coefficient_view(const View& v, const void* data, int which) {
  ConstDynTensor r;
  r.data = static_cast<const M*>(data) + which;
  r.kind = kind_of<M>;
  r.shape = v.shape;
  r.stride = {};
  if (v.batch) {
    r.stride[1] = 3;
  } else {
    r.stride[0] = 3 * v.shape.dims[1], r.stride[1] = 3;
  }
  return r;
}

template <class M>
struct Moments {
  M mean, m2;
  int64_t n;
};

/// Per segment: (mean, rstd) from Welford's merge; BatchNorm's running statistics updated when present.
template <class T>
struct StatsOp {
  using M = convert::opmath_t<T>;
  using Acc = Moments<M>;
  M eps, momentum;
  M* mean;
  M* rstd;
  Offsets mean_at, rstd_at;
  T* running_mean;  ///< null: no update
  T* running_var;
  Offsets running_mean_at, running_var_at;
  __host__ __device__ Acc identity() const { return {M(0), M(0), 0}; }
  __host__ __device__ Acc map(T x) const { return {convert::to_opmath(x), M(0), 1}; }
  __host__ __device__ Acc combine(Acc a, Acc b) const { return running_stats::welford_merge(a, b); }
  __device__ void finish(int64_t s, Acc acc) const {
    const M n = static_cast<M>(acc.n);
    mean[mean_at(s)] = acc.mean;
    rstd[rstd_at(s)] = M(1) / pmath::sqrt(acc.m2 / n + eps);
    if (running_mean == nullptr) return;
    T& rm = running_mean[running_mean_at(s)];
    T& rv = running_var[running_var_at(s)];
    const M keep = M(1) - momentum;
    rm = convert::from_opmath<T>(keep * convert::to_opmath(rm) + momentum * acc.mean);
    rv = convert::from_opmath<T>(keep * convert::to_opmath(rv) + momentum * (acc.m2 / (n - M(1))));
  }
};

/// y = (x − center) · scale · w + b: with the saved statistics (S = M: center the mean, scale rstd) or, in
/// inference (S = T, `variance`), the running ones (scale = 1 / sqrt(running_var + eps)).
template <class T, class S>
struct ForwardOp {
  using M = convert::opmath_t<T>;
  M eps;
  bool variance, has_w;
  __host__ __device__ M normalized(T x, S center, S s) const {
    const M v = convert::to_opmath(s);
    return (convert::to_opmath(x) - convert::to_opmath(center)) * (variance ? M(1) / pmath::sqrt(v + eps) : v);
  }
  __host__ __device__ T operator()(T x, S c, S s) const { return norm_affine::apply<T>(normalized(x, c, s)); }
  /// One of w (has_w) or b.
  __host__ __device__ T operator()(T x, S c, S s, T wb) const {
    return norm_affine::apply<T>(normalized(x, c, s), wb, has_w);
  }
  __host__ __device__ T operator()(T x, S c, S s, T w, T b) const {
    return norm_affine::apply<T>(normalized(x, c, s), w, b);
  }
};

/// GroupNorm's backward per (n, g): (Σg, Σg·(x − mean)) with g = dy · w, finished as dx = p·g + q·x + r's
/// coefficients (PyTorch's native_group_norm_backward: p = rstd, q = −rstd³·Σg(x − mean)/m, r = −q·mean −
/// rstd·Σg/m).
template <class T>
struct GroupSumsOp {
  using M = convert::opmath_t<T>;
  struct Acc {
    M g, gc;
  };
  M inv_count;
  const M* mean;
  const M* rstd;
  Offsets mean_at, rstd_at;
  M* coefficients;
  __host__ __device__ Acc identity() const { return {M(0), M(0)}; }
  __host__ __device__ Acc map(T dy, T x, M mu) const {
    const M g = convert::to_opmath(dy);
    return {g, g * (convert::to_opmath(x) - mu)};
  }
  __host__ __device__ Acc map(T dy, T x, T w, M mu) const {
    const M g = convert::to_opmath(dy) * convert::to_opmath(w);
    return {g, g * (convert::to_opmath(x) - mu)};
  }
  __host__ __device__ Acc combine(Acc a, Acc b) const { return {a.g + b.g, a.gc + b.gc}; }
  __device__ void finish(int64_t s, Acc acc) const {
    const M r = rstd[rstd_at(s)], mu = mean[mean_at(s)];
    const M q = -r * r * r * acc.gc * inv_count;
    M* c = coefficients + 3 * s;
    c[0] = r;
    c[1] = q;
    c[2] = -q * mu - r * acc.g * inv_count;
  }
};

/// BatchNorm's backward per channel: (Σdy, Σdy·(x − center)), center the saved mean (training, S = M) or
/// running_mean (inference, S = T); finishes dweight = rstd·Σdy·(x − center), dbias = Σdy and dx's
/// coefficients with w folded in (training: batch_norm_backward's; inference: dx = w·rstd·dy).
template <class T, class S>
struct BatchSumsOp {
  using M = convert::opmath_t<T>;
  struct Acc {
    M dy, dyc;
  };
  bool training;
  M eps, inv_count;
  const S* center;
  const M* rstd;      ///< training
  const T* variance;  ///< inference: running_var
  Offsets center_at, rstd_at;
  const T* weight;  ///< null: w = 1
  int64_t weight_stride;
  T* dweight;
  T* dbias;
  int64_t dweight_stride, dbias_stride;
  M* coefficients;  ///< null: no dx
  __host__ __device__ Acc identity() const { return {M(0), M(0)}; }
  __host__ __device__ Acc map(T dy, T x, S c) const {
    const M g = convert::to_opmath(dy);
    return {g, g * (convert::to_opmath(x) - convert::to_opmath(c))};
  }
  __host__ __device__ Acc combine(Acc a, Acc b) const { return {a.dy + b.dy, a.dyc + b.dyc}; }
  __device__ void finish(int64_t s, Acc acc) const {
    const M r = training ? rstd[rstd_at(s)] : M(1) / pmath::sqrt(convert::to_opmath(variance[rstd_at(s)]) + eps);
    if (dweight != nullptr) dweight[s * dweight_stride] = convert::from_opmath<T>(acc.dyc * r);
    if (dbias != nullptr) dbias[s * dbias_stride] = convert::from_opmath<T>(acc.dy);
    if (coefficients == nullptr) return;
    const M w = weight != nullptr ? convert::to_opmath(weight[s * weight_stride]) : M(1);
    M* c = coefficients + 3 * s;
    c[0] = w * r;
    if (!training) {
      c[1] = M(0), c[2] = M(0);
      return;
    }
    const M mu = convert::to_opmath(center[center_at(s)]);
    const M q = -w * r * r * r * acc.dyc * inv_count;
    c[1] = q;
    c[2] = -q * mu - w * r * acc.dy * inv_count;
  }
};

/// dx = p·g + q·x + r with g = dy (· w).
template <class T>
struct DxOp {
  using M = convert::opmath_t<T>;
  __host__ __device__ T operator()(T dy, T x, M p, M q, M r) const {
    return convert::from_opmath<T>(p * convert::to_opmath(dy) + q * convert::to_opmath(x) + r);
  }
  __host__ __device__ T operator()(T dy, T x, T w, M p, M q, M r) const {
    return convert::from_opmath<T>(p * (convert::to_opmath(dy) * convert::to_opmath(w)) + q * convert::to_opmath(x) +
                                   r);
  }
};

/// GroupNorm's dweight and dbias per channel: (Σ dy·(x − mean)·rstd, Σ dy) over (n, spatial).
template <class T>
struct ChannelSumsOp {
  using M = convert::opmath_t<T>;
  struct Acc {
    M dw, db;
  };
  T* dweight;
  T* dbias;
  int64_t dweight_stride, dbias_stride;
  __host__ __device__ Acc identity() const { return {M(0), M(0)}; }
  __host__ __device__ Acc map(T dy, T x, M mu, M r) const {
    const M g = convert::to_opmath(dy);
    return {g * ((convert::to_opmath(x) - mu) * r), g};
  }
  __host__ __device__ Acc combine(Acc a, Acc b) const { return {a.dw + b.dw, a.db + b.db}; }
  __device__ void finish(int64_t s, Acc acc) const {
    if (dweight != nullptr) dweight[s * dweight_stride] = convert::from_opmath<T>(acc.dw);
    if (dbias != nullptr) dbias[s * dbias_stride] = convert::from_opmath<T>(acc.db);
  }
};

/// y from x, the per-segment center and scale (S: M for the statistics, T for the running ones), w and b.
template <class T, class S>
Status normalize(std::string_view plan, const ::baracuda::detail::ExecContext& ctx, const detail::ChannelNormLaunch& a,
                 const View& v, const ForwardOp<T, S>& op, const ConstDynTensor& center, const ConstDynTensor& scale) {
  const DynTensor y = full_view(v, a.y);
  const ConstDynTensor x = full_view(v, a.x);
  const bool has_w = a.weight.data != nullptr, has_b = a.bias.data != nullptr;
  if (has_w && has_b)
    return elementwise::launch_elementwise<ForwardOp<T, S>, T, T, S, S, T, T>(
        plan, ctx, op, y, x, center, scale, channel_view(v, a.weight), channel_view(v, a.bias));
  if (has_w || has_b)
    return elementwise::launch_elementwise<ForwardOp<T, S>, T, T, S, S, T>(plan, ctx, op, y, x, center, scale,
                                                                           channel_view(v, has_w ? a.weight : a.bias));
  return elementwise::launch_elementwise<ForwardOp<T, S>, T, T, S, S>(plan, ctx, op, y, x, center, scale);
}

template <class T>
Status forward(const ::baracuda::detail::ExecContext& ctx, const detail::ChannelNormLaunch& a) {
  using M = convert::opmath_t<T>;
  const std::string_view plan = a.batch ? "BatchNormPlan" : "GroupNormPlan";
  const View v = view_of(a);
  const bool has_w = a.weight.data != nullptr;
  if (a.batch && !a.training) {
    const ForwardOp<T, T> op{static_cast<M>(a.eps), true, has_w};
    return normalize<T, T>(plan, ctx, a, v, op, stats_view(v, a.running_mean), stats_view(v, a.running_var));
  }
  const bool running = a.running_mean.data != nullptr;
  const StatsOp<T> stats{static_cast<M>(a.eps),
                         static_cast<M>(a.momentum),
                         static_cast<M*>(a.mean.data),
                         static_cast<M*>(a.rstd.data),
                         offsets_of(a.mean),
                         offsets_of(a.rstd),
                         running ? static_cast<T*>(a.running_mean.data) : nullptr,
                         running ? static_cast<T*>(a.running_var.data) : nullptr,
                         offsets_of(a.running_mean),
                         offsets_of(a.running_var)};
  BARACUDA_TRY((segment_reduce::launch_segment_reduce<StatsOp<T>, T>(
      plan, ctx, stats, v.shape, ::baracuda::detail::channel_norm_stats_mask(v.batch), a.partials, full_view(v, a.x))));
  const ForwardOp<T, M> op{M(0), false, has_w};
  return normalize<T, M>(plan, ctx, a, v, op, stats_view(v, a.mean), stats_view(v, a.rstd));
}

/// dx from the coefficients (`with_w`: GroupNorm's g = dy·w; BatchNorm folds w into them).
template <class T>
Status dx_pass(std::string_view plan, const ::baracuda::detail::ExecContext& ctx, const detail::ChannelNormLaunch& a,
               const View& v, bool with_w) {
  using M = convert::opmath_t<T>;
  const ConstDynTensor p = coefficient_view<M>(v, a.coefficients, 0), q = coefficient_view<M>(v, a.coefficients, 1),
                       r = coefficient_view<M>(v, a.coefficients, 2);
  const DynTensor dx = full_view(v, a.dx);
  const ConstDynTensor dy = full_view(v, a.dy), x = full_view(v, a.x);
  if (with_w)
    return elementwise::launch_elementwise<DxOp<T>, T, T, T, T, M, M, M>(plan, ctx, DxOp<T>{}, dx, dy, x,
                                                                         channel_view(v, a.weight), p, q, r);
  return elementwise::launch_elementwise<DxOp<T>, T, T, T, M, M, M>(plan, ctx, DxOp<T>{}, dx, dy, x, p, q, r);
}

template <class T>
Status group_backward(const ::baracuda::detail::ExecContext& ctx, const detail::ChannelNormLaunch& a, const View& v) {
  using M = convert::opmath_t<T>;
  constexpr std::string_view kPlan = "GroupNormBackwardPlan";
  const bool has_w = a.weight.data != nullptr;
  const ConstDynTensor dy = full_view(v, a.dy), x = full_view(v, a.x);
  const ConstDynTensor mean = stats_view(v, a.mean), rstd = stats_view(v, a.rstd);
  if (a.dx.data != nullptr) {
    const int64_t count = v.shape.numel() / (v.shape.dims[0] * v.shape.dims[1]);
    const GroupSumsOp<T> sums{M(1) / static_cast<M>(count),
                              static_cast<const M*>(a.mean.data),
                              static_cast<const M*>(a.rstd.data),
                              offsets_of(a.mean),
                              offsets_of(a.rstd),
                              static_cast<M*>(a.coefficients)};
    const uint32_t mask = ::baracuda::detail::channel_norm_stats_mask(false);
    if (has_w)
      BARACUDA_TRY((segment_reduce::launch_segment_reduce<GroupSumsOp<T>, T, T, T, M>(
          kPlan, ctx, sums, v.shape, mask, a.partials, dy, x, channel_view(v, a.weight), mean)));
    else
      BARACUDA_TRY((segment_reduce::launch_segment_reduce<GroupSumsOp<T>, T, T, M>(kPlan, ctx, sums, v.shape, mask,
                                                                                   a.partials, dy, x, mean)));
    BARACUDA_TRY(dx_pass<T>(kPlan, ctx, a, v, has_w));
  }
  if (a.dweight.data == nullptr && a.dbias.data == nullptr) return {};
  const ChannelSumsOp<T> op{static_cast<T*>(a.dweight.data), static_cast<T*>(a.dbias.data), a.dweight.stride[0],
                            a.dbias.stride[0]};
  return segment_reduce::launch_segment_reduce<ChannelSumsOp<T>, T, T, M, M>(
      kPlan, ctx, op, v.shape, ::baracuda::detail::channel_norm_channel_mask(false), a.partials, dy, x, mean, rstd);
}

template <class T, class S>
Status batch_backward(const ::baracuda::detail::ExecContext& ctx, const detail::ChannelNormLaunch& a, const View& v) {
  using M = convert::opmath_t<T>;
  constexpr std::string_view kPlan = "BatchNormBackwardPlan";
  const ConstDynTensor center = a.training ? ConstDynTensor(a.mean) : ConstDynTensor(a.running_mean);
  const ConstDynTensor scale = a.training ? ConstDynTensor(a.rstd) : ConstDynTensor(a.running_var);
  const int64_t count = v.shape.numel() / v.shape.dims[1];
  const BatchSumsOp<T, S> op{a.training,
                             static_cast<M>(a.eps),
                             M(1) / static_cast<M>(count),
                             static_cast<const S*>(center.data),
                             static_cast<const M*>(a.rstd.data),
                             static_cast<const T*>(a.running_var.data),
                             offsets_of(center),
                             offsets_of(scale),
                             static_cast<const T*>(a.weight.data),
                             a.weight.stride[0],
                             static_cast<T*>(a.dweight.data),
                             static_cast<T*>(a.dbias.data),
                             a.dweight.stride[0],
                             a.dbias.stride[0],
                             a.dx.data != nullptr ? static_cast<M*>(a.coefficients) : nullptr};
  BARACUDA_TRY((segment_reduce::launch_segment_reduce<BatchSumsOp<T, S>, T, T, S>(
      kPlan, ctx, op, v.shape, ::baracuda::detail::channel_norm_stats_mask(true), a.partials, full_view(v, a.dy),
      full_view(v, a.x), stats_view(v, center))));
  if (a.dx.data == nullptr) return {};
  return dx_pass<T>(kPlan, ctx, a, v, false);
}

template <class T>
Status backward(const ::baracuda::detail::ExecContext& ctx, const detail::ChannelNormLaunch& a) {
  using M = convert::opmath_t<T>;
  const View v = view_of(a);
  if (!a.batch) return group_backward<T>(ctx, a, v);
  if (a.training) return batch_backward<T, M>(ctx, a, v);
  return batch_backward<T, T>(ctx, a, v);
}

}  // namespace channel_norm
BARACUDA_DEVICE_NAMESPACE_END
