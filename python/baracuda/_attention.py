"""Attention, part of :mod:`baracuda.ops`: ``flash_attention(q, k, v)`` through FlashAttentionPlan
(include/baracuda/ops/attention.hpp: FlashAttention-2, GQA/MQA, bottom-right causal and window masks, padded or
packed batches, the natural-log lse) and ``flash_attention_backward`` through FlashAttentionBackwardPlan
(include/baracuda/ops/attention_backward.hpp)."""

import numpy as np

from . import _arrays, _cache, _core


def _max_length(cu):
    offsets = np.asarray(_arrays.host_numpy(cu), dtype=np.int64)
    return int(np.diff(offsets).max(initial=0)) if offsets.size > 1 else 0


def _problem(name, q, k, v, causal, window, scale, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
             return_lse, tile="auto"):
    """The descriptor's fields and q, k, v as [tokens, heads, d] views, from flash_attention's arguments."""
    sq, sk, sv = _arrays.shape_of(q), _arrays.shape_of(k), _arrays.shape_of(v)
    varlen = cu_seqlens_q is not None or cu_seqlens_k is not None
    if varlen and (cu_seqlens_q is None or cu_seqlens_k is None):
        raise _core.InvalidProblem(f"{name}: packed batches need both cu_seqlens_q and cu_seqlens_k")
    rank = 3 if varlen else len(sq)
    if rank not in (3, 4) or len(sq) != rank or len(sk) != rank or len(sv) != rank:
        want = "[T, heads, d] with cu_seqlens" if varlen else "[B, S, heads, d] (or [S, heads, d])"
        raise _core.InvalidProblem(f"{name}: q, k and v must be {want}; got {sq}, {sk} and {sv}")
    try:
        left, right = (int(w) for w in window)
    except (TypeError, ValueError):
        raise _core.InvalidProblem(f"{name}: window must be (left, right), not {window!r}") from None
    if rank == 4:
        if sk[0] != sq[0] or sv[0] != sq[0]:
            raise _core.InvalidProblem(f"{name}: q, k and v have batches {sq[0]}, {sk[0]} and {sv[0]}")
        batch, s_q, s_k = sq[0], sq[1], sk[1]
        q3, k3, v3 = (a.reshape(a.shape[0] * a.shape[1], a.shape[2], a.shape[3]) for a in (q, k, v))
    elif varlen:
        batch = _arrays.shape_of(cu_seqlens_q)[0] - 1 if len(_arrays.shape_of(cu_seqlens_q)) == 1 else -1
        s_q = _max_length(cu_seqlens_q) if max_seqlen_q is None else int(max_seqlen_q)
        s_k = _max_length(cu_seqlens_k) if max_seqlen_k is None else int(max_seqlen_k)
        q3, k3, v3 = q, k, v
    else:
        batch, s_q, s_k = 1, sq[0], sk[0]
        q3, k3, v3 = q, k, v
    t_q, heads, d = _arrays.shape_of(q3)
    kind = _arrays.kind_of(q)
    desc = dict(batch=batch, seqlen_q=s_q, seqlen_k=s_k, heads=heads, kv_heads=_arrays.shape_of(k3)[1], head_dim=d,
                element=kind, varlen=varlen, total_q=t_q if varlen else 0,
                total_k=_arrays.shape_of(k3)[0] if varlen else 0, causal=bool(causal), window_left=left,
                window_right=right, softmax_scale=0.0 if scale is None else float(scale),
                return_lse=bool(return_lse), tile=str(tile))
    return desc, (q3, k3, v3), rank, batch, s_q, varlen


