// Helpers shared by the chunked-prefill tests: a problem (descriptor, raw cu_seqlens_q, context lengths and block
// table, the operands' layouts), its operands in host memory (inputs random, outputs a sentinel), a run on any
// device, and an f64 evaluation of paged_prefill.hpp's contract written here independently of the library: its own
// gather through the block table, effective offsets and lengths, masks, dequantization (code·scale, the codes
// drawn and decoded by paged_decode_test_support.hpp) and softmax. The comparison uses the attention tests' bounds
// (attention_test_support.hpp): the same kernel arithmetic, with max|v·v_scale| for max|v|.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "attention_test_support.hpp"  // Layout, layout_of, RowExpect, Bound; get, put, unit, tiny
#include "baracuda/baracuda.hpp"
#include "baracuda/ops/paged_prefill.hpp"
#include "paged_decode_test_support.hpp"  // cache_put, cache_get, code_unit: the FP8 and s8 codes

namespace baracuda::test::prefill {

using attention::Bound;
using attention::LayoutKind2;
using attention::RowExpect;
using gemm::get;
using gemm::put;
using gemm::tiny;
using gemm::unit;

/// How the caches `[num_blocks, block_size, H_kv, d]` sit in their buffers.
enum class CacheLayout {
  Dense,
  Padded,     ///< gaps after heads, rows and pages; every stride a multiple of 8 (the 16-byte path)
  Unaligned,  ///< odd strides: the element path
  HeadMajor,  ///< [num_blocks, H_kv, block_size, d] in memory
  Reversed    ///< dense pages, last page first: a negative page stride
};

/// Element strides of a cache view and the offset of element (0, 0, 0, 0) in its buffer.
struct CacheStrides {
  int64_t block = 0, tok = 0, head = 0, lead = 0;
};

/// One problem: the descriptor, the raw cu_seqlens_q, context lengths and block table (any values), the layouts.
struct Problem {
  PagedPrefillDescriptor d;
  std::vector<int32_t> cu;     ///< [B + 1]
  std::vector<int32_t> ctx;    ///< [B]
  std::vector<int32_t> table;  ///< [B, max_blocks_per_seq], row-major here (laid out by Data)
  LayoutKind2 qo = LayoutKind2::Dense;
  CacheLayout cache = CacheLayout::Dense;
  bool strided_meta = false;  ///< block table column-major, context_lens stride 2, lse token-major with gaps
  double value_scale = 1.0;   ///< q and the (dequantized) keys drawn from [-value_scale, value_scale]
  int64_t k_scale_stride = 1, v_scale_stride = 1;  ///< the scales' views (per head: any stride, negative too)

  /// The caches hold `cache` codes (Fp8E4M3, S8) dequantized with scales laid out as `layout` says.
  Problem& quantize(ElementKind cache, KvScaleLayout layout) {
    d.with_kinds(d.element, cache).with_scale_layout(layout);
    return *this;
  }

  /// B sequences with chunks of `chunks[b]` tokens at the end of `lens[b]` cached tokens (valid cu_seqlens_q).
  /// Shuffled: every other page of a pool twice the size needed, in a random order; otherwise pages 0, 1, ... in
  /// order (one sequence's keys contiguous in the cache). Unused table entries −1.
  static Problem make(const std::vector<int32_t>& chunks, const std::vector<int32_t>& lens, int64_t h, int64_t h_kv,
                      int64_t dim, ElementKind e, int64_t block_size, bool shuffle = true, uint64_t seed = 1) {
    Problem p;
    p.cu.push_back(0);
    for (int32_t c : chunks) p.cu.push_back(p.cu.back() + c);
    const int64_t max_q = chunks.empty() ? 0 : *std::max_element(chunks.begin(), chunks.end());
    auto pages_of = [&](int32_t len) { return (std::max<int64_t>(len, 0) + block_size - 1) / block_size; };
    int64_t max_pages = 1, pages = 0;
    for (int32_t len : lens) max_pages = std::max(max_pages, pages_of(len)), pages += pages_of(len);
    std::vector<int32_t> ids;
    for (int64_t i = 0; i < pages; ++i) ids.push_back(static_cast<int32_t>(shuffle ? 2 * i + 1 : i));
    if (shuffle) std::shuffle(ids.begin(), ids.end(), std::mt19937_64(seed));
    p.d = PagedPrefillDescriptor{}
              .with_element(e)
              .with_shape(static_cast<int64_t>(chunks.size()), p.cu.back(), max_q, h, h_kv, dim)
              .with_pages(shuffle ? 2 * pages + 1 : std::max<int64_t>(pages, 1), block_size, max_pages);
    p.ctx = lens;
    p.table.assign(lens.size() * static_cast<size_t>(max_pages), -1);
    size_t next = 0;
    for (size_t b = 0; b < lens.size(); ++b)
      for (int64_t i = 0; i < pages_of(lens[b]); ++i) p.table[b * max_pages + i] = ids[next++];
    return p;
  }

