"""Decode attention over the paged KV cache, part of :mod:`baracuda.ops`: ``paged_decode`` through PagedDecodePlan
(include/baracuda/ops/paged_attention.hpp: vLLM's flash pages [num_blocks, block_size, kv_heads, head_dim], block
tables, context lengths, split-KV with a deterministic merge)."""

from . import _arrays, _cache, _core


def paged_decode(q, key_cache, value_cache, block_tables, context_lens, *, q_len=1, k_scale=None, v_scale=None,
                 scale=None, window_left=-1, num_splits=0, kernel="auto", return_lse=False, device=None):
    """o = softmax(scale·q·Kᵀ)·V for each sequence's q_len new query tokens against its keys in the paged cache,
    as vLLM's paged attention / FlashAttention's ``flash_attn_with_kvcache`` (f16 or bf16 q; scores and sums in
    f32):

    * q [B * q_len, H, d] (or [B, q_len, H, d]); key_cache and value_cache [num_blocks, block_size, H_kv, d] of q's
      kind, or fp8e4m3 / int8 dequantized as c * scale with ``k_scale`` and ``v_scale`` (f32 [1] or [H_kv]);
    * block_tables int32 [B, max_blocks_per_seq]: key j of sequence b is row j % block_size of page
      block_tables[b, j // block_size]; context_lens int32 [B] (the new tokens already appended), clamped to
      [0, max_blocks_per_seq * block_size]; a page id outside [0, num_blocks) is masked.

    Query i of a sequence of length L sees keys j <= L - q_len + i (and j >= L - q_len + i - window_left when
    window_left >= 0). A query that sees no key gets o = 0 and lse = +inf. ``scale`` defaults to 1/√d;
    ``num_splits`` 0 lets the plan choose; ``kernel`` "auto" (the tensor-core kernel from 16 sequences over a 16-bit
    cache at d = 128, else the CUDA-core one), "cuda_cores" or "tensor_cores" (mma.sync, head dims up to 128;
    paged_attention.hpp). Returns o shaped like q, and with ``return_lse`` (o, lse), lse f32 [B * q_len, H] (or
    [B, q_len, H])."""
    sq, sc = _arrays.shape_of(q), _arrays.shape_of(key_cache)
    if len(sq) not in (3, 4) or len(sc) != 4:
        raise _core.InvalidProblem(f"paged_decode: q must be [B * q_len, H, d] or [B, q_len, H, d] and key_cache "
                                   f"[num_blocks, block_size, H_kv, d]; got {sq} and {sc}")
    st = _arrays.shape_of(block_tables)
    if len(st) != 2:
        raise _core.InvalidProblem(f"paged_decode: block_tables must be [B, max_blocks_per_seq]; got {st}")
    if len(sq) == 4:
        q_len = sq[1]
        q3 = q.reshape(sq[0] * sq[1], sq[2], sq[3])
    else:
        q3 = q
    tokens, heads, d = _arrays.shape_of(q3)
    kind, cache_kind = _arrays.kind_of(q), _arrays.kind_of(key_cache)
    per_head = cache_kind != kind and k_scale is not None and _arrays.shape_of(k_scale) != (1,)
    desc = dict(batch=st[0], q_len=int(q_len), heads=heads, kv_heads=sc[2], head_dim=d, num_blocks=sc[0],
                block_size=sc[1], max_blocks_per_seq=st[1], element=kind, cache_kind=cache_kind,
                scale_layout="per_head" if per_head else "per_tensor",
                softmax_scale=0.0 if scale is None else float(scale), return_lse=bool(return_lse),
                window_left=int(window_left), num_splits=int(num_splits), kernel=str(kernel))
    stream = _arrays.stream_for(q, device)
    plan = _cache.plan(_core.PagedDecodePlan, tuple(sorted(desc.items())), stream,
                       _core.PagedDecodeDescriptor(**desc))
    o = _arrays.empty(q, (tokens, heads, d), kind)
    lse = _arrays.empty(q, (tokens, heads), "f32") if return_lse else None
    _arrays.run_plan(plan, stream, q, q=q3, key_cache=key_cache, value_cache=value_cache, block_tables=block_tables,
                     context_lens=context_lens, k_scale=k_scale, v_scale=v_scale, o=o, lse=lse)
    if len(sq) == 4:
        o = o.reshape(sq)
        if lse is not None:
            lse = lse.reshape(sq[0], sq[1], heads)
    o = _arrays.finish(q, o)
    return (o, _arrays.finish(q, lse)) if return_lse else o
