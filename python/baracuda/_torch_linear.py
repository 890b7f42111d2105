"""The dense linear layer's ``torch.autograd.Function``, part of :mod:`baracuda.torch`: ``linear(x, weight,
bias)`` as ``F.linear``, with gradients for x, the weight and the bias through LinearPlan and
LinearBackwardPlan (include/baracuda/ops/linear.hpp). Only the gradients autograd asks for are computed. It is
an autograd Function (not a ``torch.library`` custom op), so ``torch.compile`` breaks the graph around it.
"""

import torch as _torch

from . import ops


class LinearFunction(_torch.autograd.Function):
    """y = x·weightᵀ + bias; dx, dweight, dbias by LinearBackwardPlan from the saved x and weight."""

    @staticmethod
    def forward(ctx, x, weight, bias, device):
        y = ops.linear(x, weight, bias, device=device)
        ctx.device, ctx.has_bias = device, bias is not None
        ctx.save_for_backward(x, weight)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, weight = ctx.saved_tensors
        need = ctx.needs_input_grad
        want = (need[0], need[1], ctx.has_bias and need[2])
        if not any(want):
            return None, None, None, None
        dx, dw, db = ops.linear_backward(dy.contiguous(), x, weight, dx=want[0], dw=want[1], db=want[2],
                                         device=ctx.device)
        return dx, dw, db, None


def linear(x, weight, bias=None, *, device=None):
    """``F.linear(x, weight, bias)`` with autograd for x, weight and bias."""
    return LinearFunction.apply(x, weight, bias, device)