def flash_attention(q, k, v, causal=False, window=(-1, -1), scale=None, cu_seqlens_q=None, cu_seqlens_k=None,
                    max_seqlen_q=None, max_seqlen_k=None, return_lse=False, tile="auto", device=None):
    """o = softmax(scale·q·kᵀ + mask)·v per batch and query head, as FlashAttention's ``flash_attn_func`` and
    ``flash_attn_varlen_func`` (f16 or bf16; scores and sums in f32):

    * padded batches: q [B, S_q, H, d], k and v [B, S_k, H_kv, d] → o [B, S_q, H, d], lse [B, H, S_q];
    * packed batches (``cu_seqlens_q`` and ``cu_seqlens_k``, int32 [B + 1], non-decreasing from 0 to the token
      count): q [T_q, H, d], k and v [T_k, H_kv, d] → o [T_q, H, d], lse [H, T_q]; ``max_seqlen_q/k`` default to
      the longest sequences (read from the offsets: a copy to the host for GPU arrays). Without offsets a 3-D q
      is one sequence.

    H % H_kv == 0 (query head h reads kv head h // (H // H_kv)); d ∈ {64, 96, 128, 256}. ``scale`` defaults to
    1/√d. With s_q, s_k a batch's lengths, query i sees key j iff j ≥ i + s_k − s_q − window[0] (window[0] ≥ 0) and
    j ≤ i + s_k − s_q + window[1] (window[1] ≥ 0): bottom-right aligned, as FlashAttention ≥ 2.1; −1 is unbounded;
    ``causal`` is window[1] = 0. A query that sees no key gets o = 0 and lse = +inf. ``return_lse``: (o, lse), lse
    the natural-log log-sum-exp in f32. Query rows no sequence covers (only with offsets that are not valid) are
    not written. ``tile`` picks the kernel's query tile on sim and cuda: "auto" (128 rows for long sequences at
    d ≤ 128, else 64: attention.hpp), "rows64" or "rows128" (FlashAttention-2's 128-row tile, d ≤ 128); the same bits
    either way."""
    desc, (q3, k3, v3), rank, batch, s_q, varlen = _problem("flash_attention", q, k, v, causal, window, scale,
                                                             cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                                                             return_lse, tile)
    t_q, heads, d = _arrays.shape_of(q3)
    kind = desc["element"]
    stream = _arrays.stream_for(q, device)
    plan = _cache.plan(_core.FlashAttentionPlan, tuple(sorted(desc.items())), stream,
                       _core.FlashAttentionDescriptor(**desc))
    o = _arrays.empty(q, (t_q, heads, d), kind)
    lse = None
    if return_lse:
        lse = _arrays.empty(q, (heads, t_q) if varlen else (batch, heads, s_q), "f32")
    _arrays.run_plan(plan, stream, q, q=q3, k=k3, v=v3, cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k, o=o,
                     lse=lse)
    if rank == 4:
        o = o.reshape(batch, s_q, heads, d)
    o = _arrays.finish(q, o)
    return (o, _arrays.finish(q, lse)) if return_lse else o


def flash_attention_backward(d_o, q, k, v, o, lse, causal=False, window=(-1, -1), scale=None, cu_seqlens_q=None,
                             cu_seqlens_k=None, max_seqlen_q=None, max_seqlen_k=None, device=None):
    """(dq, dk, dv): the gradients of ``flash_attention``'s o with respect to q, k and v, given the gradient d_o of
    o and the forward's own o and lse (``flash_attention(..., return_lse=True)``), as FlashAttention's backward:
    P is recomputed from lse, dV = Pᵀ·dO, dS = P∘(dO·Vᵀ − rowsum(dO∘O)), dQ = scale·dS·K, dK = scale·dSᵀ·Q; with
    GQA dk and dv sum over each kv head's query heads. The same layouts, masks and rules as ``flash_attention``
    (d_o and o like q; lse [B, H, S_q] or, packed, [H, T_q]); d ∈ {64, 96, 128}. Deterministic: no atomics, the
    same bits on every run of a device. A query that sees no key contributes nothing; a key no query sees gets
    dk = dv = 0."""
    desc, (q3, k3, v3), rank, batch, s_q, varlen = _problem("flash_attention_backward", q, k, v, causal, window,
                                                             scale, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                                                             max_seqlen_k, False)
    t_q, heads, d = _arrays.shape_of(q3)
    t_k, kv_heads, _ = _arrays.shape_of(k3)
    kind = desc["element"]
    for name, a in (("o", o), ("d_o", d_o)):
        if _arrays.shape_of(a) != _arrays.shape_of(q):
            raise _core.InvalidProblem(f"flash_attention_backward: {name} must have q's shape "
                                       f"{_arrays.shape_of(q)}; got {_arrays.shape_of(a)}")
    o3, do3 = (a.reshape(t_q, heads, d) for a in (o, d_o)) if rank == 4 else (o, d_o)
    stream = _arrays.stream_for(q, device)
    plan = _cache.plan(_core.FlashAttentionBackwardPlan, tuple(sorted(desc.items())), stream,
                       _core.FlashAttentionDescriptor(**desc))
    dq = _arrays.empty(q, (t_q, heads, d), kind)
    dk = _arrays.empty(q, (t_k, kv_heads, d), kind)
    dv = _arrays.empty(q, (t_k, kv_heads, d), kind)
    _arrays.run_plan(plan, stream, q, q=q3, k=k3, v=v3, o=o3, d_o=do3, lse=lse, cu_seqlens_q=cu_seqlens_q,
                     cu_seqlens_k=cu_seqlens_k, dq=dq, dk=dk, dv=dv)
    if rank == 4:
        dq = dq.reshape(batch, s_q, heads, d)
        dk, dv = (a.reshape(batch, t_k // batch if batch else 0, kv_heads, d) for a in (dk, dv))
    return tuple(_arrays.finish(q, a) for a in (dq, dk, dv))
