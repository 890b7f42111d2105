// Test support of the rope family: the operands of a RopePlan laid out on a
// device (dense, in place over a fused qkv buffer, padded and strided, offset
// by an element, tokens reversed), run, and read back as values; the inputs'
// values; the tolerance a device's result may differ from the host reference
// by.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "baracuda/core/buffer.hpp"
#include "baracuda/core/stream.hpp"
#include "baracuda/ops/rope.hpp"
#include "support/numeric.hpp"
#include "support/random.hpp"
#include "support/tensor.hpp"

namespace baracuda::test::rope {

using K = ElementKind;

/// How q, k and the outputs lie in memory.
enum class Layout {
  Dense,        ///< separate dense tensors, out of place
  FusedInPlace, ///< q and k views into one [T, H + 2·Hkv, D] buffer (vLLM's
                ///< qkv), written in place
  Strided,      ///< inputs padded per token and head with innermost stride 2;
                ///< outputs padded, out of place
  Offset, ///< every view one element past a 16-byte boundary, out of place
  ReversedTokens, ///< inputs with a negative token stride, outputs in place
                  ///< over them
};
inline const char *to_string(Layout l) {
  static const char *const kNames[] = {"dense", "fused_in_place", "strided",
                                       "offset", "reversed_tokens"};
  return kNames[static_cast<int>(l)];
}

/// The logical values of a problem's tensors (row-major), and its positions.
struct Inputs {
  std::vector<int64_t> positions;
  std::vector<double> q, k, cache;
};

struct Outputs {
  std::vector<double> q, k;
  bool ok = false;
};

inline std::vector<double> decode_values(K k, const std::vector<uint8_t> &b) {
  std::vector<double> v(b.size() / static_cast<size_t>(element_bytes(k)));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = decode_value(k, &b[i * static_cast<size_t>(element_bytes(k))]);
  return v;
}

/// Random inputs: q and k in [-4, 4) rounded to the kind, positions in [lo,
/// hi), the cache in [-1, 1).
inline Inputs make_inputs(const RopeDescriptor &d, int64_t lo, int64_t hi,
                          uint64_t seed) {
  Inputs in;
  Rng rng(seed);
  for (int64_t t = 0; t < d.num_tokens; ++t)
    in.positions.push_back(lo + static_cast<int64_t>(rng.below(hi - lo)));
  random_floats(d.element, d.num_tokens * d.num_heads * d.head_dim, -4, 4,
                seed + 1, &in.q);
  random_floats(d.element, d.num_tokens * d.num_kv_heads * d.head_dim, -4, 4,
                seed + 2, &in.k);
  if (d.source == CosSinSource::Cache)
    random_floats(d.cache_kind, d.max_position * d.rotary_dim(), -1, 1,
                  seed + 3, &in.cache);
  return in;
}

/// One buffer on the device and the element strides of a [T, H, D] view into
/// it.
struct Placed {
  Buffer buffer;
  int64_t elements = 0;
};

/// Element index of (t, h, e) in a view (offset + strides).
inline int64_t at(const std::array<int64_t, 4> &v, int64_t t, int64_t h,
                  int64_t e) {
  return v[0] + t * v[1] + h * v[2] + e * v[3];
}

/// Runs `d` on `stream` over `in` laid out as `layout`; q_out and k_out read
/// back as values.
inline Outputs run_rope(const Stream &stream, const RopeDescriptor &d,
                        const Inputs &in, Layout layout) {
  Outputs r;
  auto plan = dynamic::RopePlan::select(stream, d);
  EXPECT_TRUE(plan) << plan.status().to_string();
  if (!plan)
    return r;
  const K kind = d.element;
  const int64_t T = d.num_tokens, H = d.num_heads, Hk = d.num_kv_heads,
                D = d.head_dim;
  const int64_t eb = element_bytes(kind), vec = 16 / eb;
  // Views as {offset, token stride, head stride, dim stride} into buffers:
  // in_buf for q and k (one buffer when fused), out_buf for both outputs (none
  // when in place).
  std::array<int64_t, 4> qv{}, kv{}, qo{}, ko{};
  int64_t in_elems = 0, out_elems = 0;
  const bool in_place =
      layout == Layout::FusedInPlace || layout == Layout::ReversedTokens;
  switch (layout) {
  case Layout::Dense:
    qv = {0, H * D, D, 1}, kv = {T * H * D, Hk * D, D, 1},
    in_elems = T * (H + Hk) * D;
    qo = qv, ko = kv, out_elems = in_elems;
    break;
  case Layout::FusedInPlace: {
    const int64_t row = (H + 2 * Hk) * D;
    qv = {0, row, D, 1}, kv = {H * D, row, D, 1}, in_elems = T * row;
    break;
  }
  case Layout::Strided: {
    const int64_t hs = 2 * D + 1, ts = H * hs + 3, ks = Hk * hs + 5;
    qv = {0, ts, hs, 2}, kv = {T * ts, ks, hs, 2}, in_elems = T * (ts + ks);
    const int64_t ohs = D + 3;
    qo = {0, H * ohs, ohs, 1}, ko = {T * H * ohs, Hk * ohs, ohs, 1},
    out_elems = T * (H + Hk) * ohs;
    break;
  }
  case Layout::Offset:
    qv = {1, H * D, D, 1}, kv = {1 + T * H * D, Hk * D, D, 1},
    in_elems = 1 + T * (H + Hk) * D;
    qo = {vec - 1, H * D, D, 1}, ko = {vec - 1 + T * H * D, Hk * D, D, 1},
    out_elems = vec + T * (H + Hk) * D;
    break;
  case Layout::ReversedTokens:
    qv = {(T - 1) * H * D, -H * D, D, 1},
    kv = {T * H * D + (T - 1) * Hk * D, -Hk * D, D, 1};
    in_elems = T * (H + Hk) * D;
    break;
  }
  std::vector<uint8_t> storage =
      sentinel_storage(kind, std::max<int64_t>(in_elems, 1));
  const auto put = [&](const std::array<int64_t, 4> &v,
                       const std::vector<double> &vals, int64_t heads) {
    for (int64_t t = 0; t < T; ++t)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t e = 0; e < D; ++e)
          EXPECT_TRUE(encode_exact(kind, vals[(t * heads + h) * D + e],
                                   &storage[at(v, t, h, e) * eb]));
  };
  put(qv, in.q, H);
  if (Hk > 0)
    put(kv, in.k, Hk);
  auto ib = Buffer::allocate(stream, storage.size());
  auto ob = Buffer::allocate(
      stream, static_cast<size_t>(std::max<int64_t>(out_elems, 1) * eb));
  EXPECT_TRUE(ib && ob);
  if (!ib || !ob)
    return r;
  EXPECT_TRUE(ib->copy_from_host(storage.data(), storage.size()));
  EXPECT_TRUE(ob->fill_bytes(kSentinel));
  const auto view = [&](const Buffer &b, const std::array<int64_t, 4> &v,
                        int64_t heads) {
    DynTensor t;
    t.data = static_cast<uint8_t *>(b.data()) + v[0] * eb, t.kind = kind,
    t.shape = Shape{T, heads, D};
    t.stride[0] = v[1], t.stride[1] = v[2], t.stride[2] = v[3];
    return t;
  };
  std::vector<uint8_t> pos_bytes;
  for (int64_t p : in.positions) {
    pos_bytes.resize(pos_bytes.size() + (d.position_kind == K::S32 ? 4 : 8));
    EXPECT_TRUE(encode_exact(
        d.position_kind, static_cast<double>(p),
        &pos_bytes[pos_bytes.size() - (d.position_kind == K::S32 ? 4 : 8)]));
  }
  auto pos = make_device_tensor(stream, d.position_kind, Shape{T},
                                dense_layout(Shape{T}), pos_bytes);
  std::vector<uint8_t> cache_bytes;
  for (double c : in.cache) {
    cache_bytes.resize(cache_bytes.size() +
                       static_cast<size_t>(element_bytes(d.cache_kind)));
    EXPECT_TRUE(encode_exact(
        d.cache_kind, c,
        &cache_bytes[cache_bytes.size() - element_bytes(d.cache_kind)]));
  }
  const Shape cs{d.max_position, d.rotary_dim()};
  auto cache = make_device_tensor(stream, d.cache_kind, cs, dense_layout(cs),
                                  cache_bytes);
  EXPECT_TRUE(pos && cache);
  if (!pos || !cache)
    return r;
  const bool cached = d.source == CosSinSource::Cache;
  const DynTensor q = view(*ib, qv, H),
                  k = Hk > 0 ? view(*ib, kv, Hk) : DynTensor{};
  const DynTensor q_out = in_place ? q : view(*ob, qo, H),
                  k_out = Hk == 0    ? DynTensor{}
                          : in_place ? k
                                     : view(*ob, ko, Hk);
  const Status st = plan->run(
      stream, Workspace::none(),
      {pos->view, cached ? cache->view : DynTensor{}, q, k, q_out, k_out});
  EXPECT_TRUE(st) << st.to_string();
  if (!st)
    return r;
  std::vector<uint8_t> out_storage(
      in_place ? storage.size()
               : static_cast<size_t>(std::max<int64_t>(out_elems, 1) * eb));
  EXPECT_TRUE((in_place ? *ib : *ob)
                  .copy_to_host(out_storage.data(), out_storage.size()));
  const auto get = [&](const std::array<int64_t, 4> &v, int64_t heads,
                       std::vector<double> *vals) {
    for (int64_t t = 0; t < T; ++t)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t e = 0; e < D; ++e)
          vals->push_back(
              decode_value(kind, &out_storage[at(v, t, h, e) * eb]));
  };
  get(in_place ? qv : qo, H, &r.q);
  if (Hk > 0)
    get(in_place ? kv : ko, Hk, &r.k);
  r.ok = true;
  return r;
}

