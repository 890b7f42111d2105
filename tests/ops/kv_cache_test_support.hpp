// Test support of the kv_cache family: a KvCacheAppendPlan problem (values, slots, scales) laid out on a
// device — key and value dense, fused in one qkv buffer, padded or one element off alignment; the caches as two
// tensors apart, views of one combined [num_blocks, 2, block_size, H, D] buffer, padded, or misaligned — run,
// and the caches' whole buffer read back (every byte: the views, their gaps and the sentinel around them);
// the expected cache element of a key element, computed here from the contract's formula.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "baracuda/core/buffer.hpp"
#include "baracuda/core/stream.hpp"
#include "baracuda/ops/kv_cache.hpp"
#include "support/numeric.hpp"
#include "support/tensor.hpp"

namespace baracuda::test::kv {

using K = ElementKind;

/// How key/value and the caches lie in memory.
enum class Layout {
  Dense,     ///< key then value, dense; caches two dense tensors 16 elements apart
  Combined,  ///< key and value views of a [T, 3H, D] qkv buffer; caches views of one [N, 2, B, H, D] buffer
  Padded,    ///< key/value and cache rows padded by 16 elements per head and page (still 16-byte aligned)
  Offset,    ///< every view one element past a 16-byte boundary (the element-wise path)
};
inline const char* to_string(Layout l) {
  static const char* const kNames[] = {"dense", "combined", "padded", "offset"};
  return kNames[static_cast<int>(l)];
}

/// A problem's values: key and value row-major [T, H, D], the slots, the scales (empty for a copy).
struct Problem {
  KvCacheAppendDescriptor d;
  std::vector<double> key, value;
  std::vector<int64_t> slots;
  std::vector<float> k_scale, v_scale;
};

/// A view's element offset and strides into its buffer.
struct View {
  int64_t offset = 0;
  std::array<int64_t, 4> stride{};
  int64_t at(int64_t a, int64_t b, int64_t c, int64_t e = 0) const {
    return offset + a * stride[0] + b * stride[1] + c * stride[2] + e * stride[3];
  }
};

/// The caches' buffer after a run, and where the two views lie in it.
struct Outcome {
  std::vector<uint8_t> cache;  ///< every byte of the one cache buffer
  View kc, vc;
  bool ok = false;
};

inline int64_t bytes_of(K k) { return element_bytes(k); }

/// Runs the plan selected on `stream` for `p` with `layout`; the caches start as kSentinel bytes.
inline Outcome run_append(const Stream& stream, const Problem& p, Layout layout) {
  Outcome r;
  const KvCacheAppendDescriptor& d = p.d;
  auto plan = dynamic::KvCacheAppendPlan::select(stream, d);
  EXPECT_TRUE(plan) << plan.status().to_string();
  if (!plan) return r;
  const int64_t T = d.num_tokens, H = d.num_kv_heads, D = d.head_dim, N = d.num_blocks, B = d.block_size;
  const int64_t eb = bytes_of(d.element), cb = bytes_of(d.cache_kind);
  const int64_t lead = layout == Layout::Offset ? 1 : 0, pad = layout == Layout::Padded ? 16 : 0;
  // key/value views {offset, token stride, head stride, 1}.
  View kv_k, kv_v;
  int64_t in_elems = 0;
  if (layout == Layout::Combined) {
    kv_k = {H * D, {3 * H * D, D, 1, 0}}, kv_v = {2 * H * D, {3 * H * D, D, 1, 0}}, in_elems = T * 3 * H * D;
  } else {
    const int64_t hs = D + pad, ts = H * hs + pad;
    kv_k = {lead, {ts, hs, 1, 0}}, kv_v = {lead + T * ts + 16, {ts, hs, 1, 0}}, in_elems = lead + 2 * T * ts + 16;
  }
  // cache views {offset, page, token, head, 1}.
  int64_t c_elems = 0;
  if (layout == Layout::Combined || layout == Layout::Padded) {
    const int64_t hs = D + pad, os = H * hs + pad, page = B * os + pad;
    r.kc = {16, {2 * page, os, hs, 1}}, r.vc = {16 + page, {2 * page, os, hs, 1}}, c_elems = 32 + 2 * N * page;
  } else {
    const int64_t n = N * B * H * D;
    r.kc = {16 + lead, {B * H * D, H * D, D, 1}}, r.vc = {32 + lead + n, {B * H * D, H * D, D, 1}};
    c_elems = 48 + 2 * n;
  }
  std::vector<uint8_t> in(static_cast<size_t>(std::max<int64_t>(in_elems, 1) * eb), kSentinel);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t e = 0; e < D; ++e) {
        const size_t i = static_cast<size_t>((t * H + h) * D + e);
        EXPECT_TRUE(encode_exact(d.element, p.key[i], &in[kv_k.at(t, h, e) * eb]));
        EXPECT_TRUE(encode_exact(d.element, p.value[i], &in[kv_v.at(t, h, e) * eb]));
      }
  std::vector<uint8_t> slots;
  for (int64_t s : p.slots) {
    const int64_t w = d.slot_kind == K::S32 ? 4 : 8;
    slots.resize(slots.size() + static_cast<size_t>(w));
    std::memcpy(&slots[slots.size() - w], &s, static_cast<size_t>(w));  // little-endian: the low bytes
  }
  auto ib = Buffer::allocate(stream, in.size());
  auto cbuf = Buffer::allocate(stream, static_cast<size_t>(c_elems * cb));
  auto sb = Buffer::allocate(stream, std::max<size_t>(slots.size(), 8));
  auto scb = Buffer::allocate(stream, 4 * (p.k_scale.size() + p.v_scale.size() + 1));
  EXPECT_TRUE(ib && cbuf && sb && scb);
  if (!ib || !cbuf || !sb || !scb) return r;
  EXPECT_TRUE(ib->copy_from_host(in.data(), in.size()));
  EXPECT_TRUE(cbuf->fill_bytes(kSentinel));
  if (!slots.empty()) EXPECT_TRUE(sb->copy_from_host(slots.data(), slots.size()));
  std::vector<float> scales = p.k_scale;
  scales.insert(scales.end(), p.v_scale.begin(), p.v_scale.end());
  if (!scales.empty()) EXPECT_TRUE(scb->copy_from_host(scales.data(), 4 * scales.size()));
  const auto tok = [&](const View& v) {
    ConstDynTensor t;
    t.data = static_cast<const uint8_t*>(ib->data()) + v.offset * eb, t.kind = d.element, t.shape = d.token_shape();
    t.stride[0] = v.stride[0], t.stride[1] = v.stride[1], t.stride[2] = v.stride[2];
    return t;
  };
  const auto cache = [&](const View& v) {
    DynTensor t;
    t.data = static_cast<uint8_t*>(cbuf->data()) + v.offset * cb, t.kind = d.cache_kind, t.shape = d.cache_shape();
    for (int i = 0; i < 4; ++i) t.stride[i] = v.stride[i];
    return t;
  };
  const auto scale = [&](size_t first, size_t count) {
    if (count == 0) return ConstDynTensor{};
    return ConstDynTensor::dense(static_cast<const float*>(scb->data()) + first, K::F32,
                                 Shape{static_cast<int64_t>(count)});
  };
  const dynamic::KvCacheAppendArgs args{tok(kv_k),
                                        tok(kv_v),
                                        ConstDynTensor::dense(sb->data(), d.slot_kind, Shape{T}),
                                        scale(0, p.k_scale.size()),
                                        scale(p.k_scale.size(), p.v_scale.size()),
                                        cache(r.kc),
                                        cache(r.vc)};
  const Status st = plan->run(stream, Workspace::none(), args);
  EXPECT_TRUE(st) << st.to_string();
  if (!st) return r;
  r.cache.resize(static_cast<size_t>(c_elems * cb));
  EXPECT_TRUE(cbuf->copy_to_host(r.cache.data(), r.cache.size()));
  r.ok = true;
  return r;
}

