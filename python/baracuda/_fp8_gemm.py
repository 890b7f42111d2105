"""The FP8 GEMM's function, part of :mod:`baracuda.ops`: ``fp8_gemm(a, b, a_scale, b_scale, ...)`` through
Fp8GemmPlan (include/baracuda/ops/fp8_gemm.hpp: ``torch._scaled_mm``'s and TransformerEngine's per-tensor
contract, and DeepSeek-V3's blockwise scales)."""

import numbers

import numpy as np

from . import _arrays, _cache, _core

_FP8 = ("fp8e4m3", "fp8e5m2")


def _strides(a):
    a = _arrays.unwrap(a)
    if _arrays.framework(a) == "torch":
        return tuple(int(v) for v in a.stride())
    return tuple(int(v) // a.itemsize for v in a.strides)


def _row_stride(x, what):
    """The row stride of a 2-D row-major view (0, packed, for a single row or no columns); InvalidProblem for
    another layout."""
    shape, strides = _arrays.shape_of(x), _strides(x)
    if len(shape) != 2:
        raise _core.InvalidProblem(f"fp8_gemm: {what} must be 2-D, not of shape {shape}")
    (r, c), (sr, sc) = shape, strides
    if c > 1 and sc != 1:
        raise _core.InvalidProblem(f"fp8_gemm: {what} must be row-major with a unit stride along its last dim "
                                   f"(the TN layout: a [M, K], b [N, K]); its strides are {strides}")
    return sr if r > 1 and c > 0 else 0


def _scalar(ref, value):
    """An f32 [1] array of `ref`'s framework and device for a Python number; an array as it is."""
    if isinstance(value, numbers.Real):
        return _arrays.like(ref, np.array([value], dtype=np.float32), "f32")
    return value


def _numel(x):
    return int(np.prod(_arrays.shape_of(x), dtype=np.int64))


def fp8_gemm(a, b, a_scale, b_scale, bias=None, *, output="bf16", scaling=None, d_scale=None, amax=False,
             alpha=1.0, activation="none", fast_accum=False, out=None, device=None):
    """D[M, N] = act(alpha · acc + bias) for FP8 a [M, K] and b [N, K] (nn.Linear's weight: ``fp8_gemm(x, w,
    ...)`` is a linear layer), both row-major with a unit stride along K (K and the row strides multiples of
    16, the rows 16-byte aligned). a and b are fp8 arrays (torch ≥ 2.1, numpy with ml_dtypes) or
    ``baracuda.Tensor(codes_as_uint8, "fp8e4m3")`` (what ``fp8_quantize`` returns where the framework has no fp8
    dtype); not both fp8e5m2.

    ``scaling``: 'tensor' (``a_scale`` and ``b_scale`` f32 [1], or Python numbers: acc = a_scale · b_scale ·
    Σ_k a·b) or 'block128' (DeepSeek-V3: ``a_scale`` f32 [M, ⌈K/128⌉], ``b_scale`` f32 [⌈N/128⌉,
    ⌈K/128⌉]; each 128-wide K block's sum scaled by its two scales); by default 'tensor' when both scales have
    one element, else 'block128'. Block128's a_scale is packed row-major or M-major (a transposed [⌈K/128⌉, M]
    array, strides (1, M), as DeepGEMM and vLLM keep it); b_scale packed row-major. The scales are
    dequantization factors (TransformerEngine's ``scale_inv``).

    ``output``: f16, bf16, f32, or fp8e4m3/fp8e5m2, which need ``d_scale`` (f32 [1] or a number: D =
    round_sat(v · d_scale)); ``amax=True`` (fp8 D only) also returns max |v| before d_scale as an f32 [1]
    array, or writes it into the array given: the result is then ``(d, amax)``. ``bias`` [N] (f16, bf16 or f32,
    contiguous); ``activation`` one of ``baracuda.linear_activations()``; ``fast_accum`` lets cuBLASLt skip its
    promotions (cuda). ``out``: a row-major [M, N] array of the output kind to write."""
    (m, k), (n, kb) = _arrays.shape_of(a), _arrays.shape_of(b)
    if kb != k:
        raise _core.InvalidProblem(f"fp8_gemm: a [M, K] and b [N, K] must share K; got {(m, k)} and {(n, kb)}")
    a_scale, b_scale = _scalar(a, a_scale), _scalar(a, b_scale)
    if scaling is None:
        scaling = "tensor" if _numel(a_scale) == 1 and _numel(b_scale) == 1 else "block128"
    # Block128's a_scale: packed row-major, or M-major (strides (1, M): a transposed [⌈K/128⌉, M] array).
    sa_shape = _arrays.shape_of(a_scale)
    m_major = (scaling == "block128" and len(sa_shape) == 2 and sa_shape[0] > 1 and sa_shape[1] > 1
               and _strides(a_scale)[0] == 1)
    want_amax = amax is not False and amax is not None
    if d_scale is not None:
        d_scale = _scalar(a, d_scale)
    d = _arrays.output(a, out, (m, n), output, "out")
    desc = dict(m=m, n=n, k=k, a_kind=_arrays.kind_of(a), b_kind=_arrays.kind_of(b), output=output,
                lda=_row_stride(a, "a"), ldb=_row_stride(b, "b"), ldd=_row_stride(d, "out"), scaling=scaling,
                a_scale_m_major=m_major, alpha=float(alpha), has_bias=bias is not None,
                bias_kind=_arrays.kind_of(bias) if bias is not None else "bf16", activation=activation,
                has_amax=want_amax, fast_accum=bool(fast_accum))
    amax_out = None
    if want_amax:
        amax_out = _arrays.empty(a, (1,), "f32") if amax is True else amax
    stream = _arrays.stream_for(a, device)
    plan = _cache.plan(_core.Fp8GemmPlan, tuple(sorted(desc.items())), stream, _core.Fp8GemmDescriptor(**desc))
    _arrays.run_plan(plan, stream, a, a=a, b=b, a_scale=a_scale, b_scale=b_scale, bias=bias, d_scale=d_scale, d=d,
                     amax=amax_out)
    d = _arrays.finish(a, d) if out is None else out
    if not want_amax:
        return d
    return d, (_arrays.finish(a, amax_out) if amax is True else amax)
