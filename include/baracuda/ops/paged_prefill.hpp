/// \file
/// \brief Chunked prefill over the paged KV cache: `PagedPrefillPlan`. Each sequence b brings s_q new query tokens
/// (a chunk of its prompt) whose keys and values are already in the cache (appended by KvCacheAppendPlan), after
/// the sequence's earlier tokens: with L = b's effective context length, chunk token i < s_q sits at position
/// L − s_q + i, and for each query head h
/// `o[t, h, :] = Σ_j softmax_j(τ·q[t, h, :]·K_b[j, hk, :])·V_b[j, hk, :]` over the keys j it sees, t = the token's
/// row in the packed q, hk = h / (H / H_kv), and the optional natural-log `lse[h, t] = ln Σ_j exp(τ·q·K_b[j])`.
/// K_b[j] is `key_cache[block_tables[b, j / block_size], j % block_size, hk, :]` (kv_cache.hpp's layout), V_b alike:
/// the same cache and block table as PagedDecodePlan (paged_attention.hpp), with FlashAttentionPlan's tensor-core
/// kernel (attention.hpp) reading K/V through the block table. A `dynamic::PagedPrefillPlan` (kind-erased) taking
/// `dynamic::PagedPrefillArgs`, and a typed `PagedPrefillPlan<T>`.
///
/// **Kinds.** q and o: f16 or bf16 (`element`); the caches: `element`, or `Fp8E4M3` / `S8` (`cache_kind`),
/// dequantized as kv_cache.hpp says, x = c·scale, with f32 `k_scale` / `v_scale` of shape `[1]` (`PerTensor`) or
/// `[H_kv]` (`PerHead`, any stride); block_tables, context_lens and cu_seqlens_q s32; lse f32. Anything else is
/// `Unsupported`.
///
/// **Head dimension.** d ∈ {64, 96, 128, 256}; **page size** block_size ∈ {8, 16, 32} (`Unsupported` otherwise).
/// **Heads.** H % H_kv == 0 (MHA, GQA, MQA); 1 ≤ H, H_kv ≤ 65535. **Batch.** 0 ≤ B ≤ 65535.
///
/// **Queries: packed, varlen.** q and o are `[T_q, H, d]`; sequence b's chunk is rows cu_seqlens_q[b] ..
/// cu_seqlens_q[b + 1] − 1 (`cu_seqlens_q` s32 `[B + 1]`, contiguous, device data). `max_seqlen_q` (the longest
/// chunk) sizes the grid; rows of a longer chunk past it are not written. T_q, max_seqlen_q < 2^30.
/// cu_seqlens_q's values follow attention.hpp's rule: the kernels and the reference use the effective offsets
/// `c'[b] = min(T_q, max(0, c[0], ..., c[b]))`; rows no effective chunk covers are not written (o nor lse).
///
/// **Keys: the paged cache.** `context_lens[b]` is L_b, b's tokens in the cache, the chunk's included; the
/// effective length is `min(max(context_lens[b], 0), max_blocks_per_seq·block_size)` (paged_attention.hpp). A
/// page id p of a visible key with p < 0 or p ≥ num_blocks is never dereferenced: its keys are masked. Nothing
/// is reported; the host does not read these values.
///
/// **Masks.** Chunk token i of b sees key j < L iff its page is valid, j ≤ L − s_q + i when `causal` (the default:
/// the diagonal bottom-right aligned, as attention.hpp), and j ≥ L − s_q + i − window_left when window_left ≥ 0.
/// Non-causal (`with_causal(false)`): every valid key of the window. A token that sees no key (L < s_q leaves the
/// first tokens so, with causal) gets o = 0 and lse = +inf, never NaN.
///
/// **Layouts.** q, o: any non-negative token and head strides, unit stride along d; o's elements distinct. The
/// caches `[num_blocks, block_size, H_kv, d]`: any strides with a unit last one (two tensors, or two views of one
/// buffer: only read). block_tables
/// `[B, max_blocks_per_seq]`, context_lens `[B]`: any strides. lse (optional) `[H, T_q]`, any non-negative
/// strides, distinct elements. Rows whose base and strides are multiples of 8 elements are copied 16 bytes at a
/// time (cp.async; an FP8/int8 cache's 8-element rows by one 8-byte load each, widened into the tile); other
/// layouts element by element (correct, slower). Every operand within 2^56 elements.
///
/// **Alignment.** Every pointer aligned to its element's size (`MisalignedOperand`).
///
/// **Aliasing.** o and lse overlap no input nor each other (`InvalidProblem`). **Workspace.** None.
///
/// **Backends, determinism and accuracy.**
/// - `host` (the reference, attention.hpp's): scores, softmax and sums in long double from the exact
///   (dequantized: c·scale exact) inputs, one rounding of o to the element kind and of lse to f32.
/// - `sim` and `cuda` (`Sim`/`Bespoke`, variant `fa2_m16n8k16_paged`): attention.hpp's FlashAttention-2 kernel
///   with each K/V tile's rows gathered through the block table; the same arithmetic, so the same bound: o within
///   about 2^-11 (f16) or 2^-8 (bf16) of max|v·v_scale|, lse a few f32 ulps. An FP8/int8 cache's codes are exact
///   in f16 and bf16, so the tiles hold them unscaled and the scales are folded into the sums (τ·k_scale into the
///   scores, v_scale into o: per-element dequantization in exact arithmetic). Fixed summation orders, no atomics:
///   the same bits on every run of a device; graph-capture safe.
/// - **Query tiles** (`tile`; sim and cuda, the host device ignores it): as FlashAttentionPlan's (attention.hpp).
///   `Rows128` (variant `fa2_m16n8k16_paged_m128`) is FlashAttention-2's 128-row tile, d ∈ {64, 96, 128}
///   (`Unsupported` at 256), **the same bits** as `Rows64`. `Auto` takes it at d ≤ 128 when the chunks have on average
///   (T_q / B) at least 128 tokens and, under the causal or a window mask, the block table addresses at least 512 keys
///   (max_blocks_per_seq · block_size), else `Rows64`: on an H200 (docs/perf/2026-11-28-h200) the 128-row tile was
///   took 29–39 % less time on chunks of 128 to 2048 tokens, and 15–22 % more on chunks of 1 to 64.
///
/// **Empty problems** (B = 0, T_q = 0 or max_seqlen_q = 0) succeed and write nothing.
#pragma once

