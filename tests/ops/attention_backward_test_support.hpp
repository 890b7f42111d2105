// Helpers shared by the attention backward tests: a problem's operands in host memory (q, k, v, dO random; o and lse
// from the f64 forward of attention_test_support.hpp, rounded as the forward stores them; lse of rows no sequence
// covers a NaN that must never be read; dq, dk, dv a sentinel), a run on any device, and an f64 evaluation of
// attention_backward.hpp's gradients written here from the definitions (P = exp(τ·q·k − lse), D = Σ dO·o), with
// each gradient's term magnitude for the kernels' error bound.
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

#include "attention_test_support.hpp"
#include "baracuda/ops/attention_backward.hpp"

namespace baracuda::test::attention {

/// The [T_k, H_kv, d] layout of dk and dv (the output layout kind).
inline Layout layout_dk(const Problem& p) {
  return layout_of(p.out_layout, p.d.tokens_k(), p.d.kv_heads, p.d.head_dim);
}

struct BwdData {
  Data x;                                        ///< q, k, v, cu_seqlens (and the forward's f64 evaluation)
  std::vector<uint8_t> o, d_o, lse, dq, dk, dv;  ///< o, dO, dq in lo(); dk, dv in layout_dk(); lse dense f32

  BwdData(const Problem& p, uint64_t seed) : x(p, seed) {
    const FlashAttentionDescriptor& d = p.d;
    const Layout lo = p.lo(), lk = layout_dk(p);
    const size_t nq = static_cast<size_t>(std::max<int64_t>(lo.span(d.tokens_q(), d.heads, d.head_dim), 1)) * 2;
    const size_t nk = static_cast<size_t>(std::max<int64_t>(lk.span(d.tokens_k(), d.kv_heads, d.head_dim), 1)) * 2;
    o.assign(nq, 0), d_o.assign(nq, 0);
    std::mt19937_64 rng(seed * 7919 + 3);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (int64_t t = 0; t < d.tokens_q(); ++t)
      for (int64_t h = 0; h < d.heads; ++h)
        for (int64_t c = 0; c < d.head_dim; ++c) put(d.element, d_o, lo.lead + t * lo.tok + h * lo.head + c, u(rng));
    lse.assign(static_cast<size_t>(std::max<int64_t>(p.lse_size(), 1)) * 4, 0);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (int64_t i = 0; i < p.lse_size(); ++i) std::memcpy(lse.data() + i * 4, &nan, 4);
    const std::vector<int64_t> cq = p.bounds(true);
    for (int64_t b = 0; b < d.batch; ++b)
      for (int64_t h = 0; h < d.heads; ++h)
        for (int64_t i = 0; i < std::min(cq[b + 1] - cq[b], d.seqlen_q); ++i) {
          const RowExpect r = x.expect(b, h, i);
          const int64_t t = cq[b] + i;
          for (int64_t c = 0; c < d.head_dim; ++c)
            put(d.element, o, lo.lead + t * lo.tok + h * lo.head + c, r.o[static_cast<size_t>(c)]);
          const float l = r.empty ? std::numeric_limits<float>::infinity() : static_cast<float>(r.lse);
          std::memcpy(lse.data() + p.lse_index(b, h, d.varlen ? t : i) * 4, &l, 4);
        }
    dq.assign(nq, 0xA5), dk.assign(nk, 0xA5), dv.assign(nk, 0xA5);
  }
};

/// Uploads every operand to `st`'s device, selects, runs with the plan's workspace, and downloads dq, dk, dv.
inline Status run_backward(const Stream& st, const BwdData& x, BwdData& out) {
  auto up = [&](const std::vector<uint8_t>& s) -> Result<Buffer> {
    auto b = Buffer::allocate(st, s.size());
    if (!b) return b.error();
    BARACUDA_TRY(b->copy_from_host(s.data(), s.size()));
    return b;
  };
  const Data& in = x.x;
  auto bq = up(in.q), bk = up(in.k), bv = up(in.v), bcq = up(in.cu_q), bck = up(in.cu_k), bo = up(x.o), bg = up(x.d_o),
       bl = up(x.lse), bdq = up(x.dq), bdk = up(x.dk), bdv = up(x.dv);
  for (auto* r : {&bq, &bk, &bv, &bcq, &bck, &bo, &bg, &bl, &bdq, &bdk, &bdv})
    if (!*r) return r->error();
  const Problem& p = in.p;
  const FlashAttentionDescriptor& d = p.d;
  auto view = [&](const void* base, const Layout& l, int64_t tokens, int64_t heads) {
    ConstDynTensor t = ConstDynTensor::dense(static_cast<const uint8_t*>(base) + l.lead * 2, d.element,
                                             Shape{tokens, heads, d.head_dim});
    t.stride[0] = l.tok, t.stride[1] = l.head;
    return t;
  };
  auto mut = [&](void* base, const Layout& l, int64_t tokens, int64_t heads) {
    const ConstDynTensor c = view(base, l, tokens, heads);
    DynTensor t = DynTensor::dense(base, d.element, c.shape);
    t.data = const_cast<void*>(c.data), t.stride = c.stride;
    return t;
  };
  dynamic::FlashAttentionBackwardArgs a;
  a.q = view(bq->data(), p.lq(), d.tokens_q(), d.heads);
  a.k = view(bk->data(), p.lk(), d.tokens_k(), d.kv_heads);
  a.v = view(bv->data(), p.lk(), d.tokens_k(), d.kv_heads);
  a.o = view(bo->data(), p.lo(), d.tokens_q(), d.heads);
  a.d_o = view(bg->data(), p.lo(), d.tokens_q(), d.heads);
  a.lse = d.varlen ? ConstDynTensor::dense(bl->data(), ElementKind::F32, Shape{d.heads, d.total_q})
                   : ConstDynTensor::dense(bl->data(), ElementKind::F32, Shape{d.batch, d.heads, d.seqlen_q});
  if (d.varlen) {
    a.cu_seqlens_q = ConstDynTensor::dense(bcq->data(), ElementKind::S32, Shape{d.batch + 1});
    a.cu_seqlens_k = ConstDynTensor::dense(bck->data(), ElementKind::S32, Shape{d.batch + 1});
  }
  a.dq = mut(bdq->data(), p.lo(), d.tokens_q(), d.heads);
  a.dk = mut(bdk->data(), layout_dk(p), d.tokens_k(), d.kv_heads);
  a.dv = mut(bdv->data(), layout_dk(p), d.tokens_k(), d.kv_heads);
  auto plan = dynamic::FlashAttentionBackwardPlan::select(st, d);
  if (!plan) return plan.error();
  auto ws = Buffer::allocate(st, std::max<size_t>(plan->workspace_size(), 1));
  if (!ws) return ws.error();
  BARACUDA_TRY(plan->run(st, Workspace(ws->data(), plan->workspace_size()), a));
  BARACUDA_TRY(st.synchronize());
  out.dq.resize(x.dq.size()), out.dk.resize(x.dk.size()), out.dv.resize(x.dv.size());
  BARACUDA_TRY(bdq->copy_to_host(out.dq.data(), out.dq.size()));
  BARACUDA_TRY(bdk->copy_to_host(out.dk.data(), out.dk.size()));
  return bdv->copy_to_host(out.dv.data(), out.dv.size());
}

/// The f64 gradients of attention_backward.hpp from the given o and lse, per storage element of dq, dk, dv: the value,
/// the magnitude of its terms (dS bounded by P·(Σ|dO·v| + Σ|dO·o|)), whether a row covers it; and the largest
/// relative error of the kernels' P (f32 scores and lse·log2 e).
struct BwdExpect {
  std::vector<double> dq, dk, dv, mq, mk, mv;
  std::vector<bool> cq, ck;  ///< covered elements of dq and of dk/dv
  double p_err = 0;
};

inline BwdExpect expect_backward(const BwdData& x) {
  const Data& in = x.x;
  in.prepare();
  const Problem& p = in.p;
  const FlashAttentionDescriptor& d = p.d;
  const ElementKind e = d.element;
  const Layout lo = p.lo(), lk = layout_dk(p);
  const int64_t dim = d.head_dim, group = d.heads / d.kv_heads;
  BwdExpect r;
  const size_t nq = x.dq.size() / 2, nk = x.dk.size() / 2;
  r.dq.assign(nq, 0), r.mq.assign(nq, 0), r.cq.assign(nq, false);
  r.dk.assign(nk, 0), r.dv.assign(nk, 0), r.mk.assign(nk, 0), r.mv.assign(nk, 0), r.ck.assign(nk, false);
  const std::vector<int64_t>& cq = in.cq_;
  const std::vector<int64_t>& ck = in.ck_;
  const double tau = p.tau();
  const int64_t right = d.causal ? 0 : d.window_right, left = d.window_left;
  for (int64_t b = 0; b < d.batch; ++b) {
    const int64_t s_q = cq[b + 1] - cq[b], s_k = ck[b + 1] - ck[b];
    for (int64_t h = 0; h < d.heads; ++h) {
      const int64_t hk = h / group;
      for (int64_t i = 0; i < std::min(s_q, d.seqlen_q); ++i) {
        const int64_t t = cq[b] + i, qa = lo.lead + t * lo.tok + h * lo.head;
        for (int64_t c = 0; c < dim; ++c) r.cq[static_cast<size_t>(qa + c)] = true;
        float lse;
        std::memcpy(&lse, x.lse.data() + p.lse_index(b, h, d.varlen ? t : i) * 4, 4);
        if (!std::isfinite(lse)) continue;
        double dsum = 0, dmag = 0;
        for (int64_t c = 0; c < dim; ++c) {
          const double g = get(e, x.d_o, qa + c), ov = get(e, x.o, qa + c);
          dsum += g * ov, dmag += std::fabs(g * ov);
        }
        for (int64_t j = 0; j < s_k; ++j) {
          const int64_t diag = i + s_k - s_q;
          if ((left >= 0 && j < diag - left) || (right >= 0 && j > diag + right)) continue;
          double s = 0, smag = 0, dp = 0, dpmag = 0;
          for (int64_t c = 0; c < dim; ++c) {
            const double qk = in.qv(t, h, c) * in.kv(in.kd_, ck[b] + j, hk, c);
            const double gv = get(e, x.d_o, qa + c) * in.kv(in.vd_, ck[b] + j, hk, c);
            s += qk, smag += std::fabs(qk), dp += gv, dpmag += std::fabs(gv);
          }
          const double pv = std::exp(tau * s - lse), ds = pv * (dp - dsum), dsm = pv * (dpmag + dmag);
          r.p_err = std::max(r.p_err, 2 * std::ldexp(static_cast<double>(dim), -23) * tau * smag +
                                          std::ldexp(1.0 + std::fabs(lse), -20));
          const int64_t ka = lk.lead + (ck[b] + j) * lk.tok + hk * lk.head;
          for (int64_t c = 0; c < dim; ++c) {
            const double kc = in.kv(in.kd_, ck[b] + j, hk, c), qc = in.qv(t, h, c), gc = get(e, x.d_o, qa + c);
            r.dq[static_cast<size_t>(qa + c)] += tau * ds * kc;
            r.mq[static_cast<size_t>(qa + c)] += tau * dsm * std::fabs(kc);
            r.dk[static_cast<size_t>(ka + c)] += tau * ds * qc;
            r.mk[static_cast<size_t>(ka + c)] += tau * dsm * std::fabs(qc);
            r.dv[static_cast<size_t>(ka + c)] += pv * gc;
            r.mv[static_cast<size_t>(ka + c)] += pv * std::fabs(gc);
          }
        }
      }
    }
    for (int64_t hk = 0; hk < d.kv_heads; ++hk)
      for (int64_t j = 0; j < std::min(s_k, d.seqlen_k); ++j)
        for (int64_t c = 0; c < dim; ++c)
          r.ck[static_cast<size_t>(lk.lead + (ck[b] + j) * lk.tok + hk * lk.head + c)] = true;
  }
  return r;
}

/// Checks dq, dk, dv of `got` against `r`: within one rounding (host) or the kernels' bound, and every element no row
/// covers kept its sentinel. Returns the elements checked.
inline int64_t check_backward(const BwdData& got, const BwdExpect& r, Bound bound, const std::string& what) {
  const ElementKind e = got.x.p.d.element;
  const double u = unit(e), tn = tiny(e);
  int64_t n = 0;
  auto one = [&](const char* name, const std::vector<uint8_t>& s, const std::vector<double>& val,
                 const std::vector<double>& mag, const std::vector<bool>& cov) {
    for (size_t i = 0; i < cov.size(); ++i) {
      if (!cov[i]) {
        if (s[2 * i] != 0xA5 || s[2 * i + 1] != 0xA5) {
          ADD_FAILURE() << what << ": " << name << "'s storage element " << i << " was written, but no row covers it";
          return false;
        }
        continue;
      }
      const double g = get(e, s, static_cast<int64_t>(i)), x = val[i];
      const double tol = bound == Bound::Rounding ? u * std::fabs(x) + tn + 1e-12 * mag[i]
                                                  : (4 * u + r.p_err) * mag[i] + u * std::fabs(x) + 2 * tn;
      if (!(std::fabs(g - x) <= tol)) {
        ADD_FAILURE() << what << ": " << name << " storage element " << i << " = " << g << ", expected " << x
                      << " (tolerance " << tol << ", term magnitude " << mag[i] << ")";
        return false;
      }
      ++n;
    }
    return true;
  };
  if (one("dq", got.dq, r.dq, r.mq, r.cq) && one("dk", got.dk, r.dk, r.mk, r.ck)) one("dv", got.dv, r.dv, r.mv, r.ck);
  return n;
}

}  // namespace baracuda::test::attention
