"""PyTorch integration: ``torch.autograd.Function``s over baracuda's forward and backward plans, so that a
model trains through them (QAT). Each function runs where its input lives, as :mod:`baracuda.ops` does
(``device="sim"`` runs a CPU tensor's kernels on the emulator).

* every unary op of ``baracuda.unary_ops()``: ``baracuda.torch.silu(x)``, ``baracuda.torch.unary(name, x,
  **params)`` — the backward plan reads x or y as the catalog says;
* every gated activation: ``baracuda.torch.swiglu(x, split_dim=-1, layout="second_half")``;
* fake-quantization: ``baracuda.torch.fake_quantize(x, scale, zero_point, ...)`` with the straight-through
  gradient (dx only, as PyTorch's), and the learnable one (LSQ), ``baracuda.torch.fake_quantize_learnable``,
  with gradients for x, the scale and the (real-valued) zero point;
* every binary op (``baracuda.torch.mul(a, b)``, ``binary(op, a, b)``), every ternary op
  (``baracuda.torch.lerp(a, b, c)``, ``ternary(op, a, b, c, value=...)``) and ``where(cond, a, b)``, with
  broadcasting: the binary backward plan sums each gradient to its input's shape itself (ReduceToPlan); the
  ternary and where gradients come at the output shape and are summed with ``Tensor.sum_to_size``;
* ``softmax(x, dim, temperature=, mask=)``, ``log_softmax`` and ``rms_norm(x, weight)``,
  ``layer_norm(x, weight, bias)`` with gradients for x (and the weight and bias);
* ``group_norm(x, groups, weight, bias)``, ``instance_norm(x, weight, bias)`` and ``batch_norm(x,
  running_mean, running_var, weight, bias, training=, momentum=)`` (the running statistics updated in place in
  training) with gradients for x, the weight and the bias;
* ``linear(x, weight, bias, activation=)`` (``F.linear``, an activation fused) with gradients for x, the weight
  and the bias (LinearPlan, LinearBackwardPlan), so that a QAT step (``fake_quantize`` of the weight, then
  ``linear``) trains on baracuda;
* ``baracuda.torch.quantize(x, scale, zero_point, ...)``: the quantized codes as a tensor of x's float dtype
  (an integer tensor cannot carry a gradient in PyTorch), with the straight-through gradient of the
  quantize_backward plan, dx = dy / s inside the range and 0 outside.

With torch >= 2.4 every op here is also a ``torch.library`` custom op (``torch.ops.baracuda.unary``,
``gated_activation``, ``fake_quantize``, ``fake_quantize_learnable``, ``quantize_ste``, ``binary``, ``ternary``,
``softmax`` (log-softmax with ``log=True``), ``norm`` (rms_norm or layer_norm; returns y, mean and rstd, the
mean of rms_norm an empty tensor) and their backward ops), with fake (meta) implementations and its autograd,
and the functions above go through them, so ``torch.compile`` traces them without a graph break; ``where``
(its bool condition), the channel norms (batch_norm's in-place running statistics) and ``linear`` stay
``autograd.Function``s. With an older torch they are the autograd Functions.
"""

from typing import List as _List, Optional as _Optional, Tuple as _Tuple

import torch as _torch

from . import _core, ops
from ._torch_channel_norm import batch_norm, group_norm, instance_norm  # noqa: F401 (part of this module)
from ._torch_linear import linear  # noqa: F401 (part of this module)

_CATALOG = {op["name"]: op for op in _core.unary_ops()}


class UnaryFunction(_torch.autograd.Function):
    """y = op(x); dx = dy · op'(x) by UnaryBackwardPlan."""

    @staticmethod
    def forward(ctx, x, name, params, device):
        y = ops.unary(name, x, device=device, **dict(params))
        ctx.name, ctx.params, ctx.device = name, params, device
        saved = _CATALOG[name]["saved"]
        ctx.save_for_backward(*({"input": (x,), "output": (y,)}.get(saved, ())))
        return y

    @staticmethod
    def backward(ctx, dy):
        saved = ctx.saved_tensors
        dx = ops.unary_backward(ctx.name, dy, saved[0] if saved else None, device=ctx.device, **dict(ctx.params))
        return dx, None, None, None


