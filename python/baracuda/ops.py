"""The functional API: one function per op of the bound catalogs, generated from them.

Each function selects its plan through a bounded LRU cache (keyed by descriptor and device), allocates its
outputs in the framework and on the device of its first input (or writes into ``out=``), and runs on the
input's device: a CUDA array on its GPU and the framework's current stream, a CPU array on ``host`` (the C++
reference) unless ``device="sim"`` (the CUDA kernels under the emulator, with its checks; docs/python.md).

* unary ops (``relu``, ``silu``, ``gelu``, ..., every entry of ``baracuda.unary_ops()``), with PyTorch's
  parameter names and defaults: ``ops.leaky_relu(x, negative_slope=0.2)``; and their backward,
  ``ops.unary_backward("silu", dy, x)``;
* gated activations (``swiglu``, ``geglu``, ...): ``ops.swiglu(x, split_dim=-1, layout="second_half")``, and
  ``ops.gated_activation_backward``;
* ``ops.cast(x, "bf16")``;
* the quantize family, one function per op of ``baracuda.quantize_ops()``: ``ops.quantize(x, scale,
  zero_point, quantized="s8", granularity="per_channel", axis=0)``, ``ops.dequantize``,
  ``ops.fake_quantize``, ``ops.fake_quantize_learnable`` and their backward ops (``quantize_op`` runs any);
* ``ops.dynamic_range_quantize`` (per token by default), and the int8 GEMMs: ``ops.int_gemm(a, b)``,
  ``ops.quantized_linear(x, w, w_scale, bias)`` (W8A8, x quantized per token inside),
  ``ops.smooth_quant_linear(x_q, w, w_scale, bias, x_scale=...)``;
* dense GEMM: ``ops.gemm(a, b, c, bias, alpha=, beta=, activation=, aux=, bias_grad=)`` over row- or
  column-major views (``gemm(x, w.t(), bias=b)`` is a linear layer), and ``ops.matmul(a, b)``;
* the linear layer: ``ops.linear(x, w, b)`` (``F.linear``, any leading dims) and ``ops.linear_backward(dy, x,
  w, dx=, dw=, db=)``;
* broadcasting binary ops (``add``, ``mul``, ``maximum``, ... ``baracuda.binary_ops()``), comparisons
  (``eq``, ``lt``, ...), ternary ops (``clamp``, ``lerp``, ``addcmul``, ``addcdiv``, ``fma``), ``where``, and
  their backward (``binary_backward``, ``ternary_backward``);
* ``fill_(out, value)``, ``arange``, ``linspace``, ``affine(x, alpha, beta)``;
* FP8: ``fp8_quantize(x, scale)`` (y and amax), ``fp8_dequantize``, ``fp8_scaling_update`` (delayed scaling);
  the FP8 GEMM ``fp8_gemm(a, b, a_scale, b_scale, bias, output=, scaling=, d_scale=, amax=)`` (per-tensor or
  DeepSeek Block128 scales; an FP8 output with its amax);
* W4A16: ``marlin_repack`` (a GPTQ or AWQ checkpoint's tensors to Marlin's) and ``int4_gemm``;
* reductions over any dimensions, with PyTorch's names and result kinds: ``sum``, ``mean``, ``prod``,
  ``amax``, ``amin``, ``argmax``, ``argmin``, ``var``, ``std`` (``correction``), ``vector_norm``,
  ``logsumexp``, ``any``, ``all`` (``reduce`` runs any op of ``baracuda.reduce_ops()``);
* ``softmax`` and ``log_softmax`` (a temperature, an additive mask) and ``softmax_backward``;
* ``rms_norm``, ``layer_norm``, ``norm`` (with the saved statistics) and ``norm_backward``; fused with a
  residual add and/or a quantized output (static or dynamic per-token s8, FP8): ``fused_add_rms_norm(x,
  residual, weight)`` and ``fused_add_layer_norm`` (y, h; ``inplace=True``: vLLM's in-place form),
  ``rms_norm_quant(x, weight, quant="dynamic")`` and ``layer_norm_quant`` (a ``FusedNorm``: q, scale, zero
  point, amax, h), and ``fused_norm``, which runs any combination;
* ``rope(q, k, positions)`` and ``rope_backward``: rotary embedding of q and k in one launch (NeoX or GPT-J
  pairs, partial rotary, GQA; cos/sin from a ``cos_sin_cache`` or from ``theta`` with linear, NTK-aware, llama3
  or YaRN scaling; ``inplace=True`` as vLLM applies it);
* ``flash_attention(q, k, v)``: attention forward (FlashAttention-2; GQA/MQA, bottom-right causal and window
  masks, padded ``[B, S, H, d]`` or packed batches through ``cu_seqlens_q``/``cu_seqlens_k``, the lse) and
  ``flash_attention_backward(d_o, q, k, v, o, lse)``: its gradients dq, dk, dv (deterministic);
* ``kv_cache_append(key, value, key_cache, value_cache, slot_mapping)``: new tokens' K and V written into paged
  caches at their slots (vLLM's reshape_and_cache_flash), copied or quantized to fp8e4m3 / int8 with
  ``k_scale``/``v_scale``;
* ``paged_decode(q, key_cache, value_cache, block_tables, context_lens)``: decode attention over those paged
  caches (split-KV; GQA/MQA, q_len new tokens per sequence, bottom-right causal among them, a sliding window,
  fp8e4m3 / int8 caches dequantized with ``k_scale``/``v_scale``, the lse);
* ``paged_prefill(q, key_cache, value_cache, block_tables, context_lens, cu_seqlens_q)``: chunked prefill
  attention over the same caches (packed chunks of new tokens, each against its sequence's whole context;
  GQA/MQA, bottom-right causal or not, a sliding window, fp8e4m3 / int8 caches dequantized with
  ``k_scale``/``v_scale``, the lse).
"""

import keyword as _keyword

