// The channel_norm family's host reference: each statistics segment (GroupNorm: (n, g); BatchNorm: the channel)
// by the two-pass textbook formulas in long double, each output rounded once; BatchNorm's running statistics
// updated in long double; the backward by the textbook x̂ form, dweight and dbias summed in long double.
// Independent of the device code (kernels.cuh), which merges Welford partials and factors dx into
// per-segment coefficients.
#include <cmath>
#include <cstdint>
#include <vector>

#include "device/convert.cuh"
#include "ops/channel_norm/dispatch.hpp"

namespace baracuda::reference {
namespace {

using LD = long double;

/// x `[N, C, S...]` as (N, C, S) with S the spatial positions, row-major.
struct Geometry {
  int64_t n, c, s, segments, per_group;
  bool batch;

  explicit Geometry(const detail::ChannelNormLaunch& a) : batch(a.batch) {
    const Shape& x = a.x.shape;
    n = x.dims[0], c = x.dims[1], s = 1;
    for (int d = 2; d < x.rank; ++d) s *= x.dims[d];
    per_group = batch ? 1 : c / a.groups;
    segments = batch ? c : n * a.groups;
  }
  /// Calls f(n, c, s) for every element of segment `seg`, in row-major order.
  template <class F>
  void each(int64_t seg, F&& f) const {
    if (batch) {
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < s; ++j) f(i, seg, j);
      return;
    }
    const int64_t groups = c / per_group, i = seg / groups, g = seg % groups;
    for (int64_t ch = g * per_group; ch < (g + 1) * per_group; ++ch)
      for (int64_t j = 0; j < s; ++j) f(i, ch, j);
  }
  int64_t count() const { return batch ? n * s : per_group * s; }
};

/// Element (n, c, s) of a tensor of x's shape.
int64_t at_nc(const detail::DynTensorLayout& t, int64_t n, int64_t c, int64_t s) {
  int64_t off = n * t.stride[0] + c * t.stride[1];
  for (int d = t.shape.rank - 1; d >= 2; --d) {
    off += (s % t.shape.dims[d]) * t.stride[d];
    s /= t.shape.dims[d];
  }
  return off;
}

/// Segment `seg`'s element of a statistic (GroupNorm `[N, G]`, BatchNorm `[C]`, any strides).
int64_t at_seg(const detail::DynTensorLayout& t, int64_t seg) {
  int64_t off = 0;
  for (int d = t.shape.rank - 1; d >= 0; --d) {
    off += (seg % t.shape.dims[d]) * t.stride[d];
    seg /= t.shape.dims[d];
  }
  return off;
}

template <class T>
LD load(const void* data, int64_t off) {
  return static_cast<LD>(convert::to_opmath(static_cast<const T*>(data)[off]));
}
template <class T>
void store(void* data, int64_t off, LD v) {
  static_cast<T*>(data)[off] = convert::cast<T>(static_cast<double>(v), false);
}
/// w[c] or b[c], or `absent`.
template <class T>
LD vec(const ConstDynTensor& t, int64_t c, LD absent) {
  return t.data == nullptr ? absent : load<T>(t.data, c * t.stride[0]);
}

template <class T>
Status host_forward(const detail::ExecContext&, const detail::ChannelNormLaunch& a) {
  using M = convert::opmath_t<T>;
  const Geometry g(a);
  for (int64_t seg = 0; seg < g.segments; ++seg) {
    LD mean = 0, rstd = 0;
    if (g.batch && !a.training) {
      mean = load<T>(a.running_mean.data, at_seg(a.running_mean, seg));
      rstd = 1 / std::sqrt(load<T>(a.running_var.data, at_seg(a.running_var, seg)) + static_cast<LD>(a.eps));
    } else {
      LD var = 0;
      g.each(seg, [&](int64_t n, int64_t c, int64_t s) { mean += load<T>(a.x.data, at_nc(a.x, n, c, s)); });
      mean /= g.count();
      g.each(seg, [&](int64_t n, int64_t c, int64_t s) {
        const LD d = load<T>(a.x.data, at_nc(a.x, n, c, s)) - mean;
        var += d * d;
      });
      rstd = 1 / std::sqrt(var / g.count() + static_cast<LD>(a.eps));
      static_cast<M*>(a.mean.data)[at_seg(a.mean, seg)] = static_cast<M>(mean);
      static_cast<M*>(a.rstd.data)[at_seg(a.rstd, seg)] = static_cast<M>(rstd);
      if (a.running_mean.data != nullptr) {
        const LD m = static_cast<LD>(a.momentum), unbiased = var / (g.count() - 1);
        const int64_t om = at_seg(a.running_mean, seg), ov = at_seg(a.running_var, seg);
        store<T>(a.running_mean.data, om, (1 - m) * load<T>(a.running_mean.data, om) + m * mean);
        store<T>(a.running_var.data, ov, (1 - m) * load<T>(a.running_var.data, ov) + m * unbiased);
      }
    }
    g.each(seg, [&](int64_t n, int64_t c, int64_t s) {
      const LD v =
          (load<T>(a.x.data, at_nc(a.x, n, c, s)) - mean) * rstd * vec<T>(a.weight, c, 1) + vec<T>(a.bias, c, 0);
      store<T>(a.y.data, at_nc(a.y, n, c, s), v);
    });
  }
  return {};
}

template <class T>
Status host_backward(const detail::ExecContext&, const detail::ChannelNormLaunch& a) {
  using M = convert::opmath_t<T>;
  const Geometry g(a);
  const bool eval = g.batch && !a.training;
  std::vector<LD> dw(static_cast<size_t>(g.c), 0), db(static_cast<size_t>(g.c), 0);
  for (int64_t seg = 0; seg < g.segments; ++seg) {
    LD mean = 0, rstd = 0;
    if (eval) {
      mean = load<T>(a.running_mean.data, at_seg(a.running_mean, seg));
      rstd = 1 / std::sqrt(load<T>(a.running_var.data, at_seg(a.running_var, seg)) + static_cast<LD>(a.eps));
    } else {
      mean = static_cast<LD>(static_cast<const M*>(a.mean.data)[at_seg(a.mean, seg)]);
      rstd = static_cast<LD>(static_cast<const M*>(a.rstd.data)[at_seg(a.rstd, seg)]);
    }
    LD sum_g = 0, sum_gxh = 0;
    g.each(seg, [&](int64_t n, int64_t c, int64_t s) {
      const LD dy = load<T>(a.dy.data, at_nc(a.dy, n, c, s));
      const LD xh = (load<T>(a.x.data, at_nc(a.x, n, c, s)) - mean) * rstd;
      const LD gr = dy * vec<T>(a.weight, c, 1);
      sum_g += gr, sum_gxh += gr * xh;
      dw[static_cast<size_t>(c)] += dy * xh, db[static_cast<size_t>(c)] += dy;
    });
    if (a.dx.data == nullptr) continue;
    const LD m = static_cast<LD>(g.count());
    g.each(seg, [&](int64_t n, int64_t c, int64_t s) {
      const LD dy = load<T>(a.dy.data, at_nc(a.dy, n, c, s));
      const LD xh = (load<T>(a.x.data, at_nc(a.x, n, c, s)) - mean) * rstd;
      const LD gr = dy * vec<T>(a.weight, c, 1);
      // Training (GroupNorm, BatchNorm): rstd·(g − mean(g) − x̂·mean(g·x̂)); inference: rstd·g.
      const LD v = eval ? rstd * gr : rstd * (gr - sum_g / m - xh * sum_gxh / m);
      store<T>(a.dx.data, at_nc(a.dx, n, c, s), v);
    });
  }
  for (int64_t c = 0; c < g.c; ++c) {
    if (a.dweight.data != nullptr) store<T>(a.dweight.data, c * a.dweight.stride[0], dw[static_cast<size_t>(c)]);
    if (a.dbias.data != nullptr) store<T>(a.dbias.data, c * a.dbias.stride[0], db[static_cast<size_t>(c)]);
  }
  return {};
}

}  // namespace

BARACUDA_DEFINE_KIND_TABLE(detail::ChannelNormTable, channel_norm_forward_table, detail::ChannelNormTypes, host_forward)
BARACUDA_DEFINE_KIND_TABLE(detail::ChannelNormTable, channel_norm_backward_table, detail::ChannelNormTypes,
                           host_backward)

}  // namespace baracuda::reference