def unary(name, x, *, device=None, **params):
    """op(x) with autograd; ``name`` one of ``baracuda.unary_ops()``, ``params`` PyTorch's names."""
    if name not in _CATALOG:
        raise ValueError(f"unknown unary op {name!r}")
    items = tuple(sorted((k, float(v)) for k, v in params.items()))
    if LIBRARY_OPS:
        return _unary_op(x, name, ",".join(k for k, _ in items), [v for _, v in items], device or "")
    return UnaryFunction.apply(x, name, items, device)


class GatedActivationFunction(_torch.autograd.Function):
    """y = act(gate) · linear; dx by GatedActivationBackwardPlan."""

    @staticmethod
    def forward(ctx, x, kind, split_dim, layout, alpha, limit, device):
        ctx.args = dict(split_dim=split_dim, layout=layout, alpha=alpha, limit=limit, device=device)
        ctx.kind = kind
        ctx.save_for_backward(x)
        return ops.gated_activation(kind, x, **ctx.args)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        return (ops.gated_activation_backward(ctx.kind, dy, x, **ctx.args),) + (None,) * 6


def gated_activation(kind, x, *, split_dim=-1, layout="second_half", alpha=1.702, limit=7.0, device=None):
    """The gated activation ``kind`` with autograd (see baracuda.ops.gated_activation)."""
    if LIBRARY_OPS:
        return _gated_op(x, kind, split_dim, layout, float(alpha), float(limit), device or "")
    return GatedActivationFunction.apply(x, kind, split_dim, layout, alpha, limit, device)


_QUANT_OPTIONS = ("quantized", "granularity", "axis", "group_size", "quant_min", "quant_max", "convention", "device")


def _quantize_codes(x, scale, zero_point, **options):
    """quantize's codes in x's float dtype (an integer tensor cannot carry a gradient)."""
    return ops.quantize(x, scale, zero_point, **options).to(x.dtype)


# The straight-through ops: (forward, backward) of each, one computation for both registration paths.
_STRAIGHT_THROUGH = {
    "fake_quantize": (ops.fake_quantize, ops.fake_quantize_backward),
    "quantize_ste": (_quantize_codes, ops.quantize_backward),
}


class StraightThroughFunction(_torch.autograd.Function):
    """y = forward(x, scale, zero_point); dx from the op's backward plan (fake-quantize: dy inside the range;
    quantize: dy / s inside the range); no gradient for scale and zero point."""

    @staticmethod
    def forward(ctx, x, scale, zero_point, name, options):
        ctx.name, ctx.options = name, dict(options)
        ctx.save_for_backward(x, scale, zero_point)
        return _STRAIGHT_THROUGH[name][0](x, scale, zero_point, **ctx.options)

    @staticmethod
    def backward(ctx, dy):
        x, scale, zero_point = ctx.saved_tensors
        return _STRAIGHT_THROUGH[ctx.name][1](dy, x, scale, zero_point, **ctx.options), None, None, None, None


class LearnableFakeQuantizeFunction(_torch.autograd.Function):
    """LSQ: y = fake_quantize with a real-valued zero point; dx, dscale and dzero_point from its backward op."""

    @staticmethod
    def forward(ctx, x, scale, zero_point, grad_factor, options):
        ctx.options, ctx.grad_factor = dict(options), grad_factor
        ctx.save_for_backward(x, scale, zero_point)
        return ops.fake_quantize_learnable(x, scale, zero_point, **ctx.options)

    @staticmethod
    def backward(ctx, dy):
        x, scale, zero_point = ctx.saved_tensors
        dx, dscale, dzp = ops.fake_quantize_learnable_backward(dy, x, scale, zero_point,
                                                               grad_factor=ctx.grad_factor, **ctx.options)
        return dx, dscale, dzp, None, None


def quantize(x, scale, zero_point, **options):
    """Quantize with the straight-through gradient; the codes come back in x's float dtype. ``options`` as
    baracuda.ops.quantize's."""
    return _straight_through("quantize_ste", x, scale, zero_point, options)