#include <cstdint>
#include <utility>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/hash.hpp"
#include "baracuda/core/plan.hpp"
#include "baracuda/core/sku.hpp"
#include "baracuda/core/stream.hpp"
#include "baracuda/core/tensor.hpp"
#include "baracuda/core/typed_plan.hpp"
#include "baracuda/core/workspace.hpp"
#include "baracuda/ops/attention.hpp"  // detail::FlashAttentionFn: the kernels are the attention family's
#include "baracuda/ops/kv_cache.hpp"   // KvScaleLayout, the paged layout

namespace baracuda {

/// One chunked-prefill problem (the file comment has every rule). A hashable value.
struct PagedPrefillDescriptor {
  ElementKind element = ElementKind::F16;                 ///< q, o: f16, bf16
  ElementKind cache_kind = ElementKind::F16;              ///< `element`, fp8e4m3 or s8
  KvScaleLayout scale_layout = KvScaleLayout::PerTensor;  ///< read when the cache is quantized
  int64_t batch = 1;                                      ///< B sequences
  int64_t total_q = 0;                     ///< T_q, the packed query tokens
  int64_t max_seqlen_q = 0;                ///< the longest chunk
  int64_t heads = 1, kv_heads = 1;         ///< H, H_kv
  int64_t head_dim = 128;                  ///< d
  int64_t num_blocks = 1;                  ///< pages in the cache
  int64_t block_size = 16;                 ///< tokens per page
  int64_t max_blocks_per_seq = 1;          ///< the block table's width
  bool causal = true;                      ///< bottom-right aligned causal mask
  int64_t window_left = -1;                ///< −1: unbounded
  double softmax_scale = 0;                ///< τ; 0: 1/√d
  bool return_lse = false;                 ///< write lse
  FlashAttentionTile tile = FlashAttentionTile::Auto;  ///< sim and cuda: the forward's query tile (attention.hpp)

