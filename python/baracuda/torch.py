"""PyTorch integration: ``torch.autograd.Function``s over baracuda's forward and backward plans, so that a
model trains through them (QAT). Each function runs where its input lives, as :mod:`baracuda.ops` does
(``device="sim"`` runs a CPU tensor's kernels on the emulator).

* every unary op of ``baracuda.unary_ops()``: ``baracuda.torch.silu(x)``, ``baracuda.torch.unary(name, x,
  **params)`` — the backward plan reads x or y as the catalog says;
* every gated activation: ``baracuda.torch.swiglu(x, split_dim=-1, layout="second_half")``;
* fake-quantization: ``baracuda.torch.fake_quantize(x, scale, zero_point, ...)`` with the straight-through
  gradient (dx only, as PyTorch's), and the learnable one (LSQ), ``baracuda.torch.fake_quantize_learnable``,
  with gradients for x, the scale and the (real-valued) zero point;
* ``baracuda.torch.quantize(x, scale, zero_point, ...)``: the quantized codes as a tensor of x's float dtype
  (an integer tensor cannot carry a gradient in PyTorch), with the straight-through gradient of the
  quantize_backward plan, dx = dy / s inside the range and 0 outside.

Registration as ``torch.library`` custom ops (for ``torch.compile``) is not done yet.
"""

import torch as _torch

from . import _core, ops

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
    return UnaryFunction.apply(x, name, tuple(sorted((k, float(v)) for k, v in params.items())), device)


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
    return GatedActivationFunction.apply(x, kind, split_dim, layout, alpha, limit, device)


_QUANT_OPTIONS = ("quantized", "granularity", "axis", "group_size", "quant_min", "quant_max", "convention", "device")


class FakeQuantizeFunction(_torch.autograd.Function):
    """y = fake_quantize(x); dx = dy inside the range, 0 outside (no gradient for scale and zero point)."""

    @staticmethod
    def forward(ctx, x, scale, zero_point, options):
        ctx.options = dict(options)
        ctx.save_for_backward(x, scale, zero_point)
        return ops.fake_quantize(x, scale, zero_point, **ctx.options)

    @staticmethod
    def backward(ctx, dy):
        x, scale, zero_point = ctx.saved_tensors
        return ops.fake_quantize_backward(dy, x, scale, zero_point, **ctx.options), None, None, None


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


class QuantizeSTEFunction(_torch.autograd.Function):
    """q = quantize(x) as float codes; dx = dy / s where the unclamped code is in range (quantize_backward)."""

    @staticmethod
    def forward(ctx, x, scale, zero_point, options):
        ctx.options = dict(options)
        ctx.save_for_backward(x, scale, zero_point)
        return ops.quantize(x, scale, zero_point, **ctx.options).to(x.dtype)

    @staticmethod
    def backward(ctx, dy):
        x, scale, zero_point = ctx.saved_tensors
        return ops.quantize_backward(dy, x, scale, zero_point, **ctx.options), None, None, None


def quantize(x, scale, zero_point, **options):
    """Quantize with the straight-through gradient; the codes come back in x's float dtype. ``options`` as
    baracuda.ops.quantize's."""
    return QuantizeSTEFunction.apply(x, scale, zero_point, _options(options))


def _options(kwargs):
    unknown = set(kwargs) - set(_QUANT_OPTIONS)
    if unknown:
        raise TypeError(f"unknown options {sorted(unknown)} (accepted: {', '.join(_QUANT_OPTIONS)})")
    return tuple(sorted(kwargs.items()))


def fake_quantize(x, scale, zero_point, **options):
    """Fake-quantize with the straight-through gradient; ``options`` as baracuda.ops.fake_quantize's
    (quantized, granularity, axis, group_size, quant_min, quant_max, convention, device)."""
    return FakeQuantizeFunction.apply(x, scale, zero_point, _options(options))


def fake_quantize_learnable(x, scale, zero_point, grad_factor=1.0, **options):
    """Learnable fake-quantize (PyTorch's _fake_quantize_learnable_*_affine): gradients for x, scale and
    zero_point (a float tensor), the latter two times ``grad_factor``."""
    return LearnableFakeQuantizeFunction.apply(x, scale, zero_point, float(grad_factor), _options(options))


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


for _name in _CATALOG:
    globals()[_name] = _unary_function(_name)
for _kind in _core.gated_activation_kinds():
    globals()[_kind] = _gated_function(_kind)
del _name, _kind