def _options(kwargs):
    unknown = set(kwargs) - set(_QUANT_OPTIONS)
    if unknown:
        raise TypeError(f"unknown options {sorted(unknown)} (accepted: {', '.join(_QUANT_OPTIONS)})")
    return tuple(sorted(kwargs.items()))


def fake_quantize(x, scale, zero_point, **options):
    """Fake-quantize with the straight-through gradient; ``options`` as baracuda.ops.fake_quantize's
    (quantized, granularity, axis, group_size, quant_min, quant_max, convention, device)."""
    return _straight_through("fake_quantize", x, scale, zero_point, options)


def _straight_through(name, x, scale, zero_point, options):
    if LIBRARY_OPS:
        return _STRAIGHT_THROUGH_OPS[name](x, scale, zero_point, *_library_options(_options(options)))
    return StraightThroughFunction.apply(x, scale, zero_point, name, _options(options))


def fake_quantize_learnable(x, scale, zero_point, grad_factor=1.0, **options):
    """Learnable fake-quantize (PyTorch's _fake_quantize_learnable_*_affine): gradients for x, scale and
    zero_point (a float tensor), the latter two times ``grad_factor``."""
    if LIBRARY_OPS:
        return _lsq_op(x, scale, zero_point, float(grad_factor), *_library_options(_options(options)))
    return LearnableFakeQuantizeFunction.apply(x, scale, zero_point, float(grad_factor), _options(options))


class BinaryFunction(_torch.autograd.Function):
    """out = a op b; da, db by BinaryBackwardPlan, which sums them to a's and b's shapes."""

    @staticmethod
    def forward(ctx, a, b, op, device):
        ctx.op, ctx.device = op, device
        ctx.save_for_backward(a, b)
        return ops.binary(op, a, b, device=device)

    @staticmethod
    def backward(ctx, dy):
        a, b = ctx.saved_tensors
        da, db = ops.binary_backward(ctx.op, dy, a, b, da=ctx.needs_input_grad[0],
                                     db=ctx.needs_input_grad[1], sum_to_inputs=True, device=ctx.device)
        return da, db, None, None


class TernaryFunction(_torch.autograd.Function):
    """out = op(a, b, c); da, db, dc by TernaryBackwardPlan, summed to the inputs' shapes."""

    @staticmethod
    def forward(ctx, a, b, c, op, value, device):
        ctx.op, ctx.value, ctx.device = op, value, device
        ctx.save_for_backward(a, b, c)
        return ops.ternary(op, a, b, c, value=value, device=device)

    @staticmethod
    def backward(ctx, dy):
        a, b, c = ctx.saved_tensors
        grads = ops.ternary_backward(ctx.op, dy, a, b, c, value=ctx.value, device=ctx.device)
        return tuple(_reduce(g, t) for g, t in zip(grads, (a, b, c))) + (None, None, None)


class WhereFunction(_torch.autograd.Function):
    """out = cond ? a : b; da, db by WhereBackwardPlan, summed to a's and b's shapes."""

    @staticmethod
    def forward(ctx, cond, a, b, device):
        ctx.device, ctx.shapes = device, (a.shape, b.shape)
        ctx.save_for_backward(cond)
        return ops.where(cond, a, b, device=device)

    @staticmethod
    def backward(ctx, dy):
        (cond,) = ctx.saved_tensors
        da, db = ops.where_backward(cond, dy.contiguous(), device=ctx.device)
        return None, da.sum_to_size(ctx.shapes[0]), db.sum_to_size(ctx.shapes[1]), None


class SoftmaxFunction(_torch.autograd.Function):
    """softmax / log_softmax of x / T + mask along dim; dx by SoftmaxBackwardPlan (the mask gets none)."""

    @staticmethod
    def forward(ctx, x, mask, dim, temperature, log, device):
        y = ops.softmax(x, dim, temperature=temperature, mask=mask, log=log, device=device)
        ctx.dim, ctx.temperature, ctx.log, ctx.device = dim, temperature, log, device
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        dx = ops.softmax_backward(dy, y, ctx.dim, temperature=ctx.temperature, log=ctx.log, device=ctx.device)
        return dx, None, None, None, None, None