from . import _arrays, _cache, _core
from ._attention import flash_attention, flash_attention_backward  # noqa: F401
from ._channel_norm import (batch_norm, batch_norm_backward, batch_norm_forward, group_norm,  # noqa: F401
                            group_norm_backward, group_norm_forward, instance_norm)
from ._fused_norm import (FusedNorm, fused_add_layer_norm, fused_add_rms_norm, fused_norm,  # noqa: F401
                          layer_norm_quant, rms_norm_quant)
from ._fp8_gemm import fp8_gemm  # noqa: F401
from ._grouped_gemm import grouped_gemm  # noqa: F401
from ._kv_cache import kv_cache_append  # noqa: F401
from ._linear import linear, linear_backward  # noqa: F401
from ._paged_decode import paged_decode  # noqa: F401
from ._paged_prefill import paged_prefill  # noqa: F401
from ._rope import rope, rope_backward  # noqa: F401

set_plan_cache_size = _cache.set_capacity
clear_plan_cache = _cache.clear
plan_cache_info = _cache.info


_shape = _arrays.shape_of
_output = _arrays.output
_run = _arrays.run_plan


# ---- unary ----------------------------------------------------------------------------------------------

def _unary_plan(plan_class, op, ref, device, params):
    """The plan of `plan_class` (forward or backward) for unary op `op` over `ref`, its stream, kind and shape."""
    kind, shape = _arrays.kind_of(ref), _shape(ref)
    stream = _arrays.stream_for(ref, device)
    params = {k: float(v) for k, v in params.items()}
    desc = _core.UnaryDescriptor(op, kind, shape, params)
    return _cache.plan(plan_class, (op, kind, shape, tuple(sorted(params.items()))), stream, desc), stream, kind, shape


def unary(op, x, *, out=None, device=None, **params):
    """out = op(x) elementwise, ``op`` one of ``baracuda.unary_ops()``; ``params`` are the op's (PyTorch's
    names). ``out`` may be ``x`` (in place)."""
    plan, stream, kind, shape = _unary_plan(_core.UnaryPlan, op, x, device, params)
    y = _output(x, out, shape, kind, "out")
    _run(plan, stream, x, input=x, out=y)
    return _arrays.finish(x, y) if out is None else out


def unary_backward(op, dy, saved=None, *, dx=None, device=None, **params):
    """dx = dy · op'(x). ``saved`` is x, or y = op(x), as the op's entry in ``baracuda.unary_ops()`` says
    ('input', 'output'; None when it is 'none')."""
    plan, stream, kind, shape = _unary_plan(_core.UnaryBackwardPlan, op, dy, device, params)
    g = _output(dy, dx, shape, kind, "dx")
    _run(plan, stream, dy, dy=dy, saved=saved, dx=g)
    return _arrays.finish(dy, g) if dx is None else dx


def _unary_function(entry):
    name = entry["name"]

    def f(x, *, out=None, device=None, **params):
        return unary(name, x, out=out, device=device, **params)

    f.__name__ = f.__qualname__ = name + ("_" if _keyword.iskeyword(name) else "")
    params = entry["params"] or "none"
    f.__doc__ = (f"{entry['doc']}\n\nParameters (PyTorch's names and defaults): {params}. "
                 f"Backward saves: {entry['saved']}.")
    return f


# ---- gated activations ----------------------------------------------------------------------------------

def gated_activation(kind, x, *, split_dim=-1, layout="second_half", alpha=1.702, limit=7.0, out=None,
                     device=None):
    """y = act(gate) · linear, the two halves of x along ``split_dim`` (``layout``: 'second_half' is F.glu's
    order, 'first_half' vLLM's, 'interleaved' gpt-oss's). ``kind`` is one of
    ``baracuda.gated_activation_kinds()``."""
    element, shape = _arrays.kind_of(x), _shape(x)
    stream = _arrays.stream_for(x, device)
    desc = _core.GatedActivationDescriptor(kind, shape, element, split_dim, layout, alpha, limit)
    y = _output(x, out, desc.output_shape, element, "out")
    key = (kind, shape, element, split_dim, layout, float(alpha), float(limit))
    _run(_cache.plan(_core.GatedActivationPlan, key, stream, desc), stream, x, x=x, y=y)
    return _arrays.finish(x, y) if out is None else out


def gated_activation_backward(kind, dy, x, *, split_dim=-1, layout="second_half", alpha=1.702, limit=7.0,
                              dx=None, device=None):
    """dx (both halves, x's shape) from dy and the forward's x."""
    element, shape = _arrays.kind_of(x), _shape(x)
    stream = _arrays.stream_for(x, device)
    desc = _core.GatedActivationDescriptor(kind, shape, element, split_dim, layout, alpha, limit)
    g = _output(x, dx, shape, element, "dx")
    key = (kind, shape, element, split_dim, layout, float(alpha), float(limit))
    _run(_cache.plan(_core.GatedActivationBackwardPlan, key, stream, desc), stream, x, dy=dy, x=x, dx=g)
    return _arrays.finish(x, g) if dx is None else dx


def _gated_function(kind):
    def f(x, *, split_dim=-1, layout="second_half", alpha=1.702, limit=7.0, out=None, device=None):
        return gated_activation(kind, x, split_dim=split_dim, layout=layout, alpha=alpha, limit=limit, out=out,
                                device=device)

    f.__name__ = f.__qualname__ = kind
    f.__doc__ = f"The gated activation {kind!r}: see gated_activation."
    return f


# ---- cast -----------------------------------------------------------------------------------------------

def cast(x, kind, *, saturate_fp8=False, out=None, device=None):
    """x converted to element kind ``kind`` (round to nearest even; fp8 out of range: NaN for e4m3, inf for
    e5m2, unless ``saturate_fp8``)."""
    element, shape = _arrays.kind_of(x), _shape(x)
    stream = _arrays.stream_for(x, device)
    desc = _core.CastDescriptor(element, kind, shape, saturate_fp8)
    y = _output(x, out, shape, kind, "out")
    _run(_cache.plan(_core.CastPlan, (element, kind, shape, bool(saturate_fp8)), stream, desc), stream, x, input=x,
         out=y)
    return _arrays.finish(x, y) if out is None else out


