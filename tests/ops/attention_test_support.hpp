// Helpers shared by the attention tests: a problem (padded lengths, or the per-batch lengths / raw cu_seqlens of
// packed batches, the operands' layouts), its operands in host memory (inputs random, outputs a sentinel), a run on
// any device, and an f64 evaluation of the contract written here from attention.hpp's rules, independently of the
// library (its own mask, softmax and effective offsets).
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
#include "baracuda/ops/attention.hpp"
#include "gemm_test_support.hpp"  // get, put, unit, tiny, bytes_of
#include "support/golden.hpp"

namespace baracuda::test::attention {

using gemm::bytes_of;
using gemm::get;
using gemm::put;
using gemm::tiny;
using gemm::unit;

/// A [tokens, heads, d] layout: element (t, h, c) at t·tok + h·head + c (+ `lead` elements of offset).
struct Layout {
  int64_t tok = 0, head = 0, lead = 0;
  int64_t span(int64_t tokens, int64_t heads, int64_t d) const {
    if (tokens == 0 || heads == 0) return lead;
    return lead + (tokens - 1) * tok + (heads - 1) * head + d;
  }
};

enum class LayoutKind2 { Dense, HeadMajor, Padded, Unaligned };

inline Layout layout_of(LayoutKind2 k, int64_t tokens, int64_t heads, int64_t d) {
  switch (k) {
    case LayoutKind2::HeadMajor: return {d, std::max<int64_t>(tokens, 1) * d, 0};
    case LayoutKind2::Padded: return {heads * d + 24, d + 8, 8};          // 16-byte aligned rows with gaps
    case LayoutKind2::Unaligned: return {heads * (d + 3) + 1, d + 3, 1};  // odd strides: the element path
    default: return {heads * d, d, 0};
  }
}

/// One problem: the descriptor and the raw cu_seqlens (varlen; any values), the layouts.
struct Problem {
  FlashAttentionDescriptor d;
  std::vector<int32_t> cu_q, cu_k;  ///< B + 1 values (varlen)
  LayoutKind2 in_layout = LayoutKind2::Dense, out_layout = LayoutKind2::Dense;
  double value_scale = 1.0;  ///< q and k drawn from [-value_scale, value_scale]

  static Problem padded(int64_t b, int64_t s_q, int64_t s_k, int64_t h, int64_t h_kv, int64_t dim, ElementKind e) {
    Problem p;
    p.d = FlashAttentionDescriptor{}.with_shape(b, s_q, s_k, h, h_kv, dim).with_element(e);
    return p;
  }
  /// Valid cu_seqlens from per-batch lengths.
  static Problem packed(const std::vector<int32_t>& lq, const std::vector<int32_t>& lk, int64_t h, int64_t h_kv,
                        int64_t dim, ElementKind e) {
    Problem p;
    p.cu_q.push_back(0), p.cu_k.push_back(0);
    for (int32_t v : lq) p.cu_q.push_back(p.cu_q.back() + v);
    for (int32_t v : lk) p.cu_k.push_back(p.cu_k.back() + v);
    const int64_t mq = lq.empty() ? 0 : *std::max_element(lq.begin(), lq.end());
    const int64_t mk = lk.empty() ? 0 : *std::max_element(lk.begin(), lk.end());
    p.d = FlashAttentionDescriptor{}
              .with_shape(static_cast<int64_t>(lq.size()), 0, 0, h, h_kv, dim)
              .with_varlen(p.cu_q.back(), p.cu_k.back(), mq, mk)
              .with_element(e);
    return p;
  }