def _softmax(x, dim, temperature, mask, log, device):
    mask = None if mask is None else mask.detach()
    if LIBRARY_OPS:
        return _softmax_op(x, mask, int(dim), float(temperature), log, device or "")
    return SoftmaxFunction.apply(x, mask, dim, temperature, log, device)


def softmax(x, dim=-1, *, temperature=1.0, mask=None, device=None):
    """softmax(x / temperature + mask) along ``dim``, with autograd for x."""
    return _softmax(x, dim, temperature, mask, False, device)


def log_softmax(x, dim=-1, *, temperature=1.0, mask=None, device=None):
    """log_softmax(x / temperature + mask) along ``dim``, with autograd for x."""
    return _softmax(x, dim, temperature, mask, True, device)


class NormFunction(_torch.autograd.Function):
    """rms_norm / layer_norm over the last dimension; dx, dweight, dbias by NormBackwardPlan."""

    @staticmethod
    def forward(ctx, x, weight, bias, op, eps, device):
        y, mean, rstd = ops.norm(op, x, weight, bias, eps=eps, device=device)
        ctx.op, ctx.eps, ctx.device, ctx.has_bias = op, eps, device, bias is not None
        ctx.save_for_backward(x, weight, mean, rstd)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, weight, mean, rstd = ctx.saved_tensors
        dx, dw, db = ops.norm_backward(ctx.op, dy, x, weight, mean, rstd, bias=ctx.has_bias, eps=ctx.eps,
                                       dx=ctx.needs_input_grad[0], dweight=ctx.needs_input_grad[1],
                                       dbias=ctx.needs_input_grad[2], device=ctx.device)
        return dx, dw, db, None, None, None


def rms_norm(x, weight=None, *, eps=1e-6, device=None):
    """RMSNorm over the last dimension with autograd for x and weight."""
    if LIBRARY_OPS:
        return _norm_op(x, weight, None, "rms_norm", float(eps), device or "")[0]
    return NormFunction.apply(x, weight, None, "rms_norm", float(eps), device)


def layer_norm(x, weight=None, bias=None, *, eps=1e-5, device=None):
    """LayerNorm over the last dimension with autograd for x, weight and bias."""
    if LIBRARY_OPS:
        return _norm_op(x, weight, bias, "layer_norm", float(eps), device or "")[0]
    return NormFunction.apply(x, weight, bias, "layer_norm", float(eps), device)


def _reduce(grad, like):
    """A gradient at the broadcast output shape, summed to `like`'s shape (None stays None)."""
    return None if grad is None else grad.sum_to_size(like.shape)


def binary(op, a, b, *, device=None):
    """a op b with broadcasting and autograd; ``op`` one of ``baracuda.binary_ops()``."""
    if LIBRARY_OPS:
        return _binary_op(a, b, op, device or "")
    return BinaryFunction.apply(a, b, op, device)


def ternary(op, a, b, c, *, value=1.0, device=None):
    """op(a, b, c) with broadcasting and autograd; ``op`` one of ``baracuda.ternary_ops()``."""
    if LIBRARY_OPS:
        return _ternary_op(a, b, c, op, float(value), device or "")
    return TernaryFunction.apply(a, b, c, op, float(value), device)


def where(cond, a, b, *, device=None):
    """cond ? a : b with broadcasting and autograd (for a and b)."""
    return WhereFunction.apply(cond, a, b, device)


# ---- torch.library registration (torch >= 2.4) -------------------------------------------------------------

LIBRARY_OPS = hasattr(_torch, "library") and hasattr(_torch.library, "custom_op")


def _params(keys, values):
    return dict(zip(keys.split(","), values)) if keys else {}


