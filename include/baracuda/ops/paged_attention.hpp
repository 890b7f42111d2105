/// \file
/// \brief Decode attention over the paged KV cache (flash-decoding, split-KV): `PagedDecodePlan`. For each sequence
/// b, query token i < q_len of b and query head h,
/// `o[b·q_len + i, h, :] = Σ_j softmax_j(τ·q[b·q_len + i, h, :]·K_b[j, hk, :])·V_b[j, hk, :]` over the keys j that
/// query sees, hk = h / (H / H_kv), and the optional natural-log `lse[b·q_len + i, h] = ln Σ_j exp(τ·q·K_b[j])`.
/// K_b[j] is key j of sequence b in the cache: `key_cache[block_tables[b, j / block_size], j % block_size, hk, :]`
/// (kv_cache.hpp's layout), V_b alike. A `dynamic::PagedDecodePlan` (kind-erased) taking `dynamic::PagedDecodeArgs`,
/// and a typed `PagedDecodePlan<T, C>` (q/o type, cache type).
///
/// **Kinds.** q and o: f16 or bf16 (`element`); the caches: `element`, or `Fp8E4M3` / `S8` (`cache_kind`),
/// dequantized as kv_cache.hpp says, x = c·scale, with f32 `k_scale` / `v_scale` of shape `[1]` (`PerTensor`) or
/// `[H_kv]` (`PerHead`, any stride); block_tables and context_lens s32; lse f32. Anything else is `Unsupported`.
///
/// **Head dimension.** d ∈ {64, 96, 128, 256}; **page size** block_size ∈ {8, 16, 32} (`Unsupported` otherwise).
/// **Heads.** H % H_kv == 0 (MHA, GQA, MQA); 1 ≤ H_kv ≤ 65535, H ≤ 65535. **Queries.** 1 ≤ q_len ≤ 16; B ≤ 65535.
///
/// **Causality.** The q_len new tokens of a sequence are already in its cache (appended by KvCacheAppendPlan): with
/// L = b's effective context length, query i sees key j iff j ≤ L − q_len + i (bottom-right aligned, as
/// attention.hpp's causal) and, with `window_left` ≥ 0, j ≥ L − q_len + i − window_left. A query that sees no key
/// (L = 0, or L < q_len for the first queries) gets o = 0 and lse = +inf, never NaN.
///
/// **context_lens and block tables are device data.** The kernels and the host reference use the effective
/// length `L = min(max(context_lens[b], 0), max_blocks_per_seq·block_size)`: a negative length is 0, an over-long
/// one is clamped to what the block table can address. A page id p of a visible key with p < 0 or p ≥ num_blocks
/// is **never dereferenced**: its keys are masked (they contribute nothing to o nor lse), as if they were outside
/// the window. Nothing is reported; the host does not read these values.
///
/// **Shapes and layouts.** q and o `[B·q_len, H, d]`, any non-negative token and head strides, unit stride along
/// d; the caches `[num_blocks, block_size, H_kv, d]`, any strides with a unit last one (two tensors, or two views of
/// one buffer: the caches are only read); block_tables `[B, max_blocks_per_seq]`, any strides; context_lens `[B]`,
/// any stride; lse (optional) `[B·q_len, H]`, any non-negative strides. o's and lse's elements must be distinct.
/// Every operand within 2^56 elements.
///
/// **Alignment.** Every pointer aligned to its element's size (`MisalignedOperand`). Rows of the caches whose
/// base and block, offset and head strides are multiples of 8 elements are loaded 8 elements at a time (16 bytes
/// for f16/bf16, 8 for fp8/s8); other layouts element by element (correct, slower).
///
/// **Aliasing.** o and lse overlap no input nor each other (`InvalidProblem`); the workspace overlaps no operand.
///
/// **Splits and workspace.** The keys a sequence's queries can see, [L − q_len − window_left, L) clipped to [0, L),
/// are cut into `num_splits` equal chunks; one block per (split, kv head, group of ≤ 8 query rows, sequence)
/// computes a partial softmax over its chunk. `num_splits` = 0 lets the plan choose (sim, cuda): with blocks =
/// B·H_kv·⌈(H/H_kv)·q_len / 8⌉ and r = 3 resident blocks per SM (2 for an f16/bf16 cache at d = 256),
/// splits = clamp(⌊132·r / blocks⌋, 1, min(⌈max_blocks_per_seq·block_size / 64⌉, 64)) — as many splits as one
/// wave of an H100's 132 SMs holds (a grid a little larger takes a second wave, twice the time), each split at
/// least one 64-key tile of the longest addressable context (the split kernel is latency-bound per tile:
/// docs/perf/2026-11-27-h100, runs 10 and 12); `chosen_splits()` tells. With splits > 1 the partials (f32 o normalized
/// by its own sum, and f32 lse per split and query row) go to the workspace, `workspace_size()` = splits·B·q_len·H·(d +
/// 1)·4 bytes, 256-byte aligned, and a second kernel merges them in split order. One split needs no workspace. The host
/// device ignores num_splits (no workspace).
///
/// **Backends, determinism and accuracy.**
/// - `host` (the reference): scores, softmax and sums in long double from the exact (dequantized: c·scale exact)
///   inputs, one rounding of o to the element kind and of lse to f32.
/// - `sim` and `cuda` (`Sim`/`Bespoke`, variant `split_kv_simt`): scores and the online softmax in f32 on CUDA
///   cores (exp2 of log2e-prescaled scores); the scales folded into the sums (τ·k_scale into the scores, v_scale
///   into the output: equal to per-element dequantization in exact arithmetic); split partials merged by their lse
///   in split order. o differs from the exact value by a few f32 ulps of max|v·v_scale| times the error of the
///   scores (about d·2^-23·τ·Σ|q·k|) plus one rounding to the element kind; lse by a few f32 ulps. Different
///   num_splits agree within that bound, not bit for bit. Fixed summation orders and no atomics: the same bits on
///   every run of a device for the same num_splits; graph-capture safe.
///
/// **Kernels** (`kernel`; sim and cuda, the host device ignores it). `TensorCores` (variant `split_kv_tc`): one warp
/// per (split, kv head, group of ≤ 16 query rows, sequence), the group's rows as one m16 tile of `mma.sync m16n8k16`
/// against 32-key K/V tiles that come two stages ahead by cp.async (FP8/int8 codes copied as stored, then widened
/// exactly into f16/bf16 tiles), FlashAttention-2's online softmax in f32; d ∈ {64, 96, 128} (`Unsupported` at 256).
/// Its splits follow the rule above with blocks = B·H_kv·⌈(H/H_kv)·q_len / 16⌉ and r = 6 resident blocks per SM
/// (their shared memory; 11 at d = 64). P is rounded to the element kind before P·V, as in FlashAttentionPlan: o is
/// within FlashAttentionPlan's bound of the exact value, not the CUDA-core kernel's. `Auto` takes `TensorCores` over
/// an f16/bf16 cache at d = 128 with B ≥ 16, else `CudaCores`: on an H200 (docs/perf/2026-11-28-h200, GQA 4, one
/// query token) the tensor-core kernel took 8–39 % less time there (6 % more at 128 × 1024, the one exception), and as
/// much or more with fewer sequences (1.6× at B = 1) or an FP8/int8 cache (2×, when its codes loaded synchronously:
/// they come by cp.async since, not yet timed). Auto's
/// kernel depends on B: a sequence decoded in batches of 15 and of 16 gets results within the two kernels' bounds,
/// not the same bits (choose the kernel to pin them).
///
/// **Empty problems** (B = 0) succeed and write nothing.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/hash.hpp"
#include "baracuda/core/plan.hpp"
#include "baracuda/core/sku.hpp"
#include "baracuda/core/stream.hpp"
#include "baracuda/core/tensor.hpp"
#include "baracuda/core/typed_plan.hpp"
#include "baracuda/core/workspace.hpp"
#include "baracuda/ops/kv_cache.hpp"  // KvScaleLayout, the paged layout