/// The E4M3 code nearest to y (ties to the even code), saturating to ±448, NaN → 0x7F: a search over the
/// format's 127 non-negative finite codes, independent of the library's encoders.
inline uint8_t nearest_e4m3(float y) {
  if (std::isnan(y)) return 0x7F;
  const uint8_t sign = std::signbit(y) ? 0x80 : 0;
  const double a = std::min<double>(std::fabs(static_cast<double>(y)), 448.0);
  uint8_t best = 0;
  double best_err = INFINITY;
  for (int c = 0; c < 0x7F; ++c) {
    const uint8_t code = static_cast<uint8_t>(c);
    const double err = std::fabs(decode_value(K::Fp8E4M3, &code) - a);
    if (err < best_err || (err == best_err && c % 2 == 0)) best = code, best_err = err;
  }
  return sign | best;
}

/// The cache element (its bytes, `cache_kind`'s width) of an element x stored with scale s: x's bits (copy), or
/// y = x / s in f32 (one float division) rounded to E4M3 (nearest_e4m3) or to s8 (half to even, clamped to
/// [−128, 127], NaN → 0).
inline std::vector<uint8_t> expected_element(const KvCacheAppendDescriptor& d, double x, float s) {
  std::vector<uint8_t> b(static_cast<size_t>(bytes_of(d.cache_kind)));
  if (!d.quantized()) {
    EXPECT_TRUE(encode_exact(d.element, x, b.data()));
    return b;
  }
  const float y = static_cast<float>(x) / s;  // x is exact in f32
  if (d.cache_kind == K::Fp8E4M3) {
    b[0] = nearest_e4m3(y);
  } else {
    const double r = std::isnan(y) ? 0.0 : std::clamp(std::nearbyint(static_cast<double>(y)), -128.0, 127.0);
    const auto q = static_cast<int8_t>(r);
    std::memcpy(b.data(), &q, 1);
  }
  return b;
}