if LIBRARY_OPS:

    @_torch.library.custom_op("baracuda::unary", mutates_args=())
    def _unary_op(x: _torch.Tensor, op: str, keys: str, values: _List[float], device: str) -> _torch.Tensor:
        # keys: the parameters' names, comma-separated (a schema has no list of strings)
        return ops.unary(op, x, device=device or None, **_params(keys, values))

    @_unary_op.register_fake
    def _(x, op, keys, values, device):
        return _torch.empty_like(x)

    @_torch.library.custom_op("baracuda::unary_backward", mutates_args=())
    def _unary_backward_op(dy: _torch.Tensor, saved: _Optional[_torch.Tensor], op: str, keys: str,
                           values: _List[float], device: str) -> _torch.Tensor:
        return ops.unary_backward(op, dy, saved, device=device or None, **_params(keys, values))

    @_unary_backward_op.register_fake
    def _(dy, saved, op, keys, values, device):
        return _torch.empty_like(dy)

    def _unary_setup(ctx, inputs, output):
        x, op, keys, values, device = inputs
        ctx.op, ctx.keys, ctx.values, ctx.device = op, keys, values, device
        saved = _CATALOG[op]["saved"]
        ctx.save_for_backward(x if saved == "input" else output if saved == "output" else None)

    def _unary_backward(ctx, dy):
        (saved,) = ctx.saved_tensors
        return _unary_backward_op(dy, saved, ctx.op, ctx.keys, ctx.values, ctx.device), None, None, None, None

    _unary_op.register_autograd(_unary_backward, setup_context=_unary_setup)

    @_torch.library.custom_op("baracuda::gated_activation", mutates_args=())
    def _gated_op(x: _torch.Tensor, kind: str, split_dim: int, layout: str, alpha: float, limit: float,
                  device: str) -> _torch.Tensor:
        return ops.gated_activation(kind, x, split_dim=split_dim, layout=layout, alpha=alpha, limit=limit,
                                    device=device or None)

    @_gated_op.register_fake
    def _(x, kind, split_dim, layout, alpha, limit, device):
        shape = list(x.shape)
        shape[split_dim] //= 2
        return x.new_empty(shape)

    @_torch.library.custom_op("baracuda::gated_activation_backward", mutates_args=())
    def _gated_backward_op(dy: _torch.Tensor, x: _torch.Tensor, kind: str, split_dim: int, layout: str,
                           alpha: float, limit: float, device: str) -> _torch.Tensor:
        return ops.gated_activation_backward(kind, dy, x, split_dim=split_dim, layout=layout, alpha=alpha,
                                             limit=limit, device=device or None)

    @_gated_backward_op.register_fake
    def _(dy, x, kind, split_dim, layout, alpha, limit, device):
        return _torch.empty_like(x)

    def _gated_setup(ctx, inputs, output):
        x, *ctx.args = inputs
        ctx.save_for_backward(x)

    def _gated_backward(ctx, dy):
        (x,) = ctx.saved_tensors
        return (_gated_backward_op(dy, x, *ctx.args),) + (None,) * 6

    _gated_op.register_autograd(_gated_backward, setup_context=_gated_setup)


