// The paged_decode family's host reference (paged_attention.hpp's "Backends"): written for clarity, independently of
// the kernels. context_lens and block tables are read here (the host device's memory is host memory) and used by
// the rules of paged_attention.hpp: the effective length, the causal/window bounds, pages outside the cache masked.
// Per query row: the scores τ·q·(c·k_scale) in long double from the exact inputs (τ the kernels' f32 value), the
// softmax against the row's maximum, o = Σ p·(c·v_scale) / Σ p and lse = m + ln Σ p, o rounded once to the element
// kind and lse to f32; a row that sees no key gets o = 0, lse = +inf.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/reference_formats.hpp"
#include "ops/paged_decode/tables.hpp"

namespace baracuda::reference {
namespace {

using detail::PagedDecodeLaunch;

template <class T, class C>
Status decode_ref(const detail::ExecContext&, const PagedDecodeLaunch& l) {
  const T* q = static_cast<const T*>(l.q);
  const C* kc = static_cast<const C*>(l.k);
  const C* vc = static_cast<const C*>(l.v);
  T* o = static_cast<T*>(l.o);
  const long double tau = l.scale;
  const int group = l.heads / l.kv_heads;
  const long double inf = std::numeric_limits<long double>::infinity();
  std::vector<long double> s, acc(static_cast<size_t>(l.head_dim));
  std::vector<int64_t> rows;  // per visible key: its page, or −1 (masked)
  for (int b = 0; b < l.batch; ++b) {
    const int64_t len = detail::paged_effective_len(l.context_lens[b * l.cl_stride], l.max_blocks, l.block_size);
    rows.assign(static_cast<size_t>(len), -1);
    for (int64_t j = 0; j < len; ++j) {
      const int32_t pg = l.block_tables[b * l.bt_seq + (j / l.block_size) * l.bt_page];
      if (pg >= 0 && pg < l.num_blocks) rows[j] = pg;
    }
    for (int i = 0; i < l.q_len; ++i) {
      const int64_t tok = int64_t{b} * l.q_len + i, last = len - l.q_len + i;
      const int64_t first = l.window_left >= 0 ? last - l.window_left : 0;
      for (int h = 0; h < l.heads; ++h) {
        const int hk = h / group;
        const long double ks = l.k_scale != nullptr ? l.k_scale[hk * l.k_scale_stride] : 1.0L;
        const long double vs = l.v_scale != nullptr ? l.v_scale[hk * l.v_scale_stride] : 1.0L;
        const T* qr = q + tok * l.q_tok + h * l.q_head;
        s.assign(static_cast<size_t>(len), -inf);
        long double m = -inf;
        for (int64_t j = 0; j < len; ++j) {
          if (j > last || j < first || rows[j] < 0) continue;
          const C* kr = kc + rows[j] * l.k_block + (j % l.block_size) * l.k_offset + hk * l.k_head;
          long double dot = 0;
          for (int c = 0; c < l.head_dim; ++c) dot += value_of(qr[c]) * (code_value(kr[c]) * ks);
          s[j] = tau * dot;
          if (s[j] > m) m = s[j];
        }
        long double sum = 0;
        std::fill(acc.begin(), acc.end(), 0.0L);
        if (m != -inf) {
          for (int64_t j = 0; j < len; ++j) {
            if (s[j] == -inf) continue;
            const long double p = std::exp(s[j] - m);
            sum += p;
            const C* vr = vc + rows[j] * l.v_block + (j % l.block_size) * l.v_offset + hk * l.v_head;
            for (int c = 0; c < l.head_dim; ++c) acc[c] += p * (code_value(vr[c]) * vs);
          }
        }
        T* orow = o + tok * l.o_tok + h * l.o_head;
        for (int c = 0; c < l.head_dim; ++c) orow[c] = store<T>(sum > 0 ? acc[c] / sum : 0.0L);
        if (l.lse != nullptr)
          l.lse[tok * l.lse_tok + h * l.lse_head] =
              sum > 0 ? static_cast<float>(m + std::log(sum)) : std::numeric_limits<float>::infinity();
      }
    }
  }
  return {};
}

template <class T, class C>
constexpr void add_pair(detail::PagedDecodeTables& t) {
  for (int64_t d : {64, 96, 128, 256})
    t.fwd[detail::kind_index(kind_of<T>)][detail::kind_index(kind_of<C>)][detail::paged_head_dim_slot(d)] =
        &decode_ref<T, C>;
}

constexpr detail::PagedDecodeTables make_tables() {
  detail::PagedDecodeTables t{};
  add_pair<__half, __half>(t);
  add_pair<__half, __nv_fp8_e4m3>(t);
  add_pair<__half, int8_t>(t);
  add_pair<__nv_bfloat16, __nv_bfloat16>(t);
  add_pair<__nv_bfloat16, __nv_fp8_e4m3>(t);
  add_pair<__nv_bfloat16, int8_t>(t);
  t.variant = "reference";
  return t;
}

}  // namespace

BARACUDA_DEFINE_TABLE(detail::PagedDecodeTables, paged_decode_tables, make_tables())

}  // namespace baracuda::reference
