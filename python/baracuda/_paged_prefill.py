"""Chunked prefill attention over the paged KV cache, part of :mod:`baracuda.ops`: ``paged_prefill`` through
PagedPrefillPlan (include/baracuda/ops/paged_prefill.hpp: packed query chunks, FlashAttention-2 reading the keys
and values through the block tables of PagedDecodePlan's cache)."""

from . import _arrays, _cache, _core
from ._attention import _max_length


def paged_prefill(q, key_cache, value_cache, block_tables, context_lens, cu_seqlens_q, *, max_seqlen_q=None,
                  k_scale=None, v_scale=None, causal=True, window_left=-1, scale=None, return_lse=False, tile="auto",
                  device=None):
    """o = softmax(scale·q·Kᵀ + mask)·V for each sequence's chunk of new query tokens against all its keys in the
    paged cache (the chunk's own keys already appended), as vLLM's chunked prefill through
    ``flash_attn_varlen_func(..., block_table=...)`` (f16 or bf16; scores and sums in f32):

    * q [total_q, H, d], packed: sequence b's chunk is rows cu_seqlens_q[b] .. cu_seqlens_q[b + 1] - 1
      (cu_seqlens_q int32 [B + 1]); ``max_seqlen_q`` defaults to the longest chunk (read from the offsets: a copy
      to the host for GPU arrays);
    * key_cache and value_cache [num_blocks, block_size, H_kv, d] of q's kind, or fp8e4m3 / int8 dequantized as
      c * scale with ``k_scale`` and ``v_scale`` (f32 [1] or [H_kv], as ``paged_decode``); block_tables int32
      [B, max_blocks_per_seq]: key j of sequence b is row j % block_size of page block_tables[b, j // block_size];
      context_lens int32 [B] (the chunk included), clamped to [0, max_blocks_per_seq * block_size]; a page id
      outside [0, num_blocks) is masked.

    Chunk token i of a sequence of length L with an s_q-token chunk sees keys j <= L - s_q + i when ``causal``
    (bottom-right aligned), every key otherwise, and only j >= L - s_q + i - window_left when window_left >= 0.
    A token that sees no key gets o = 0 and lse = +inf. ``scale`` defaults to 1/√d. Returns o [total_q, H, d],
    and with ``return_lse`` (o, lse), lse the natural-log log-sum-exp in f32 [H, total_q]. ``tile``: the kernel's
    query tile on sim and cuda, as ``flash_attention``'s ("auto", "rows64" or "rows128": the same bits)."""
    sq, sc = _arrays.shape_of(q), _arrays.shape_of(key_cache)
    st, scu = _arrays.shape_of(block_tables), _arrays.shape_of(cu_seqlens_q)
    if len(sq) != 3 or len(sc) != 4 or len(st) != 2 or len(scu) != 1:
        raise _core.InvalidProblem(f"paged_prefill: q must be [total_q, H, d], key_cache [num_blocks, block_size, "
                                   f"H_kv, d], block_tables [B, max_blocks_per_seq] and cu_seqlens_q [B + 1]; got "
                                   f"{sq}, {sc}, {st} and {scu}")
    total_q, heads, d = sq
    kind, cache_kind = _arrays.kind_of(q), _arrays.kind_of(key_cache)
    per_head = cache_kind != kind and k_scale is not None and _arrays.shape_of(k_scale) != (1,)
    desc = dict(batch=scu[0] - 1, total_q=total_q,
                max_seqlen_q=_max_length(cu_seqlens_q) if max_seqlen_q is None else int(max_seqlen_q), heads=heads,
                kv_heads=sc[2], head_dim=d, num_blocks=sc[0], block_size=sc[1], max_blocks_per_seq=st[1],
                element=kind, cache_kind=cache_kind, scale_layout="per_head" if per_head else "per_tensor",
                causal=bool(causal), window_left=int(window_left),
                softmax_scale=0.0 if scale is None else float(scale), return_lse=bool(return_lse), tile=str(tile))
    stream = _arrays.stream_for(q, device)
    plan = _cache.plan(_core.PagedPrefillPlan, tuple(sorted(desc.items())), stream,
                       _core.PagedPrefillDescriptor(**desc))
    o = _arrays.empty(q, (total_q, heads, d), kind)
    lse = _arrays.empty(q, (heads, total_q), "f32") if return_lse else None
    _arrays.run_plan(plan, stream, q, q=q, key_cache=key_cache, value_cache=value_cache, block_tables=block_tables,
                     context_lens=context_lens, cu_seqlens_q=cu_seqlens_q, k_scale=k_scale, v_scale=v_scale, o=o,
                     lse=lse)
    o = _arrays.finish(q, o)
    return (o, _arrays.finish(q, lse)) if return_lse else o
