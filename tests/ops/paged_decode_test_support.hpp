// Helpers shared by the paged decode tests: a problem (descriptor, raw context lengths and block table, layouts),
// its operands in host memory (inputs random, outputs a sentinel), a run on any device, and an f64 evaluation of
// the contract written here from paged_attention.hpp's rules, independently of the library: its own gather through
// the block table, effective lengths, masks, dequantization and softmax.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "baracuda/ops/paged_attention.hpp"
#include "gemm_test_support.hpp"  // get, put, unit, tiny

namespace baracuda::test::paged {

using gemm::get;
using gemm::put;
using gemm::tiny;
using gemm::unit;

/// How q/o and the caches are laid out in their buffers.
enum class Layout {
  Dense,     ///< q/o [T, H, d]; two dense caches
  Combined,  ///< q/o with padded rows; one cache buffer [num_blocks, 2, block_size, H_kv, d] (K then V per page)
  Unaligned  ///< odd strides everywhere: the element-load path
};

/// One problem: the descriptor, the raw context lengths and block table (any values), the layout.
struct Problem {
  PagedDecodeDescriptor d;
  std::vector<int32_t> ctx;    ///< [B]
  std::vector<int32_t> table;  ///< [B, max_blocks_per_seq]
  Layout layout = Layout::Dense;

  /// B sequences of the given lengths over distinct pages in a shuffled order (non-contiguous: every other page of
  /// a pool twice the size needed is used); unused table entries −1.
  static Problem make(const std::vector<int32_t>& lens, int64_t q_len, int64_t h, int64_t h_kv, int64_t dim,
                      ElementKind e, ElementKind cache, int64_t block_size, uint64_t seed = 1) {
    Problem p;
    int64_t max_pages = 1, pages = 0;
    for (int32_t len : lens) {
      const int64_t n = (std::max(len, 0) + block_size - 1) / block_size;
      max_pages = std::max(max_pages, n), pages += n;
    }
    const int64_t pool = 2 * pages + 1;
    p.d = PagedDecodeDescriptor{}
              .with_kinds(e, cache)
              .with_shape(static_cast<int64_t>(lens.size()), q_len, h, h_kv, dim)
              .with_pages(pool, block_size, max_pages);
    std::vector<int32_t> ids;
    for (int64_t i = 0; i < pages; ++i) ids.push_back(static_cast<int32_t>(2 * i + 1));
    std::shuffle(ids.begin(), ids.end(), std::mt19937_64(seed));
    p.ctx = lens;
    p.table.assign(static_cast<size_t>(lens.size() * max_pages), -1);
    size_t next = 0;
    for (size_t b = 0; b < lens.size(); ++b)
      for (int64_t i = 0; i < (std::max(lens[b], 0) + block_size - 1) / block_size; ++i)
        p.table[b * max_pages + i] = ids[next++];
    return p;
  }
  double tau() const {
    const double s = d.softmax_scale == 0 ? 1.0 / std::sqrt(static_cast<double>(d.head_dim)) : d.softmax_scale;
    return static_cast<double>(static_cast<float>(s));
  }
  // Element strides: q/o (token, head); caches (block, offset, head) and V's offset from K's base in one buffer.
  int64_t q_head() const {
    return layout == Layout::Dense ? d.head_dim : d.head_dim + (layout == Layout::Unaligned ? 3 : 8);
  }
  int64_t q_tok() const {
    return d.heads * q_head() + (layout == Layout::Dense ? 0 : 1 + 15 * (layout == Layout::Combined));
  }
  int64_t q_lead() const { return layout == Layout::Dense ? 0 : 8 + (layout == Layout::Unaligned); }
  int64_t q_span() const { return q_lead() + d.tokens() * q_tok() + 8; }
  int64_t c_head() const { return d.head_dim + (layout == Layout::Unaligned ? 1 : 0); }
  int64_t c_offset() const { return d.kv_heads * c_head(); }
  int64_t c_page() const { return d.block_size * c_offset(); }  // one of K or V
  int64_t c_block() const { return layout == Layout::Dense ? c_page() : 2 * c_page(); }
  int64_t v_base() const { return layout == Layout::Dense ? 0 : c_page(); }  // V's offset in the combined buffer
  int64_t c_span() const { return d.num_blocks * c_block() + 16; }
};

/// The exact value of cache element i (before the scale).
inline double cache_get(ElementKind k, const std::vector<uint8_t>& s, int64_t i) {
  if (k == ElementKind::S8) return static_cast<int8_t>(s[static_cast<size_t>(i)]);
  if (k == ElementKind::Fp8E4M3) {
    __nv_fp8_e4m3 x;
    std::memcpy(&x, &s[static_cast<size_t>(i)], 1);
    return static_cast<float>(x);
  }
  return get(k, s, i);
}

/// Stores cache element i of kind k from x: the s8 code round(127·x) or the FP8 E4M3 code of 6·x (rounded to
/// nearest; x ∈ [-1, 1]), else x rounded to k.
inline void cache_put(ElementKind k, std::vector<uint8_t>& s, int64_t i, double x) {
  if (k == ElementKind::S8) {
    s[static_cast<size_t>(i)] = static_cast<uint8_t>(static_cast<int8_t>(std::lround(x * 127)));
  } else if (k == ElementKind::Fp8E4M3) {
    const __nv_fp8_e4m3 c(static_cast<float>(x * 6));
    std::memcpy(&s[static_cast<size_t>(i)], &c, 1);
  } else {
    put(k, s, i, x);
  }
}
/// The scale that maps cache_put's codes of kind k back to about [-1, 1]: 1/127 (s8), 1/6 (FP8 E4M3).
inline double code_unit(ElementKind k) { return k == ElementKind::S8 ? 1.0 / 127 : 1.0 / 6; }

/// What the f64 evaluation gives for one query row.
struct RowExpect {
  std::vector<double> o;
  double lse = std::numeric_limits<double>::infinity();
  double vmax = 0;  ///< max |v·v_scale| over the visible keys
  double serr = 0;  ///< a bound of the f32 error of the kernels' scores: d·2^-23·τ·max_j Σ_c |q·k·k_scale|
  bool empty = true;
};

/// The operands of a problem in host memory.
struct Data {
  Problem p;
  std::vector<uint8_t> q, k, v, o, lse;  // k and v: one buffer (v empty) for the combined layout
  std::vector<float> k_scale, v_scale;   // [1] or [H_kv] (stored with stride 2 for per head: a strided view)

