// Helpers shared by the linear tests (linear_*test.cpp): one layer's operands laid out as a LinearDescriptor says
// (leading dimensions, row- or column-major reads, padded rows; written here from linear.hpp's rules,
// independently of src/ops/linear/plan.cpp), random inputs, runs on any device, and an explicit f64 evaluation of
// y, dx, dW and db with the error bound every comparison uses.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "baracuda/ops/linear.hpp"
#include "ops/gemm_test_support.hpp"  // get, put, unit, tiny, bytes_of (and support/linear_activation.hpp)

namespace baracuda::test::linear {

using ::baracuda::test::reference_activation;
using gemm::bytes_of;
using gemm::get;
using gemm::put;
using gemm::tiny;
using gemm::unit;

/// A rows × cols operand over `lead` leading dimensions (their product = rows), stored in `layout` with
/// leading dimension `ld` (resolved); element (r, c) at r·row + c·col.
struct Geo {
  std::vector<int64_t> lead;
  int64_t rows = 0, cols = 0, row = 0, col = 0;
  int64_t at(int64_t r, int64_t c) const { return r * row + c * col; }
  int64_t span() const { return rows == 0 || cols == 0 ? 0 : (rows - 1) * row + (cols - 1) * col + 1; }
  /// The view: shape lead + [cols], the leading strides flattening to `row`.
  template <class View, class Ptr>
  View view(Ptr p, ElementKind k) const {
    View v;
    v.data = p;
    v.kind = k;
    v.shape.rank = static_cast<int>(lead.size()) + 1;
    int64_t stride = row;
    for (int i = static_cast<int>(lead.size()) - 1; i >= 0; --i) {
      v.shape.dims[i] = lead[i];
      v.stride[i] = stride;
      stride *= lead[i];
    }
    v.shape.dims[lead.size()] = cols;
    v.stride[lead.size()] = col;
    return v;
  }
};

inline Geo geo(std::vector<int64_t> lead, int64_t rows, int64_t cols, MatrixLayout l, int64_t ld) {
  const bool rm = l == MatrixLayout::RowMajor;
  if (ld == 0) ld = std::max<int64_t>(1, rm ? cols : rows);
  return {std::move(lead), rows, cols, rm ? ld : 1, rm ? 1 : ld};
}

/// One layer's host storage: inputs random in [-1, 1] (W and dy scaled by 1/√fan-in), outputs 0xA5.
struct Layer {
  LinearDescriptor d;
  Geo x, w, y, pre, dy, dx, dw;
  std::vector<uint8_t> sx, sw, sb, sdy, sy, spre, sdx, sdw, sdb;

  Layer(const LinearDescriptor& desc, std::vector<int64_t> lead, uint64_t seed) : d(desc) {
    const int64_t m = d.rows, k = d.in_features, n = d.out_features;
    constexpr MatrixLayout R = MatrixLayout::RowMajor;
    x = geo(lead, m, k, d.layout_x, d.ld_x);
    w = geo({n}, n, k, d.layout_w, d.ld_w);
    y = geo(lead, m, n, R, d.ld_y);
    pre = geo(lead, m, n, R, d.ld_preactivation);
    dy = geo(lead, m, n, d.layout_dy, d.ld_dy);
    dx = geo(lead, m, k, R, d.ld_dx);
    dw = geo({n}, n, k, R, d.ld_dw);
    std::mt19937_64 rng(seed);
    auto fill = [&](ElementKind kind, int64_t count, double scale) {
      std::uniform_real_distribution<double> u(-scale, scale);
      std::vector<uint8_t> s(static_cast<size_t>(std::max<int64_t>(count, 1)) * bytes_of(kind));
      for (int64_t i = 0; i < count; ++i) put(kind, s, i, u(rng));
      return s;
    };
    sx = fill(d.input, x.span(), 1.0);
    sw = fill(d.input, w.span(), 2.0 / std::sqrt(static_cast<double>(std::max<int64_t>(k, 1))));
    sb = fill(d.output, n, 1.0);
    sdy = fill(d.input, dy.span(), 1.0);
    auto out = [&](int64_t count) {
      return std::vector<uint8_t>(static_cast<size_t>(std::max<int64_t>(count, 1)) * bytes_of(d.output), 0xA5);
    };
    sy = out(y.span()), spre = out(pre.span()), sdx = out(dx.span()), sdw = out(dw.span()), sdb = out(n);
  }

