// The attention family's host reference (attention.hpp's "Backends"): written for clarity, independently of the
// kernel. cu_seqlens are read here (the host device's memory is host memory) and made effective by the rule of
// attention.hpp. Per query row: the scores τ·q·k in long double from the exact inputs (τ the f32 value of the
// kernels), the mask of attention.hpp, the softmax against the row's maximum, o = Σ p·v / Σ p and lse = m + ln Σ p,
// o rounded once to the element kind and lse to f32; a row that sees no key gets o = 0, lse = +inf. The chunked
// prefill (paged_prefill.hpp) is the same computation with K/V rows looked up through the block table.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/reference_formats.hpp"
#include "ops/attention/tables.hpp"

namespace baracuda::reference {
namespace {

using detail::FlashAttentionLaunch;

/// C: the K/V elements, T's or a quantized cache's codes (paged only; dequantized: code·scale, exact).
template <class T, class C = T>
Status forward(const detail::ExecContext&, const FlashAttentionLaunch& l) {
  const T* q = static_cast<const T*>(l.q);
  const C* k = static_cast<const C*>(l.k);
  const C* v = static_cast<const C*>(l.v);
  T* o = static_cast<T*>(l.o);
  const bool paged = l.block_tables != nullptr;  // K/V through the block table (paged_prefill.hpp)
  const std::vector<int64_t> cq = detail::attention_boundaries(l.cu_q, l.batch, l.seqlen_q, l.total_q);
  const std::vector<int64_t> ck =
      paged ? std::vector<int64_t>{} : detail::attention_boundaries(l.cu_k, l.batch, l.seqlen_k, l.total_k);
  const long double tau = l.scale;
  const int group = l.heads / l.kv_heads;
  std::vector<long double> s, acc(static_cast<size_t>(l.head_dim));
  for (int b = 0; b < l.batch; ++b) {
    const int64_t s_q = cq[b + 1] - cq[b];
    const int64_t s_k = paged ? detail::paged_effective_len(l.context_lens[b * l.cl_stride], l.max_blocks,
                                                            l.block_size)
                              : ck[b + 1] - ck[b];
    // Key j's row of kv head hk in k or v (`x`, with its token, page and head strides); nullptr: a masked page.
    const auto row = [&](const C* x, int64_t tok, int64_t page, int64_t head, int64_t j, int hk) -> const C* {
      if (!paged) return x + (ck[b] + j) * tok + hk * head;
      const int32_t pg = l.block_tables[b * l.bt_seq + (j / l.block_size) * l.bt_page];
      if (pg < 0 || pg >= l.num_blocks) return nullptr;
      return x + pg * page + (j % l.block_size) * tok + hk * head;
    };
    const int64_t rows = s_q < l.seqlen_q ? s_q : l.seqlen_q;
    s.assign(static_cast<size_t>(s_k), 0.0L);
    for (int h = 0; h < l.heads; ++h) {
      const int hk = h / group;
      const long double ks = l.k_scale != nullptr ? l.k_scale[hk * l.k_scale_stride] : 1.0L;
      const long double vs = l.v_scale != nullptr ? l.v_scale[hk * l.v_scale_stride] : 1.0L;
      for (int64_t i = 0; i < rows; ++i) {
        const T* qr = q + (cq[b] + i) * l.q_tok + h * l.q_head;
        long double m = -std::numeric_limits<long double>::infinity();
        for (int64_t j = 0; j < s_k; ++j) {
          const int64_t rel = j - (i + s_k - s_q);  // key position against the bottom-right diagonal
          const bool seen = (l.window_left < 0 || rel >= -int64_t{l.window_left}) &&
                            (l.window_right < 0 || rel <= int64_t{l.window_right});
          const C* kr = seen ? row(k, l.k_tok, l.k_block, l.k_head, j, hk) : nullptr;
          if (kr == nullptr) {
            s[j] = -std::numeric_limits<long double>::infinity();
            continue;
          }
          long double dot = 0;
          for (int c = 0; c < l.head_dim; ++c) dot += value_of(qr[c]) * (code_value(kr[c]) * ks);
          s[j] = tau * dot;
          if (s[j] > m) m = s[j];
        }
        T* orow = o + (cq[b] + i) * l.o_tok + h * l.o_head;
        long double sum = 0;
        std::fill(acc.begin(), acc.end(), 0.0L);
        if (m != -std::numeric_limits<long double>::infinity()) {
          for (int64_t j = 0; j < s_k; ++j) {
            if (s[j] == -std::numeric_limits<long double>::infinity()) continue;
            const long double p = std::exp(s[j] - m);
            sum += p;
            const C* vr = row(v, l.v_tok, l.v_block, l.v_head, j, hk);
            for (int c = 0; c < l.head_dim; ++c) acc[c] += p * (code_value(vr[c]) * vs);
          }
        }
        for (int c = 0; c < l.head_dim; ++c) orow[c] = store<T>(sum > 0 ? acc[c] / sum : 0.0L);
        if (l.lse != nullptr) {
          const int64_t tok = l.cu_q != nullptr ? cq[b] + i : i;
          l.lse[b * l.lse_batch + h * l.lse_head + tok * l.lse_tok] =
              sum > 0 ? static_cast<float>(m + std::log(sum)) : std::numeric_limits<float>::infinity();
        }
      }
    }
  }
  return {};
}

constexpr detail::FlashAttentionTables make_tables() {
  detail::FlashAttentionTables t{};
  for (int64_t d : {64, 96, 128, 256}) {
    t.fwd[detail::kind_index(ElementKind::F16)][detail::attention_head_dim_slot(d)] = &forward<__half>;
    t.fwd[detail::kind_index(ElementKind::Bf16)][detail::attention_head_dim_slot(d)] = &forward<__nv_bfloat16>;
  }
  t.variant = "reference";
  return t;
}

}  // namespace

template <class T, class C>
constexpr void add_paged_pair(detail::PagedPrefillTables& t) {
  for (int64_t d : {64, 96, 128, 256})
    t.fwd[detail::kind_index(kind_of<T>)][detail::kind_index(kind_of<C>)][detail::attention_head_dim_slot(d)] =
        &forward<T, C>;
}

// One reference: the paged launch records carry their block table (and the quantized caches' scales).
constexpr detail::PagedPrefillTables make_paged_tables() {
  detail::PagedPrefillTables t{};
  add_paged_pair<__half, __half>(t);
  add_paged_pair<__half, __nv_fp8_e4m3>(t);
  add_paged_pair<__half, int8_t>(t);
  add_paged_pair<__nv_bfloat16, __nv_bfloat16>(t);
  add_paged_pair<__nv_bfloat16, __nv_fp8_e4m3>(t);
  add_paged_pair<__nv_bfloat16, int8_t>(t);
  t.variant = "reference";
  return t;
}

BARACUDA_DEFINE_TABLE(detail::FlashAttentionTables, attention_tables, make_tables())
BARACUDA_DEFINE_TABLE(detail::PagedPrefillTables, paged_prefill_tables, make_paged_tables())

}  // namespace baracuda::reference