  Data(const Problem& prob, uint64_t seed) : p(prob) {
    const PagedDecodeDescriptor& d = p.d;
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    const size_t eb = 2;
    q.assign(static_cast<size_t>(p.q_span()) * eb, 0);
    for (int64_t i = 0; i < p.q_span(); ++i) put(d.element, q, i, u(rng));
    const size_t cb = static_cast<size_t>(element_bits(d.cache_kind) / 8);
    const int64_t cn = p.c_span();
    auto cache = [&] {
      std::vector<uint8_t> c(static_cast<size_t>(cn) * cb, 0);
      for (int64_t i = 0; i < cn; ++i) cache_put(d.cache_kind, c, i, u(rng));
      return c;
    };
    k = cache();
    if (p.layout == Layout::Dense) v = cache();
    if (d.quantized()) {
      const int64_t n = d.scale_layout == KvScaleLayout::PerHead ? d.kv_heads : 1;
      std::uniform_real_distribution<double> su(0.5, 1.5);
      const double base = code_unit(d.cache_kind);
      for (int64_t i = 0; i < 2 * n; ++i) {
        k_scale.push_back(static_cast<float>(base * su(rng)));
        v_scale.push_back(static_cast<float>(su(rng) * 0.25));
      }
    }
    o.assign(static_cast<size_t>(p.q_span()) * eb, 0xA5);
    lse.assign(static_cast<size_t>(std::max<int64_t>(d.tokens() * d.heads, 1)) * 4, 0xA5);
  }

  double scale_of(const std::vector<float>& s, int64_t hk) const {
    return p.d.scale_layout == KvScaleLayout::PerHead ? s[static_cast<size_t>(2 * hk)] : s[0];
  }
  double qv(int64_t t, int64_t h, int64_t c) const {
    return get(p.d.element, q, p.q_lead() + t * p.q_tok() + h * p.q_head() + c);
  }
  /// Element c of key (value) row `offset` of page `page`, head hk, dequantized.
  double cv(bool value, int64_t page, int64_t offset, int64_t hk, int64_t c) const {
    const std::vector<uint8_t>& buf = value && p.layout == Layout::Dense ? v : k;
    const int64_t i = (value ? p.v_base() : 0) + page * p.c_block() + offset * p.c_offset() + hk * p.c_head() + c;
    const double x = cache_get(p.d.cache_kind, buf, i);
    if (!p.d.quantized()) return x;
    return x * scale_of(value ? v_scale : k_scale, hk);
  }

