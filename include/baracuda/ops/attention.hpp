/// \file
/// \brief Scaled dot-product attention, forward (FlashAttention-2): `FlashAttentionPlan`, for each batch b, query
/// head h and query token i of b's sequence
/// `o[i, h, :] = Σ_j softmax_j(τ·q[i, h, :]·k[j, hk, :] + mask(i, j))·v[j, hk, :]`, hk = h / (H / H_kv), and the
/// optional natural-log log-sum-exp `lse[i, h] = ln Σ_j exp(τ·q·k + mask)`. A `dynamic::FlashAttentionPlan`
/// (kind-erased) taking `dynamic::FlashAttentionArgs`, and a typed `FlashAttentionPlan<T>`.
///
/// **Kinds.** q, k, v and o: f16 or bf16 (one kind, `element`); lse: f32; cu_seqlens: s32. Anything else is
/// `Unsupported`. Scores, the softmax and the output sums are computed in f32; o is rounded once.
///
/// **Head dimension.** d ∈ {64, 96, 128, 256} (`Unsupported` otherwise).
///
/// **Heads.** H query heads, H_kv key/value heads with H % H_kv == 0 (MHA: H_kv = H; GQA; MQA: H_kv = 1), query
/// head h reads kv head h / (H / H_kv). 1 ≤ H, H_kv ≤ 65535.
///
/// **Shapes** (T_q, T_k tokens): q `[T_q, H, d]`, k and v `[T_k, H_kv, d]`, o `[T_q, H, d]`, lse (optional) `[B, H,
/// S_q]` (padded) or `[H, T_q]` (varlen), cu_seqlens_q / cu_seqlens_k `[B + 1]` (varlen only).
/// - Padded batches (`varlen` false): T_q = B·S_q, T_k = B·S_k; batch b's tokens are rows b·S_q .. b·S_q + S_q − 1 of
///   q and o and b·S_k .. of k and v; `seqlen_q` = S_q, `seqlen_k` = S_k.
/// - Packed batches (`varlen` true, `with_varlen(total_q, total_k, max_seqlen_q, max_seqlen_k)`): T_q =
///   total_q, T_k = total_k, batch b's tokens are rows cu_seqlens_q[b] .. cu_seqlens_q[b + 1] − 1 of q (k:
///   cu_seqlens_k); `seqlen_q` / `seqlen_k` are the longest sequences' lengths (max_seqlen): the grid is sized
///   by seqlen_q.
/// B ≤ 65535; every length and token count below 2^30; each operand within 2^56 elements.
///
/// **Masks.** With s_q, s_k the lengths of batch b's sequences, query i (0-based in its sequence) sees key j
/// iff j ≥ i + s_k − s_q − window_left (when window_left ≥ 0) and j ≤ i + s_k − s_q + window_right (when
/// window_right ≥ 0): the diagonal is bottom-right aligned, as FlashAttention ≥ 2.1. −1 is unbounded; values below
/// −1 are `InvalidProblem`. `causal` is window_right = 0 (`with_causal`; a descriptor with causal and another
/// window_right is `InvalidProblem`). **A query that sees no key** (causal with s_q > s_k leaves the first
/// s_q − s_k rows so; windows can) gets o = 0 and lse = +inf, FlashAttention's convention, never NaN.
///
/// **Scale.** τ = `softmax_scale`, finite and > 0, or 0 for the default 1/√d; the kernels use τ rounded to
/// f32
/// (and the reference the same f32 value). Negative, NaN or infinite: `InvalidProblem`.
///
/// **Layouts.** q, k, v, o: strided views `[tokens, heads, d]` with unit stride along d and non-negative token and
/// head strides (any order: `[T, H, d]` or head-major). o's rows must not overlap each other (sorted by stride,
/// each stride at least the span of the dimensions inside it), nor may lse's elements. lse: any non-negative
/// strides. cu_seqlens: contiguous. Rows of q, k and v whose data and token and head strides are multiples of
/// 8 elements (16 bytes) are copied by cp.async, other layouts element by element (correct, slower).
///
/// **Alignment.** Every pointer aligned to its element's size (`MisalignedOperand`).
///
/// **cu_seqlens.** Valid offsets are non-decreasing, start at 0 and end at T (checked only where the host can
/// without a synchronisation: shape, kind, contiguity). The values are data in device memory: for any values
/// the kernels and the host reference use the effective offsets `c'[b] = min(T, max(0, c[0], ..., c[b]))` (a
/// running maximum, clamped), so valid offsets are unchanged and any others give disjoint sequences inside [0,
/// T). Query rows that no effective sequence covers, and rows past seqlen_q of a longer sequence, are **not
/// written** (o nor lse); no access ever falls outside the operands' views; no error is reported.
///
/// **Aliasing.** o and lse may overlap no input nor each other (`InvalidProblem`).
///
/// **Workspace.** None.
///
/// **Backends, determinism and accuracy.**
/// - `host` (the reference, src/ops/attention/host.cpp): scores, softmax, sums and lse in long double from the
///   exact inputs, one rounding of o to the element kind and of lse to f32.
/// - `sim` and `cuda` (`Sim`/`Bespoke`, variant `fa2_m16n8k16`): FlashAttention-2 on mma.sync m16n8k16 with f32
///   accumulation; the probabilities are rounded to the element kind before P·V (as FlashAttention does) and
///   the normaliser summed in f32, so o differs from the exact value by about 2^-11 (f16) or 2^-8 (bf16) of
///   max|v|, lse by a few f32 ulps. Every sum has a fixed order and there are no atomics: the same bits on
///   every run of a device; sim and a GPU agree within the bound, not bit for bit (mma's internal order, exp2).
///
/// **Query tiles** (`tile`; sim and cuda, the host device ignores it). `Rows64` (variant `fa2_m16n8k16`): 64 query
/// rows per block, 16 per warp, Q's fragments held in registers. `Rows128` (variant `fa2_m16n8k16_m128`):
/// FlashAttention-2's 128-row tile, 32 rows per warp, each K/V fragment loaded once for both of a warp's m16 tiles (a
/// quarter fewer shared-memory loads per mma, half the K/V tile loads and barriers per query row) and Q's fragments
/// read from shared memory; d ∈ {64, 96, 128} (`Unsupported` at 256). `Auto` takes `Rows128` at d ≤ 128 when the
/// sequences have on average (T_q / B) at least 128 query rows and, under a causal or window mask, at least 512 keys
/// (T_k / B), else `Rows64`: on an H200 (docs/perf/2026-11-28-h200) the 128-row tile took up to 25 % less time from
/// there on (at worst 1 % more), and up to 31 % more below (a 128-row block's empty and masked rows). Both tiles
/// compute each row's sums in the same order over the same K/V tiles: **they give the same bits** on a device, so
/// Auto's choice never changes a result.
///
/// **Empty problems** (B = 0, T_q = 0 or S_q = 0) succeed and write nothing; s_k = 0 gives o = 0,
/// lse = +inf.
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