  /// The effective boundaries (attention.hpp): running maximum of the values clamped to [0, total]; padded: b·S.
  std::vector<int64_t> bounds(bool q_side) const {
    const int64_t n = d.batch;
    std::vector<int64_t> c;
    if (!d.varlen) {
      for (int64_t b = 0; b <= n; ++b) c.push_back(b * (q_side ? d.seqlen_q : d.seqlen_k));
      return c;
    }
    const std::vector<int32_t>& raw = q_side ? cu_q : cu_k;
    const int64_t total = q_side ? d.total_q : d.total_k;
    int64_t run = 0;
    for (int64_t b = 0; b <= n; ++b) {
      run = std::max(run, std::min<int64_t>(std::max<int64_t>(raw[b], 0), total));
      c.push_back(run);
    }
    return c;
  }
  Layout lq() const { return layout_of(in_layout, d.tokens_q(), d.heads, d.head_dim); }
  Layout lk() const { return layout_of(in_layout, d.tokens_k(), d.kv_heads, d.head_dim); }
  Layout lo() const { return layout_of(out_layout, d.tokens_q(), d.heads, d.head_dim); }
  /// lse (b, h, i) / (h, token): dense [B, H, S_q] or [H, T_q].
  int64_t lse_index(int64_t b, int64_t h, int64_t i_or_tok) const {
    return d.varlen ? h * d.total_q + i_or_tok : (b * d.heads + h) * d.seqlen_q + i_or_tok;
  }
  int64_t lse_size() const { return d.varlen ? d.heads * d.total_q : d.batch * d.heads * d.seqlen_q; }
  double tau() const {
    const double s = d.softmax_scale == 0 ? 1.0 / std::sqrt(static_cast<double>(d.head_dim)) : d.softmax_scale;
    return static_cast<double>(static_cast<float>(s));
  }
};

/// The case's name in failure messages: kind, head dim, heads, batch, lengths, mask.
inline std::string name_of(const Problem& p) {
  const FlashAttentionDescriptor& d = p.d;
  std::string s = std::string(to_string(d.element)) + " d" + std::to_string(d.head_dim) + " H" +
                  std::to_string(d.heads) + "/" + std::to_string(d.kv_heads) + " B" + std::to_string(d.batch);
  s += d.varlen ? " varlen" : " s_q " + std::to_string(d.seqlen_q) + " s_k " + std::to_string(d.seqlen_k);
  if (d.causal) s += " causal";
  if (d.window_left != -1 || d.window_right != -1)
    s += " window (" + std::to_string(d.window_left) + ", " + std::to_string(d.window_right) + ")";
  return s;
}

/// A golden case's problem (gen_attention_golden.py's and gen_attention_backward_golden.py's parameters and
/// cu_seqlens), without lse.
inline Problem golden_problem(const GoldenCase& c) {
  const auto ints32 = [](const GoldenTensor& t) {
    std::vector<int32_t> v;
    for (int64_t x : t.ints()) v.push_back(static_cast<int32_t>(x));
    return v;
  };
  Problem p;
  p.d = FlashAttentionDescriptor{}
            .with_shape(c.param<int64_t>("batch"), c.param<int64_t>("seqlen_q"), c.param<int64_t>("seqlen_k"),
                        c.param<int64_t>("heads"), c.param<int64_t>("kv_heads"), c.param<int64_t>("head_dim"))
            .with_element(c.param<std::string>("kind") == "bf16" ? ElementKind::Bf16 : ElementKind::F16)
            .with_causal(c.param<bool>("causal"))
            .with_window(c.param<int64_t>("window_left"), c.param<int64_t>("window_right"))
            .with_scale(c.param<double>("scale"));
  if (c.param<bool>("varlen")) {
    p.cu_q = ints32(c.tensor("cu_seqlens_q"));
    p.cu_k = ints32(c.tensor("cu_seqlens_k"));
    p.d.with_varlen(p.cu_q.back(), p.cu_k.back(), p.d.seqlen_q, p.d.seqlen_k);
  }
  return p;
}

/// What the f64 evaluation gives for one query row.
struct RowExpect {
  std::vector<double> o;  ///< d values
  double lse = 0;
  double vmax = 0;  ///< max |v| over the visible keys (the kernels' error scale)
  double serr = 0;  ///< a bound of the f32 error of the kernels' scores: d·2^-23·max_j τ·Σ_c |q·k|
  bool empty = true;
};

/// The operands of a problem in host memory.
struct Data {
  Problem p;
  std::vector<uint8_t> q, k, v, cu_q, cu_k, o, lse;

