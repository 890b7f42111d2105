/// \file
/// \brief Scaled dot-product attention, backward (FlashAttention-2): `FlashAttentionBackwardPlan`, the gradients of
/// attention.hpp's forward. For each batch b, query head h (kv head hk = h / (H / H_kv)) and visible pair (query i,
/// key j) of b's sequences, with P = exp(τ·q_i·k_j − lse_i) (the softmax recomputed from the forward's lse) and
/// D_i = Σ_c dO_ic·O_ic:
/// `dv[j, hk] = Σ_{h∈group(hk), i} P_ij·dO_i`, `dP_ij = dO_i·v_j`, `dS_ij = P_ij·(dP_ij − D_i)`,
/// `dq[i, h] = τ·Σ_j dS_ij·k_j`, `dk[j, hk] = τ·Σ_{h∈group(hk), i} dS_ij·q_i` (for GQA/MQA dk and dv sum over the
/// group's query heads).
///
/// **Descriptor.** The forward's `FlashAttentionDescriptor`, the same problem (kinds, heads, lengths, masks, scale,
/// varlen and its effective-offset rule: attention.hpp); `return_lse` is irrelevant here (lse is always an input),
/// as is `tile` (the forward's query tile; the backward's kernels have their own).
///
/// **Kinds.** q, k, v, o, dO, dq, dk, dv: the descriptor's `element` (f16 or bf16); lse: f32; cu_seqlens: s32.
///
/// **Head dimension.** d ∈ {64, 96, 128}; 256 is `Unsupported` (the dK/dV accumulators of a 16-key warp tile do not
/// fit the registers), as is any other.
///
/// **Shapes.** q, o, dO, dq `[T_q, H, d]`; k, v, dk, dv `[T_k, H_kv, d]`; lse `[B, H, S_q]` (padded) or `[H, T_q]`
/// (varlen), as the forward writes it (required); cu_seqlens_q / cu_seqlens_k `[B + 1]` (varlen only).
///
/// **Rows.** Query rows the forward writes (i < min(s_q, seqlen_q) of each effective sequence) contribute and get dq;
/// key rows j < min(s_k, seqlen_k) get dk and dv (keys of a sequence longer than max_seqlen_k still contribute to dq).
/// A query that sees no key (lse = +inf) contributes nothing and gets dq = 0; a key no query sees gets dk = dv = 0;
/// never NaN. Rows no effective sequence covers are **not written**.
///
/// **Layouts.** Every `[tokens, heads, d]` operand: unit stride along d, non-negative token and head strides (any
/// order); lse any non-negative strides; cu_seqlens contiguous. 16-byte aligned rows of q, k, v, dO are copied by
/// cp.async, others element by element. dq, dk and dv must not overlap themselves.
///
/// **Alignment.** Every pointer aligned to its element's size (`MisalignedOperand`).
///
/// **Aliasing.** dq, dk and dv may overlap no input (q, k, v, o, dO, lse, cu_seqlens) nor each other
/// (`InvalidProblem`).
///
/// **Workspace.** `workspace_size()` bytes, 16-byte aligned: D in f32, `[H, T_q]` (`WorkspaceTooSmall`,
/// `MisalignedOperand`; it may overlap no operand), on every device (the host reference does not use it).
///
/// **Backends, determinism and accuracy.**
/// - `host` (the reference, src/ops/attention/backward_host.cpp): P, D, dP, dS and every sum in long double from the
///   exact inputs (the given o and lse), one rounding of dq, dk, dv.
/// - `sim` and `cuda` (`Sim`/`Bespoke`, variant `fa2_bwd_m16n8k16`): three kernels, no atomics: D (f32, per row); dK
///   and dV, one block per (64-key tile, kv head, batch) looping over the group's query heads and the query tiles
///   that see the tile; dQ, one block per (64-query tile, head, batch) looping over the visible key tiles (P
///   recomputed in both). mma.sync m16n8k16 with f32 accumulation; P and dS are rounded to the element kind before
///   their products (as FlashAttention does), so a gradient differs from the exact value by a few units of 2^-11
///   (f16) or 2^-8 (bf16) of its terms' magnitude (τ·Σ|dS|·max|k| for dq). Fixed summation orders: the same bits on
///   every run of a device (deterministic; sim and a GPU agree within the bound, not bit for bit).
///
/// **Empty problems** (B = 0, or T_q = T_k = 0) succeed and write nothing; without query rows (T_q = 0 or S_q = 0)
/// dk and dv are 0.
#pragma once

#include <cstdint>
#include <utility>

#include "baracuda/ops/attention.hpp"

