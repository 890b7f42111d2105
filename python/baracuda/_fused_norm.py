"""The norm family's fused forms, part of :mod:`baracuda.ops`: NormPlan's residual add (h = x + residual,
written and normalized) and its quantized output (static per-tensor s8, dynamic per-row s8, FP8 E4M3) in the
same pass, bit for bit the unfused chain (include/baracuda/ops/norm.hpp).

* ``fused_norm(op, x, ...)`` runs any combination and returns a :class:`FusedNorm`;
* ``fused_add_rms_norm(x, residual, weight)`` / ``fused_add_layer_norm`` return (y, h); ``inplace=True`` is
  vLLM's ``fused_add_rms_norm``: y written over x, h over residual;
* ``rms_norm_quant(x, weight, quant=...)`` / ``layer_norm_quant`` return a :class:`FusedNorm` with q and its
  parameters (and h, with a residual).
"""

import collections

import numpy as np

from . import _arrays, _cache, _core

FusedNorm = collections.namedtuple("FusedNorm", "y h q scale zero_point amax mean rstd")
FusedNorm.__doc__ = """What a fused norm wrote, None where the call wrote nothing of the kind:

* ``y``: the normalized output (x's shape and kind); ``h``: x + residual;
* ``q``: the quantized output, x's shape (s8 for 'static' and 'dynamic', fp8e4m3 for 'fp8');
* ``scale``, ``zero_point``: q's parameters: for 'dynamic' the per-row ones written (x.shape[:-1], f32 —
  f64 for f64 x — and s32; the zero point None in symmetric mode), for 'static' and 'fp8' the caller's (as
  arrays);
* ``amax`` ('fp8'): max |y| of the unscaled y, f32 [1];
* ``mean`` (layer_norm) and ``rstd``: the statistics, with ``stats=True``."""

QUANTS = ("none", "static", "dynamic", "fp8")


def _param(ref, value, kind, name):
    """A [1] parameter: an array as given, or a Python number as a new [1] array of `ref`'s framework."""
    if value is None or not isinstance(value, (int, float, np.number)):
        return value
    if kind == "s32" and int(value) != value:
        raise _core.InvalidProblem(f"{name}: the zero point is an integer, not {value!r}")
    return _arrays.like(ref, np.array([value], dtype=np.int32 if kind == "s32" else np.float64), kind)


def fused_norm(op, x, weight=None, bias=None, *, eps=1e-6, residual=None, quant="none", scale=None,
               zero_point=None, mode="symmetric", convention="pytorch", y=None, h=None, stats=False, device=None):
    """``rms_norm`` or ``layer_norm`` (``op``) over the last dimension, fused with a residual add and/or a
    quantized output; returns a :class:`FusedNorm`.

    * ``residual``: h = x + residual (one rounding to x's kind) is written and normalized, y = norm(h) ·
      weight + bias. ``h`` is where h goes (default: a new array); it may be ``residual`` or ``x`` itself.
    * ``quant``: 'none'; 'static' (q s8 = quantize(y, scale, zero_point) per tensor; ``scale`` [1] of the
      statistics' kind — f32, f64 for f64 x — ``zero_point`` s32 [1] or None for 0); 'dynamic' (q s8 with a
      scale, and in ``mode`` 'asymmetric' a zero point, per row of y: ``dynamic_range_quantize`` per token,
      ``mode`` one of ``baracuda.dynamic_range_modes()``); 'fp8' (q E4M3 = fp8_quantize(y, scale), ``scale``
      f32 [1], amax written). A Python number for ``scale`` or ``zero_point`` becomes a [1] array.
      ``convention`` is the quantize plan's: 'pytorch', 'exact', 'vllm' (s8 only), 'transformer_engine'
      (fp8 only). q is bit for bit what the unfused functions give on y.
    * ``y``: None (the default) writes y only without a quantized output; True writes it to a new array,
      False not at all; an array receives it (it may be ``x`` itself, or ``residual``).
    * ``stats``: also write mean (layer_norm) and rstd, x.shape[:-1], what ``norm_backward`` takes."""
    if quant not in QUANTS:
        raise ValueError(f"unknown norm quantized output {quant!r} (one of: {', '.join(QUANTS)})")
    kind, shape = _arrays.kind_of(x), _arrays.shape_of(x)
    stream = _arrays.stream_for(x, device)
    fused = residual is not None
    if h is not None and not fused:
        raise _core.InvalidProblem(f"{op}: h is written only with a residual (residual=...)")
    if y is False and quant == "none":
        raise _core.InvalidProblem(f"{op}: y=False leaves nothing to write without a quantized output (quant=...)")
    flags = (weight is not None, bias is not None, fused, quant, mode, convention)
    desc = _core.NormDescriptor(op, kind, shape, float(eps), *flags)
    plan = _cache.plan(_core.NormPlan, (op, kind, shape, float(eps)) + flags, stream, desc)
    if quant == "static":
        scale = _param(x, scale, plan.stats_kind, "scale")
        zero_point = _param(x, zero_point, "s32", "zero_point")
    elif quant == "fp8":
        scale = _param(x, scale, "f32", "scale")
    new = []  # the arrays made here (finished for the caller's framework)

    def make(shape_, kind_):
        new.append(_arrays.empty(x, shape_, kind_))
        return new[-1]

    if y is None:
        y = quant == "none"
    y_out = make(shape, kind) if y is True else None if y is False else _arrays.output(x, y, shape, kind, "y")
    h_out = None if not fused else make(shape, kind) if h is None else _arrays.output(x, h, shape, kind, "h")
    q = None if quant == "none" else make(shape, plan.quant_kind)
    q_scale = make(plan.stats_shape, plan.stats_kind) if quant == "dynamic" else None
    q_zero_point = make(plan.stats_shape, "s32") if quant == "dynamic" and mode != "symmetric" else None
    amax = make((1,), "f32") if quant == "fp8" else None
    mean = make(plan.stats_shape, plan.stats_kind) if stats and op == "layer_norm" else None
    rstd = make(plan.stats_shape, plan.stats_kind) if stats else None
    _arrays.run_plan(plan, stream, x, x=x, weight=weight, bias=bias, residual=residual, y=y_out, h=h_out, q=q,
                     scale=scale if quant in ("static", "fp8") else None,
                     zero_point=zero_point if quant == "static" else None, q_scale=q_scale,
                     q_zero_point=q_zero_point, amax=amax, mean=mean, rstd=rstd)
    if quant == "dynamic":
        scale, zero_point = q_scale, q_zero_point
    elif quant != "static":
        scale, zero_point = (scale if quant == "fp8" else None), None
    made = {id(t) for t in new}
    return FusedNorm(*(_arrays.finish(x, t) if t is not None and id(t) in made else t
                       for t in (y_out, h_out, q, scale, zero_point, amax, mean, rstd)))


