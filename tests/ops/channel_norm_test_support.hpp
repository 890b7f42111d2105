// The channel_norm tests' runner: one GroupNorm or BatchNorm problem, forward then backward, on any device,
// from logical row-major values (doubles exact in the kind), x in a dense or channels-last layout.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <variant>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "support/numeric.hpp"
#include "support/random.hpp"
#include "support/tensor.hpp"

namespace baracuda::test::channel_norm {

using K = ElementKind;

inline std::vector<double> decode(K k, const std::vector<uint8_t>& b, int64_t n) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(decode_value(k, &b[static_cast<size_t>(i * element_bytes(k))]));
  return v;
}

inline std::vector<uint8_t> encode(K k, const std::vector<double>& v) {
  std::vector<uint8_t> b(static_cast<size_t>(storage_bytes(k, static_cast<int64_t>(v.size()))));
  for (size_t i = 0; i < v.size(); ++i) encode_exact(k, v[i], &b[i * static_cast<size_t>(element_bytes(k))]);
  return b;
}

/// The inputs, logical row-major: x and dy x's shape; w, b, running_mean, running_var `[C]`.
struct Values {
  std::vector<double> x, w, b, dy, rm, rv;
};

/// The outputs: y, the saved statistics, the running statistics after the forward, the gradients.
struct Outputs {
  std::vector<double> y, mean, rstd, rm, rv, dx, dw, db;
};

inline Values make_values(K k, const Shape& s, uint64_t seed) {
  Values v;
  const int64_t c = s.dims[1];
  random_floats(k, s.numel(), -2, 3, seed, &v.x);
  random_floats(k, c, 0.5, 1.5, seed + 1, &v.w);
  random_floats(k, c, -1, 1, seed + 2, &v.b);
  random_floats(k, s.numel(), -1, 1, seed + 3, &v.dy);
  random_floats(k, c, -0.5, 0.5, seed + 4, &v.rm);
  random_floats(k, c, 0.5, 2, seed + 5, &v.rv);
  return v;
}

/// x `[N, C, S...]` with the channel innermost (NHWC): strides (C·S, 1, C·S_inner..., C).
inline Strided channels_last(const Shape& s) {
  Strided l = dense_layout(s);
  if (s.rank < 3) return l;
  int64_t stride = s.dims[1];
  for (int d = s.rank - 1; d >= 2; --d) l.stride[d] = stride, stride *= s.dims[d];
  l.stride[1] = 1;
  l.stride[0] = stride;
  return l;
}

/// The tensors of one run, on `stream`.
struct Tensors {
  DeviceTensor x, w, b, y, mean, rstd, rm, rv, dy, dx, dw, db;
  Buffer ws;
};