  /// Query row (b, i, h) in f64 from the definition.
  RowExpect expect(int64_t b, int64_t i, int64_t h) const {
    const PagedDecodeDescriptor& d = p.d;
    const int64_t cap = d.max_blocks_per_seq * d.block_size;
    const int64_t len = std::min<int64_t>(std::max<int64_t>(p.ctx[static_cast<size_t>(b)], 0), cap);
    const int64_t last = len - d.q_len + i, first = d.window_left >= 0 ? last - d.window_left : 0;
    const int64_t hk = h / (d.heads / d.kv_heads), tok = b * d.q_len + i;
    RowExpect r;
    r.o.assign(static_cast<size_t>(d.head_dim), 0.0);
    std::vector<double> sc;
    std::vector<std::pair<int64_t, int64_t>> rows;  // (page, offset) of the visible keys
    for (int64_t j = std::max<int64_t>(first, 0); j <= last && j < len; ++j) {
      const int32_t page = p.table[static_cast<size_t>(b * d.max_blocks_per_seq + j / d.block_size)];
      if (page < 0 || page >= d.num_blocks) continue;  // masked: never read
      double dot = 0, mag = 0;
      for (int64_t c = 0; c < d.head_dim; ++c) {
        const double t = qv(tok, h, c) * cv(false, page, j % d.block_size, hk, c);
        dot += t, mag += std::fabs(t);
      }
      sc.push_back(p.tau() * dot);
      r.serr = std::max(r.serr, std::ldexp(static_cast<double>(d.head_dim), -23) * p.tau() * mag);
      rows.emplace_back(page, j % d.block_size);
    }
    if (rows.empty()) return r;
    r.empty = false;
    const double m = *std::max_element(sc.begin(), sc.end());
    double sum = 0;
    for (size_t n = 0; n < rows.size(); ++n) {
      const double w = std::exp(sc[n] - m);
      sum += w;
      for (int64_t c = 0; c < d.head_dim; ++c) {
        const double x = cv(true, rows[n].first, rows[n].second, hk, c);
        r.o[static_cast<size_t>(c)] += w * x;
        r.vmax = std::max(r.vmax, std::fabs(x));
      }
    }
    for (double& x : r.o) x /= sum;
    r.lse = m + std::log(sum);
    return r;
  }
};

/// The outputs of a run.
struct Outputs {
  std::vector<uint8_t> o, lse;
};

/// Uploads every operand to `st`'s device, selects and runs (with workspace_size() bytes of workspace), and
/// downloads o and lse. `plan_out` receives the plan's chosen splits.
inline Status run_on(const Stream& st, const Data& x, Outputs& out, int64_t* splits_out = nullptr) {
  const PagedDecodeDescriptor& d = x.p.d;
  auto up = [&](const void* data, size_t bytes) -> Result<Buffer> {
    auto b = Buffer::allocate(st, std::max<size_t>(bytes, 16));
    if (!b) return b.error();
    if (bytes > 0) BARACUDA_TRY(b->copy_from_host(data, bytes));
    return b;
  };
  auto bq = up(x.q.data(), x.q.size());
  auto bk = up(x.k.data(), x.k.size());
  auto bv = up(x.v.data(), x.v.size());
  auto bt = up(x.p.table.data(), x.p.table.size() * 4);
  auto bc = up(x.p.ctx.data(), x.p.ctx.size() * 4);
  auto bks = up(x.k_scale.data(), x.k_scale.size() * 4);
  auto bvs = up(x.v_scale.data(), x.v_scale.size() * 4);
  auto bo = up(x.o.data(), x.o.size());
  auto bl = up(x.lse.data(), x.lse.size());
  for (auto* b : {&bq, &bk, &bv, &bt, &bc, &bks, &bvs, &bo, &bl})
    if (!*b) return b->error();
  const Problem& p = x.p;
  const Shape qs = d.q_shape(), cs = d.cache_shape();
  const std::array<int64_t, kMaxRank> qst{p.q_tok(), p.q_head(), 1}, cst{p.c_block(), p.c_offset(), p.c_head(), 1};
  auto view = [](void* base, ElementKind k, Shape s, std::array<int64_t, kMaxRank> st, int64_t lead) {
    DynTensor t;
    t.data = static_cast<uint8_t*>(base) + lead * (element_bits(k) / 8);
    t.kind = k, t.shape = s, t.stride = st;
    return t;
  };
  dynamic::PagedDecodeArgs a;
  a.q = view(bq->data(), d.element, qs, qst, p.q_lead());
  a.key_cache = view(bk->data(), d.cache_kind, cs, cst, 0);
  a.value_cache = view(p.layout == Layout::Dense ? bv->data() : bk->data(), d.cache_kind, cs, cst, p.v_base());
  a.block_tables =
      view(bt->data(), ElementKind::S32, Shape{d.batch, d.max_blocks_per_seq}, {d.max_blocks_per_seq, 1}, 0);
  a.context_lens = view(bc->data(), ElementKind::S32, Shape{d.batch}, {1}, 0);
  if (d.quantized()) {
    const std::array<int64_t, kMaxRank> sst{2};
    a.k_scale = view(bks->data(), ElementKind::F32, d.scale_shape(), sst, 0);
    a.v_scale = view(bvs->data(), ElementKind::F32, d.scale_shape(), sst, 0);
  }
  a.o = view(bo->data(), d.element, qs, qst, p.q_lead());
  if (d.return_lse) a.lse = view(bl->data(), ElementKind::F32, Shape{d.tokens(), d.heads}, {d.heads, 1}, 0);
  auto plan = dynamic::PagedDecodePlan::select(st, d);
  if (!plan) return plan.error();
  if (splits_out != nullptr) *splits_out = plan->chosen_splits();
  auto ws = Buffer::allocate(st, std::max<size_t>(plan->workspace_size(), 16));
  if (!ws) return ws.error();
  BARACUDA_TRY(plan->run(st, Workspace(ws->data(), plan->workspace_size()), a));
  BARACUDA_TRY(st.synchronize());
  out.o.assign(x.o.size(), 0), out.lse.assign(x.lse.size(), 0);
  BARACUDA_TRY(bo->copy_to_host(out.o.data(), out.o.size()));
  return bl->copy_to_host(out.lse.data(), out.lse.size());
}

/// Compares every output row with the f64 evaluation: o within `o_bound(row)` per element, lse within the score
/// error and a few f32 ulps; rows that see no key exactly o = 0, lse = +inf. Elements of o outside the rows (the
/// padding of strided layouts) keep the sentinel. Returns the number of failures.
template <class Bound>
int64_t check(const Data& x, const Outputs& out, const std::string& what, Bound o_bound) {
  const PagedDecodeDescriptor& d = x.p.d;
  int64_t bad = 0;
  std::vector<bool> written(out.o.size() / 2, false);
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t i = 0; i < d.q_len; ++i)
      for (int64_t h = 0; h < d.heads; ++h) {
        const RowExpect r = x.expect(b, i, h);
        const int64_t tok = b * d.q_len + i;
        const double bound = o_bound(r);
        for (int64_t c = 0; c < d.head_dim; ++c) {
          const int64_t idx = x.p.q_lead() + tok * x.p.q_tok() + h * x.p.q_head() + c;
          written[static_cast<size_t>(idx)] = true;
          const double got = get(d.element, out.o, idx), want = r.o[static_cast<size_t>(c)];
          const double tol = r.empty ? 0.0 : bound + unit(d.element) * std::fabs(want) + tiny(d.element);
          if (!(std::fabs(got - want) <= tol) && bad++ < 5)
            ADD_FAILURE() << what << ": o[b=" << b << ", i=" << i << ", h=" << h << ", c=" << c << "] = " << got
                          << ", expected " << want << " (tol " << tol << ")";
        }
        if (!d.return_lse) continue;
        float got;
        std::memcpy(&got, &out.lse[static_cast<size_t>(tok * d.heads + h) * 4], 4);
        const double tol = r.serr * 2 + std::ldexp(1.0 + std::fabs(r.lse), -20);
        const bool ok = r.empty ? std::isinf(got) && got > 0 : std::fabs(got - r.lse) <= tol;
        if (!ok && bad++ < 5)
          ADD_FAILURE() << what << ": lse[b=" << b << ", i=" << i << ", h=" << h << "] = " << got << ", expected "
                        << r.lse;
      }
  for (size_t idx = 0; idx < written.size(); ++idx)
    if (!written[idx] && (out.o[2 * idx] != 0xA5 || out.o[2 * idx + 1] != 0xA5) && bad++ < 5)
      ADD_FAILURE() << what << ": o element " << idx << " outside the rows was written";
  return bad;
}

/// The kernels' bound (paged_attention.hpp): the score error times max|v|, plus the f32 arithmetic of the sums.
inline double kernel_bound(const RowExpect& r) { return r.vmax * (4 * r.serr + std::ldexp(1.0, -18)); }
/// The tensor-core kernel's (paged_attention.hpp, FlashAttentionPlan's): P rounded to the element kind (unit u)
/// before P·V, on top of the score error.
inline auto tc_kernel_bound(ElementKind element) {
  return [u = unit(element)](const RowExpect& r) { return r.vmax * (3 * u + 2 * r.serr) + 1e-6; };
}
/// The host reference's: one rounding of o (the check adds it); the f64 evaluation's own error.
inline double host_bound(const RowExpect& r) { return r.vmax * std::ldexp(1.0, -40); }

}  // namespace baracuda::test::paged