if LIBRARY_OPS:
    # Fake-quantize as custom ops: the descriptor's options as schema arguments.

    def _qopts(quantized, granularity, axis, group_size, quant_min, quant_max, convention, device):
        return dict(quantized=quantized, granularity=granularity, axis=axis, group_size=group_size,
                    quant_min=quant_min, quant_max=quant_max, convention=convention, device=device or None)

    def _straight_through_op(name, forward, backward):
        """The custom op `name` and its backward op, with the quantize descriptor's options as arguments."""

        def op(x: _torch.Tensor, scale: _torch.Tensor, zero_point: _torch.Tensor, quantized: str, granularity: str,
               axis: int, group_size: int, quant_min: _Optional[int], quant_max: _Optional[int], convention: str,
               device: str) -> _torch.Tensor:
            return forward(x, scale, zero_point, **_qopts(quantized, granularity, axis, group_size, quant_min,
                                                          quant_max, convention, device))

        def op_backward(dy: _torch.Tensor, x: _torch.Tensor, scale: _torch.Tensor, zero_point: _torch.Tensor,
                        quantized: str, granularity: str, axis: int, group_size: int, quant_min: _Optional[int],
                        quant_max: _Optional[int], convention: str, device: str) -> _torch.Tensor:
            return backward(dy, x, scale, zero_point, **_qopts(quantized, granularity, axis, group_size, quant_min,
                                                               quant_max, convention, device))

        fwd = _torch.library.custom_op(f"baracuda::{name}", op, mutates_args=())
        bwd = _torch.library.custom_op(f"baracuda::{name}_backward", op_backward, mutates_args=())
        fwd.register_fake(lambda x, *args: _torch.empty_like(x))
        bwd.register_fake(lambda dy, *args: _torch.empty_like(dy))

        def setup(ctx, inputs, output):
            x, scale, zero_point, *ctx.options = inputs
            ctx.save_for_backward(x, scale, zero_point)

        def grad(ctx, dy):
            x, scale, zero_point = ctx.saved_tensors
            return (bwd(dy, x, scale, zero_point, *ctx.options),) + (None,) * 10

        fwd.register_autograd(grad, setup_context=setup)
        return fwd

    _STRAIGHT_THROUGH_OPS = {name: _straight_through_op(name, *pair) for name, pair in _STRAIGHT_THROUGH.items()}

    # The learnable fake-quantize: a real-valued zero point, and gradients for scale and zero point.
    @_torch.library.custom_op("baracuda::fake_quantize_learnable", mutates_args=())
    def _lsq_op(x: _torch.Tensor, scale: _torch.Tensor, zero_point: _torch.Tensor, grad_factor: float,
                quantized: str, granularity: str, axis: int, group_size: int, quant_min: _Optional[int],
                quant_max: _Optional[int], convention: str, device: str) -> _torch.Tensor:
        return ops.fake_quantize_learnable(x, scale, zero_point, **_qopts(quantized, granularity, axis, group_size,
                                                                         quant_min, quant_max, convention, device))

    @_lsq_op.register_fake
    def _(x, *args):
        return _torch.empty_like(x)

    @_torch.library.custom_op("baracuda::fake_quantize_learnable_backward", mutates_args=())
    def _lsq_backward_op(dy: _torch.Tensor, x: _torch.Tensor, scale: _torch.Tensor, zero_point: _torch.Tensor,
                         grad_factor: float, quantized: str, granularity: str, axis: int, group_size: int,
                         quant_min: _Optional[int], quant_max: _Optional[int], convention: str,
                         device: str) -> _Tuple[_torch.Tensor, _torch.Tensor, _torch.Tensor]:
        return ops.fake_quantize_learnable_backward(dy, x, scale, zero_point, grad_factor=grad_factor,
                                                    **_qopts(quantized, granularity, axis, group_size, quant_min,
                                                             quant_max, convention, device))

    @_lsq_backward_op.register_fake
    def _(dy, x, scale, zero_point, *args):
        return _torch.empty_like(x), _torch.empty_like(scale), _torch.empty_like(scale)

    def _lsq_setup(ctx, inputs, output):
        x, scale, zero_point, *ctx.options = inputs
        ctx.save_for_backward(x, scale, zero_point)

    def _lsq_backward(ctx, dy):
        x, scale, zero_point = ctx.saved_tensors
        dx, ds, dz = _lsq_backward_op(dy, x, scale, zero_point, *ctx.options)
        return (dx, ds, dz) + (None,) * 9

    _lsq_op.register_autograd(_lsq_backward, setup_context=_lsq_setup)

    # Broadcasting binary and ternary ops and where: gradients at the output shape, summed to the inputs'.
    @_torch.library.custom_op("baracuda::binary", mutates_args=())
    def _binary_op(a: _torch.Tensor, b: _torch.Tensor, op: str, device: str) -> _torch.Tensor:
        return ops.binary(op, a, b, device=device or None)

    @_binary_op.register_fake
    def _(a, b, op, device):
        return a.new_empty(_torch.broadcast_shapes(a.shape, b.shape))

    @_torch.library.custom_op("baracuda::binary_backward", mutates_args=())
    def _binary_backward_op(dy: _torch.Tensor, a: _torch.Tensor, b: _torch.Tensor, op: str,
                            device: str) -> _Tuple[_torch.Tensor, _torch.Tensor]:
        return ops.binary_backward(op, dy, a, b, device=device or None)

    @_binary_backward_op.register_fake
    def _(dy, a, b, op, device):
        return _torch.empty_like(dy), _torch.empty_like(dy)

    def _binary_setup(ctx, inputs, output):
        a, b, ctx.op, ctx.device = inputs
        ctx.save_for_backward(a, b)

    def _binary_backward(ctx, dy):
        a, b = ctx.saved_tensors
        da, db = _binary_backward_op(dy, a, b, ctx.op, ctx.device)
        return da.sum_to_size(a.shape), db.sum_to_size(b.shape), None, None

    _binary_op.register_autograd(_binary_backward, setup_context=_binary_setup)

    @_torch.library.custom_op("baracuda::ternary", mutates_args=())
    def _ternary_op(a: _torch.Tensor, b: _torch.Tensor, c: _torch.Tensor, op: str, value: float,
                    device: str) -> _torch.Tensor:
        return ops.ternary(op, a, b, c, value=value, device=device or None)

    @_ternary_op.register_fake
    def _(a, b, c, op, value, device):
        return a.new_empty(_torch.broadcast_shapes(a.shape, b.shape, c.shape))

    @_torch.library.custom_op("baracuda::ternary_backward", mutates_args=())
    def _ternary_backward_op(dy: _torch.Tensor, a: _torch.Tensor, b: _torch.Tensor, c: _torch.Tensor, op: str,
                             value: float, device: str) -> _Tuple[_torch.Tensor, _torch.Tensor, _torch.Tensor]:
        return ops.ternary_backward(op, dy, a, b, c, value=value, device=device or None)

    @_ternary_backward_op.register_fake
    def _(dy, a, b, c, op, value, device):
        return _torch.empty_like(dy), _torch.empty_like(dy), _torch.empty_like(dy)

    def _ternary_setup(ctx, inputs, output):
        a, b, c, *ctx.args = inputs
        ctx.save_for_backward(a, b, c)

    def _ternary_backward(ctx, dy):
        a, b, c = ctx.saved_tensors
        grads = _ternary_backward_op(dy, a, b, c, *ctx.args)
        return tuple(g.sum_to_size(t.shape) for g, t in zip(grads, (a, b, c))) + (None, None, None)

    _ternary_op.register_autograd(_ternary_backward, setup_context=_ternary_setup)


