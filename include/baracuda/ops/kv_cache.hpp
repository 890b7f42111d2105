/// \file
/// \brief The paged KV cache's layout (read by every paged plan) and `KvCacheAppendPlan`: new tokens' K and V
/// written into their pages, copied or quantized to FP8 E4M3 / int8 (vLLM's `reshape_and_cache_flash`).
///
/// **The paged layout ("flash", vLLM's and FlashAttention's NHD pages).**
/// - The cache is `num_blocks` pages of `block_size` tokens each. `key_cache` and `value_cache` are each
///   `[num_blocks, block_size, num_kv_heads, head_dim]`, any strides with a unit last one: two tensors, or
///   two views of one combined buffer — `[num_blocks, 2, block_size, num_kv_heads, head_dim]` (K and V of a
///   page side by side) or `[2, num_blocks, …]` (vLLM's allocation). Token `o` of page `b`, head `h` lives at
///   `cache[b, o, h, :]`.
/// - A token's place is its **slot**, `slot = b·block_size + o` (0 ≤ o < block_size): page `slot / block_size`,
///   offset `slot % block_size`. A sequence's pages are listed by a block table (the paged attention plans'
///   operand); pages are in any order and need not be contiguous.
///
/// **KvCacheAppendPlan.** For each new token t with slot s = `slot_mapping[t]`:
/// - `key[t, h, :]` is written to `key_cache[s / block_size, s % block_size, h, :]` and `value[t, h, :]` to
///   `value_cache[…]` for every head h. Nothing else of the caches is written.
/// - **Skipped slots.** A negative slot is padding (vLLM's convention): the token is skipped. A slot ≥
///   `num_blocks·block_size` is skipped too: slots are device data that cannot be checked without a
///   synchronisation, and skipping guarantees no write outside the caches. No error is reported for either.
/// - Two tokens with the same valid slot: the slot holds either's values, possibly mixed per 16-byte unit
///   (the caller's data; vLLM has the same race).
/// - **Copy** (cache kind = key's kind): the bits are copied unchanged (NaN payloads, −0 included).
/// - **Quantized** (`Fp8E4M3` or `S8` cache). `k_scale`, `v_scale` are f32 **dequantization** scales, as
///   vLLM's: x ≈ q·scale. With s = `k_scale[0]` (per tensor) or `k_scale[h]` (per head) and x the key widened
///   exactly to f32, the kernel computes **y = x / s, one IEEE f32 division rounded to nearest even** (no
///   reciprocal: the bits are vLLM's `x / k_scale`; V likewise with v_scale), then:
///   - `Fp8E4M3`: y rounded to nearest even to E4M3, **saturating**: |y| beyond 448 (after rounding) and ±inf
///     give ±448; NaN gives NaN (0x7F). This is `__nv_cvt_float_to_fp8(y, __NV_SATFINITE, __NV_E4M3)`.
///   - `S8`: q = clamp(rint(y), −128, 127), rint rounding half to even; ±inf saturate; NaN gives 0.
///   Two roundings (to f32, then to the cache kind), as vLLM's kernel; a scale of 0 divides by zero (±inf,
///   saturated; 0/0 is NaN). Scales are device data: their values are not checked.
/// - **Dtypes:** key, value f16, bf16 or f32 (one kind); caches that kind, `Fp8E4M3` or `S8` (one kind);
///   `slot_mapping` s32 or s64 (`slot_kind`); scales f32, `[1]` (`KvScaleLayout::PerTensor`) or
///   `[num_kv_heads]` (`PerHead`), any stride, present iff the cache is quantized.
/// - **Layouts:** key, value `[num_tokens, num_kv_heads, head_dim]`, any token and head strides, unit last
///   stride (K and V may be views of one fused qkv buffer). 16-byte loads and stores where head_dim and every
///   row are 16-byte aligned (a 16-byte unit of the cache: 16/sizeof elements copied, 16 quantized), one
///   element per access otherwise.
/// - **Aliasing:** the caches overlap no input (byte spans). `key_cache` and `value_cache` may share a buffer
///   when their pages interleave without a common element (the combined layouts above; checked page-exactly
///   when both views have the same strides, by byte spans otherwise). A cache whose strides let two of its
///   elements share memory is rejected (distinct slots would race).
/// - **Limits:** `2·num_kv_heads·head_dim < 2^31`, `num_tokens < 2^31`, `num_blocks·block_size < 2^62`.
/// - **Workspace:** none. **Determinism:** each element is written by one thread from its own input: the same
///   bits on every run (duplicate slots aside), CUDA-graph safe.
#pragma once

#include <cstdint>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/hash.hpp"
#include "baracuda/core/plan.hpp"
#include "baracuda/core/sku.hpp"
#include "baracuda/core/stream.hpp"
#include "baracuda/core/workspace.hpp"

