// Internal: the attention family's plan checks, launch record and tile choice, shared by the forward's plan.cpp, the
// backward's backward_plan.cpp (both plans take the same descriptor and the same q, k, v, cu_seqlens, o and lse
// operands) and the chunked prefill's paged_prefill_plan.cpp; every message names the calling plan `P`.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "baracuda/ops/attention.hpp"
#include "core/validate.hpp"
#include "ops/attention/tables.hpp"

namespace baracuda::detail::attention_plan {

inline constexpr int64_t kMaxTokens = int64_t{1} << 30;  // lengths and token counts: 32-bit indices with room for masks
inline constexpr int64_t kMaxGrid = 65535;               // heads and batches: the grid's y and z

inline std::string s(std::string_view v) { return std::string(v); }
inline std::string n2s(int64_t v) { return std::to_string(v); }

/// Whether a plan runs the 128-row query tile (attention.hpp's **Query tiles**): as asked, or for Auto at d ≤ 128 when
/// a sequence has on average at least 128 query rows and, under a causal or window mask, at least 512 keys. From the
/// H200 measurements of docs/perf/2026-11-28-h200: below those bounds the 128-row tile took up to 31 % more time (a
/// 128-row block's masked and empty rows), above them up to 39 % less (at worst 1 % more).
inline bool use_rows128(FlashAttentionTile t, int64_t head_dim, int64_t rows_per_seq, int64_t keys_per_seq,
                        bool masked) {
  if (t != FlashAttentionTile::Auto) return t == FlashAttentionTile::Rows128;
  return head_dim <= 128 && rows_per_seq >= 128 && (!masked || keys_per_seq >= 512);
}

/// The query tile (attention.hpp's **Query tiles**): one of the enumerators.
inline Status check_tile(std::string_view P, FlashAttentionTile t) {
  if (t != FlashAttentionTile::Auto && t != FlashAttentionTile::Rows64 && t != FlashAttentionTile::Rows128)
    return Error::invalid(s(P) + ": tile must be Auto, Rows64 or Rows128; got " + n2s(static_cast<int64_t>(t)));
  return {};
}

inline Status check_descriptor(std::string_view P, const FlashAttentionDescriptor& d) {
  BARACUDA_TRY(detail::check_kinds(P, {d.element}));
  if (d.element != ElementKind::F16 && d.element != ElementKind::Bf16)
    return Error::unsupported(s(P) + ": q, k, v and o must be f16 or bf16; got " + s(to_string(d.element)));
  if (d.head_dim < 1) return Error::invalid(s(P) + ": the head dimension must be >= 1; got " + n2s(d.head_dim));
  if (detail::attention_head_dim_slot(d.head_dim) < 0)
    return Error::unsupported(s(P) + ": head dimension " + n2s(d.head_dim) + " has no kernel (64, 96, 128 and 256 do)");
  if (d.heads < 1 || d.kv_heads < 1)
    return Error::invalid(s(P) + ": heads and kv_heads must be >= 1; got " + n2s(d.heads) + " and " + n2s(d.kv_heads));
  if (d.heads > kMaxGrid || d.kv_heads > kMaxGrid)
    return Error::unsupported(s(P) + ": at most 65535 heads; got " + n2s(d.heads));
  if (d.heads % d.kv_heads != 0)
    return Error::invalid(s(P) + ": the kv heads (" + n2s(d.kv_heads) + ") must divide the query heads (" +
                          n2s(d.heads) + ")");
  if (d.batch < 0) return Error::invalid(s(P) + ": the batch must be >= 0; got " + n2s(d.batch));
  if (d.batch > kMaxGrid) return Error::unsupported(s(P) + ": at most 65535 batches; got " + n2s(d.batch));
  if (d.seqlen_q < 0 || d.seqlen_k < 0 || d.seqlen_q >= kMaxTokens || d.seqlen_k >= kMaxTokens)
    return Error::invalid(s(P) + ": seqlen_q and seqlen_k must be in [0, 2^30); got " + n2s(d.seqlen_q) + " and " +
                          n2s(d.seqlen_k));
  if (d.varlen) {
    if (d.total_q < 0 || d.total_k < 0 || d.total_q >= kMaxTokens || d.total_k >= kMaxTokens)
      return Error::invalid(s(P) + ": total_q and total_k must be in [0, 2^30); got " + n2s(d.total_q) + " and " +
                            n2s(d.total_k));
  } else {
    if (d.total_q != 0 || d.total_k != 0)
      return Error::invalid(s(P) +
                            ": total_q and total_k are for packed batches (with_varlen); padded batches "
                            "have B * S tokens");
    if (d.batch * d.seqlen_q >= kMaxTokens || d.batch * d.seqlen_k >= kMaxTokens)
      return Error::invalid(s(P) + ": B * seqlen_q and B * seqlen_k must be below 2^30");
  }
  if (d.window_left < -1 || d.window_right < -1)
    return Error::invalid(s(P) + ": window bounds must be >= -1 (-1: unbounded); got (" + n2s(d.window_left) + ", " +
                          n2s(d.window_right) + ")");
  if (d.causal && d.window_right != -1 && d.window_right != 0)
    return Error::invalid(s(P) + ": causal is window_right = 0; got window_right = " + n2s(d.window_right));
  BARACUDA_TRY(check_tile(P, d.tile));
  const float tau = static_cast<float>(d.softmax_scale);
  if (!(d.softmax_scale >= 0) || !std::isfinite(tau) || (d.softmax_scale > 0 && !(tau > 0)))
    return Error::invalid(s(P) + ": the softmax scale must be finite and > 0 in f32 (or 0 for 1/sqrt(d)); got " +
                          std::to_string(d.softmax_scale));
  return {};
}

inline std::string strides_text(const ConstDynTensor& t) {
  std::string r = "(";
  for (int d = 0; d < t.rank(); ++d) r += (d ? ", " : "") + n2s(t.stride[d]);
  return r + ")";
}

/// check_tensor, then non-negative strides (unless `any_sign`: an operand only read, such as a paged cache) and,
/// when `unit_last`, unit stride along the last dimension (strides of extent-1 dimensions excepted).
inline Status check_operand(std::string_view P, std::string_view name, const ConstDynTensor& t, ElementKind kind,
                            const Shape& shape, detail::Access access, bool unit_last, bool any_sign = false) {
  BARACUDA_TRY(detail::check_tensor(P, name, t, kind, shape, access));
  if (shape.numel() == 0) return {};  // an empty view addresses nothing: any strides
  const int r = shape.rank;
  if (unit_last && shape.dims[r - 1] > 1 && t.stride[r - 1] != 1)
    return Error::invalid(s(P) + ": " + s(name) + " must have unit stride along d; its strides are " + strides_text(t));
  for (int d = 0; d < r; ++d)
    if (!any_sign && shape.dims[d] > 1 && t.stride[d] < 0)
      return Error::invalid(s(P) + ": " + s(name) + "'s strides " + strides_text(t) + " must be non-negative");
  return {};
}

/// An output's elements are distinct: sorted by stride, each dimension's stride is at least the span of those
/// inside it.
inline Status check_no_self_overlap(std::string_view P, std::string_view name, const ConstDynTensor& t) {
  if (t.numel() == 0) return {};
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, extent) of the dimensions of extent > 1
  for (int d = 0; d < t.rank(); ++d)
    if (t.shape.dims[d] > 1) dims.emplace_back(t.stride[d], t.shape.dims[d]);
  std::sort(dims.begin(), dims.end());
  int64_t span = 1;
  for (const auto& [stride, extent] : dims) {
    if (stride < span)
      return Error::invalid(s(P) + ": " + s(name) + "'s elements overlap (strides " + strides_text(t) + ")");
    span = stride * (extent - 1) + span;
  }
  return {};
}