  Data(const Problem& prob, uint64_t seed) : p(prob) {
    const FlashAttentionDescriptor& d = p.d;
    std::mt19937_64 rng(seed);
    auto fill = [&](const Layout& l, int64_t tokens, int64_t heads, double range) {
      const int64_t n = l.span(tokens, heads, d.head_dim);
      std::vector<uint8_t> s(static_cast<size_t>(std::max<int64_t>(n, 1)) * 2, 0);
      std::uniform_real_distribution<double> u(-range, range);
      for (int64_t i = 0; i < n; ++i) put(d.element, s, i, u(rng));
      return s;
    };
    q = fill(p.lq(), d.tokens_q(), d.heads, p.value_scale);
    k = fill(p.lk(), d.tokens_k(), d.kv_heads, p.value_scale);
    v = fill(p.lk(), d.tokens_k(), d.kv_heads, 1.0);
    auto ints = [](const std::vector<int32_t>& c) {
      std::vector<uint8_t> s(std::max<size_t>(c.size(), 1) * 4, 0);
      if (!c.empty()) std::memcpy(s.data(), c.data(), c.size() * 4);
      return s;
    };
    cu_q = ints(p.cu_q), cu_k = ints(p.cu_k);
    o.assign(static_cast<size_t>(std::max<int64_t>(p.lo().span(d.tokens_q(), d.heads, d.head_dim), 1)) * 2, 0xA5);
    lse.assign(static_cast<size_t>(std::max<int64_t>(p.lse_size(), 1)) * 4, 0xA5);
  }

  /// The inputs decoded to double and the effective bounds, made on the first expect() (after any change of q, k
  /// or v by the test).
  mutable std::vector<double> qd_, kd_, vd_;
  mutable std::vector<int64_t> cq_, ck_;
  mutable Layout lq_, lk_;
  mutable bool ready_ = false;
  void prepare() const {
    if (ready_) return;
    auto decode = [&](const std::vector<uint8_t>& s) {
      std::vector<double> out(s.size() / 2);
      for (size_t i = 0; i < out.size(); ++i) out[i] = get(p.d.element, s, static_cast<int64_t>(i));
      return out;
    };
    qd_ = decode(q), kd_ = decode(k), vd_ = decode(v);
    cq_ = p.bounds(true), ck_ = p.bounds(false);
    lq_ = p.lq(), lk_ = p.lk();
    ready_ = true;
  }
  double qv(int64_t t, int64_t h, int64_t c) const {
    return qd_[static_cast<size_t>(lq_.lead + t * lq_.tok + h * lq_.head + c)];
  }
  double kv(const std::vector<double>& s, int64_t t, int64_t h, int64_t c) const {
    return s[static_cast<size_t>(lk_.lead + t * lk_.tok + h * lk_.head + c)];
  }

