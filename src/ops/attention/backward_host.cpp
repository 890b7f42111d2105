// The attention backward's host reference (attention_backward.hpp's "Backends"): written for clarity, independently
// of the kernels. Per batch, query head and query row the forward writes: the mask of attention.hpp, P = exp(τ·q·k −
// lse) from the given lse, D = Σ dO·o from the given o, dP = dO·v, dS = P·(dP − D), all in long double from the exact
// inputs; dq = τ·Σ dS·k, and dk, dv summed over the group's query heads into long double rows; each gradient rounded
// once. A row with lse = +inf (no visible key) contributes nothing. The workspace is not used.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/reference_formats.hpp"
#include "ops/attention/backward_tables.hpp"

namespace baracuda::reference {
namespace {

using detail::FlashAttentionBackwardLaunch;

template <class T>
Status backward(const detail::ExecContext&, const FlashAttentionBackwardLaunch& bl) {
  const detail::FlashAttentionLaunch& l = bl.f;
  const T* q = static_cast<const T*>(l.q);
  const T* k = static_cast<const T*>(l.k);
  const T* v = static_cast<const T*>(l.v);
  const T* o = static_cast<const T*>(l.o);
  const T* dO = static_cast<const T*>(bl.d_o);
  const int d = l.head_dim;
  const std::vector<int64_t> cq = detail::attention_boundaries(l.cu_q, l.batch, l.seqlen_q, l.total_q);
  const std::vector<int64_t> ck = detail::attention_boundaries(l.cu_k, l.batch, l.seqlen_k, l.total_k);
  const long double tau = l.scale;
  const int group = l.heads / l.kv_heads;
  std::vector<long double> dk, dv, dq(static_cast<size_t>(d)), p, ds;
  for (int b = 0; b < l.batch; ++b) {
    const int64_t s_q = cq[b + 1] - cq[b], s_k = ck[b + 1] - ck[b];
    const int64_t rows = std::min<int64_t>(s_q, l.seqlen_q);
    p.assign(static_cast<size_t>(s_k), 0.0L), ds.assign(static_cast<size_t>(s_k), 0.0L);
    for (int hk = 0; hk < l.kv_heads; ++hk) {
      dk.assign(static_cast<size_t>(s_k * d), 0.0L), dv.assign(static_cast<size_t>(s_k * d), 0.0L);
      for (int h = hk * group; h < (hk + 1) * group; ++h) {
        for (int64_t i = 0; i < rows; ++i) {
          const int64_t tok = cq[b] + i;
          const T* qr = q + tok * l.q_tok + h * l.q_head;
          const T* orow = o + tok * l.o_tok + h * l.o_head;
          const T* gr = dO + tok * bl.do_tok + h * bl.do_head;
          const long double lse = l.lse[b * l.lse_batch + h * l.lse_head + (l.cu_q != nullptr ? tok : i) * l.lse_tok];
          std::fill(dq.begin(), dq.end(), 0.0L);
          if (std::isfinite(lse)) {
            long double dsum = 0;
            for (int c = 0; c < d; ++c) dsum += value_of(gr[c]) * value_of(orow[c]);
            for (int64_t j = 0; j < s_k; ++j) {
              const int64_t rel = j - (i + s_k - s_q);  // against the bottom-right diagonal
              const bool seen = (l.window_left < 0 || rel >= -int64_t{l.window_left}) &&
                                (l.window_right < 0 || rel <= int64_t{l.window_right});
              p[j] = 0, ds[j] = 0;
              if (!seen) continue;
              const T* kr = k + (ck[b] + j) * l.k_tok + hk * l.k_head;
              const T* vr = v + (ck[b] + j) * l.v_tok + hk * l.v_head;
              long double dot = 0, dp = 0;
              for (int c = 0; c < d; ++c)
                dot += value_of(qr[c]) * value_of(kr[c]), dp += value_of(gr[c]) * value_of(vr[c]);
              p[j] = std::exp(tau * dot - lse);
              ds[j] = p[j] * (dp - dsum);
              for (int c = 0; c < d; ++c) {
                dq[c] += tau * ds[j] * value_of(kr[c]);
                dk[j * d + c] += tau * ds[j] * value_of(qr[c]);
                dv[j * d + c] += p[j] * value_of(gr[c]);
              }
            }
          }
          T* dqr = static_cast<T*>(bl.dq) + tok * bl.dq_tok + h * bl.dq_head;
          for (int c = 0; c < d; ++c) dqr[c] = store<T>(dq[c]);
        }
      }
      for (int64_t j = 0; j < std::min<int64_t>(s_k, l.seqlen_k); ++j) {
        T* dkr = static_cast<T*>(bl.dk) + (ck[b] + j) * bl.dk_tok + hk * bl.dk_head;
        T* dvr = static_cast<T*>(bl.dv) + (ck[b] + j) * bl.dv_tok + hk * bl.dv_head;
        for (int c = 0; c < d; ++c) dkr[c] = store<T>(dk[j * d + c]), dvr[c] = store<T>(dv[j * d + c]);
      }
    }
  }
  return {};
}

constexpr detail::FlashAttentionBackwardTables make_tables() {
  detail::FlashAttentionBackwardTables t{};
  for (int64_t d : {64, 96, 128}) {
    t.bwd[detail::kind_index(ElementKind::F16)][detail::attention_backward_head_dim_slot(d)] = &backward<__half>;
    t.bwd[detail::kind_index(ElementKind::Bf16)][detail::attention_backward_head_dim_slot(d)] =
        &backward<__nv_bfloat16>;
  }
  t.variant = "reference";
  return t;
}

}  // namespace

BARACUDA_DEFINE_TABLE(detail::FlashAttentionBackwardTables, attention_backward_tables, make_tables())

}  // namespace baracuda::reference