/// cu_seqlens_q and cu_seqlens_k: absent for padded batches; s32 `[B + 1]`, contiguous, for packed ones (their
/// values are device data, never read here).
inline Status check_cu_seqlens(std::string_view P, const FlashAttentionDescriptor& d, const ConstDynTensor& cu_q,
                               const ConstDynTensor& cu_k) {
  const std::pair<std::string_view, const ConstDynTensor*> cus[] = {{"cu_seqlens_q", &cu_q}, {"cu_seqlens_k", &cu_k}};
  for (const auto& [name, cu] : cus) {
    if (!d.varlen) {
      BARACUDA_TRY(detail::check_absent(P, name, *cu, "padded batches (no with_varlen) take no cu_seqlens"));
      continue;
    }
    BARACUDA_TRY(detail::check_tensor(P, name, *cu, ElementKind::S32, Shape{d.batch + 1}, Access::Read));
    if (d.batch > 0 && cu->stride[0] != 1)
      return Error::invalid(s(P) + ": " + s(name) + " must be contiguous (stride 1); its stride is " +
                            n2s(cu->stride[0]));
  }
  return {};
}

/// A stride the kernels use: the view's, or 0 where the dimension has one element (never stepped over).
inline int64_t used_stride(const ConstDynTensor& t, int d) { return t.shape.dims[d] > 1 ? t.stride[d] : 0; }

