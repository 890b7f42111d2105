"""The channel norms' ``torch.autograd.Function``s, part of :mod:`baracuda.torch`: ``group_norm``,
``instance_norm`` and ``batch_norm`` with gradients for x, the weight and the bias, through the channel_norm
family's forward and backward plans (include/baracuda/ops/channel_norm.hpp). batch_norm updates the running
statistics in place in training, as ``F.batch_norm`` does; they are autograd Functions (not ``torch.library``
custom ops), so ``torch.compile`` breaks the graph around them.
"""

import torch as _torch

from . import ops


class GroupNormFunction(_torch.autograd.Function):
    """GroupNorm of x [N, C, *]; dx, dweight, dbias by GroupNormBackwardPlan from the forward's mean, rstd."""

    @staticmethod
    def forward(ctx, x, weight, bias, groups, eps, device):
        y, mean, rstd = ops.group_norm_forward(x, groups, weight, bias, eps=eps, device=device)
        ctx.groups, ctx.eps, ctx.device, ctx.has_bias = groups, eps, device, bias is not None
        ctx.save_for_backward(x, weight, mean, rstd)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, weight, mean, rstd = ctx.saved_tensors
        need = ctx.needs_input_grad
        dx, dw, db = ops.group_norm_backward(dy.contiguous(), x, weight, mean, rstd, ctx.groups, bias=ctx.has_bias,
                                             eps=ctx.eps, dx=need[0], dweight=need[1], dbias=need[2],
                                             device=ctx.device)
        return dx, dw, db, None, None, None


class BatchNormFunction(_torch.autograd.Function):
    """BatchNorm of x [N, C, *]: in training from the batch's statistics (the running ones updated in place),
    in inference from the running ones; the gradients by BatchNormBackwardPlan."""

    @staticmethod
    def forward(ctx, x, weight, bias, running_mean, running_var, training, momentum, eps, device):
        y, mean, rstd = ops.batch_norm_forward(x, running_mean, running_var, weight, bias, training=training,
                                               momentum=momentum, eps=eps, device=device)
        ctx.training, ctx.eps, ctx.device, ctx.has_bias = training, eps, device, bias is not None
        if training:
            ctx.save_for_backward(x, weight, mean, rstd)
        else:
            ctx.save_for_backward(x, weight, running_mean, running_var)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, weight, a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        stats = dict(mean=a, rstd=b) if ctx.training else dict(running_mean=a, running_var=b)
        dx, dw, db = ops.batch_norm_backward(dy.contiguous(), x, weight, training=ctx.training, bias=ctx.has_bias,
                                             eps=ctx.eps, dx=need[0], dweight=need[1], dbias=need[2],
                                             device=ctx.device, **stats)
        return dx, dw, db, None, None, None, None, None, None


def group_norm(x, groups, weight=None, bias=None, *, eps=1e-5, device=None):
    """``F.group_norm(x, groups, weight, bias, eps)`` with autograd for x, weight and bias."""
    return GroupNormFunction.apply(x, weight, bias, int(groups), float(eps), device)


def instance_norm(x, weight=None, bias=None, *, eps=1e-5, device=None):
    """``F.instance_norm(x, weight=weight, bias=bias, eps=eps)`` without running statistics (GroupNorm with one
    channel per group), with autograd."""
    return group_norm(x, x.shape[1], weight, bias, eps=eps, device=device)


def batch_norm(x, running_mean=None, running_var=None, weight=None, bias=None, *, training=True, momentum=0.1,
               eps=1e-5, device=None):
    """``F.batch_norm(x, running_mean, running_var, weight, bias, training, momentum, eps)`` with autograd for x,
    weight and bias (the running statistics take no gradient)."""
    rm = None if running_mean is None else running_mean.detach()
    rv = None if running_var is None else running_var.detach()
    return BatchNormFunction.apply(x, weight, bias, rm, rv, bool(training), float(momentum), float(eps), device)