namespace baracuda {

/// One attention forward problem (the file comment has every rule).
/// The query tile of a FlashAttentionPlan's kernel on sim and cuda (the file comment's **Query tiles**).
enum class FlashAttentionTile : uint8_t {
  Auto,     ///< the plan's choice: Rows128 for long sequences at d ≤ 128, else Rows64 (the file comment)
  Rows64,   ///< `fa2_m16n8k16`: 64 query rows per block, 16 per warp
  Rows128,  ///< `fa2_m16n8k16_m128`: 128 query rows per block, 32 per warp; d ≤ 128
};

constexpr std::string_view to_string(FlashAttentionTile t) {
  switch (t) {
    case FlashAttentionTile::Auto: return "auto";
    case FlashAttentionTile::Rows64: return "rows64";
    case FlashAttentionTile::Rows128: return "rows128";
  }
  return "?";
}

struct FlashAttentionDescriptor {
  int64_t batch = 1;                       ///< B
  int64_t seqlen_q = 0, seqlen_k = 0;      ///< S_q, S_k (padded) or the longest sequences (varlen)
  int64_t heads = 1, kv_heads = 1;         ///< H, H_kv
  int64_t head_dim = 64;                   ///< d
  bool varlen = false;                     ///< packed batches through cu_seqlens_q / cu_seqlens_k
  int64_t total_q = 0, total_k = 0;        ///< T_q, T_k (varlen only; padded: B·S_q, B·S_k)
  ElementKind element = ElementKind::F16;  ///< q, k, v, o
  bool causal = false;                     ///< window_right = 0
  int64_t window_left = -1, window_right = -1;
  double softmax_scale = 0;  ///< τ; 0: 1/√d
  bool return_lse = false;   ///< write lse (with_lse)
  FlashAttentionTile tile = FlashAttentionTile::Auto;  ///< sim and cuda

  FlashAttentionDescriptor& with_shape(int64_t b, int64_t s_q, int64_t s_k, int64_t h, int64_t h_kv, int64_t d) {
    batch = b, seqlen_q = s_q, seqlen_k = s_k, heads = h, kv_heads = h_kv, head_dim = d;
    return *this;
  }
  /// Packed batches: T_q, T_k tokens, the longest sequences' lengths.
  FlashAttentionDescriptor& with_varlen(int64_t total_q_, int64_t total_k_, int64_t max_q, int64_t max_k) {
    varlen = true, total_q = total_q_, total_k = total_k_, seqlen_q = max_q, seqlen_k = max_k;
    return *this;
  }
  FlashAttentionDescriptor& with_element(ElementKind k) {
    element = k;
    return *this;
  }
  FlashAttentionDescriptor& with_causal(bool c = true) {
    causal = c;
    return *this;
  }
  FlashAttentionDescriptor& with_window(int64_t left, int64_t right) {
    window_left = left, window_right = right;
    return *this;
  }
  FlashAttentionDescriptor& with_scale(double s) {
    softmax_scale = s;
    return *this;
  }
  FlashAttentionDescriptor& with_lse(bool l = true) {
    return_lse = l;
    return *this;
  }
  FlashAttentionDescriptor& with_tile(FlashAttentionTile t) {
    tile = t;
    return *this;
  }
  /// T_q and T_k as the operands have them.
  int64_t tokens_q() const { return varlen ? total_q : batch * seqlen_q; }
  int64_t tokens_k() const { return varlen ? total_k : batch * seqlen_k; }

