"""The dense linear layer's ``torch.autograd.Function``, part of :mod:`baracuda.torch`: ``linear(x, weight,
bias, activation=)`` as ``act(F.linear(x, weight, bias))``, with gradients for x, the weight and the bias through LinearPlan and
LinearBackwardPlan (include/baracuda/ops/linear.hpp). Only the gradients autograd asks for are computed. It is
an autograd Function (not a ``torch.library`` custom op), so ``torch.compile`` breaks the graph around it.
"""

import torch as _torch

from . import ops


class LinearFunction(_torch.autograd.Function):
    """y = act(x·weightᵀ + bias); dx, dweight, dbias by LinearBackwardPlan from the saved x and weight (and
    the pre-activation, with an activation)."""

    @staticmethod
    def forward(ctx, x, weight, bias, activation, device):
        ctx.device, ctx.has_bias, ctx.activation = device, bias is not None, activation
        if activation == "none":
            y = ops.linear(x, weight, bias, device=device)
            ctx.save_for_backward(x, weight)
        else:
            y, z = ops.linear(x, weight, bias, activation=activation, preactivation=True, device=device)
            ctx.save_for_backward(x, weight, z)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, weight, *z = ctx.saved_tensors
        need = ctx.needs_input_grad
        want = (need[0], need[1], ctx.has_bias and need[2])
        if not any(want):
            return None, None, None, None, None
        dx, dw, db = ops.linear_backward(dy.contiguous(), x, weight, dx=want[0], dw=want[1], db=want[2],
                                         activation=ctx.activation, preactivation=z[0] if z else None,
                                         device=ctx.device)
        return dx, dw, db, None, None


def linear(x, weight, bias=None, *, activation="none", device=None):
    """``F.linear(x, weight, bias)`` with autograd for x, weight and bias; ``activation`` ("relu", "silu",
    "gelu_erf", "gelu_tanh") fused, its backward through the saved pre-activation."""
    return LinearFunction.apply(x, weight, bias, activation, device)