namespace baracuda {

/// The kernel a PagedDecodePlan runs on sim and cuda (the file comment's **Kernels**).
enum class PagedDecodeKernel : uint8_t {
  Auto,         ///< the plan's choice: TensorCores from 16 sequences over a 16-bit cache at d = 128 (above)
  CudaCores,    ///< `split_kv_simt`: f32 dot products on CUDA cores, 8 query rows per block
  TensorCores,  ///< `split_kv_tc`: mma.sync m16n8k16, 16 query rows per warp; d ≤ 128
};

constexpr std::string_view to_string(PagedDecodeKernel k) {
  switch (k) {
    case PagedDecodeKernel::Auto: return "auto";
    case PagedDecodeKernel::CudaCores: return "cuda_cores";
    case PagedDecodeKernel::TensorCores: return "tensor_cores";
  }
  return "?";
}

/// One paged decode problem (the file comment has every rule). A hashable value.
struct PagedDecodeDescriptor {
  ElementKind element = ElementKind::F16;                 ///< q, o: f16, bf16
  ElementKind cache_kind = ElementKind::F16;              ///< `element`, fp8e4m3 or s8
  KvScaleLayout scale_layout = KvScaleLayout::PerTensor;  ///< read when the cache is quantized
  int64_t batch = 1;                                      ///< B sequences
  int64_t q_len = 1;                                      ///< query tokens per sequence
  int64_t heads = 1, kv_heads = 1;                        ///< H, H_kv
  int64_t head_dim = 128;                                 ///< d
  int64_t num_blocks = 1;                                 ///< pages in the cache
  int64_t block_size = 16;                                ///< tokens per page
  int64_t max_blocks_per_seq = 1;                         ///< the block table's width
  double softmax_scale = 0;                               ///< τ; 0: 1/√d
  bool return_lse = false;                                ///< write lse
  int64_t window_left = -1;                               ///< −1: unbounded
  int64_t num_splits = 0;                                 ///< 0: the plan chooses
  PagedDecodeKernel kernel = PagedDecodeKernel::Auto;     ///< sim and cuda