  friend bool operator==(const FlashAttentionDescriptor&, const FlashAttentionDescriptor&) = default;
  size_t hash() const {
    return detail::hash_fields(batch, seqlen_q, seqlen_k, heads, kv_heads, head_dim, varlen, total_q, total_k, element,
                               causal, window_left, window_right, softmax_scale, return_lse, tile);
  }
};

namespace detail {
struct FlashAttentionLaunch;
using FlashAttentionFn = Status (*)(const ExecContext&, const FlashAttentionLaunch&);
}  // namespace detail

namespace dynamic {

/// The operands of `dynamic::FlashAttentionPlan`, inputs then outputs (shapes and strides: the file comment).
struct FlashAttentionArgs {
  ConstDynTensor q;                  ///< [T_q, H, d] of `element`
  ConstDynTensor k;                  ///< [T_k, H_kv, d]
  ConstDynTensor v;                  ///< [T_k, H_kv, d]
  ConstDynTensor cu_seqlens_q = {};  ///< [B + 1] s32, device memory (varlen only; else empty)
  ConstDynTensor cu_seqlens_k = {};  ///< [B + 1] s32 (varlen only)
  DynTensor o = {};                  ///< [T_q, H, d] of `element`, written
  DynTensor lse = {};                ///< f32 [B, H, S_q] or [H, T_q] (varlen), written; empty unless return_lse
};

/// Attention forward. SKU `attention/<element>/<backend>/<precision>/<variant>`, op `flash_attention`, variant
/// `reference` (host), `fa2_m16n8k16` or `fa2_m16n8k16_m128` (sim, cuda: the descriptor's tile).
class FlashAttentionPlan : public detail::BoundFnPlan<FlashAttentionDescriptor, detail::FlashAttentionFn> {
  using BoundFnPlan::BoundFnPlan;

 public:
  using Args = FlashAttentionArgs;
  /// The descriptor's rules (kinds, head dim, heads, lengths, masks, scale, tile), then the device and backend (and
  /// its kernel: the 128-row tile has none at d = 256).
  static Result<FlashAttentionPlan> select(const Stream& stream, const FlashAttentionDescriptor& desc,
                                           PlanPreference pref = {});
  /// Kinds, shapes and strides against the descriptor, the optional operands, alignment and aliasing.
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return 0; }
  /// f32 arithmetic (f64-class long double on host), bit-stable and deterministic.
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  /// Re-validates, then one launch (no synchronisation; cu_seqlens are not read by the host).
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;
};

}  // namespace dynamic

// ------------------------------------------------------------------------------------------------------
// Typed wrapper
// ------------------------------------------------------------------------------------------------------

/// Arguments of a typed FlashAttentionPlan<T> (T: __half or __nv_bfloat16).
template <class T>
struct FlashAttentionArgs {
  TensorRef<T, 3> q;
  TensorRef<T, 3> k;
  TensorRef<T, 3> v;
  TensorRef<int32_t, 1> cu_seqlens_q{};  ///< or default (padded batches)
  TensorRef<int32_t, 1> cu_seqlens_k{};
  TensorMut<T, 3> o{};
  TensorMut<float, 3> lse_padded{};  ///< [B, H, S_q], or default
  TensorMut<float, 2> lse_varlen{};  ///< [H, T_q], or default
  dynamic::FlashAttentionArgs erased() const {
    dynamic::FlashAttentionArgs a{ConstDynTensor::of(q), ConstDynTensor::of(k), ConstDynTensor::of(v)};
    if (cu_seqlens_q.data != nullptr) a.cu_seqlens_q = ConstDynTensor::of(cu_seqlens_q);
    if (cu_seqlens_k.data != nullptr) a.cu_seqlens_k = ConstDynTensor::of(cu_seqlens_k);
    a.o = DynTensor::of(o);
    if (lse_padded.data != nullptr) a.lse = DynTensor::of(lse_padded);
    if (lse_varlen.data != nullptr) a.lse = DynTensor::of(lse_varlen);
    return a;
  }
};

/// Typed FlashAttentionPlan: T is the descriptor's `element`.
template <class T>
class FlashAttentionPlan : public detail::TypedPlan<dynamic::FlashAttentionPlan, FlashAttentionArgs<T>> {
  using Base = detail::TypedPlan<dynamic::FlashAttentionPlan, FlashAttentionArgs<T>>;
  friend Base;
  using Base::Base;

 public:
  static Result<FlashAttentionPlan> select(const Stream& stream, const FlashAttentionDescriptor& desc,
                                           PlanPreference pref = {}) {
    BARACUDA_TRY(detail::check_typed_element("FlashAttentionPlan", "q, k, v and o", desc.element, kind_of<T>));
    auto p = dynamic::FlashAttentionPlan::select(stream, desc, pref);
    if (!p) return p.error();
    return FlashAttentionPlan(std::move(p).value());
  }
};

}  // namespace baracuda
