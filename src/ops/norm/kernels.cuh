// Device code of the norm family, on the two engines: the segmented reduction for every per-row statistic
// and per-column sum, the elementwise engine for y and dx, which read the per-row values through views with
// stride 0 along the last dimension (and w, b through views with stride 0 along every other).
// Forward (the composed path; row_kernel.cuh is the single-pass one): h = x + residual when fused, then
// (mean, rstd) per row — Welford's (n, mean, M2) for LayerNorm, Σx² for RmsNorm — then y.
// Backward (the composed path; backward_row_kernel.cuh is the single-pass dx): (Σg, Σg·x) per row with
// g = dy·w, turned into dx = p·g + q·x + r per row (p, q, r in the workspace), then dx; dweight and dbias as
// sums over the rows (column_sums, on both paths).
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
#include "ops/norm/dispatch.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace norm {

/// Where row s's statistic lives in a `[rows]` tensor of any strides (s row-major over x's other dimensions).
using RowOffsets = running_stats::IndexOffsets;

inline RowOffsets row_offsets(const ConstDynTensor& t) {
  RowOffsets o{};
  o.rank = t.shape.rank;
  for (int d = 0; d < t.shape.rank; ++d) o.sizes[d] = t.shape.dims[d], o.strides[d] = t.stride[d];
  return o;
}

/// Welford's running statistics (RmsNorm uses only m2, as Σx²).
template <class M>
struct Moments {
  M mean, m2;
  int64_t n;
};

/// Per row: LayerNorm's (mean, rstd) from Welford's merge, or RmsNorm's rstd from Σx².
template <class T>
struct RowStatsOp {
  using M = convert::opmath_t<T>;
  using Acc = Moments<M>;
  bool layer;
  M eps, inv_h;
  M* mean;
  M* rstd;
  RowOffsets mean_at, rstd_at;
  __host__ __device__ Acc identity() const { return {M(0), M(0), 0}; }
  __host__ __device__ Acc map(T x) const {
    const M v = convert::to_opmath(x);
    return layer ? Acc{v, M(0), 1} : Acc{M(0), v * v, 1};
  }
  __host__ __device__ Acc combine(Acc a, Acc b) const {
    if (!layer) return {M(0), a.m2 + b.m2, a.n + b.n};
    return running_stats::welford_merge(a, b);
  }
  __device__ void finish(int64_t s, Acc acc) const {
    if (layer) mean[mean_at(s)] = acc.mean;
    rstd[rstd_at(s)] = M(1) / pmath::sqrt(acc.m2 * inv_h + eps);
  }
};

/// h = x + residual, rounded once to T (BinaryPlan's add).
template <class T>
struct ResidualAddOp {
  __host__ __device__ T operator()(T x, T r) const {
    return convert::from_opmath<T>(convert::to_opmath(x) + convert::to_opmath(r));
  }
};

/// y = ((x − mean) · rstd) · w + b (RmsNorm: x · rstd · w); the optional w and b arrive as extra inputs.
template <class T>
struct ForwardOp {
  using M = convert::opmath_t<T>;
  bool layer, has_w;
  __host__ __device__ M normalized(T x, M mean, M rstd) const {
    return (layer ? convert::to_opmath(x) - mean : convert::to_opmath(x)) * rstd;
  }
  __host__ __device__ T operator()(T x, M mean, M rstd) const {
    return norm_affine::apply<T>(normalized(x, mean, rstd));
  }
  /// One of w (has_w) or b.
  __host__ __device__ T operator()(T x, M mean, M rstd, T wb) const {
    return norm_affine::apply<T>(normalized(x, mean, rstd), wb, has_w);
  }
  __host__ __device__ T operator()(T x, M mean, M rstd, T w, T b) const {
    return norm_affine::apply<T>(normalized(x, mean, rstd), w, b);
  }
};

/// dx = p·g + q·x + r's coefficients of one row, from its (Σg, Σg·x), mean (LayerNorm) and rstd.
template <class M>
struct DxCoefficients {
  M p, q, r;
};
template <class M>
__host__ __device__ DxCoefficients<M> dx_coefficients(bool layer, M mu, M r, M sum_g, M sum_gx, M inv_h) {
  if (layer) {  // dx = r·(g − mean(g) − x̂·mean(g·x̂)), x̂ = (x − μ)·r, mean(g·x̂) = r·(mean(g·x) − μ·mean(g))
    const M k = r * (sum_gx - mu * sum_g) * inv_h;
    return {r, -r * r * k, r * r * k * mu - r * sum_g * inv_h};
  }
  return {r, -r * r * r * sum_gx * inv_h, M(0)};  // dx = r·g − r³·mean(g·x)·x
}