  /// q, o and an unquantized cache of kind e.
  PagedPrefillDescriptor& with_element(ElementKind e) {
    element = e, cache_kind = e;
    return *this;
  }
  PagedPrefillDescriptor& with_kinds(ElementKind e, ElementKind cache) {
    element = e, cache_kind = cache;
    return *this;
  }
  PagedPrefillDescriptor& with_scale_layout(KvScaleLayout l) {
    scale_layout = l;
    return *this;
  }
  /// B sequences, T_q packed query tokens of which at most max_q per sequence, H query heads, H_kv kv heads, d.
  PagedPrefillDescriptor& with_shape(int64_t b, int64_t t_q, int64_t max_q, int64_t h, int64_t h_kv, int64_t d) {
    batch = b, total_q = t_q, max_seqlen_q = max_q, heads = h, kv_heads = h_kv, head_dim = d;
    return *this;
  }
  /// The cache's pages and the block table's width.
  PagedPrefillDescriptor& with_pages(int64_t blocks, int64_t tokens_per_block, int64_t blocks_per_seq) {
    num_blocks = blocks, block_size = tokens_per_block, max_blocks_per_seq = blocks_per_seq;
    return *this;
  }
  PagedPrefillDescriptor& with_causal(bool c = true) {
    causal = c;
    return *this;
  }
  PagedPrefillDescriptor& with_window(int64_t left) {
    window_left = left;
    return *this;
  }
  PagedPrefillDescriptor& with_scale(double s) {
    softmax_scale = s;
    return *this;
  }
  PagedPrefillDescriptor& with_lse(bool l = true) {
    return_lse = l;
    return *this;
  }
  PagedPrefillDescriptor& with_tile(FlashAttentionTile t) {
    tile = t;
    return *this;
  }
  bool quantized() const { return cache_kind != element; }
  /// q's and o's shape `[T_q, H, d]`.
  Shape q_shape() const { return Shape{total_q, heads, head_dim}; }
  /// The caches' shape `[num_blocks, block_size, H_kv, d]`.
  Shape cache_shape() const { return Shape{num_blocks, block_size, kv_heads, head_dim}; }
  Shape scale_shape() const { return Shape{scale_layout == KvScaleLayout::PerHead ? kv_heads : 1}; }

  friend bool operator==(const PagedPrefillDescriptor&, const PagedPrefillDescriptor&) = default;
  size_t hash() const {
    return detail::hash_fields(element, cache_kind, scale_layout, batch, total_q, max_seqlen_q, heads, kv_heads, head_dim, num_blocks, block_size,
                               max_blocks_per_seq, causal, window_left, softmax_scale, return_lse, tile);
  }
};

namespace dynamic {

/// The operands of `dynamic::PagedPrefillPlan`, inputs then outputs.
struct PagedPrefillArgs {
  ConstDynTensor q;             ///< [T_q, H, d] of `element`
  ConstDynTensor key_cache;     ///< [num_blocks, block_size, H_kv, d] of `cache_kind`
  ConstDynTensor value_cache;   ///< key_cache's shape and kind
  ConstDynTensor block_tables;  ///< s32 [B, max_blocks_per_seq], device memory
  ConstDynTensor context_lens;  ///< s32 [B], device memory: L_b, the chunk's tokens included
  ConstDynTensor cu_seqlens_q;  ///< s32 [B + 1], contiguous, device memory
  ConstDynTensor k_scale = {};  ///< f32 `scale_shape()` when quantized; else empty
  ConstDynTensor v_scale = {};  ///< f32 `scale_shape()` when quantized; else empty
  DynTensor o = {};             ///< [T_q, H, d] of `element`, written
  DynTensor lse = {};           ///< f32 [H, T_q], written; empty unless return_lse
};

/// Chunked prefill attention over the paged cache. SKU
/// `attention/<element>/<cache kind>/<backend>/<precision>/<variant>`, op `paged_prefill`, variant `reference`
/// (host), `fa2_m16n8k16_paged` or `fa2_m16n8k16_paged_m128` (sim, cuda: the descriptor's tile).
class PagedPrefillPlan : public detail::BoundFnPlan<PagedPrefillDescriptor, detail::FlashAttentionFn> {
  using BoundFnPlan::BoundFnPlan;