  /// The effective chunk offsets c'[b] = min(T_q, max(0, c[0..b])).
  std::vector<int64_t> bounds() const {
    std::vector<int64_t> c;
    int64_t run = 0;
    for (int64_t b = 0; b <= d.batch; ++b) {
      run = std::max<int64_t>(run, cu[static_cast<size_t>(b)]);
      c.push_back(std::min(run, d.total_q));
    }
    return c;
  }
  /// The effective context length of sequence b: clamped to [0, max_blocks_per_seq·block_size].
  int64_t length(int64_t b) const {
    return std::clamp<int64_t>(ctx[static_cast<size_t>(b)], 0, d.max_blocks_per_seq * d.block_size);
  }
  double tau() const {
    const double s = d.softmax_scale == 0 ? 1.0 / std::sqrt(static_cast<double>(d.head_dim)) : d.softmax_scale;
    return static_cast<double>(static_cast<float>(s));
  }
  attention::Layout lq() const { return attention::layout_of(qo, d.total_q, d.heads, d.head_dim); }
  CacheStrides lc() const {
    const int64_t dim = d.head_dim, hk = d.kv_heads, bs = d.block_size, page = bs * hk * dim;
    switch (cache) {
      case CacheLayout::Padded: return {bs * (hk * (dim + 8) + 8) + 16, hk * (dim + 8) + 8, dim + 8, 8};
      case CacheLayout::Unaligned: return {bs * (hk * (dim + 3) + 1) + 5, hk * (dim + 3) + 1, dim + 3, 1};
      case CacheLayout::HeadMajor: return {page, dim, bs * dim, 0};
      case CacheLayout::Reversed: return {-page, hk * dim, dim, (d.num_blocks - 1) * page};
      default: return {page, hk * dim, dim, 0};
    }
  }
  int64_t cache_span() const {
    const CacheStrides s = lc();
    return s.lead + (d.num_blocks - 1) * std::max<int64_t>(s.block, 0) + (d.block_size - 1) * s.tok +
           (d.kv_heads - 1) * s.head + d.head_dim;
  }
  // Block table (b, j) at b·bt_seq + j·bt_page; context_lens b at b·cl_stride; lse (h, t) at h·lse_head + t·lse_tok.
  int64_t bt_seq() const { return strided_meta ? 1 : d.max_blocks_per_seq; }
  int64_t bt_page() const { return strided_meta ? std::max<int64_t>(d.batch, 1) : 1; }
  int64_t cl_stride() const { return strided_meta ? 2 : 1; }
  int64_t lse_head() const { return strided_meta ? 1 : d.total_q; }
  int64_t lse_tok() const { return strided_meta ? d.heads + 1 : 1; }
  int64_t lse_span() const { return std::max<int64_t>(d.heads * d.total_q * (strided_meta ? 2 : 1), 1); }
};

/// The outputs of a run, downloaded.
struct Outputs {
  std::vector<uint8_t> o, lse;
};

/// A quantized cache's scales as the plan reads them: `scale_shape()` f32 values at s[lead + i·stride], the gaps
/// 1e30 (so a wrong read shows).
struct Scales {
  std::vector<float> s;
  int64_t stride = 1, lead = 0;
  double at(int64_t i) const { return s[static_cast<size_t>(lead + i * stride)]; }
};

/// The operands of a problem in host memory, laid out as the problem says, and the inputs decoded to double (the
/// caches' codes before their scales).
struct Data {
  Problem p;
  std::vector<uint8_t> q, k, v, o, lse;  // o and lse: the sentinel 0xA5
  std::vector<int32_t> table, ctx;       // laid out (gaps: a length no sequence has, so a wrong read shows)
  std::vector<double> qd, kd, vd;
  Scales k_scale, v_scale;  // empty unless quantized