/// Per row of the backward: (Σg, Σg·x) with g = dy · w, finished as dx = p·g + q·x + r's coefficients.
template <class T>
struct RowSumsOp {
  using M = convert::opmath_t<T>;
  struct Acc {
    M g, gx;
  };
  bool layer;
  M inv_h;
  const M* mean;
  const M* rstd;
  RowOffsets mean_at, rstd_at;
  M* coefficients;  ///< (p, q, r) per row
  __host__ __device__ Acc identity() const { return {M(0), M(0)}; }
  __host__ __device__ Acc map(T dy, T x) const {
    const M g = convert::to_opmath(dy);
    return {g, g * convert::to_opmath(x)};
  }
  __host__ __device__ Acc map(T dy, T x, T w) const {
    const M g = convert::to_opmath(dy) * convert::to_opmath(w);
    return {g, g * convert::to_opmath(x)};
  }
  __host__ __device__ Acc combine(Acc a, Acc b) const { return {a.g + b.g, a.gx + b.gx}; }
  __device__ void finish(int64_t s, Acc acc) const {
    const M mu = layer ? mean[mean_at(s)] : M(0);
    const DxCoefficients<M> c = dx_coefficients(layer, mu, rstd[rstd_at(s)], acc.g, acc.gx, inv_h);
    M* out = coefficients + 3 * s;
    out[0] = c.p, out[1] = c.q, out[2] = c.r;
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

/// A per-column sum over the rows: Σ dy·x̂ (dweight; RmsNorm's x̂ = x·rstd) or Σ dy (dbias).
template <class T>
struct ColumnSumOp {
  using M = convert::opmath_t<T>;
  using Acc = M;
  bool layer;
  T* out;
  int64_t out_stride;
  __host__ __device__ Acc identity() const { return M(0); }
  __host__ __device__ Acc map(T dy) const { return convert::to_opmath(dy); }
  __host__ __device__ Acc map(T dy, T x, M mean, M rstd) const {
    return convert::to_opmath(dy) * ((layer ? convert::to_opmath(x) - mean : convert::to_opmath(x)) * rstd);
  }
  __host__ __device__ Acc combine(Acc a, Acc b) const { return a + b; }
  __device__ void finish(int64_t s, Acc acc) const { out[s * out_stride] = convert::from_opmath<T>(acc); }
};

/// A dense per-row vector (`step` values per row, value `which`) viewed over x's shape.
template <class M>
ConstDynTensor row_view(const Shape& shape, const void* data, int step, int which) {
  ConstDynTensor v;
  v.data = static_cast<const M*>(data) + which;
  v.kind = kind_of<M>;
  v.shape = shape;
  int64_t stride = step;
  for (int d = shape.rank - 2; d >= 0; --d) {
    v.stride[d] = stride;
    stride *= shape.dims[d];
  }
  v.stride[shape.rank - 1] = 0;
  return v;
}

/// A `[rows]` statistic of any strides viewed over x's shape.
inline ConstDynTensor row_view(const Shape& shape, const ConstDynTensor& t) {
  ConstDynTensor v = t;
  v.shape = shape;
  v.stride = {};
  for (int d = 0; d + 1 < shape.rank; ++d) v.stride[d] = t.stride[d];
  return v;
}

/// An `[H]` vector viewed over x's shape (stride 0 along every other dimension).
inline ConstDynTensor column_view(const Shape& shape, const ConstDynTensor& t) {
  ConstDynTensor v = t;
  v.shape = shape;
  v.stride = {};
  v.stride[shape.rank - 1] = t.stride[0];
  return v;
}

inline uint32_t rows_mask(const Shape& s) {
  return (shift::left(1u, static_cast<unsigned>(s.rank)) - 1u) & ~shift::left(1u, static_cast<unsigned>(s.rank - 1));
}

template <class T>
Status forward(const ::baracuda::detail::ExecContext& ctx, const detail::NormLaunch& a) {
  using M = convert::opmath_t<T>;
  constexpr std::string_view kPlan = "NormPlan";
  const Shape& s = a.x.shape;
  const bool layer = a.op == NormOp::LayerNorm;
  const int64_t h = s.dims[s.rank - 1];
  ConstDynTensor x = a.x;
  if (a.residual.data != nullptr) {  // h = x + residual first, then the norm of h
    BARACUDA_TRY((elementwise::launch_elementwise<ResidualAddOp<T>, T, T, T>(kPlan, ctx, ResidualAddOp<T>{}, a.h,
                                                                            a.x, a.residual)));
    x = a.h;
  }
  const RowStatsOp<T> stats{layer,
                            static_cast<M>(a.eps),
                            M(1) / static_cast<M>(h),
                            static_cast<M*>(a.mean.data),
                            static_cast<M*>(a.rstd.data),
                            row_offsets(a.mean),
                            row_offsets(a.rstd)};
  BARACUDA_TRY((segment_reduce::launch_segment_reduce<RowStatsOp<T>, T>(kPlan, ctx, stats, s, rows_mask(s),
                                                                         a.partials, x)));
  const ConstDynTensor rstd = row_view(s, a.rstd);
  const ConstDynTensor mean = layer ? row_view(s, a.mean) : rstd;
  const bool has_w = a.weight.data != nullptr, has_b = a.bias.data != nullptr;
  const ForwardOp<T> op{layer, has_w};
  if (has_w && has_b)
    return elementwise::launch_elementwise<ForwardOp<T>, T, T, M, M, T, T>(
        kPlan, ctx, op, a.y, x, mean, rstd, column_view(s, a.weight), column_view(s, a.bias));
  if (has_w || has_b)
    return elementwise::launch_elementwise<ForwardOp<T>, T, T, M, M, T>(kPlan, ctx, op, a.y, x, mean, rstd,
                                                                        column_view(s, has_w ? a.weight : a.bias));
  return elementwise::launch_elementwise<ForwardOp<T>, T, T, M, M>(kPlan, ctx, op, a.y, x, mean, rstd);
}

/// The backward's per-column sums over the rows (dweight, dbias), on the segmented-reduction engine: both the
/// composed path and the dx row kernel end with them.
template <class T>
Status column_sums(const ::baracuda::detail::ExecContext& ctx, const detail::NormLaunch& a) {
  using M = convert::opmath_t<T>;
  constexpr std::string_view kPlan = "NormBackwardPlan";
  const Shape& s = a.x.shape;
  const bool layer = a.op == NormOp::LayerNorm;
  const uint32_t columns = shift::left(1u, static_cast<unsigned>(s.rank - 1));
  if (a.dweight.data != nullptr) {
    const ConstDynTensor rstd = row_view(s, a.rstd);
    const ConstDynTensor mean = layer ? row_view(s, a.mean) : rstd;
    const ColumnSumOp<T> op{layer, static_cast<T*>(a.dweight.data), a.dweight.stride[0]};
    BARACUDA_TRY((segment_reduce::launch_segment_reduce<ColumnSumOp<T>, T, T, M, M>(
        kPlan, ctx, op, s, columns, a.partials, a.dy, a.x, mean, rstd)));
  }
  if (a.dbias.data != nullptr) {
    const ColumnSumOp<T> op{layer, static_cast<T*>(a.dbias.data), a.dbias.stride[0]};
    BARACUDA_TRY(
        (segment_reduce::launch_segment_reduce<ColumnSumOp<T>, T>(kPlan, ctx, op, s, columns, a.partials, a.dy)));
  }
  return {};
}

template <class T>
Status backward(const ::baracuda::detail::ExecContext& ctx, const detail::NormLaunch& a) {
  using M = convert::opmath_t<T>;
  constexpr std::string_view kPlan = "NormBackwardPlan";
  const Shape& s = a.x.shape;
  const bool layer = a.op == NormOp::LayerNorm;
  const int64_t h = s.dims[s.rank - 1];
  const bool has_w = a.weight.data != nullptr;
  if (a.dx.data != nullptr) {
    const RowSumsOp<T> sums{layer,
                            M(1) / static_cast<M>(h),
                            static_cast<const M*>(a.mean.data),
                            static_cast<const M*>(a.rstd.data),
                            row_offsets(a.mean),
                            row_offsets(a.rstd),
                            static_cast<M*>(a.coefficients)};
    if (has_w)
      BARACUDA_TRY((segment_reduce::launch_segment_reduce<RowSumsOp<T>, T, T, T>(
          kPlan, ctx, sums, s, rows_mask(s), a.partials, a.dy, a.x, column_view(s, a.weight))));
    else
      BARACUDA_TRY((segment_reduce::launch_segment_reduce<RowSumsOp<T>, T, T>(kPlan, ctx, sums, s, rows_mask(s),
                                                                              a.partials, a.dy, a.x)));
    const ConstDynTensor p = row_view<M>(s, a.coefficients, 3, 0), q = row_view<M>(s, a.coefficients, 3, 1),
                         r = row_view<M>(s, a.coefficients, 3, 2);
    if (has_w)
      BARACUDA_TRY((elementwise::launch_elementwise<DxOp<T>, T, T, T, T, M, M, M>(
          kPlan, ctx, DxOp<T>{}, a.dx, a.dy, a.x, column_view(s, a.weight), p, q, r)));
    else
      BARACUDA_TRY((elementwise::launch_elementwise<DxOp<T>, T, T, T, M, M, M>(kPlan, ctx, DxOp<T>{}, a.dx, a.dy,
                                                                              a.x, p, q, r)));
  }
  return column_sums<T>(ctx, a);
}

}  // namespace norm
BARACUDA_DEVICE_NAMESPACE_END