/// Significand bits after the point of a kind (its ulp relative to a value's
/// binade).
inline int mantissa(K k) { return k == K::F16 ? 10 : k == K::Bf16 ? 7 : 23; }

/// Compares `got` with the host's `want` per element of [T, H, D] values `x`
/// (the inputs): pass-through dims exactly; rotated dims within one ulp of the
/// kind at `want` plus 8 f32 ulps of the pair's terms
/// (|x_a| + |x_b|)·bound, `bound` the largest |cos|, |sin| (the devices' f32
/// sincos, products and fma).
inline void expect_rotated_close(const RopeDescriptor &d,
                                 const std::vector<double> &got,
                                 const std::vector<double> &want,
                                 const std::vector<double> &x, double bound,
                                 const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  const int64_t D = d.head_dim, rot = d.rotary_dim(), half = rot / 2;
  const double tiny = d.element == K::F16 ? 0x1p-24 : 0x1p-133;
  int64_t bad = 0;
  for (size_t i = 0; i < got.size() && bad < 10; ++i) {
    const int64_t e = static_cast<int64_t>(i) % D,
                  row = static_cast<int64_t>(i) - e;
    if (e >= rot) {
      if (got[i] != want[i])
        ++bad, ADD_FAILURE() << what << " pass-through element " << i << ": "
                             << got[i] << " != " << want[i];
      continue;
    }
    int64_t partner;
    if (d.style == RopeStyle::NeoX)
      partner = e < half ? e + half : e - half;
    else
      partner = e % 2 == 0 ? e + 1 : e - 1;
    const double terms =
        (std::fabs(x[i]) + std::fabs(x[row + partner])) * bound;
    const double tol = std::ldexp(std::fabs(want[i]), -mantissa(d.element)) +
                       tiny + terms * 0x1p-21;
    if (!(std::fabs(got[i] - want[i]) <= tol))
      ++bad, ADD_FAILURE() << what << " element " << i << " (dim " << e
                           << "): " << got[i] << " vs " << want[i]
                           << " tolerance " << tol;
  }
}

} // namespace baracuda::test::rope