# ---- quantize -------------------------------------------------------------------------------------------

_QUANTIZE = {op["name"]: op for op in _core.quantize_ops()}


def quantize_op(op, *, quantized="s8", element=None, granularity="per_tensor", axis=0, group_size=0,
                quant_min=None, quant_max=None, grad_factor=1.0, convention="pytorch", device=None, **tensors):
    """Runs the quantize family's op ``op`` (one of ``baracuda.quantize_ops()``) on the tensors it reads, given
    by name (x, scale, zero_point, dy); returns what it writes (y, dx, dscale, dzero_point: one array, or a
    tuple in that order), allocating those not given. ``element`` is the float kind: by default x's (dy's for
    dequantize_backward), and f32 for dequantize, whose x is quantized."""
    if op not in _QUANTIZE:
        raise ValueError(f"unknown quantize op {op!r} (one of: {', '.join(_QUANTIZE)})")
    entry = _QUANTIZE[op]
    extra = set(tensors) - set(entry["reads"]) - set(entry["writes"])
    if extra:
        raise TypeError(f"{op} takes {', '.join(entry['reads'] + entry['writes'])}; not {', '.join(sorted(extra))}")
    ref = tensors.get("x") if tensors.get("x") is not None else tensors.get("dy")
    if ref is None:
        raise TypeError(f"{op} needs x or dy")
    if element is None:
        element = "f32" if entry["form"] == "dequantizes" else _arrays.kind_of(ref)
    shape = _shape(ref)
    stream = _arrays.stream_for(ref, device)
    desc = _core.QuantizeDescriptor(op, element, quantized, shape, granularity, axis, group_size, quant_min,
                                    quant_max, grad_factor, convention)
    key = (op, element, quantized, shape, granularity, axis, group_size, quant_min, quant_max, float(grad_factor),
           convention)
    plan = _cache.plan(_core.QuantizePlan, key, stream, desc)
    results = []
    for name in entry["writes"]:
        if name in ("dscale", "dzero_point"):
            shape_, kind = plan.param_shape, plan.scale_kind
        else:
            shape_, kind = shape, (quantized if name == "y" and entry["form"] == "quantizes" else element)
        tensors[name] = _output(ref, tensors.get(name), shape_, kind, name)
        results.append(tensors[name])
    _run(plan, stream, ref, **tensors)
    results = [_arrays.finish(ref, r) for r in results]
    return results[0] if len(results) == 1 else tuple(results)


def _quantize_function(entry):
    name = entry["name"]
    # The tensors it reads, positionally: the gradient first, as torch's backward functions take it.
    order = [r for r in ("dy", "x", "scale", "zero_point") if r in entry["reads"]]

    def f(*args, **kwargs):
        if len(args) > len(order):
            raise TypeError(f"{name}({', '.join(order)}, ...) takes {len(order)} tensors positionally")
        kwargs.update(zip(order, args))
        return quantize_op(name, **kwargs)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"{entry['doc']}\n\n{name}({', '.join(order)}, *, quantized='s8', granularity='per_tensor', axis=0, "
                 f"group_size=0, quant_min=None, quant_max=None, grad_factor=1.0, convention='pytorch', "
                 f"device=None) -> {', '.join(entry['writes'])} (see quantize_op).")
    return f


# ---- int8 GEMMs and linears -------------------------------------------------------------------------------

def _row_stride(t):
    """The row stride of a matrix view for a descriptor's leading dimension: 0 (packed) for one row or a view
    whose last dim is not contiguous (which the plan then rejects with its reason)."""
    (rows, _), (sr, sc) = _shape(t), _elem_strides(t)
    return sr if rows > 1 and sc == 1 else 0


def int_gemm(a, b, *, out=None, device=None):
    """c[M, N] (int32) = a[M, K] · b[N, K]ᵀ for int8 (s8 or u8) a and b, K-contiguous (rows may be padded: row
    strides that are multiples of 16)."""
    (m, k), (n, _) = _shape(a), _shape(b)
    stream = _arrays.stream_for(a, device)
    c = _output(a, out, (m, n), "s32", "out")
    lds = (_row_stride(a), _row_stride(b), _row_stride(c))
    desc = _core.IntGemmDescriptor(m, n, k, _arrays.kind_of(a), _arrays.kind_of(b), *lds)
    plan = _cache.plan(_core.IntGemmPlan, (m, n, k, desc.a, desc.b) + lds, stream, desc)
    _run(plan, stream, a, a=a, b=b, c=c)
    return _arrays.finish(a, c) if out is None else out


def quantized_linear(x, weight, weight_scale, bias=None, *, output=None, x_quantized="s8", mode="symmetric",
                     activation="none", convention="pytorch", out=None, device=None):
    """W8A8 linear: x[M, K] (float) quantized per token inside the plan, weight[N, K] int8, weight_scale [N]
    (or [1]), optional bias [N] of the output kind: y[M, N] = act(s_x · s_w · (x_q · wᵀ − zp · Σw) + bias).
    ``output`` defaults to x's kind; ``activation`` is one of ``baracuda.linear_activations()``."""
    (m, k), (n, _) = _shape(x), _shape(weight)
    element = _arrays.kind_of(x)
    output = output or element
    wsg = "per_tensor" if _shape(weight_scale) == (1,) and n != 1 else "per_channel"
    stream = _arrays.stream_for(x, device)
    desc = _core.QuantizedLinearDescriptor(m, n, k, element, output, x_quantized, mode, wsg, bias is not None,
                                           activation, convention)
    key = (m, n, k, element, output, x_quantized, mode, wsg, bias is not None, activation, convention)
    plan = _cache.plan(_core.QuantizedLinearPlan, key, stream, desc)
    y = _output(x, out, (m, n), output, "out")
    _run(plan, stream, x, x=x, weight=weight, weight_scale=weight_scale, bias=bias, y=y)
    return _arrays.finish(x, y) if out is None else out