 public:
  using Args = PagedPrefillArgs;
  /// The descriptor's rules (kind, head dim, page size, heads, lengths, window, scale, tile), then the device (and
  /// its kernel: the 128-row tile has none at d = 256).
  static Result<PagedPrefillPlan> select(const Stream& stream, const PagedPrefillDescriptor& desc,
                                         PlanPreference pref = {});
  /// Kinds, shapes, strides, the optional operands (lse, the scales), alignment and aliasing.
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return 0; }
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  /// Re-validates, then one launch (no synchronisation: the device data is not read by the host).
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;
};

}  // namespace dynamic

// ------------------------------------------------------------------------------------------------------
// Typed wrapper
// ------------------------------------------------------------------------------------------------------

/// Arguments of a typed PagedPrefillPlan<T, C> (T: __half or __nv_bfloat16; C: T, __nv_fp8_e4m3 or int8_t).
template <class T, class C = T>
struct PagedPrefillArgs {
  TensorRef<T, 3> q;
  TensorRef<C, 4> key_cache;
  TensorRef<C, 4> value_cache;
  TensorRef<int32_t, 2> block_tables;
  TensorRef<int32_t, 1> context_lens;
  TensorRef<int32_t, 1> cu_seqlens_q;
  TensorRef<float, 1> k_scale{};  ///< or default (a cache of T)
  TensorRef<float, 1> v_scale{};
  TensorMut<T, 3> o{};
  TensorMut<float, 2> lse{};  ///< or default
  dynamic::PagedPrefillArgs erased() const {
    dynamic::PagedPrefillArgs a{ConstDynTensor::of(q),
                                ConstDynTensor::of(key_cache),
                                ConstDynTensor::of(value_cache),
                                ConstDynTensor::of(block_tables),
                                ConstDynTensor::of(context_lens),
                                ConstDynTensor::of(cu_seqlens_q)};
    if (k_scale.data != nullptr) a.k_scale = ConstDynTensor::of(k_scale);
    if (v_scale.data != nullptr) a.v_scale = ConstDynTensor::of(v_scale);
    a.o = DynTensor::of(o);
    if (lse.data != nullptr) a.lse = DynTensor::of(lse);
    return a;
  }
};

/// Typed PagedPrefillPlan: T is the descriptor's `element`, C its `cache_kind`.
template <class T, class C = T>
class PagedPrefillPlan : public detail::TypedPlan<dynamic::PagedPrefillPlan, PagedPrefillArgs<T, C>> {
  using Base = detail::TypedPlan<dynamic::PagedPrefillPlan, PagedPrefillArgs<T, C>>;
  friend Base;
  using Base::Base;

 public:
  static Result<PagedPrefillPlan> select(const Stream& stream, const PagedPrefillDescriptor& desc,
                                         PlanPreference pref = {}) {
    BARACUDA_TRY(detail::check_typed_element("PagedPrefillPlan", "q and o", desc.element, kind_of<T>));
    BARACUDA_TRY(detail::check_typed_element("PagedPrefillPlan", "the caches", desc.cache_kind, kind_of<C>));
    auto p = dynamic::PagedPrefillPlan::select(stream, desc, pref);
    if (!p) return p.error();
    return PagedPrefillPlan(std::move(p).value());
  }
};

}  // namespace baracuda
