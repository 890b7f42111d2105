// Internal: the rules both plans over the paged KV cache share (PagedDecodePlan, paged_attention.hpp;
// PagedPrefillPlan, paged_prefill.hpp): the descriptor's kinds, scale layout, head dim, heads, batch, pages, window
// and scale, and the cache operands (the two caches, block tables, context lengths, scales). Each plan adds its own
// query rules; every message names the calling plan `P`.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "baracuda/ops/kv_cache.hpp"
#include "core/validate.hpp"
#include "ops/attention/plan_checks.hpp"  // check_operand, n2s, s
#include "ops/paged_decode/tables.hpp"    // paged_head_dim_slot

namespace baracuda::detail::paged {

inline constexpr int64_t kMaxGrid = 65535;             // heads and sequences: the grids' y and z
inline constexpr int64_t kMaxKeys = int64_t{1} << 30;  // max_blocks_per_seq·block_size: 32-bit key positions

/// The descriptor rules of a paged plan's cache and heads (`D`: a descriptor with the paged fields); the plan's own
/// query rules and the operands' sizes (detail::check_shape) follow.
template <class D>
Status check_descriptor(std::string_view P, const D& d) {
  using attention_plan::n2s;
  using attention_plan::s;
  const auto invalid = [&](const std::string& why) { return Error::invalid(s(P) + ": " + why); };
  const auto unsupported = [&](const std::string& why) { return Error::unsupported(s(P) + ": " + why); };
  BARACUDA_TRY(detail::check_kinds(P, {d.element, d.cache_kind}));
  if (static_cast<uint8_t>(d.scale_layout) > static_cast<uint8_t>(KvScaleLayout::PerHead))
    return invalid("invalid KvScaleLayout");
  if (d.element != ElementKind::F16 && d.element != ElementKind::Bf16)
    return unsupported("q and o must be f16 or bf16; got " + s(to_string(d.element)));
  if (d.cache_kind != d.element && d.cache_kind != ElementKind::Fp8E4M3 && d.cache_kind != ElementKind::S8)
    return unsupported("the caches must hold q's kind " + s(to_string(d.element)) + ", fp8e4m3 or s8; got " +
                       s(to_string(d.cache_kind)));
  if (d.head_dim < 1) return invalid("the head dimension must be >= 1; got " + n2s(d.head_dim));
  if (paged_head_dim_slot(d.head_dim) < 0)
    return unsupported("head dimension " + n2s(d.head_dim) + " has no kernel (64, 96, 128 and 256 do)");
  if (d.heads < 1 || d.kv_heads < 1)
    return invalid("heads and kv_heads must be >= 1; got " + n2s(d.heads) + " and " + n2s(d.kv_heads));
  if (d.heads > kMaxGrid) return unsupported("at most 65535 heads; got " + n2s(d.heads));
  if (d.heads % d.kv_heads != 0)
    return invalid("the kv heads (" + n2s(d.kv_heads) + ") must divide the query heads (" + n2s(d.heads) + ")");
  if (d.batch < 0) return invalid("the batch must be >= 0; got " + n2s(d.batch));
  if (d.batch > kMaxGrid) return unsupported("at most 65535 sequences; got " + n2s(d.batch));
  if (d.block_size < 1) return invalid("block_size must be >= 1; got " + n2s(d.block_size));
  if (d.block_size != 8 && d.block_size != 16 && d.block_size != 32)
    return unsupported("block_size " + n2s(d.block_size) + " has no kernel (8, 16 and 32 do)");
  if (d.num_blocks < 1 || d.num_blocks > INT32_MAX)
    return invalid("num_blocks must be in [1, 2^31) (s32 page ids); got " + n2s(d.num_blocks));
  if (d.max_blocks_per_seq < 1 || d.max_blocks_per_seq > kMaxKeys / d.block_size)
    return invalid("max_blocks_per_seq must be >= 1 with max_blocks_per_seq * block_size below 2^30; got " +
                   n2s(d.max_blocks_per_seq));
  if (d.window_left < -1) return invalid("window_left must be >= -1 (-1: unbounded); got " + n2s(d.window_left));
  const float tau = static_cast<float>(d.softmax_scale);
  if (!(d.softmax_scale >= 0) || !std::isfinite(tau) || (d.softmax_scale > 0 && !(tau > 0)))
    return invalid("the softmax scale must be finite and > 0 in f32 (or 0 for 1/sqrt(d)); got " +
                   std::to_string(d.softmax_scale));
  return {};
}

/// The cache operands of `t` (`Args`: key_cache, value_cache, block_tables, context_lens, k_scale, v_scale): the
/// caches of the cache kind and shape with any strides and a unit last one, the s32 tables and lengths, and the
/// f32 scales exactly when the cache is quantized.
template <class D, class Args>
Status check_cache_operands(std::string_view P, const D& d, const Args& t) {
  BARACUDA_TRY(attention_plan::check_operand(P, "key_cache", t.key_cache, d.cache_kind, d.cache_shape(), Access::Read,
                                             true, true));
  BARACUDA_TRY(attention_plan::check_operand(P, "value_cache", t.value_cache, d.cache_kind, d.cache_shape(),
                                             Access::Read, true, true));
  BARACUDA_TRY(detail::check_tensor(P, "block_tables", t.block_tables, ElementKind::S32,
                                    Shape{d.batch, d.max_blocks_per_seq}, Access::Read));
  BARACUDA_TRY(detail::check_tensor(P, "context_lens", t.context_lens, ElementKind::S32, Shape{d.batch}, Access::Read));
  for (const auto& [name, sc] :
       {std::pair<const char*, ConstDynTensor>{"k_scale", t.k_scale}, {"v_scale", t.v_scale}}) {
    if (d.quantized())
      BARACUDA_TRY(detail::check_tensor(P, name, sc, ElementKind::F32, d.scale_shape(), Access::Read));
    else
      BARACUDA_TRY(detail::check_absent(P, name, sc, "the caches hold q's kind (no dequantization)"));
  }
  return {};
}

}  // namespace baracuda::detail::paged
