"""The paged KV cache, part of :mod:`baracuda.ops`: ``kv_cache_append`` through KvCacheAppendPlan
(include/baracuda/ops/kv_cache.hpp: pages [num_blocks, block_size, kv_heads, head_dim], slots, a copy or
fp8e4m3 / s8 quantization with dequant scales)."""

from . import _arrays, _cache, _core


def kv_cache_append(key, value, key_cache, value_cache, slot_mapping, *, k_scale=None, v_scale=None,
                    device=None):
    """Writes key and value [tokens, kv_heads, head_dim] into the paged caches [num_blocks, block_size, kv_heads,
    head_dim] in place, at ``slot_mapping`` [tokens] (int32 or int64; slot = block * block_size + offset; a
    negative slot or one past the caches skips the token), as vLLM's reshape_and_cache_flash. Caches of key's
    kind get the values copied; fp8e4m3 or int8 caches get ``x / scale`` (f32, one division) rounded
    (saturating), with ``k_scale`` and ``v_scale`` f32 [1] or [kv_heads] (dequant scales: x ~ q * scale).
    Returns (key_cache, value_cache)."""
    sk, sc = _arrays.shape_of(key), _arrays.shape_of(key_cache)
    if len(sk) != 3 or len(sc) != 4:
        raise _core.InvalidProblem(f"kv_cache_append: key must be [tokens, kv_heads, head_dim] and key_cache "
                                   f"[num_blocks, block_size, kv_heads, head_dim]; got {sk} and {sc}")
    cache_kind = _arrays.kind_of(key_cache)
    quantized = cache_kind != _arrays.kind_of(key)
    per_head = quantized and k_scale is not None and _arrays.shape_of(k_scale) != (1,)
    desc = dict(element=_arrays.kind_of(key), cache_kind=cache_kind, num_tokens=sk[0], num_kv_heads=sk[1],
                head_dim=sk[2], num_blocks=sc[0], block_size=sc[1], slot_kind=_arrays.kind_of(slot_mapping),
                scale_layout="per_head" if per_head else "per_tensor")
    stream = _arrays.stream_for(key, device)
    plan = _cache.plan(_core.KvCacheAppendPlan, tuple(sorted(desc.items())), stream,
                       _core.KvCacheAppendDescriptor(**desc))
    _arrays.run_plan(plan, stream, key, key=key, value=value, slot_mapping=slot_mapping, k_scale=k_scale,
                     v_scale=v_scale, key_cache=key_cache, value_cache=value_cache)
    return key_cache, value_cache