/// Checks every byte of `o.cache`: each element of a token's valid slot (the last token wins for a slot listed
/// twice: none of the callers does) holds expected_element, every other byte is still kSentinel.
inline void expect_cache(const Problem& p, const Outcome& o, const std::string& what) {
  const KvCacheAppendDescriptor& d = p.d;
  const int64_t H = d.num_kv_heads, D = d.head_dim, cb = bytes_of(d.cache_kind);
  std::vector<uint8_t> want(o.cache.size(), kSentinel);
  for (int64_t t = 0; t < d.num_tokens; ++t) {
    const int64_t slot = p.slots[static_cast<size_t>(t)];
    if (slot < 0 || slot >= d.num_blocks * d.block_size) continue;
    for (int side = 0; side < 2; ++side)
      for (int64_t h = 0; h < H; ++h) {
        const std::vector<float>& sc = side == 0 ? p.k_scale : p.v_scale;
        const float s = sc.empty() ? 1.0f : sc[sc.size() == 1 ? 0 : static_cast<size_t>(h)];
        for (int64_t e = 0; e < D; ++e) {
          const double x = (side == 0 ? p.key : p.value)[static_cast<size_t>((t * H + h) * D + e)];
          const View& v = side == 0 ? o.kc : o.vc;
          const auto b = expected_element(d, x, s);
          std::memcpy(&want[static_cast<size_t>(v.at(slot / d.block_size, slot % d.block_size, h, e) * cb)], b.data(),
                      b.size());
        }
      }
  }
  int bad = 0;
  for (size_t i = 0; i < want.size() && bad < 10; ++i)
    if (want[i] != o.cache[i])
      ++bad, ADD_FAILURE() << what << ": cache byte " << i << " is 0x" << std::hex << int{o.cache[i]} << ", expected 0x"
                           << int{want[i]} << std::dec;
}

}  // namespace baracuda::test::kv