  Data(const Problem& prob, uint64_t seed) : p(prob) {
    const PagedPrefillDescriptor& d = p.d;
    std::mt19937_64 rng(seed);
    // n elements of `kind` from x ∈ [-range, range] (an FP8 or s8 code of x, paged_decode_test_support.hpp's).
    auto fill = [&](ElementKind kind, int64_t n, double range, std::vector<double>& decoded) {
      std::vector<uint8_t> s(static_cast<size_t>(std::max<int64_t>(n, 1)) * (element_bits(kind) / 8), 0);
      std::uniform_real_distribution<double> u(-range, range);
      for (int64_t i = 0; i < n; ++i) paged::cache_put(kind, s, i, u(rng));
      decoded.resize(static_cast<size_t>(std::max<int64_t>(n, 0)));
      for (int64_t i = 0; i < n; ++i) decoded[static_cast<size_t>(i)] = paged::cache_get(kind, s, i);
      return s;
    };
    q = fill(d.element, p.lq().span(d.total_q, d.heads, d.head_dim), p.value_scale, qd);
    k = fill(d.cache_kind, p.cache_span(), d.quantized() ? 1.0 : p.value_scale, kd);
    v = fill(d.cache_kind, p.cache_span(), 1.0, vd);
    if (d.quantized()) {
      // Dequantized values about as the unquantized caches': keys in [-value_scale, value_scale], values in [-1, 1].
      std::uniform_real_distribution<double> su(0.5, 1.5);
      const double unit = paged::code_unit(d.cache_kind);
      auto scales = [&](int64_t stride, double base) {
        const int64_t n = d.scale_shape()[0], span = (n - 1) * std::abs(stride) + 1;
        Scales r{std::vector<float>(static_cast<size_t>(span), 1e30f), stride, stride < 0 ? span - 1 : 0};
        for (int64_t i = 0; i < n; ++i)
          r.s[static_cast<size_t>(r.lead + i * stride)] = static_cast<float>(base * su(rng));
        return r;
      };
      k_scale = scales(p.k_scale_stride, unit * p.value_scale);
      v_scale = scales(p.v_scale_stride, unit);
    }
    table.assign(static_cast<size_t>(std::max<int64_t>(d.batch * d.max_blocks_per_seq, 1)), 0);
    for (int64_t b = 0; b < d.batch; ++b)
      for (int64_t j = 0; j < d.max_blocks_per_seq; ++j)
        table[static_cast<size_t>(b * p.bt_seq() + j * p.bt_page())] =
            p.table[static_cast<size_t>(b * d.max_blocks_per_seq + j)];
    ctx.assign(static_cast<size_t>(std::max<int64_t>(d.batch * p.cl_stride(), 1)), 1 << 29);
    for (int64_t b = 0; b < d.batch; ++b) ctx[static_cast<size_t>(b * p.cl_stride())] = p.ctx[static_cast<size_t>(b)];
    o.assign(q.size(), 0xA5);
    lse.assign(static_cast<size_t>(p.lse_span()) * 4, 0xA5);
  }

  int64_t q_at(int64_t t, int64_t h, int64_t c) const {
    const attention::Layout l = p.lq();
    return l.lead + t * l.tok + h * l.head + c;
  }
  int64_t cache_at(int64_t page, int64_t off, int64_t hk, int64_t c) const {
    const CacheStrides s = p.lc();
    return s.lead + page * s.block + off * s.tok + hk * s.head + c;
  }
  /// Kv head hk's dequantization scale of K (V): 1 for an unquantized cache.
  double scale_of(const Scales& s, int64_t hk) const {
    if (!p.d.quantized()) return 1.0;
    return s.at(p.d.scale_layout == KvScaleLayout::PerHead ? hk : 0);
  }