inline int clamp_window(int64_t w) { return static_cast<int>(std::min(w, kMaxTokens)); }

/// The forward's launch record of `t` (the forward's args or the backward's: the same field names; o and lse are
/// written by the forward, read by the backward); lse only when `with_lse`.
template <class Args>
FlashAttentionLaunch make_launch(const FlashAttentionDescriptor& d, const Args& t, bool with_lse) {
  FlashAttentionLaunch l;
  l.element = d.element;
  l.batch = static_cast<int>(d.batch), l.heads = static_cast<int>(d.heads);
  l.kv_heads = static_cast<int>(d.kv_heads), l.head_dim = static_cast<int>(d.head_dim);
  l.seqlen_q = static_cast<int>(d.seqlen_q), l.seqlen_k = static_cast<int>(d.seqlen_k);
  l.total_q = static_cast<int>(d.tokens_q()), l.total_k = static_cast<int>(d.tokens_k());
  l.window_left = clamp_window(d.window_left);
  l.window_right = d.causal ? 0 : clamp_window(d.window_right);
  l.scale = d.softmax_scale == 0 ? static_cast<float>(1.0 / std::sqrt(static_cast<double>(d.head_dim)))
                                 : static_cast<float>(d.softmax_scale);
  l.q = t.q.data, l.q_tok = used_stride(t.q, 0), l.q_head = used_stride(t.q, 1);
  l.k = t.k.data, l.k_tok = used_stride(t.k, 0), l.k_head = used_stride(t.k, 1);
  l.v = t.v.data, l.v_tok = used_stride(t.v, 0), l.v_head = used_stride(t.v, 1);
  if (d.varlen) {
    l.cu_q = static_cast<const int32_t*>(t.cu_seqlens_q.data);
    l.cu_k = static_cast<const int32_t*>(t.cu_seqlens_k.data);
  }
  l.o = const_cast<void*>(static_cast<const void*>(t.o.data)), l.o_tok = used_stride(t.o, 0),
  l.o_head = used_stride(t.o, 1);
  if (with_lse) {
    l.lse = static_cast<float*>(const_cast<void*>(static_cast<const void*>(t.lse.data)));
    if (d.varlen) {
      l.lse_head = used_stride(t.lse, 0), l.lse_tok = used_stride(t.lse, 1);
    } else {
      l.lse_batch = used_stride(t.lse, 0), l.lse_head = used_stride(t.lse, 1), l.lse_tok = used_stride(t.lse, 2);
    }
  }
  return l;
}

}  // namespace baracuda::detail::attention_plan

namespace dynamic {}  // namespace dynamic