def fused_add_rms_norm(x, residual, weight=None, *, eps=1e-6, inplace=False, device=None):
    """(y, h): h = x + residual, y = rms_norm(h) · weight. With ``inplace``, vLLM's ``fused_add_rms_norm``:
    y is written over x and h over residual, and (x, residual) returned."""
    r = fused_norm("rms_norm", x, weight, eps=eps, residual=residual, y=x if inplace else True,
                   h=residual if inplace else None, device=device)
    return r.y, r.h


def fused_add_layer_norm(x, residual, weight=None, bias=None, *, eps=1e-5, inplace=False, device=None):
    """(y, h): h = x + residual, y = layer_norm(h) · weight + bias; ``inplace`` as ``fused_add_rms_norm``."""
    r = fused_norm("layer_norm", x, weight, bias, eps=eps, residual=residual, y=x if inplace else True,
                   h=residual if inplace else None, device=device)
    return r.y, r.h


def _quant_norm(op, x, weight, bias, eps, quant, residual, scale, zero_point, mode, convention, inplace, device):
    if quant == "none":
        raise ValueError(f"{op}_quant: quant is 'static', 'dynamic' or 'fp8' (for no quantized output: {op})")
    if inplace and residual is None:
        raise _core.InvalidProblem(f"{op}_quant: inplace writes h over the residual: it needs residual=...")
    return fused_norm(op, x, weight, bias, eps=eps, residual=residual, quant=quant, scale=scale,
                      zero_point=zero_point, mode=mode, convention=convention, y=False,
                      h=residual if inplace else None, device=device)


def rms_norm_quant(x, weight=None, *, quant, eps=1e-6, residual=None, scale=None, zero_point=None,
                   mode="symmetric", convention="pytorch", inplace=False, device=None):
    """rms_norm(x) (of h = x + residual, with ``residual``) quantized in the same pass, y not kept: a
    :class:`FusedNorm` with q and its parameters — for ``quant`` 'static' (q, the given scale and zero point),
    'dynamic' (q, the per-row scale and, ``mode='asymmetric'``, zero point) or 'fp8' (q, the given scale,
    amax) — and h with a residual, written over ``residual`` with ``inplace`` (vLLM's fused_add_rms_norm with
    a quantized output). See fused_norm for the operands."""
    return _quant_norm("rms_norm", x, weight, None, eps, quant, residual, scale, zero_point, mode, convention,
                       inplace, device)


def layer_norm_quant(x, weight=None, bias=None, *, quant, eps=1e-5, residual=None, scale=None, zero_point=None,
                     mode="symmetric", convention="pytorch", inplace=False, device=None):
    """layer_norm(x) quantized in the same pass: as ``rms_norm_quant``."""
    return _quant_norm("layer_norm", x, weight, bias, eps, quant, residual, scale, zero_point, mode, convention,
                       inplace, device)