  PagedDecodeDescriptor& with_kinds(ElementKind e, ElementKind cache) {
    element = e, cache_kind = cache;
    return *this;
  }
  /// B sequences of q_len new tokens, H query heads, H_kv kv heads, head dim d.
  PagedDecodeDescriptor& with_shape(int64_t b, int64_t q, int64_t h, int64_t h_kv, int64_t d) {
    batch = b, q_len = q, heads = h, kv_heads = h_kv, head_dim = d;
    return *this;
  }
  /// The cache's pages and the block table's width.
  PagedDecodeDescriptor& with_pages(int64_t blocks, int64_t tokens_per_block, int64_t blocks_per_seq) {
    num_blocks = blocks, block_size = tokens_per_block, max_blocks_per_seq = blocks_per_seq;
    return *this;
  }
  PagedDecodeDescriptor& with_scale_layout(KvScaleLayout l) {
    scale_layout = l;
    return *this;
  }
  PagedDecodeDescriptor& with_scale(double s) {
    softmax_scale = s;
    return *this;
  }
  PagedDecodeDescriptor& with_lse(bool l = true) {
    return_lse = l;
    return *this;
  }
  PagedDecodeDescriptor& with_window(int64_t left) {
    window_left = left;
    return *this;
  }
  PagedDecodeDescriptor& with_splits(int64_t s) {
    num_splits = s;
    return *this;
  }
  PagedDecodeDescriptor& with_kernel(PagedDecodeKernel k) {
    kernel = k;
    return *this;
  }
  bool quantized() const { return cache_kind != element; }
  /// B·q_len, saturating at INT64_MAX (select rejects such a problem before using it).
  int64_t tokens() const {
    int64_t t = 0;
    return __builtin_mul_overflow(batch, q_len, &t) ? INT64_MAX : t;
  }
  /// q's and o's shape `[B·q_len, H, d]`.
  Shape q_shape() const { return Shape{tokens(), heads, head_dim}; }
  /// The caches' shape `[num_blocks, block_size, H_kv, d]`.
  Shape cache_shape() const { return Shape{num_blocks, block_size, kv_heads, head_dim}; }
  Shape scale_shape() const { return Shape{scale_layout == KvScaleLayout::PerHead ? kv_heads : 1}; }