namespace baracuda {

/// The shape of a quantized cache's k_scale and v_scale.
enum class KvScaleLayout : uint8_t {
  PerTensor = 0,  ///< `[1]`
  PerHead = 1,    ///< `[num_kv_heads]`
};
/// "per_tensor", "per_head".
std::string_view to_string(KvScaleLayout l);

/// The problem. A hashable value.
struct KvCacheAppendDescriptor {
  ElementKind element = ElementKind::F16;                 ///< key, value: f16, bf16, f32
  ElementKind cache_kind = ElementKind::F16;              ///< `element` (copy), fp8e4m3 or s8 (quantized)
  ElementKind slot_kind = ElementKind::S64;               ///< slot_mapping: s32 or s64
  KvScaleLayout scale_layout = KvScaleLayout::PerTensor;  ///< read when quantized
  int64_t num_tokens = 0;                                 ///< new tokens (≥ 0)
  int64_t num_kv_heads = 1;                               ///< ≥ 1
  int64_t head_dim = 128;                                 ///< ≥ 1
  int64_t num_blocks = 1;                                 ///< pages (≥ 1)
  int64_t block_size = 16;                                ///< tokens per page (≥ 1)

  KvCacheAppendDescriptor& with_kinds(ElementKind e, ElementKind cache, ElementKind slot = ElementKind::S64) {
    element = e, cache_kind = cache, slot_kind = slot;
    return *this;
  }
  KvCacheAppendDescriptor& with_scale_layout(KvScaleLayout l) {
    scale_layout = l;
    return *this;
  }
  /// New tokens, kv heads, head dim.
  KvCacheAppendDescriptor& with_tokens(int64_t tokens, int64_t kv_heads, int64_t dim) {
    num_tokens = tokens, num_kv_heads = kv_heads, head_dim = dim;
    return *this;
  }
  /// Pages and tokens per page.
  KvCacheAppendDescriptor& with_pages(int64_t blocks, int64_t tokens_per_block) {
    num_blocks = blocks, block_size = tokens_per_block;
    return *this;
  }
  /// Whether the cache holds quantized values (scales required).
  bool quantized() const { return cache_kind != element; }
  /// The caches' shape `[num_blocks, block_size, num_kv_heads, head_dim]`.
  Shape cache_shape() const { return Shape{num_blocks, block_size, num_kv_heads, head_dim}; }
  /// key's and value's shape `[num_tokens, num_kv_heads, head_dim]`.
  Shape token_shape() const { return Shape{num_tokens, num_kv_heads, head_dim}; }
  /// The scales' shape: `[1]` or `[num_kv_heads]`.
  Shape scale_shape() const { return Shape{scale_layout == KvScaleLayout::PerHead ? num_kv_heads : 1}; }

  friend bool operator==(const KvCacheAppendDescriptor&, const KvCacheAppendDescriptor&) = default;
  size_t hash() const {
    return detail::hash_fields(element, cache_kind, slot_kind, scale_layout, num_tokens, num_kv_heads, head_dim,
                               num_blocks, block_size);
  }
};

namespace detail {
struct KvCacheAppendLaunch;
using KvCacheAppendFn = Status (*)(const ExecContext&, const KvCacheAppendLaunch&);
}  // namespace detail

namespace dynamic {

/// The operands of a KvCacheAppendPlan.
struct KvCacheAppendArgs {
  ConstDynTensor key;           ///< read: `[num_tokens, num_kv_heads, head_dim]`
  ConstDynTensor value;         ///< read: key's shape
  ConstDynTensor slot_mapping;  ///< read: `[num_tokens]`, `slot_kind`
  ConstDynTensor k_scale;       ///< read (quantized): f32 `scale_shape()`; else empty
  ConstDynTensor v_scale;       ///< read (quantized): f32 `scale_shape()`; else empty
  DynTensor key_cache;          ///< written at the slots: `[num_blocks, block_size, num_kv_heads, head_dim]`
  DynTensor value_cache;        ///< written at the slots: key_cache's shape and kind
};

/// The dtype-erased KvCacheAppendPlan.
class KvCacheAppendPlan : public detail::BoundFnPlan<KvCacheAppendDescriptor, detail::KvCacheAppendFn> {
  using BoundFnPlan::BoundFnPlan;

 public:
  using Args = KvCacheAppendArgs;
  KvCacheAppendPlan() = default;
  static Result<KvCacheAppendPlan> select(const Stream& stream, const KvCacheAppendDescriptor& desc,
                                          PlanPreference pref = {});
  /// Kinds, shapes, unit last strides, alignment, non-null data, the scales' presence, and the aliasing rule.
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return 0; }
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  /// Re-validates, then launches (nothing for an empty problem).
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;
};

}  // namespace dynamic
}  // namespace baracuda