  double X(int64_t r, int64_t c) const { return get(d.input, sx, x.at(r, c)); }
  double W(int64_t n, int64_t c) const { return get(d.input, sw, w.at(n, c)); }
  double DY(int64_t r, int64_t n) const { return get(d.input, sdy, dy.at(r, n)); }
};

/// What a run wrote.
struct Outputs {
  std::vector<uint8_t> y, pre, dx, dw, db;
};

/// A value and its bound: 2·(terms + 3)·u·Σ|products| (u the computation's opmath unit roundoff; the factor 2
/// covers this evaluation's own error) and one rounding to the output kind.
struct Expect {
  double v = 0, tol = 0;
};
inline Expect bound(double v, double mag, int64_t terms, double u, ElementKind out) {
  return {v, 2.0 * static_cast<double>(terms + 3) * u * mag + unit(out) * std::fabs(v) + tiny(out)};
}

/// The f64 evaluations of linear.hpp's contract.
inline Expect expect_pre(const Layer& L, int64_t r, int64_t n, double u) {
  double acc = 0, mag = 0;
  for (int64_t k = 0; k < L.d.in_features; ++k) acc += L.X(r, k) * L.W(n, k), mag += std::fabs(L.X(r, k) * L.W(n, k));
  if (L.d.has_bias) {
    const double b = get(L.d.output, L.sb, n);
    acc += b, mag += std::fabs(b);
  }
  return bound(acc, mag, L.d.in_features, u, L.d.output);
}
inline Expect expect_dx(const Layer& L, int64_t r, int64_t k, double u) {
  double acc = 0, mag = 0;
  for (int64_t n = 0; n < L.d.out_features; ++n)
    acc += L.DY(r, n) * L.W(n, k), mag += std::fabs(L.DY(r, n) * L.W(n, k));
  return bound(acc, mag, L.d.out_features, u, L.d.output);
}
inline Expect expect_dw(const Layer& L, int64_t n, int64_t k, double u) {
  double acc = 0, mag = 0;
  for (int64_t r = 0; r < L.d.rows; ++r) acc += L.DY(r, n) * L.X(r, k), mag += std::fabs(L.DY(r, n) * L.X(r, k));
  return bound(acc, mag, L.d.rows, u, L.d.output);
}
inline Expect expect_db(const Layer& L, int64_t n, double u) {
  double acc = 0, mag = 0;
  for (int64_t r = 0; r < L.d.rows; ++r) acc += L.DY(r, n), mag += std::fabs(L.DY(r, n));
  return bound(acc, mag, L.d.rows, u, L.d.output);
}

inline Result<Buffer> upload(const Stream& st, const std::vector<uint8_t>& s) {
  auto b = Buffer::allocate(st, s.size());
  if (!b) return b.error();
  BARACUDA_TRY(b->copy_from_host(s.data(), s.size()));
  return b;
}

/// The device buffers of a layer's operands.
struct Device {
  Buffer x, w, b, dy, y, pre, dx, dw, db;
  static Result<Device> of(const Stream& st, const Layer& L) {
    Device r;
    const std::vector<uint8_t>* src[] = {&L.sx, &L.sw, &L.sb, &L.sdy, &L.sy, &L.spre, &L.sdx, &L.sdw, &L.sdb};
    Buffer* dst[] = {&r.x, &r.w, &r.b, &r.dy, &r.y, &r.pre, &r.dx, &r.dw, &r.db};
    for (size_t i = 0; i < 9; ++i) {
      auto b = upload(st, *src[i]);
      if (!b) return b.error();
      *dst[i] = std::move(b).value();
    }
    return r;
  }
  dynamic::LinearArgs forward_args(const Layer& L) const {
    dynamic::LinearArgs a;
    a.x = L.x.view<ConstDynTensor>(static_cast<const void*>(x.data()), L.d.input);
    a.w = L.w.view<ConstDynTensor>(static_cast<const void*>(w.data()), L.d.input);
    if (L.d.has_bias) a.bias = ConstDynTensor::dense(b.data(), L.d.output, Shape{L.d.out_features});
    a.y = L.y.view<DynTensor>(const_cast<void*>(y.data()), L.d.output);
    if (L.d.has_preactivation) a.preactivation = L.pre.view<DynTensor>(const_cast<void*>(pre.data()), L.d.output);
    return a;
  }
  dynamic::LinearBackwardArgs backward_args(const Layer& L) const {
    dynamic::LinearBackwardArgs a;
    const LinearDescriptor& d = L.d;
    a.dy = L.dy.view<ConstDynTensor>(static_cast<const void*>(dy.data()), d.input);
    if (d.grad_weight) a.x = L.x.view<ConstDynTensor>(static_cast<const void*>(x.data()), d.input);
    if (d.grad_input) a.w = L.w.view<ConstDynTensor>(static_cast<const void*>(w.data()), d.input);
    if (d.activation != LinearActivation::None)  // the forward's, when run_layer ran it first
      a.preactivation = L.pre.view<ConstDynTensor>(static_cast<const void*>(pre.data()), d.output);
    if (d.grad_input) a.dx = L.dx.view<DynTensor>(const_cast<void*>(dx.data()), d.output);
    if (d.grad_weight) a.dw = L.dw.view<DynTensor>(const_cast<void*>(dw.data()), d.output);
    if (d.grad_bias) a.db = DynTensor::dense(const_cast<void*>(db.data()), d.output, Shape{d.out_features});
    return a;
  }
  Result<Outputs> download(const Layer& L) const {
    Outputs o{L.sy, L.spre, L.sdx, L.sdw, L.sdb};
    BARACUDA_TRY(y.copy_to_host(o.y.data(), o.y.size()));
    BARACUDA_TRY(pre.copy_to_host(o.pre.data(), o.pre.size()));
    BARACUDA_TRY(dx.copy_to_host(o.dx.data(), o.dx.size()));
    BARACUDA_TRY(dw.copy_to_host(o.dw.data(), o.dw.size()));
    BARACUDA_TRY(db.copy_to_host(o.db.data(), o.db.size()));
    return o;
  }
};

/// Selects and runs the forward (and, with `backward`, the backward) on `st`; returns what was written.
inline Result<Outputs> run_layer(const Stream& st, const Layer& L, bool forward, bool backward,
                                 PlanPreference pref = {}) {
  auto dev = Device::of(st, L);
  if (!dev) return dev.error();
  if (forward) {
    auto p = dynamic::LinearPlan::select(st, L.d, pref);
    if (!p) return p.error();
    auto ws = Buffer::allocate(st, p->workspace_size());
    if (!ws) return ws.error();
    BARACUDA_TRY(p->run(st, ws->as_workspace(), dev->forward_args(L)));
  }
  if (backward) {
    auto p = dynamic::LinearBackwardPlan::select(st, L.d, pref);
    if (!p) return p.error();
    auto ws = Buffer::allocate(st, p->workspace_size());
    if (!ws) return ws.error();
    BARACUDA_TRY(p->run(st, ws->as_workspace(), dev->backward_args(L)));
  }
  BARACUDA_TRY(st.synchronize());
  return dev->download(L);
}

/// Every element of `g` in `s` (storage of `kind`) against `f(r, c)`; bytes outside the view keep 0xA5.
/// Returns the number of elements checked.
template <class F>
int64_t check_matrix(const std::string& what, const Geo& g, ElementKind kind, const std::vector<uint8_t>& s, F&& f) {
  int64_t checked = 0;
  std::vector<bool> under(s.size() / bytes_of(kind), false);
  for (int64_t r = 0; r < g.rows; ++r)
    for (int64_t c = 0; c < g.cols; ++c) {
      const Expect e = f(r, c);
      const int64_t i = g.at(r, c);
      under[static_cast<size_t>(i)] = true;
      const double got = get(kind, s, i);
      EXPECT_LE(std::fabs(got - e.v), e.tol) << what << "[" << r << ", " << c << "] = " << got << ", expected " << e.v;
      ++checked;
      if (::testing::Test::HasFailure()) return checked;
    }
  const size_t w = bytes_of(kind);
  for (size_t e = 0; e < under.size(); ++e)
    if (!under[e])
      for (size_t q = 0; q < w; ++q)
        if (s[e * w + q] != 0xA5) {
          ADD_FAILURE() << what << ": storage outside the view written at element " << e;
          return checked;
        }
  return checked;
}

/// The opmath unit roundoff of a device's computation: f64 sums on host, f32 (f64 for f64) on the kernels.
inline double unit_on(DeviceKind dev, ElementKind input) {
  return dev == DeviceKind::Host || input == ElementKind::F64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
}

/// Checks every output the descriptor asks for (forward, backward or both) against the f64 evaluation.
inline int64_t check_layer(const std::string& what, const Layer& L, const Outputs& o, double u, bool forward,
                           bool backward) {
  const LinearDescriptor& d = L.d;
  int64_t n = 0;
  if (forward) {
    n += check_matrix(what + " y", L.y, d.output, o.y, [&](int64_t r, int64_t c) {
      Expect e = expect_pre(L, r, c, u);
      const double a = reference_activation(d.activation, e.v);
      const bool nonlinear = d.activation != LinearActivation::None;
      e.tol = (nonlinear ? 1.2 : 1.0) * e.tol + (nonlinear ? 16.0 * u * (std::fabs(a) + std::fabs(e.v)) : 0.0) +
              unit(d.output) * std::fabs(a);
      e.v = a;
      return e;
    });
    if (d.has_preactivation)
      n += check_matrix(what + " preactivation", L.pre, d.output, o.pre,
                        [&](int64_t r, int64_t c) { return expect_pre(L, r, c, u); });
  }
  if (backward && d.grad_input)
    n += check_matrix(what + " dx", L.dx, d.output, o.dx, [&](int64_t r, int64_t c) { return expect_dx(L, r, c, u); });
  if (backward && d.grad_weight)
    n += check_matrix(what + " dw", L.dw, d.output, o.dw, [&](int64_t r, int64_t c) { return expect_dw(L, r, c, u); });
  if (backward && d.grad_bias)
    n += check_matrix(what + " db", geo({d.out_features}, d.out_features, 1, MatrixLayout::RowMajor, 0), d.output, o.db,
                      [&](int64_t r, int64_t) { return expect_db(L, r, u); });
  return n;
}

}  // namespace baracuda::test::linear
