"""The grouped GEMM's function, part of :mod:`baracuda.ops`: ``grouped_gemm(x, w, offsets, bias)`` through
GroupedGemmPlan (include/baracuda/ops/grouped_gemm.hpp: a mixture-of-experts layer, the offsets read on the
device)."""

from . import _arrays, _cache, _core


def grouped_gemm(x, w, offsets, bias=None, *, output=None, out=None, device=None):
    """y[offsets[e]:offsets[e + 1]] = x[offsets[e]:offsets[e + 1]] · w[e]ᵀ (+ bias[e]) for each group e: x
    [total_M, K] (tokens sorted by group; unit stride along K), w [E, N, K] (unit stride along K), offsets
    [E + 1] (int32 or int64, non-decreasing from 0 to total_M; other values give the clamped groups of
    grouped_gemm.hpp), bias [E, N] of the output kind; y [total_M, N] of the output kind (``output``, default
    x's; f16 and bf16 may give "f32"). The offsets are never read by the host. Rows no group covers (only with
    offsets that do not span [0, total_M]) are not written: they keep what ``out`` held, or are uninitialised."""
    sx, sw, so = _arrays.shape_of(x), _arrays.shape_of(w), _arrays.shape_of(offsets)
    if len(sx) != 2 or len(sw) != 3 or len(so) != 1:
        raise _core.InvalidProblem(f"grouped_gemm: x must be [total_M, K], w [E, N, K] and offsets [E + 1]; got "
                                   f"{sx}, {sw} and {so}")
    kin = _arrays.kind_of(x)
    kout = output or kin
    desc = dict(groups=sw[0], total_m=sx[0], n=sw[1], k=sx[1], input=kin, output=kout,
                offsets=_arrays.kind_of(offsets), has_bias=bias is not None)
    y = _arrays.output(x, out, (sx[0], sw[1]), kout, "out")
    stream = _arrays.stream_for(x, device)
    plan = _cache.plan(_core.GroupedGemmPlan, tuple(sorted(desc.items())), stream, _core.GroupedGemmDescriptor(**desc))
    _arrays.run_plan(plan, stream, x, x=x, w=w, offsets=offsets, bias=bias, y=y)
    return _arrays.finish(x, y) if out is None else out