  /// Query row i of batch b, head h, in f64 from the definition: scores τ·q·k over the keys the window lets the
  /// row see (bottom-right aligned), softmax against the maximum, o = Σ p·v / Σ p, lse = m + ln Σ p.
  RowExpect expect(int64_t b, int64_t h, int64_t i) const {
    const FlashAttentionDescriptor& d = p.d;
    prepare();
    const std::vector<int64_t>& cq = cq_;
    const std::vector<int64_t>& ck = ck_;
    const int64_t s_q = cq[b + 1] - cq[b], s_k = ck[b + 1] - ck[b];
    const int64_t hk = h / (d.heads / d.kv_heads);
    const int64_t right = d.causal ? 0 : d.window_right, left = d.window_left;
    RowExpect r;
    r.o.assign(static_cast<size_t>(d.head_dim), 0.0);
    std::vector<double> sc;
    std::vector<int64_t> keys;
    for (int64_t j = 0; j < s_k; ++j) {
      const int64_t diag = i + s_k - s_q;
      if (left >= 0 && j < diag - left) continue;
      if (right >= 0 && j > diag + right) continue;
      double dot = 0, mag = 0;
      for (int64_t c = 0; c < d.head_dim; ++c) {
        const double t = qv(cq[b] + i, h, c) * kv(kd_, ck[b] + j, hk, c);
        dot += t, mag += std::fabs(t);
      }
      sc.push_back(p.tau() * dot);
      r.serr = std::max(r.serr, std::ldexp(static_cast<double>(d.head_dim), -23) * p.tau() * mag);
      keys.push_back(j);
    }
    if (keys.empty()) {
      r.lse = std::numeric_limits<double>::infinity();
      return r;
    }
    r.empty = false;
    const double m = *std::max_element(sc.begin(), sc.end());
    double sum = 0;
    for (size_t n = 0; n < keys.size(); ++n) {
      const double w = std::exp(sc[n] - m);
      sum += w;
      for (int64_t c = 0; c < d.head_dim; ++c) {
        const double vv = kv(vd_, ck[b] + keys[n], hk, c);
        r.o[static_cast<size_t>(c)] += w * vv;
        r.vmax = std::max(r.vmax, std::fabs(vv));
      }
    }
    for (double& x : r.o) x /= sum;
    r.lse = m + std::log(sum);
    return r;
  }
};

/// Uploads every operand to `st`'s device, selects and runs, and downloads o and lse (into `out`).
inline Status run_on(const Stream& st, const Data& x, Data& out) {
  auto up = [&](const std::vector<uint8_t>& s) -> Result<Buffer> {
    auto b = Buffer::allocate(st, s.size());
    if (!b) return b.error();
    BARACUDA_TRY(b->copy_from_host(s.data(), s.size()));
    return b;
  };
  auto bq = up(x.q), bk = up(x.k), bv = up(x.v), bcq = up(x.cu_q), bck = up(x.cu_k), bo = up(x.o), bl = up(x.lse);
  for (auto* r : {&bq, &bk, &bv, &bcq, &bck, &bo, &bl})
    if (!*r) return r->error();
  const FlashAttentionDescriptor& d = x.p.d;
  auto view = [&](const void* base, const Layout& l, int64_t tokens, int64_t heads) {
    ConstDynTensor t = ConstDynTensor::dense(static_cast<const uint8_t*>(base) + l.lead * 2, d.element,
                                             Shape{tokens, heads, d.head_dim});
    t.stride[0] = l.tok, t.stride[1] = l.head;
    return t;
  };
  dynamic::FlashAttentionArgs a;
  a.q = view(bq->data(), x.p.lq(), d.tokens_q(), d.heads);
  a.k = view(bk->data(), x.p.lk(), d.tokens_k(), d.kv_heads);
  a.v = view(bv->data(), x.p.lk(), d.tokens_k(), d.kv_heads);
  if (d.varlen) {
    a.cu_seqlens_q = ConstDynTensor::dense(bcq->data(), ElementKind::S32, Shape{d.batch + 1});
    a.cu_seqlens_k = ConstDynTensor::dense(bck->data(), ElementKind::S32, Shape{d.batch + 1});
  }
  const ConstDynTensor ov = view(bo->data(), x.p.lo(), d.tokens_q(), d.heads);
  a.o = DynTensor::dense(bo->data(), d.element, ov.shape);
  a.o.data = const_cast<void*>(ov.data), a.o.stride = ov.stride;
  if (d.return_lse)
    a.lse = d.varlen ? DynTensor::dense(bl->data(), ElementKind::F32, Shape{d.heads, d.total_q})
                     : DynTensor::dense(bl->data(), ElementKind::F32, Shape{d.batch, d.heads, d.seqlen_q});
  auto plan = dynamic::FlashAttentionPlan::select(st, d);
  if (!plan) return plan.error();
  BARACUDA_TRY(plan->run(st, {}, a));
  BARACUDA_TRY(st.synchronize());
  out.o.resize(x.o.size()), out.lse.resize(x.lse.size());
  BARACUDA_TRY(bo->copy_to_host(out.o.data(), out.o.size()));
  return bl->copy_to_host(out.lse.data(), out.lse.size());
}

/// How closely a device must match the f64 evaluation.
enum class Bound {
  Rounding,  ///< the host reference: o within one rounding of the exact value, lse within one f32 rounding
  Kernel,    ///< sim / cuda: P rounded to the element kind, f32 sums, exp2f (attention.hpp's accuracy)
};

/// Checks o and lse of `got` against the f64 evaluation over the effective sequences (rows < seqlen_q), and that
/// every other byte of o's and lse's storage kept the sentinel. Returns the rows checked.
inline int64_t check_outputs(const Data& x, const Data& got, Bound bound, const std::string& what) {
  const FlashAttentionDescriptor& d = x.p.d;
  const std::vector<int64_t> cq = x.p.bounds(true);
  const Layout lo = x.p.lo();
  const double u = unit(d.element);
  std::vector<bool> o_cov(got.o.size() / 2, false), l_cov(got.lse.size() / 4, false);
  int64_t rows = 0;
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t h = 0; h < d.heads; ++h)
      for (int64_t i = 0; i < std::min(cq[b + 1] - cq[b], d.seqlen_q); ++i) {
        const RowExpect r = x.expect(b, h, i);
        const int64_t t = cq[b] + i;
        for (int64_t c = 0; c < d.head_dim; ++c) {
          const int64_t at = lo.lead + t * lo.tok + h * lo.head + c;
          o_cov[static_cast<size_t>(at)] = true;
          const double e = r.o[static_cast<size_t>(c)], g = get(d.element, got.o, at);
          const double tol = bound == Bound::Rounding ? u * std::fabs(e) + tiny(d.element) + 1e-12
                                                      : (3 * u + 2 * r.serr) * r.vmax + u * std::fabs(e) + 1e-6;
          if (!(std::fabs(g - e) <= tol)) {
            ADD_FAILURE() << what << ": o[" << t << ", " << h << ", " << c << "] (batch " << b << ", row " << i
                          << ") = " << g << ", expected " << e << " (tolerance " << tol << ")";
            return rows;
          }
        }
        if (d.return_lse) {
          const int64_t at = x.p.lse_index(b, h, d.varlen ? t : i);
          l_cov[static_cast<size_t>(at)] = true;
          float g;
          std::memcpy(&g, got.lse.data() + at * 4, 4);
          const double tol = bound == Bound::Rounding ? std::ldexp(std::fabs(r.lse), -24) + 1e-12
                                                      : std::ldexp(1.0 + std::fabs(r.lse), -16) + 2 * r.serr;
          const bool ok = r.empty ? (std::isinf(g) && g > 0) : std::fabs(g - r.lse) <= tol;
          if (!ok) {
            ADD_FAILURE() << what << ": lse (batch " << b << ", head " << h << ", row " << i << ") = " << g
                          << ", expected " << r.lse;
            return rows;
          }
        }
        ++rows;
      }
  for (size_t i = 0; i < o_cov.size(); ++i)
    if (!o_cov[i] && (got.o[2 * i] != 0xA5 || got.o[2 * i + 1] != 0xA5)) {
      ADD_FAILURE() << what << ": o's storage element " << i << " was written, but no query row covers it";
      return rows;
    }
  for (size_t i = 0; i < l_cov.size(); ++i)
    if (!l_cov[i] && got.lse[4 * i] != 0xA5) {
      ADD_FAILURE() << what << ": lse's element " << i << " was written, but no query row covers it";
      return rows;
    }
  return rows;
}

}  // namespace baracuda::test::attention