if LIBRARY_OPS:
    # Softmax and log-softmax (the mask gets no gradient) and the norms: the forward op returns the statistics
    # the backward op reads (rms_norm's mean an empty placeholder: a custom op returns no None).

    @_torch.library.custom_op("baracuda::softmax", mutates_args=())
    def _softmax_op(x: _torch.Tensor, mask: _Optional[_torch.Tensor], dim: int, temperature: float, log: bool,
                    device: str) -> _torch.Tensor:
        return ops.softmax(x, dim, temperature=temperature, mask=mask, log=log, device=device or None)

    @_softmax_op.register_fake
    def _(x, mask, dim, temperature, log, device):
        return x.new_empty(x.shape)

    @_torch.library.custom_op("baracuda::softmax_backward", mutates_args=())
    def _softmax_backward_op(dy: _torch.Tensor, y: _torch.Tensor, dim: int, temperature: float, log: bool,
                             device: str) -> _torch.Tensor:
        return ops.softmax_backward(dy, y, dim, temperature=temperature, log=log, device=device or None)

    @_softmax_backward_op.register_fake
    def _(dy, y, dim, temperature, log, device):
        return dy.new_empty(dy.shape)

    def _softmax_setup(ctx, inputs, output):
        x, mask, *ctx.args = inputs
        ctx.save_for_backward(output)

    def _softmax_backward(ctx, dy):
        (y,) = ctx.saved_tensors
        return (_softmax_backward_op(dy, y, *ctx.args),) + (None,) * 5

    _softmax_op.register_autograd(_softmax_backward, setup_context=_softmax_setup)

    def _stats_dtype(x):
        return _torch.float64 if x.dtype == _torch.float64 else _torch.float32

    @_torch.library.custom_op("baracuda::norm", mutates_args=())
    def _norm_op(x: _torch.Tensor, weight: _Optional[_torch.Tensor], bias: _Optional[_torch.Tensor], op: str,
                 eps: float, device: str) -> _Tuple[_torch.Tensor, _torch.Tensor, _torch.Tensor]:
        y, mean, rstd = ops.norm(op, x, weight, bias, eps=eps, device=device or None)
        return y, rstd.new_empty(0) if mean is None else mean, rstd

    @_norm_op.register_fake
    def _(x, weight, bias, op, eps, device):
        stats = x.new_empty(x.shape[:-1], dtype=_stats_dtype(x))
        return x.new_empty(x.shape), stats.new_empty(0) if op == "rms_norm" else stats.new_empty(stats.shape), stats

    @_torch.library.custom_op("baracuda::norm_backward", mutates_args=())
    def _norm_backward_op(dy: _torch.Tensor, x: _torch.Tensor, weight: _Optional[_torch.Tensor],
                          mean: _torch.Tensor, rstd: _torch.Tensor, op: str, eps: float, bias: bool,
                          device: str) -> _Tuple[_torch.Tensor, _torch.Tensor, _torch.Tensor]:
        # (dx, dweight, dbias), the last two empty without a weight or bias
        grads = ops.norm_backward(op, dy, x, weight, mean if op == "layer_norm" else None, rstd, bias=bias,
                                  eps=eps, device=device or None)
        return tuple(x.new_empty(0) if g is None else g for g in grads)

    @_norm_backward_op.register_fake
    def _(dy, x, weight, mean, rstd, op, eps, bias, device):
        h = x.shape[-1:]
        return x.new_empty(x.shape), x.new_empty(h if weight is not None else 0), x.new_empty(h if bias else 0)

    def _norm_setup(ctx, inputs, output):
        x, weight, bias, ctx.op, ctx.eps, ctx.device = inputs
        ctx.has_bias = bias is not None
        ctx.save_for_backward(x, weight, output[1], output[2])

    def _norm_backward(ctx, dy, dmean, drstd):
        x, weight, mean, rstd = ctx.saved_tensors
        dx, dw, db = _norm_backward_op(dy, x, weight, mean, rstd, ctx.op, ctx.eps, ctx.has_bias, ctx.device)
        return dx, None if weight is None else dw, db if ctx.has_bias else None, None, None, None

    _norm_op.register_autograd(_norm_backward, setup_context=_norm_setup)