namespace baracuda {

namespace detail {
struct FlashAttentionBackwardLaunch;
using FlashAttentionBackwardFn = Status (*)(const ExecContext&, const FlashAttentionBackwardLaunch&);
}  // namespace detail

namespace dynamic {

/// The operands of `dynamic::FlashAttentionBackwardPlan`, inputs then outputs.
struct FlashAttentionBackwardArgs {
  ConstDynTensor q;                  ///< [T_q, H, d] of `element`
  ConstDynTensor k;                  ///< [T_k, H_kv, d]
  ConstDynTensor v;                  ///< [T_k, H_kv, d]
  ConstDynTensor o;                  ///< [T_q, H, d]: the forward's output
  ConstDynTensor d_o;                ///< [T_q, H, d]: the gradient of o
  ConstDynTensor lse;                ///< f32 [B, H, S_q] or [H, T_q] (varlen): the forward's lse
  ConstDynTensor cu_seqlens_q = {};  ///< [B + 1] s32 (varlen only)
  ConstDynTensor cu_seqlens_k = {};  ///< [B + 1] s32 (varlen only)
  DynTensor dq = {};                 ///< [T_q, H, d], written
  DynTensor dk = {};                 ///< [T_k, H_kv, d], written
  DynTensor dv = {};                 ///< [T_k, H_kv, d], written
};

/// Attention backward. SKU `attention/<element>/<backend>/<precision>/<variant>`, op `flash_attention_backward`,
/// variant `reference` (host) or `fa2_bwd_m16n8k16` (sim, cuda).
class FlashAttentionBackwardPlan
    : public detail::BoundFnPlan<FlashAttentionDescriptor, detail::FlashAttentionBackwardFn> {
  using BoundFnPlan::BoundFnPlan;

 public:
  using Args = FlashAttentionBackwardArgs;
  /// The forward's descriptor rules, the head dimension (64, 96, 128), then the device and backend.
  static Result<FlashAttentionBackwardPlan> select(const Stream& stream, const FlashAttentionDescriptor& desc,
                                                   PlanPreference pref = {});
  /// Kinds, shapes and strides against the descriptor, lse and cu_seqlens, alignment and aliasing.
  Status can_implement(const Args& args) const;
  /// D in f32 ([H, T_q], rounded up to 16 bytes).
  size_t workspace_size() const;
  /// f32 arithmetic (long double on host), bit-stable and deterministic.
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  /// Re-validates (and the workspace), then three launches (no synchronisation).
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;
};

}  // namespace dynamic

/// Arguments of a typed FlashAttentionBackwardPlan<T> (T: __half or __nv_bfloat16).
template <class T>
struct FlashAttentionBackwardArgs {
  TensorRef<T, 3> q, k, v, o, d_o;
  TensorRef<float, 3> lse_padded{};  ///< [B, H, S_q], or default
  TensorRef<float, 2> lse_varlen{};  ///< [H, T_q], or default
  TensorRef<int32_t, 1> cu_seqlens_q{}, cu_seqlens_k{};
  TensorMut<T, 3> dq{}, dk{}, dv{};
  dynamic::FlashAttentionBackwardArgs erased() const {
    dynamic::FlashAttentionBackwardArgs a{ConstDynTensor::of(q), ConstDynTensor::of(k), ConstDynTensor::of(v),
                                          ConstDynTensor::of(o), ConstDynTensor::of(d_o)};
    if (lse_padded.data != nullptr) a.lse = ConstDynTensor::of(lse_padded);
    if (lse_varlen.data != nullptr) a.lse = ConstDynTensor::of(lse_varlen);
    if (cu_seqlens_q.data != nullptr) a.cu_seqlens_q = ConstDynTensor::of(cu_seqlens_q);
    if (cu_seqlens_k.data != nullptr) a.cu_seqlens_k = ConstDynTensor::of(cu_seqlens_k);
    a.dq = DynTensor::of(dq), a.dk = DynTensor::of(dk), a.dv = DynTensor::of(dv);
    return a;
  }
};

/// Typed FlashAttentionBackwardPlan: T is the descriptor's `element`.
template <class T>
class FlashAttentionBackwardPlan
    : public detail::TypedPlan<dynamic::FlashAttentionBackwardPlan, FlashAttentionBackwardArgs<T>> {
  using Base = detail::TypedPlan<dynamic::FlashAttentionBackwardPlan, FlashAttentionBackwardArgs<T>>;
  friend Base;
  using Base::Base;

 public:
  static Result<FlashAttentionBackwardPlan> select(const Stream& stream, const FlashAttentionDescriptor& desc,
                                                   PlanPreference pref = {}) {
    BARACUDA_TRY(detail::check_typed_element("FlashAttentionBackwardPlan", "q, k, v, o, dO, dq, dk and dv",
                                             desc.element, kind_of<T>));
    auto p = dynamic::FlashAttentionBackwardPlan::select(stream, desc, pref);
    if (!p) return p.error();
    return FlashAttentionBackwardPlan(std::move(p).value());
  }
};

}  // namespace baracuda