  friend bool operator==(const PagedDecodeDescriptor&, const PagedDecodeDescriptor&) = default;
  size_t hash() const {
    return detail::hash_fields(element, cache_kind, scale_layout, batch, q_len, heads, kv_heads, head_dim, num_blocks,
                               block_size, max_blocks_per_seq, softmax_scale, return_lse, window_left, num_splits,
                               kernel);
  }
};

namespace detail {
struct PagedDecodeLaunch;
using PagedDecodeFn = Status (*)(const ExecContext&, const PagedDecodeLaunch&);
}  // namespace detail

namespace dynamic {

/// The operands of `dynamic::PagedDecodePlan`, inputs then outputs.
struct PagedDecodeArgs {
  ConstDynTensor q;             ///< [B·q_len, H, d] of `element`
  ConstDynTensor key_cache;     ///< [num_blocks, block_size, H_kv, d] of `cache_kind`
  ConstDynTensor value_cache;   ///< key_cache's shape and kind
  ConstDynTensor block_tables;  ///< s32 [B, max_blocks_per_seq], device memory
  ConstDynTensor context_lens;  ///< s32 [B], device memory
  ConstDynTensor k_scale = {};  ///< f32 `scale_shape()` when quantized; else empty
  ConstDynTensor v_scale = {};  ///< f32 `scale_shape()` when quantized; else empty
  DynTensor o = {};             ///< [B·q_len, H, d] of `element`, written
  DynTensor lse = {};           ///< f32 [B·q_len, H], written; empty unless return_lse
};

/// Paged decode attention. SKU `attention/<element>/<cache kind>/<backend>/<precision>/<variant>`, op
/// `paged_decode`, variant `reference` (host), `split_kv_simt` or `split_kv_tc` (sim, cuda: the descriptor's kernel).
class PagedDecodePlan : public detail::BoundFnPlan<PagedDecodeDescriptor, detail::PagedDecodeFn> {
 public:
  using Args = PagedDecodeArgs;
  PagedDecodePlan() = default;
  /// The descriptor's rules (kinds, head dim, page size, heads, lengths, window, scale, splits, kernel), then the
  /// device (and its kernel: the tensor-core one has none at d = 256).
  static Result<PagedDecodePlan> select(const Stream& stream, const PagedDecodeDescriptor& desc,
                                        PlanPreference pref = {});
  /// Kinds, shapes, strides, the optional operands, alignment and aliasing.
  Status can_implement(const Args& args) const;
  /// The split partials (0 with one split, and on the host device).
  size_t workspace_size() const;
  /// The number of splits the kernels use (the descriptor's, or the plan's choice; 1 on the host device).
  int64_t chosen_splits() const { return splits_; }
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  /// Re-validates (the workspace included), then the split kernel and, with splits > 1, the merge kernel.
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;

 private:
  PagedDecodePlan(const PagedDecodeDescriptor& d, detail::PlanBinding b, detail::PagedDecodeFn fn, int64_t splits)
      : BoundFnPlan(d, std::move(b), fn), splits_(splits) {}
  int64_t splits_ = 1;
};

}  // namespace dynamic

// ------------------------------------------------------------------------------------------------------
// Typed wrapper
// ------------------------------------------------------------------------------------------------------

/// Arguments of a typed PagedDecodePlan<T, C> (T: __half or __nv_bfloat16; C: T, __nv_fp8_e4m3 or int8_t).
template <class T, class C = T>
struct PagedDecodeArgs {
  TensorRef<T, 3> q;
  TensorRef<C, 4> key_cache;
  TensorRef<C, 4> value_cache;
  TensorRef<int32_t, 2> block_tables;
  TensorRef<int32_t, 1> context_lens;
  TensorRef<float, 1> k_scale{};  ///< or default (a cache of T)
  TensorRef<float, 1> v_scale{};
  TensorMut<T, 3> o{};
  TensorMut<float, 2> lse{};  ///< or default
  dynamic::PagedDecodeArgs erased() const {
    dynamic::PagedDecodeArgs a{ConstDynTensor::of(q), ConstDynTensor::of(key_cache), ConstDynTensor::of(value_cache),
                               ConstDynTensor::of(block_tables), ConstDynTensor::of(context_lens)};
    if (k_scale.data != nullptr) a.k_scale = ConstDynTensor::of(k_scale);
    if (v_scale.data != nullptr) a.v_scale = ConstDynTensor::of(v_scale);
    a.o = DynTensor::of(o);
    if (lse.data != nullptr) a.lse = DynTensor::of(lse);
    return a;
  }
};

/// Typed PagedDecodePlan: T is the descriptor's `element`, C its `cache_kind`.
template <class T, class C = T>
class PagedDecodePlan : public detail::TypedPlan<dynamic::PagedDecodePlan, PagedDecodeArgs<T, C>> {
  using Base = detail::TypedPlan<dynamic::PagedDecodePlan, PagedDecodeArgs<T, C>>;
  friend Base;
  using Base::Base;

 public:
  static Result<PagedDecodePlan> select(const Stream& stream, const PagedDecodeDescriptor& desc,
                                        PlanPreference pref = {}) {
    BARACUDA_TRY(detail::check_typed_element("PagedDecodePlan", "q and o", desc.element, kind_of<T>));
    BARACUDA_TRY(detail::check_typed_element("PagedDecodePlan", "the caches", desc.cache_kind, kind_of<C>));
    auto p = dynamic::PagedDecodePlan::select(stream, desc, pref);
    if (!p) return p.error();
    return PagedDecodePlan(std::move(p).value());
  }
  int64_t chosen_splits() const { return this->erased().chosen_splits(); }
};

}  // namespace baracuda