def _library_options(options):
    """fake_quantize's options as the custom op's positional arguments (its defaults filled in)."""
    o = dict(options)
    return (o.get("quantized", "s8"), o.get("granularity", "per_tensor"), int(o.get("axis", 0)),
            int(o.get("group_size", 0)), o.get("quant_min"), o.get("quant_max"), o.get("convention", "pytorch"),
            o.get("device") or "")


def _unary_function(name):
    def f(x, *, device=None, **params):
        return unary(name, x, device=device, **params)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"{_CATALOG[name]['doc']} (with autograd)."
    return f


def _gated_function(kind):
    def f(x, *, split_dim=-1, layout="second_half", alpha=1.702, limit=7.0, device=None):
        return gated_activation(kind, x, split_dim=split_dim, layout=layout, alpha=alpha, limit=limit, device=device)

    f.__name__ = f.__qualname__ = kind
    f.__doc__ = f"The gated activation {kind!r} with autograd."
    return f


def _pointwise_function(op, run, arity):
    def f(*args, device=None, **kwargs):
        if len(args) != arity:
            raise TypeError(f"{op} takes {arity} tensors")
        return run(op, *args, device=device, **kwargs)

    f.__name__ = f.__qualname__ = op
    f.__doc__ = f"{op} with broadcasting and autograd (see {run.__name__})."
    return f


for _name in _CATALOG:
    globals()[_name] = _unary_function(_name)
for _name in _core.binary_ops():
    globals()[_name] = _pointwise_function(_name, binary, 2)
for _name in _core.ternary_ops():
    globals()[_name] = _pointwise_function(_name, ternary, 3)
for _kind in _core.gated_activation_kinds():
    globals()[_kind] = _gated_function(_kind)
del _name, _kind