  /// Chunk token i of sequence b, query head h, in f64 from the definition: its keys gathered through the block
  /// table (pages outside [0, num_blocks) masked) and dequantized (code·scale, exact in f64), causal bottom-right
  /// aligned and the left window, softmax against the maximum, o = Σ p·v / Σ p, lse = m + ln Σ p (+inf with no
  /// key); vmax is max|v·v_scale| over the visible keys.
  RowExpect expect(int64_t b, int64_t i, int64_t h) const {
    const PagedPrefillDescriptor& d = p.d;
    const std::vector<int64_t> c = p.bounds();
    const int64_t s_q = c[b + 1] - c[b], len = p.length(b), t = c[b] + i;
    const int64_t pos = len - s_q + i, hk = h / (d.heads / d.kv_heads);
    const double ks = scale_of(k_scale, hk), vs = scale_of(v_scale, hk);
    RowExpect r;
    r.o.assign(static_cast<size_t>(d.head_dim), 0.0);
    r.lse = std::numeric_limits<double>::infinity();
    std::vector<double> sc;
    std::vector<int64_t> rows;  // the visible keys' cache offsets (page, offset, head hk)
    for (int64_t j = 0; j < len; ++j) {
      if (d.causal && j > pos) continue;
      if (d.window_left >= 0 && j < pos - d.window_left) continue;
      const int32_t page = p.table[static_cast<size_t>(b * d.max_blocks_per_seq + j / d.block_size)];
      if (page < 0 || page >= d.num_blocks) continue;
      const int64_t at = cache_at(page, j % d.block_size, hk, 0);
      double dot = 0, mag = 0;
      for (int64_t e = 0; e < d.head_dim; ++e) {
        const double x = qd[static_cast<size_t>(q_at(t, h, e))] * (kd[static_cast<size_t>(at + e)] * ks);
        dot += x, mag += std::fabs(x);
      }
      sc.push_back(p.tau() * dot);
      r.serr = std::max(r.serr, std::ldexp(static_cast<double>(d.head_dim), -23) * p.tau() * mag);
      rows.push_back(at);
    }
    if (rows.empty()) return r;
    r.empty = false;
    const double m = *std::max_element(sc.begin(), sc.end());
    double sum = 0;
    for (size_t n = 0; n < rows.size(); ++n) {
      const double w = std::exp(sc[n] - m);
      sum += w;
      for (int64_t e = 0; e < d.head_dim; ++e) {
        const double x = vd[static_cast<size_t>(rows[n] + e)] * vs;
        r.o[static_cast<size_t>(e)] += w * x;
        r.vmax = std::max(r.vmax, std::fabs(x));
      }
    }
    for (double& x : r.o) x /= sum;
    r.lse = m + std::log(sum);
    return r;
  }
};

/// Uploads every operand to `st`'s device, selects, runs (no workspace) and downloads o and lse. `sku` receives the
/// plan's SKU.
inline Status run_on(const Stream& st, const Data& x, Outputs& out, KernelSku* sku = nullptr) {
  const Problem& p = x.p;
  const PagedPrefillDescriptor& d = p.d;
  auto up = [&](const void* data, size_t bytes) -> Result<Buffer> {
    auto b = Buffer::allocate(st, std::max<size_t>(bytes, 16));
    if (!b) return b.error();
    if (bytes > 0) BARACUDA_TRY(b->copy_from_host(data, bytes));
    return b;
  };
  auto bq = up(x.q.data(), x.q.size()), bk = up(x.k.data(), x.k.size()), bv = up(x.v.data(), x.v.size());
  auto bt = up(x.table.data(), x.table.size() * 4), bc = up(x.ctx.data(), x.ctx.size() * 4);
  auto bu = up(p.cu.data(), p.cu.size() * 4), bo = up(x.o.data(), x.o.size()), bl = up(x.lse.data(), x.lse.size());
  auto bks = up(x.k_scale.s.data(), x.k_scale.s.size() * 4), bvs = up(x.v_scale.s.data(), x.v_scale.s.size() * 4);
  for (auto* b : {&bq, &bk, &bv, &bt, &bc, &bu, &bo, &bl, &bks, &bvs})
    if (!*b) return b->error();
  auto view = [](void* base, ElementKind kind, const Shape& s, std::array<int64_t, kMaxRank> stride, int64_t lead) {
    DynTensor t;
    t.data = static_cast<uint8_t*>(base) + lead * (element_bits(kind) / 8);
    t.kind = kind, t.shape = s, t.stride = stride;
    return t;
  };
  const attention::Layout lq = p.lq();
  const CacheStrides lc = p.lc();
  const std::array<int64_t, kMaxRank> qs{lq.tok, lq.head, 1}, cs{lc.block, lc.tok, lc.head, 1};
  dynamic::PagedPrefillArgs a;
  a.q = view(bq->data(), d.element, d.q_shape(), qs, lq.lead);
  a.key_cache = view(bk->data(), d.cache_kind, d.cache_shape(), cs, lc.lead);
  a.value_cache = view(bv->data(), d.cache_kind, d.cache_shape(), cs, lc.lead);
  a.block_tables =
      view(bt->data(), ElementKind::S32, Shape{d.batch, d.max_blocks_per_seq}, {p.bt_seq(), p.bt_page()}, 0);
  a.context_lens = view(bc->data(), ElementKind::S32, Shape{d.batch}, {p.cl_stride()}, 0);
  a.cu_seqlens_q = view(bu->data(), ElementKind::S32, Shape{d.batch + 1}, {1}, 0);
  if (d.quantized()) {
    a.k_scale = view(bks->data(), ElementKind::F32, d.scale_shape(), {x.k_scale.stride}, x.k_scale.lead);
    a.v_scale = view(bvs->data(), ElementKind::F32, d.scale_shape(), {x.v_scale.stride}, x.v_scale.lead);
  }
  a.o = view(bo->data(), d.element, d.q_shape(), qs, lq.lead);
  if (d.return_lse)
    a.lse = view(bl->data(), ElementKind::F32, Shape{d.heads, d.total_q}, {p.lse_head(), p.lse_tok()}, 0);
  auto plan = dynamic::PagedPrefillPlan::select(st, d);
  if (!plan) return plan.error();
  if (sku != nullptr) *sku = plan->sku();
  BARACUDA_TRY(plan->run(st, {}, a));
  BARACUDA_TRY(st.synchronize());
  out.o.assign(x.o.size(), 0), out.lse.assign(x.lse.size(), 0);
  BARACUDA_TRY(bo->copy_to_host(out.o.data(), out.o.size()));
  return bl->copy_to_host(out.lse.data(), out.lse.size());
}

/// Checks every row the contract writes (chunk rows below max_seqlen_q of the effective chunks) against the f64
/// evaluation with attention_test_support.hpp's bounds: a row that sees no key exactly o = 0 and lse = +inf; every
/// other element of o's and lse's storage keeps the sentinel. Returns the failures (the first 5 reported).
inline int64_t check(const Data& x, const Outputs& got, Bound bound, const std::string& what) {
  const PagedPrefillDescriptor& d = x.p.d;
  const std::vector<int64_t> c = x.p.bounds();
  const double u = unit(d.element);
  std::vector<bool> o_cov(got.o.size() / 2, false), l_cov(got.lse.size() / 4, false);
  int64_t bad = 0;
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t i = 0; i < std::min(c[b + 1] - c[b], d.max_seqlen_q); ++i)
      for (int64_t h = 0; h < d.heads; ++h) {
        const RowExpect r = x.expect(b, i, h);
        const int64_t t = c[b] + i;
        for (int64_t e = 0; e < d.head_dim; ++e) {
          const int64_t at = x.q_at(t, h, e);
          o_cov[static_cast<size_t>(at)] = true;
          const double want = r.o[static_cast<size_t>(e)], g = get(d.element, got.o, at);
          const double tol = r.empty                    ? 0.0
                             : bound == Bound::Rounding ? u * std::fabs(want) + tiny(d.element) + 1e-12
                                                        : (3 * u + 2 * r.serr) * r.vmax + u * std::fabs(want) + 1e-6;
          if (!(std::fabs(g - want) <= tol) && bad++ < 5)
            ADD_FAILURE() << what << ": o[" << t << ", " << h << ", " << e << "] (sequence " << b << ", chunk row " << i
                          << ") = " << g << ", expected " << want << " (tolerance " << tol << ")";
        }
        if (!d.return_lse) continue;
        const int64_t at = h * x.p.lse_head() + t * x.p.lse_tok();
        l_cov[static_cast<size_t>(at)] = true;
        float g;
        std::memcpy(&g, got.lse.data() + at * 4, 4);
        const double tol = bound == Bound::Rounding ? std::ldexp(std::fabs(r.lse), -24) + 1e-12
                                                    : std::ldexp(1.0 + std::fabs(r.lse), -16) + 2 * r.serr;
        const bool ok = r.empty ? std::isinf(g) && g > 0 : std::fabs(g - r.lse) <= tol;
        if (!ok && bad++ < 5)
          ADD_FAILURE() << what << ": lse[" << h << ", " << t << "] (sequence " << b << ", chunk row " << i
                        << ") = " << g << ", expected " << r.lse;
      }
  for (size_t i = 0; i < o_cov.size(); ++i)
    if (!o_cov[i] && (got.o[2 * i] != 0xA5 || got.o[2 * i + 1] != 0xA5) && bad++ < 5)
      ADD_FAILURE() << what << ": o's storage element " << i << " was written, but no chunk row covers it";
  for (size_t i = 0; i < l_cov.size(); ++i)
    if (!l_cov[i] && got.lse[4 * i] != 0xA5 && bad++ < 5)
      ADD_FAILURE() << what << ": lse's storage element " << i << " was written, but no chunk row covers it";
  return bad;
}

}  // namespace baracuda::test::prefill