def smooth_quant_linear(x_q, weight, weight_scale, bias=None, *, x_scale, output="f16", activation="none",
                        out=None, device=None):
    """SmoothQuant W8A8 linear over x_q[M, K] int8, quantized by the caller with the static scale ``x_scale``:
    y[M, N] = act(x_scale · s_w · (x_q · wᵀ) + bias), of kind ``output``."""
    (m, k), (n, _) = _shape(x_q), _shape(weight)
    wsg = "per_tensor" if _shape(weight_scale) == (1,) and n != 1 else "per_channel"
    stream = _arrays.stream_for(x_q, device)
    desc = _core.SmoothQuantLinearDescriptor(m, n, k, float(x_scale), output, wsg, bias is not None, activation)
    key = (m, n, k, desc.x_scale, output, wsg, bias is not None, activation)
    plan = _cache.plan(_core.SmoothQuantLinearPlan, key, stream, desc)
    y = _output(x_q, out, (m, n), output, "out")
    _run(plan, stream, x_q, x_q=x_q, weight=weight, weight_scale=weight_scale, bias=bias, y=y)
    return _arrays.finish(x_q, y) if out is None else out


# ---- dense GEMM -------------------------------------------------------------------------------------------

def _elem_strides(a):
    a = _arrays.unwrap(a)
    if _arrays.framework(a) == "torch":
        return tuple(int(v) for v in a.stride())
    return tuple(int(v) // a.itemsize for v in a.strides)


def _matrix_layout(shape, strides, what):
    """(layout, ld) of the last two dims of a view: row-major (unit stride along the columns) or column-major
    (unit stride along the rows, e.g. a transposed tensor)."""
    (r, c), (sr, sc) = shape[-2:], strides[-2:]
    if (sc == 1 or c == 1) and (r == 1 or sr >= max(1, c)):
        return "row_major", (sr if r > 1 else max(1, c))
    if (sr == 1 or r == 1) and (c == 1 or sc >= max(1, r)):
        return "col_major", (sc if c > 1 else max(1, r))
    raise _core.InvalidProblem(f"gemm: {what} needs a unit stride along one of its last two dims (strides "
                               f"{strides}); make it contiguous")


def _row_major_ld(shape, strides, what):
    layout, ld = _matrix_layout(shape, strides, what)
    if layout != "row_major" and shape[-1] > 1:
        raise _core.InvalidProblem(f"gemm: {what} must be row-major (unit stride along its last dim)")
    return ld if layout == "row_major" else max(1, shape[-1])


def gemm(a, b, c=None, bias=None, *, alpha=1.0, beta=None, activation="none", aux=False, bias_grad=False,
         allow_tf32=False, output=None, out=None, device=None):
    """d = act(alpha · a · b + beta · c + bias) (GemmPlan): a [M, K] and b [K, N], or both [batch, M, K] and
    [batch, K, N] (a batch stride 0, e.g. ``expand``, broadcasts one); each row- or column-major (a transposed
    tensor is a column-major one: ``gemm(x, w.t(), bias=b)`` is ``F.linear(x, w, b)``). c (row-major, beta
    defaults to 1 with c, 0 without) and bias [N] are of the output kind (``output``, default a's kind; f16
    and bf16 may give f32); ``activation`` one of ``baracuda.linear_activations()``. ``aux=True`` also
    returns the pre-activation value, ``bias_grad=True`` Σ_k a[m, k] [M]; then the result is
    ``(d, aux or None, bias_grad or None)``. ``out=c`` computes in place."""
    sa, sb = _shape(a), _shape(b)
    if len(sa) != len(sb) or len(sa) not in (2, 3):
        raise _core.InvalidProblem(f"gemm: a and b must both be 2-D or both 3-D, not {sa} and {sb}")
    batched = len(sa) == 3
    batch = sa[0] if batched else 1
    m, k, n = sa[-2], sa[-1], sb[-1]
    kin = _arrays.kind_of(a)
    kout = output or kin
    if beta is None:
        beta = 1.0 if c is not None else 0.0
    if beta == 0.0:
        c = None
    ta, tb = _elem_strides(a), _elem_strides(b)
    la, lda = _matrix_layout(sa, ta, "a")
    lb, ldb = _matrix_layout(sb, tb, "b")
    dshape = (batch, m, n) if batched else (m, n)
    d = _output(a, out, dshape, kout, "out")
    td = _elem_strides(d)
    desc = dict(m=m, n=n, k=k, batch=batch, input=kin, output=kout, layout_a=la, layout_b=lb, lda=lda, ldb=ldb,
                ldd=_row_major_ld(dshape, td, "out"), alpha=float(alpha), beta=float(beta),
                has_bias=bias is not None, activation=activation, has_aux=bool(aux), bias_grad=bool(bias_grad),
                allow_tf32=bool(allow_tf32))
    if batched:
        desc.update(batch_stride_a=ta[0], batch_stride_b=tb[0], batch_stride_d=td[0])
    if c is not None:
        tc = _elem_strides(c)
        desc["ldc"] = _row_major_ld(_shape(c), tc, "c")
        if batched:
            desc["batch_stride_c"] = tc[0]
    x = _arrays.empty(a, dshape, kout) if aux else None
    g = _arrays.empty(a, (m,), kout) if bias_grad else None
    stream = _arrays.stream_for(a, device)
    key = tuple(sorted(desc.items()))
    plan = _cache.plan(_core.GemmPlan, key, stream, _core.GemmDescriptor(**desc))
    _run(plan, stream, a, a=a, b=b, c=c, bias=bias, d=d, aux=x, bias_grad=g)
    d = _arrays.finish(a, d) if out is None else out
    if not aux and not bias_grad:
        return d
    return d, (_arrays.finish(a, x) if aux else None), (_arrays.finish(a, g) if bias_grad else None)


def matmul(a, b, *, out=None, device=None):
    """a · b for 2-D or batched 3-D a and b (gemm with no epilogue)."""
    return gemm(a, b, out=out, device=device)


def dynamic_range_quantize(x, *, quantized="s8", granularity="per_token", axis=0, group_size=0, mode="symmetric",
                           quant_min=None, quant_max=None, convention="pytorch", device=None):
    """Quantizes x with the (scale, zero point) of each segment's range; returns (y, scale, zero_point), the
    zero point None in symmetric mode. ``mode`` is one of ``baracuda.dynamic_range_modes()``."""
    element, shape = _arrays.kind_of(x), _shape(x)
    stream = _arrays.stream_for(x, device)
    desc = _core.DynamicRangeQuantizeDescriptor(element, quantized, shape, granularity, axis, group_size, mode,
                                                quant_min, quant_max, convention)
    key = (element, quantized, shape, granularity, axis, group_size, mode, quant_min, quant_max, convention)
    plan = _cache.plan(_core.DynamicRangeQuantizePlan, key, stream, desc)
    y = _arrays.empty(x, shape, quantized)
    scale = _arrays.empty(x, plan.param_shape, plan.scale_kind)
    zp = None if mode == "symmetric" else _arrays.empty(x, plan.param_shape, "s32")
    _run(plan, stream, x, x=x, y=y, scale=scale, zero_point=zp)
    return tuple(None if t is None else _arrays.finish(x, t) for t in (y, scale, zp))


# ---- binary, ternary, where -----------------------------------------------------------------------------

def _broadcasting(plan_class, descriptor, key, ref, out, out_kind, device, **tensors):
    """Runs a broadcasting plan whose output (`out`, of `out_kind`) has the plan's output shape."""
    stream = _arrays.stream_for(ref, device)
    plan = _cache.plan(plan_class, key, stream, descriptor)
    y = _output(ref, out, plan.output_shape, out_kind, "out")
    _run(plan, stream, ref, out=y, **tensors)
    return _arrays.finish(ref, y) if out is None else out


def binary(op, a, b, *, out=None, device=None):
    """out = a op b with NumPy broadcasting; ``op`` one of ``baracuda.binary_ops()``."""
    kind = _arrays.kind_of(a)
    desc = _core.BinaryDescriptor(op, kind, _shape(a), _shape(b))
    return _broadcasting(_core.BinaryPlan, desc, (op, kind, _shape(a), _shape(b)), a, out, kind, device, a=a, b=b)


def compare(op, a, b, *, out=None, device=None):
    """out (bool) = a cmp b with broadcasting; ``op`` one of ``baracuda.compare_ops()``."""
    kind = _arrays.kind_of(a)
    desc = _core.CompareDescriptor(op, kind, _shape(a), _shape(b))
    return _broadcasting(_core.ComparePlan, desc, (op, kind, _shape(a), _shape(b)), a, out, "bool", device, a=a,
                         b=b)


def binary_backward(op, dy, a, b, *, da=True, db=True, sum_to_inputs=False, device=None):
    """(da, db) of a op b (None where not asked): at the output shape, or with ``sum_to_inputs`` summed to a's
    and b's own shapes by the plan (a ReduceToPlan over its workspace)."""
    kind = _arrays.kind_of(a)
    stream = _arrays.stream_for(dy, device)
    desc = _core.BinaryDescriptor(op, kind, _shape(a), _shape(b))
    plan = _cache.plan(_core.BinaryBackwardPlan, (op, kind, _shape(a), _shape(b)), stream, desc)
    shapes = (_shape(a), _shape(b)) if sum_to_inputs else (plan.output_shape, plan.output_shape)
    grads = [_arrays.empty(dy, shape, kind) if want else None for want, shape in zip((da, db), shapes)]
    _run(plan, stream, dy, dy=dy, a=a, b=b, da=grads[0], db=grads[1])
    return tuple(None if g is None else _arrays.finish(dy, g) for g in grads)


def ternary(op, a, b, c, *, value=1.0, out=None, device=None):
    """out = op(a, b, c) with broadcasting; ``op`` one of ``baracuda.ternary_ops()`` (clamp's b and c are its
    bounds, lerp's c the weight, addcmul's and addcdiv's ``value`` the factor)."""
    kind = _arrays.kind_of(a)
    shapes = (_shape(a), _shape(b), _shape(c))
    desc = _core.TernaryDescriptor(op, kind, *shapes, value)
    return _broadcasting(_core.TernaryPlan, desc, (op, kind, shapes, float(value)), a, out, kind, device, a=a, b=b,
                         c=c)


def ternary_backward(op, dy, a, b, c, *, value=1.0, device=None):
    """(da, db, dc) of op(a, b, c) at the output shape (not reduced)."""
    kind = _arrays.kind_of(a)
    shapes = (_shape(a), _shape(b), _shape(c))
    stream = _arrays.stream_for(dy, device)
    desc = _core.TernaryDescriptor(op, kind, *shapes, value)
    plan = _cache.plan(_core.TernaryBackwardPlan, (op, kind, shapes, float(value)), stream, desc)
    grads = [_arrays.empty(dy, plan.output_shape, kind) for _ in range(3)]
    _run(plan, stream, dy, dy=dy, a=a, b=b, c=c, da=grads[0], db=grads[1], dc=grads[2])
    return tuple(_arrays.finish(dy, g) for g in grads)


def where_backward(cond, dy, *, device=None):
    """(da, db) of where(cond, a, b): dy where cond (else 0), and dy where not, at the output shape."""
    kind = _arrays.kind_of(dy)
    stream = _arrays.stream_for(dy, device)
    shapes = (_shape(cond), _shape(dy), _shape(dy))
    desc = _core.WhereDescriptor(kind, *shapes)
    plan = _cache.plan(_core.WhereBackwardPlan, (kind, shapes), stream, desc)
    grads = [_arrays.empty(dy, plan.output_shape, kind) for _ in range(2)]
    _run(plan, stream, dy, cond=cond, dy=dy, da=grads[0], db=grads[1])
    return tuple(_arrays.finish(dy, g) for g in grads)


def where(cond, a, b, *, out=None, device=None):
    """out = cond ? a : b with broadcasting (cond bool)."""
    kind = _arrays.kind_of(a)
    shapes = (_shape(cond), _shape(a), _shape(b))
    desc = _core.WhereDescriptor(kind, *shapes)
    return _broadcasting(_core.WherePlan, desc, (kind, shapes), a, out, kind, device, cond=cond, a=a, b=b)


def _binary_function(op, run, what):
    def f(a, b, *, out=None, device=None):
        return run(op, a, b, out=out, device=device)

    f.__name__ = f.__qualname__ = op
    f.__doc__ = f"The {what} {op!r} with broadcasting (see {run.__name__})."
    return f


def _ternary_function(op):
    def f(a, b, c, *, value=1.0, out=None, device=None):
        return ternary(op, a, b, c, value=value, out=out, device=device)

    f.__name__ = f.__qualname__ = op
    f.__doc__ = f"The ternary op {op!r} with broadcasting (see ternary)."
    return f


# ---- fill, sequences, affine -----------------------------------------------------------------------------

def fill_(out, value, *, device=None):
    """Writes ``value`` (float, int or bool) into every element of ``out``; returns ``out``."""
    kind, shape = _arrays.kind_of(out), _shape(out)
    stream = _arrays.stream_for(out, device)
    desc = _core.FillDescriptor(kind, shape, value)
    plan = _cache.plan(_core.FillPlan, (kind, shape, type(value).__name__, value), stream, desc)
    _run(plan, stream, out, out=out)
    return out


def _sequence(op, kind, like, device, start, end, step=1.0, steps=0):
    import numpy as np

    ref = np.empty(0) if like is None else like
    stream = _arrays.stream_for(ref, device)
    desc = _core.SequenceDescriptor(op, kind, float(start), float(end), float(step), int(steps))
    plan = _cache.plan(_core.SequencePlan, (op, kind, float(start), float(end), float(step), int(steps)), stream,
                       desc)
    y = _arrays.empty(ref, (plan.count,), kind)
    _run(plan, stream, ref, y=y)
    return _arrays.finish(ref, y)


def arange(start, end, step=1.0, *, kind="f32", like=None, device=None):
    """torch.arange(start, end, step) of element kind ``kind``, in the framework and on the device of ``like``
    (default: numpy, on the CPU)."""
    return _sequence("arange", kind, like, device, start, end, step=step)


def linspace(start, end, steps, *, kind="f32", like=None, device=None):
    """torch.linspace(start, end, steps) of element kind ``kind`` (see arange for ``like``)."""
    return _sequence("linspace", kind, like, device, start, end, steps=steps)


def affine(x, alpha=1.0, beta=0.0, *, out=None, device=None):
    """out = alpha · x + beta."""
    kind, shape = _arrays.kind_of(x), _shape(x)
    stream = _arrays.stream_for(x, device)
    desc = _core.AffineDescriptor(kind, shape, float(alpha), float(beta))
    plan = _cache.plan(_core.AffinePlan, (kind, shape, float(alpha), float(beta)), stream, desc)
    y = _output(x, out, shape, kind, "out")
    _run(plan, stream, x, input=x, out=y)
    return _arrays.finish(x, y) if out is None else out


# ---- FP8 ------------------------------------------------------------------------------------------------

def fp8_quantize(x, scale, *, kind="fp8e4m3", amax=None, scale_inv=None, accumulate_amax=False,
                 convention="pytorch", device=None):
    """y = saturate_to_fp8(x · scale) and amax = max |x| (f32 [1]); returns (y, amax). ``amax`` may be given
    (e.g. a [1] view of an amax history's slot 0), and is then read too when ``accumulate_amax``;
    ``scale_inv`` (f32 [1]), when given, receives 1 / scale. y is an fp8 array of the caller's framework, or,
    where the framework has no fp8 dtype (PyTorch before 2.1, numpy without ml_dtypes), a baracuda.Tensor over
    uint8 that every baracuda function takes."""
    element, shape = _arrays.kind_of(x), _shape(x)
    stream = _arrays.stream_for(x, device)
    desc = _core.Fp8QuantizeDescriptor(element, kind, shape, accumulate_amax, convention)
    plan = _cache.plan(_core.Fp8QuantizePlan, (element, kind, shape, bool(accumulate_amax), convention), stream,
                       desc)
    y = _arrays.empty(x, shape, kind)
    amax = _output(x, amax, (1,), "f32", "amax")
    _run(plan, stream, x, x=x, scale=scale, y=y, amax=amax, scale_inv=scale_inv)
    return _arrays.finish(x, y), amax


def fp8_dequantize(x, scale_inv, *, output="f32", out=None, device=None):
    """y = x · scale_inv for fp8 x (an fp8 array or a baracuda.Tensor), of kind ``output``."""
    kind, shape = _arrays.kind_of(x), _shape(x)
    stream = _arrays.stream_for(x, device)
    desc = _core.Fp8DequantizeDescriptor(kind, output, shape)
    plan = _cache.plan(_core.Fp8DequantizePlan, (kind, output, shape), stream, desc)
    y = _output(x, out, shape, output, "out")
    _run(plan, stream, x, x=x, scale_inv=scale_inv, y=y)
    return _arrays.finish(x, y) if out is None else out


def fp8_scaling_update(amax_history, scale, scale_inv, *, fp8_kind="fp8e4m3", amax_compute_algo="max", margin=0,
                       device=None):
    """One step of delayed scaling, in place on amax_history [H], scale [1] and scale_inv [1] (f32)."""
    h = _shape(amax_history)[0]
    stream = _arrays.stream_for(amax_history, device)
    desc = _core.Fp8ScalingUpdateDescriptor(fp8_kind, h, amax_compute_algo, margin)
    plan = _cache.plan(_core.Fp8ScalingUpdatePlan, (fp8_kind, h, amax_compute_algo, int(margin)), stream, desc)
    _run(plan, stream, amax_history, amax_history=amax_history, scale=scale, scale_inv=scale_inv)


# ---- int4 weights (W4A16) --------------------------------------------------------------------------------

def marlin_repack(qweight, scales, *, qzeros=None, g_idx=None, group=128, format="gptq", scale_element="f16",
                  device=None):
    """A GPTQ (symmetric; ``g_idx`` for desc_act) or AWQ (with ``qzeros``) checkpoint's int4 tensors in the
    Marlin layout of ``int4_gemm``: returns (b_q, scales, zeros, perm), zeros None for GPTQ and perm None
    without act-order. GPTQ's qweight is int32 [K/8, N], AWQ's [K, N/8]; scales float16 [G, N]."""
    rows, cols = _shape(qweight)
    k, n = (8 * rows, cols) if format == "gptq" else (rows, 8 * cols)
    groups = _shape(scales)[0]
    perm = None
    if g_idx is not None and groups > 1:
        import numpy as np

        values = _core.marlin_act_order_perm(np.ascontiguousarray(_arrays.host_numpy(g_idx), dtype=np.int32), k, n,
                                             group)
        perm = _arrays.like(qweight, np.asarray(values, dtype=np.int32), "s32")
    stream = _arrays.stream_for(qweight, device)
    desc = _core.Int4RepackDescriptor(k, n, group, format, perm is not None, scale_element)
    plan = _cache.plan(_core.Int4MarlinRepackPlan, (k, n, group, format, perm is not None, scale_element), stream,
                       desc)
    b_q = _arrays.empty(qweight, (k // 16, 2 * n), "s32")
    out_scales = _arrays.empty(qweight, (groups, n), scale_element)
    zeros = _arrays.empty(qweight, (groups, n // 8), "s32") if format == "awq" else None
    _run(plan, stream, qweight, qweight=qweight, qzeros=qzeros if format == "awq" else None, scales=scales,
         perm=perm, out_qweight=b_q, out_scales=out_scales, out_zeros=zeros)
    return b_q, out_scales, zeros, perm


def int4_gemm(a, b_q, scales, *, zeros=None, perm=None, bias=None, group=128, out=None, device=None):
    """c[M, N] = a[M, K] · W for W in the Marlin layout (``marlin_repack``'s b_q, scales, zeros, perm); a,
    scales, bias and c float16 or bfloat16."""
    m, k = _shape(a)
    n = _shape(scales)[1]
    element = _arrays.kind_of(a)
    scheme = "symmetric" if zeros is None else "asymmetric"
    stream = _arrays.stream_for(a, device)
    desc = _core.Int4GemmDescriptor(m, n, k, group, scheme, perm is not None, element, bias is not None)
    key = (m, n, k, group, scheme, perm is not None, element, bias is not None)
    plan = _cache.plan(_core.Int4MarlinGemmPlan, key, stream, desc)
    c = _output(a, out, (m, n), element, "out")
    _run(plan, stream, a, a=a, b_q=b_q, scales=scales, zeros=zeros, perm=perm, bias=bias, c=c)
    return _arrays.finish(a, c) if out is None else out


# ---- reductions -----------------------------------------------------------------------------------------

def reduce(op, x, dim=None, *, keepdim=False, correction=1.0, p=2.0, out=None, device=None):
    """y = op(x) over ``dim`` (an int or a sequence of them, negative counting from the last; None or []: every
    dimension), ``op`` one of ``baracuda.reduce_ops()``, with PyTorch's result kinds (s64 for integer sums and
    indices, bool for any/all). ``correction`` is var/std's, ``p`` norm_p's order."""
    element, shape = _arrays.kind_of(x), _shape(x)
    dims = None if dim is None else [int(dim)] if isinstance(dim, int) else [int(d) for d in dim]
    stream = _arrays.stream_for(x, device)
    desc = _core.ReduceDescriptor(op, element, shape, dims, bool(keepdim), float(correction), float(p))
    key = (op, element, shape, desc.dims, desc.keepdim, desc.correction, desc.p)
    plan = _cache.plan(_core.ReducePlan, key, stream, desc)
    y = _output(x, out, plan.output_shape, plan.output_kind, "out")
    _run(plan, stream, x, x=x, y=y)
    return _arrays.finish(x, y) if out is None else out


def _reduction(op, doc):
    def f(x, dim=None, keepdim=False, *, out=None, device=None):
        return reduce(op, x, dim, keepdim=keepdim, out=out, device=device)

    f.__name__ = f.__qualname__ = {"max": "amax", "min": "amin"}.get(op, op)
    f.__doc__ = doc + " over ``dim`` (None: every dimension), as ``torch." + f.__name__ + "``."
    return f


def var(x, dim=None, *, correction=1.0, keepdim=False, out=None, device=None):
    """Σ (x − mean)² / max(0, n − correction) over ``dim``, as ``torch.var``."""
    return reduce("var", x, dim, keepdim=keepdim, correction=correction, out=out, device=device)


def std(x, dim=None, *, correction=1.0, keepdim=False, out=None, device=None):
    """The square root of ``var``, as ``torch.std``."""
    return reduce("std", x, dim, keepdim=keepdim, correction=correction, out=out, device=device)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, out=None, device=None):
    """(Σ |x|^ord)^(1/ord) over ``dim``, as ``torch.linalg.vector_norm``: ord 1, 2, inf, or any finite ord ≥ 0
    (0 counts the nonzero elements)."""
    ord = float(ord)
    op = {1.0: "norm_l1", 2.0: "norm_l2", float("inf"): "norm_linf"}.get(ord, "norm_p")
    return reduce(op, x, dim, keepdim=keepdim, p=ord if op == "norm_p" else 2.0, out=out, device=device)


# ---- softmax --------------------------------------------------------------------------------------------

def _softmax_plan(plan_class, op, ref, dim, temperature, mask_shape, device):
    kind, shape = _arrays.kind_of(ref), _shape(ref)
    stream = _arrays.stream_for(ref, device)
    desc = _core.SoftmaxDescriptor(op, kind, shape, int(dim), float(temperature), mask_shape)
    key = (op, kind, shape, int(dim), float(temperature), mask_shape)
    return _cache.plan(plan_class, key, stream, desc), stream, kind, shape


def softmax(x, dim=-1, *, temperature=1.0, mask=None, log=False, out=None, device=None):
    """softmax(x / temperature + mask) along ``dim`` (``log``: log_softmax); ``mask``, when given, is
    additive and broadcasts to x (−inf masks an element out)."""
    mask_shape = None if mask is None else _shape(mask)
    op = "log_softmax" if log else "softmax"
    plan, stream, kind, shape = _softmax_plan(_core.SoftmaxPlan, op, x, dim, temperature, mask_shape, device)
    y = _output(x, out, shape, kind, "out")
    _run(plan, stream, x, x=x, mask=mask, y=y)
    return _arrays.finish(x, y) if out is None else out


def log_softmax(x, dim=-1, *, temperature=1.0, mask=None, out=None, device=None):
    """log_softmax(x / temperature + mask) along ``dim``."""
    return softmax(x, dim, temperature=temperature, mask=mask, log=True, out=out, device=device)


def softmax_backward(dy, y, dim=-1, *, temperature=1.0, log=False, out=None, device=None):
    """dx of ``softmax`` (``log``: of ``log_softmax``) from dy and the forward's y."""
    op = "log_softmax" if log else "softmax"
    plan, stream, kind, shape = _softmax_plan(_core.SoftmaxBackwardPlan, op, dy, dim, temperature, None, device)
    dx = _output(dy, out, shape, kind, "out")
    _run(plan, stream, dy, dy=dy, y=y, dx=dx)
    return _arrays.finish(dy, dx) if out is None else out


# ---- norms ----------------------------------------------------------------------------------------------

def _norm_plans(op, x, eps, weight, bias, device):
    kind, shape = _arrays.kind_of(x), _shape(x)
    stream = _arrays.stream_for(x, device)
    key = (op, kind, shape, float(eps), weight is not None, bias is not None)
    desc = _core.NormDescriptor(op, kind, shape, float(eps), weight is not None, bias is not None)
    return stream, kind, shape, desc, key


def norm(op, x, weight=None, bias=None, *, eps=1e-6, device=None):
    """(y, mean, rstd) of ``rms_norm`` or ``layer_norm`` over the last dimension: y = norm(x) · weight + bias,
    mean (None for rms_norm) and rstd of shape x.shape[:-1] in f32 (f64 for f64), what ``norm_backward``
    takes."""
    stream, kind, shape, desc, key = _norm_plans(op, x, eps, weight, bias, device)
    plan = _cache.plan(_core.NormPlan, key, stream, desc)
    y = _arrays.empty(x, shape, kind)
    mean = _arrays.empty(x, plan.stats_shape, plan.stats_kind) if op == "layer_norm" else None
    rstd = _arrays.empty(x, plan.stats_shape, plan.stats_kind)
    _run(plan, stream, x, x=x, weight=weight, bias=bias, y=y, mean=mean, rstd=rstd)
    return _arrays.finish(x, y), None if mean is None else _arrays.finish(x, mean), _arrays.finish(x, rstd)


def rms_norm(x, weight=None, *, eps=1e-6, device=None):
    """x / sqrt(mean(x²) + eps) · weight over the last dimension (HF's LlamaRMSNorm, rounded once)."""
    return norm("rms_norm", x, weight, eps=eps, device=device)[0]


def layer_norm(x, weight=None, bias=None, *, eps=1e-5, device=None):
    """(x − mean) / sqrt(var + eps) · weight + bias over the last dimension (``F.layer_norm``)."""
    return norm("layer_norm", x, weight, bias, eps=eps, device=device)[0]


def norm_backward(op, dy, x, weight, mean, rstd, *, bias=False, eps=1e-6, dx=True, dweight=True, dbias=True,
                  device=None):
    """(dx, dweight, dbias) of ``norm``, each None where not asked or not applicable (dbias needs
    ``bias=True``, the forward's having had a bias)."""
    stream, kind, shape, desc, key = _norm_plans(op, x, eps, weight, True if bias else None, device)
    plan = _cache.plan(_core.NormBackwardPlan, key, stream, desc)
    h = shape[-1]
    outs = [_arrays.empty(dy, shape, kind) if dx else None,
            _arrays.empty(dy, (h,), kind) if dweight and weight is not None else None,
            _arrays.empty(dy, (h,), kind) if dbias and bias else None]
    _run(plan, stream, dy, dy=dy, x=x, weight=weight, mean=mean, rstd=rstd, dx=outs[0], dweight=outs[1],
         dbias=outs[2])
    return tuple(None if o is None else _arrays.finish(dy, o) for o in outs)


# ---- the generated functions ------------------------------------------------------------------------------

for _entry in _core.unary_ops():
    _f = _unary_function(_entry)
    globals()[_f.__name__] = _f
for _kind in _core.gated_activation_kinds():
    globals()[_kind] = _gated_function(_kind)
for _entry in _QUANTIZE.values():
    globals()[_entry["name"]] = _quantize_function(_entry)
for _op in _core.binary_ops():
    globals()[_op] = _binary_function(_op, binary, "binary op")
for _op in _core.compare_ops():
    globals()[_op] = _binary_function(_op, compare, "comparison")
for _op in _core.ternary_ops():
    globals()[_op] = _ternary_function(_op)
for _op, _doc in (("sum", "Σ x"), ("mean", "Σ x / n"), ("prod", "Π x"), ("max", "The largest value (NaN if any)"),
                  ("min", "The smallest value (NaN if any)"), ("argmax", "The index of the first max"),
                  ("argmin", "The index of the first min"), ("logsumexp", "log Σ exp(x)"),
                  ("any", "Whether any element is nonzero"), ("all", "Whether every element is nonzero")):
    _f = _reduction(_op, _doc)
    globals()[_f.__name__] = _f
del _entry, _f, _kind, _op, _doc