/// Runs a GroupNorm (`GroupNormDescriptor`) or BatchNorm problem forward then backward on `stream` (the
/// backward from the forward's own statistics; BatchNorm inference from the running ones).
template <class Desc>
Outputs run_both(const Stream& stream, const Desc& d, const Values& v, bool nhwc = false) {
  constexpr bool kBatch = std::is_same_v<Desc, BatchNormDescriptor>;
  using Fwd = std::conditional_t<kBatch, dynamic::BatchNormPlan, dynamic::GroupNormPlan>;
  using Bwd = std::conditional_t<kBatch, dynamic::BatchNormBackwardPlan, dynamic::GroupNormBackwardPlan>;
  Outputs r;
  auto fwd = Fwd::select(stream, d);
  auto bwd = Bwd::select(stream, d);
  EXPECT_TRUE(fwd && bwd) << (fwd ? bwd.status().to_string() : fwd.status().to_string());
  if (!fwd || !bwd) return r;
  const K k = d.element, sk = fwd->stats_kind();
  const Shape& s = d.shape;
  const Shape c{s.dims[1]}, st = fwd->stats_shape();
  const Strided xl = nhwc ? channels_last(s) : dense_layout(s);
  std::vector<uint8_t> xs = sentinel_storage(k, storage_elements(s, xl)), dys = xs;
  scatter(k, encode(k, v.x), &xs, s, xl);
  scatter(k, encode(k, v.dy), &dys, s, xl);
  const auto out = [&](K kind, const Shape& shape) {
    return make_device_tensor(stream, kind, shape, dense_layout(shape), sentinel_storage(kind, shape.numel()));
  };
  const auto in = [&](const std::vector<double>& values) {
    return make_device_tensor(stream, k, c, dense_layout(c), encode(k, values));
  };
  auto x = make_device_tensor(stream, k, s, xl, xs), dy = make_device_tensor(stream, k, s, xl, dys);
  auto w = in(v.w), b = in(v.b), rm = in(v.rm), rv = in(v.rv);
  auto y = out(k, s), mean = out(sk, st), rstd = out(sk, st), dx = out(k, s), dw = out(k, c), db = out(k, c);
  auto ws = Buffer::allocate(stream, std::max({fwd->workspace_size(), bwd->workspace_size(), size_t{1}}));
  EXPECT_TRUE(x && dy && w && b && rm && rv && y && mean && rstd && dx && dw && db && ws);
  if (!x || !dy || !w || !b || !rm || !rv || !y || !mean || !rstd || !dx || !dw || !db || !ws) return r;
  const DynTensor wv = d.has_weight ? w->view : DynTensor{}, bv = d.has_bias ? b->view : DynTensor{};
  const DynTensor dwv = d.has_weight ? dw->view : DynTensor{}, dbv = d.has_bias ? db->view : DynTensor{};
  bool saved = true;
  Status st1, st2;
  if constexpr (kBatch) {
    saved = d.training;
    const DynTensor rmv = d.has_running_stats ? rm->view : DynTensor{};
    const DynTensor rvv = d.has_running_stats ? rv->view : DynTensor{};
    const DynTensor mv = saved ? mean->view : DynTensor{}, sv = saved ? rstd->view : DynTensor{};
    st1 = fwd->run(stream, Workspace(ws->data(), fwd->workspace_size()), {x->view, wv, bv, y->view, mv, sv, rmv, rvv});
    dynamic::BatchNormBackwardArgs a{dy->view, x->view, wv, mv, sv, {}, {}, dx->view, dwv, dbv};
    if (!saved) a.running_mean = rm->view, a.running_var = rv->view;
    st2 = bwd->run(stream, Workspace(ws->data(), bwd->workspace_size()), a);
    if (d.has_running_stats) r.rm = decode(k, download(*rm), c.numel()), r.rv = decode(k, download(*rv), c.numel());
  } else {
    st1 = fwd->run(stream, Workspace(ws->data(), fwd->workspace_size()),
                   {x->view, wv, bv, y->view, mean->view, rstd->view});
    st2 = bwd->run(stream, Workspace(ws->data(), bwd->workspace_size()),
                   {dy->view, x->view, wv, mean->view, rstd->view, dx->view, dwv, dbv});
  }
  EXPECT_TRUE(st1) << st1.to_string();
  EXPECT_TRUE(st2) << st2.to_string();
  r.y = decode(k, download(*y), s.numel());
  if (saved) r.mean = decode(sk, download(*mean), st.numel()), r.rstd = decode(sk, download(*rstd), st.numel());
  r.dx = decode(k, download(*dx), s.numel());
  if (d.has_weight) r.dw = decode(k, download(*dw), c.numel());
  if (d.has_bias) r.db = decode(k, download(*db), c.numel());
  return r;
}

inline void expect_close(const std::vector<double>& got, const std::vector<double>& want, double rel, double abs,
                         const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], rel * std::fabs(want[i]) + abs) << what << " " << i;
}

/// One unit in the last place of a kind's values near 1.
inline double ulp_of(K k) { return k == K::F16 ? 0x1p-10 : k == K::Bf16 ? 0x1p-7 : k == K::F64 ? 0x1p-52 : 0x1p-23; }

}  // namespace baracuda::test::channel_norm
