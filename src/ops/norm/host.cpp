// The norm family's host reference (the composed path's first step: the plan runs the quantize plan after it
// for a fused quantized output): h = x + residual when fused, then each row's statistics by the two-pass
// textbook formulas in long double, each output rounded once; dweight and dbias summed over the rows in long
// double. Independent of the device code (kernels.cuh, row_kernel.cuh), which merges Welford partials or
// sums chunks on chip, and factors dx into per-row coefficients.
#include <cmath>
#include <cstdint>
#include <vector>

#include "device/convert.cuh"
#include "ops/norm/dispatch.hpp"

namespace baracuda::reference {
namespace {

using LD = long double;

/// Offsets of row `row`'s H elements in `t` (x's shape), row-major over every dimension but the last.
std::vector<int64_t> row_offsets(const ConstDynTensor& t, int64_t row) {
  const Shape& s = t.shape;
  int64_t base = 0, rest = row;
  for (int d = s.rank - 2; d >= 0; --d) {
    base += (rest % s.dims[d]) * t.stride[d];
    rest /= s.dims[d];
  }
  std::vector<int64_t> off(static_cast<size_t>(s.dims[s.rank - 1]));
  for (size_t j = 0; j < off.size(); ++j) off[j] = base + static_cast<int64_t>(j) * t.stride[s.rank - 1];
  return off;
}

template <class T>
LD at(const ConstDynTensor& t, int64_t off) {
  return static_cast<LD>(convert::to_opmath(static_cast<const T*>(t.data)[off]));
}
template <class T>
LD vec(const ConstDynTensor& t, int64_t j, LD absent) {
  return t.data == nullptr ? absent : at<T>(t, j * t.stride[0]);
}

int64_t rows_of(const Shape& s) { return s.numel() == 0 ? 0 : s.numel() / s.dims[s.rank - 1]; }

/// Row `row`'s element of a `[rows]` statistics tensor of any strides.
int64_t stat_offset(const detail::DynTensorLayout& t, int64_t row) {
  int64_t off = 0;
  for (int d = t.shape.rank - 1; d >= 0; --d) {
    off += (row % t.shape.dims[d]) * t.stride[d];
    row /= t.shape.dims[d];
  }
  return off;
}

template <class T>
Status host_forward(const detail::ExecContext& ctx, const detail::NormLaunch& a) {
  using M = convert::opmath_t<T>;
  if (a.residual.data != nullptr) {  // h = x + residual (a double sum: exact for the 16- and 32-bit kinds,
    // correctly rounded for f64), rounded once to T; then the norm of h
    const ConstDynTensor h(a.h);
    for (int64_t row = 0; row < rows_of(a.x.shape); ++row) {
      const std::vector<int64_t> xo = row_offsets(a.x, row), ro = row_offsets(a.residual, row),
                                 ho = row_offsets(h, row);
      for (size_t j = 0; j < xo.size(); ++j) {
        const double v = static_cast<double>(at<T>(a.x, xo[j])) + static_cast<double>(at<T>(a.residual, ro[j]));
        static_cast<T*>(a.h.data)[ho[j]] = convert::cast<T>(v, false);
      }
    }
    detail::NormLaunch b = a;
    b.x = h;
    b.residual = {};
    return host_forward<T>(ctx, b);
  }
  const bool layer = a.op == NormOp::LayerNorm;
  const int64_t h = a.x.shape.dims[a.x.shape.rank - 1];
  for (int64_t row = 0; row < rows_of(a.x.shape); ++row) {
    const std::vector<int64_t> xo = row_offsets(a.x, row), yo = row_offsets(ConstDynTensor(a.y), row);
    LD mean = 0, var = 0;
    if (layer) {
      for (int64_t o : xo) mean += at<T>(a.x, o);
      mean /= h;
    }
    for (int64_t o : xo) var += (at<T>(a.x, o) - mean) * (at<T>(a.x, o) - mean);
    const LD rstd = 1 / std::sqrt(var / h + static_cast<LD>(a.eps));
    if (layer) static_cast<M*>(a.mean.data)[stat_offset(a.mean, row)] = static_cast<M>(mean);
    static_cast<M*>(a.rstd.data)[stat_offset(a.rstd, row)] = static_cast<M>(rstd);
    for (int64_t j = 0; j < h; ++j) {
      const LD v =
          (at<T>(a.x, xo[static_cast<size_t>(j)]) - mean) * rstd * vec<T>(a.weight, j, 1) + vec<T>(a.bias, j, 0);
      static_cast<T*>(a.y.data)[yo[static_cast<size_t>(j)]] = convert::cast<T>(static_cast<double>(v), false);
    }
  }
  return {};
}

template <class T>
Status host_backward(const detail::ExecContext&, const detail::NormLaunch& a) {
  using M = convert::opmath_t<T>;
  const bool layer = a.op == NormOp::LayerNorm;
  const int64_t h = a.x.shape.dims[a.x.shape.rank - 1];
  std::vector<LD> dw(static_cast<size_t>(h), 0), db(static_cast<size_t>(h), 0);
  for (int64_t row = 0; row < rows_of(a.x.shape); ++row) {
    const std::vector<int64_t> xo = row_offsets(a.x, row), go = row_offsets(a.dy, row);
    const LD mean = layer ? static_cast<LD>(static_cast<const M*>(a.mean.data)[stat_offset(a.mean, row)]) : 0;
    const LD rstd = static_cast<LD>(static_cast<const M*>(a.rstd.data)[stat_offset(a.rstd, row)]);
    std::vector<LD> g(static_cast<size_t>(h)), xh(static_cast<size_t>(h));
    LD sum_g = 0, sum_gxh = 0;
    for (int64_t j = 0; j < h; ++j) {
      const size_t k = static_cast<size_t>(j);
      const LD dy = at<T>(a.dy, go[k]);
      xh[k] = (at<T>(a.x, xo[k]) - mean) * rstd;
      g[k] = dy * vec<T>(a.weight, j, 1);
      sum_g += g[k], sum_gxh += g[k] * xh[k];
      dw[k] += dy * xh[k], db[k] += dy;
    }
    if (a.dx.data == nullptr) continue;
    const std::vector<int64_t> dxo = row_offsets(ConstDynTensor(a.dx), row);
    for (int64_t j = 0; j < h; ++j) {
      const size_t k = static_cast<size_t>(j);
      // LayerNorm: r·(g − mean(g) − x̂·mean(g·x̂)); RmsNorm: r·(g − x̂·mean(g·x̂)).
      const LD v = rstd * (g[k] - (layer ? sum_g / h : 0) - xh[k] * sum_gxh / h);
      static_cast<T*>(a.dx.data)[dxo[k]] = convert::cast<T>(static_cast<double>(v), false);
    }
  }
  for (int64_t j = 0; j < h; ++j) {
    const size_t k = static_cast<size_t>(j);
    if (a.dweight.data != nullptr)
      static_cast<T*>(a.dweight.data)[j * a.dweight.stride[0]] = convert::cast<T>(static_cast<double>(dw[k]), false);
    if (a.dbias.data != nullptr)
      static_cast<T*>(a.dbias.data)[j * a.dbias.stride[0]] = convert::cast<T>(static_cast<double>(db[k]), false);
  }
  return {};
}

}  // namespace

BARACUDA_DEFINE_KIND_TABLE(detail::NormTable, norm_forward_table, detail::NormTypes, host_forward)
BARACUDA_DEFINE_KIND_TABLE(detail::NormTable, norm_backward_table, detail::NormTypes, host_backward)

}  // namespace baracuda::reference
