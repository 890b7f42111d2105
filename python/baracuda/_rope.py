"""Rotary position embedding, part of :mod:`baracuda.ops`: ``rope(q, k, positions)`` and ``rope_backward`` through
RopePlan (include/baracuda/ops/rope.hpp: NeoX or GPT-J pairs, partial rotary, GQA, cos/sin from a cache or from
theta with a scaling)."""

from . import _arrays, _cache, _core


def rope(q, k, positions, *, style="neox", rot_dim=0, cos_sin_cache=None, theta=10000.0, scaling="none", factor=1.0,
         low_freq_factor=1.0, high_freq_factor=4.0, original_max_position=8192, beta_fast=32.0, beta_slow=1.0,
         mscale=0.0, mscale_all_dim=0.0, attention_factor=0.0, truncate=True, inverse=False, inplace=False,
         device=None):
    """(q_out, k_out): q [tokens, heads, head_dim] and k [tokens, kv_heads, head_dim] (None: q alone) rotated at
    ``positions`` [tokens] (int32 or int64, any values): pairs (j, j + rot_dim/2) for ``style="neox"`` (HF's
    rotate_half), (2j, 2j + 1) for ``"gptj"``; only the first ``rot_dim`` dims (0: all) rotate. cos and sin come
    from ``cos_sin_cache`` [max_position, rot_dim] (vLLM's: cos then sin per row; positions outside it are
    clamped) or are computed from ``theta`` with ``scaling`` none, linear, ntk_aware, llama3 or yarn (its
    parameters as HF's rope_scaling names them). ``inverse``: the rotation by −θ (the backward). ``inplace``:
    q and k are overwritten and returned (k_out None without k)."""
    sq = _arrays.shape_of(q)
    if len(sq) != 3 or (k is not None and len(_arrays.shape_of(k)) != 3):
        raise _core.InvalidProblem(f"rope: q and k must be [tokens, heads, head_dim]; got {sq}"
                                   f"{'' if k is None else ' and ' + str(_arrays.shape_of(k))}")
    kind = _arrays.kind_of(q)
    desc = dict(style=style, element=kind, num_tokens=sq[0], num_heads=sq[1], head_dim=sq[2],
                num_kv_heads=0 if k is None else _arrays.shape_of(k)[1], position_kind=_arrays.kind_of(positions),
                rot_dim=int(rot_dim), inverse=bool(inverse), theta=float(theta), scaling=scaling,
                factor=float(factor), low_freq_factor=float(low_freq_factor), high_freq_factor=float(high_freq_factor),
                original_max_position=int(original_max_position), beta_fast=float(beta_fast),
                beta_slow=float(beta_slow), mscale=float(mscale), mscale_all_dim=float(mscale_all_dim),
                attention_factor=float(attention_factor), truncate=bool(truncate))
    if cos_sin_cache is not None:
        desc.update(source="cache", cache_kind=_arrays.kind_of(cos_sin_cache), scaling="none",
                    max_position=_arrays.shape_of(cos_sin_cache)[0])
    stream = _arrays.stream_for(q, device)
    plan = _cache.plan(_core.RopePlan, tuple(sorted(desc.items())), stream, _core.RopeDescriptor(**desc))
    q_out = q if inplace else _arrays.empty(q, sq, kind)
    k_out = None if k is None else k if inplace else _arrays.empty(k, _arrays.shape_of(k), kind)
    _arrays.run_plan(plan, stream, q, positions=positions, cos_sin_cache=cos_sin_cache, q=q, k=k, q_out=q_out,
                     k_out=k_out)
    if inplace:
        return q, k
    return _arrays.finish(q, q_out), None if k_out is None else _arrays.finish(k, k_out)


def rope_backward(dq, dk, positions, **kwargs):
    """(dq_in, dk_in) of ``rope``: the inverse rotation of the gradients (the same keyword arguments)."""
    kwargs["inverse"] = not kwargs.get("inverse", False)
    return rope(dq, dk, positions, **kwargs)
