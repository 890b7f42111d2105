"""The channel_norm family, part of :mod:`baracuda.ops`: GroupNorm (InstanceNorm: one channel per group) and
BatchNorm over x of shape [N, C, *], forward and backward (include/baracuda/ops/channel_norm.hpp).

* ``group_norm(x, groups, weight, bias)`` / ``instance_norm(x, weight, bias)`` return y;
  ``group_norm_forward`` returns (y, mean, rstd) with the statistics [N, groups] ``group_norm_backward`` takes;
* ``batch_norm(x, running_mean, running_var, weight, bias, training=...)`` returns y and, in training, updates
  the running statistics in place (numpy, torch and cupy arrays; jax arrays are immutable: pass others);
  ``batch_norm_forward`` returns (y, mean, rstd) with the statistics [C] ``batch_norm_backward`` takes.

The statistics are f32 (f64 for f64 x); weight, bias and the running statistics have x's kind.
"""

from . import _arrays, _cache, _core


def _group_plan(plan_type, x, groups, eps, weight, bias, device):
    kind, shape = _arrays.kind_of(x), _arrays.shape_of(x)
    stream = _arrays.stream_for(x, device)
    key = ("group_norm", kind, shape, int(groups), float(eps), weight is not None, bias is not None)
    desc = _core.GroupNormDescriptor(kind, shape, int(groups), float(eps), weight is not None, bias is not None)
    return stream, kind, shape, _cache.plan(plan_type, key, stream, desc)


def group_norm_forward(x, groups, weight=None, bias=None, *, eps=1e-5, device=None):
    """(y, mean, rstd) of ``F.group_norm(x, groups, weight, bias, eps)``: mean and rstd [N, groups]."""
    stream, kind, shape, plan = _group_plan(_core.GroupNormPlan, x, groups, eps, weight, bias, device)
    y = _arrays.empty(x, shape, kind)
    mean = _arrays.empty(x, plan.stats_shape, plan.stats_kind)
    rstd = _arrays.empty(x, plan.stats_shape, plan.stats_kind)
    _arrays.run_plan(plan, stream, x, x=x, weight=weight, bias=bias, y=y, mean=mean, rstd=rstd)
    return tuple(_arrays.finish(x, a) for a in (y, mean, rstd))


def group_norm(x, groups, weight=None, bias=None, *, eps=1e-5, device=None):
    """``F.group_norm(x, groups, weight, bias, eps)`` of x [N, C, *]: each group of C / groups channels of a
    sample normalized by its mean and biased variance, then · weight + bias per channel."""
    stream, kind, shape, plan = _group_plan(_core.GroupNormPlan, x, groups, eps, weight, bias, device)
    y = _arrays.empty(x, shape, kind)
    _arrays.run_plan(plan, stream, x, x=x, weight=weight, bias=bias, y=y)
    return _arrays.finish(x, y)


def instance_norm(x, weight=None, bias=None, *, eps=1e-5, device=None):
    """``F.instance_norm(x, weight=weight, bias=bias, eps=eps)`` without running statistics: GroupNorm with one
    channel per group."""
    return group_norm(x, _arrays.shape_of(x)[1], weight, bias, eps=eps, device=device)


def group_norm_backward(dy, x, weight, mean, rstd, groups, *, bias=False, eps=1e-5, dx=True, dweight=True,
                        dbias=True, device=None):
    """(dx, dweight, dbias) of ``group_norm_forward``, each None where not asked or not applicable (dbias needs
    ``bias=True``, the forward's having had a bias)."""
    stream, kind, shape, plan = _group_plan(_core.GroupNormBackwardPlan, x, groups, eps, weight,
                                            True if bias else None, device)
    c = shape[1]
    outs = [_arrays.empty(dy, shape, kind) if dx else None,
            _arrays.empty(dy, (c,), kind) if dweight and weight is not None else None,
            _arrays.empty(dy, (c,), kind) if dbias and bias else None]
    _arrays.run_plan(plan, stream, dy, dy=dy, x=x, weight=weight, mean=mean, rstd=rstd, dx=outs[0],
                     dweight=outs[1], dbias=outs[2])
    return tuple(None if o is None else _arrays.finish(dy, o) for o in outs)


def _batch_plan(plan_type, x, eps, momentum, training, running, weight, bias, device):
    kind, shape = _arrays.kind_of(x), _arrays.shape_of(x)
    stream = _arrays.stream_for(x, device)
    flags = (float(eps), float(momentum), bool(training), bool(running), weight is not None, bias is not None)
    desc = _core.BatchNormDescriptor(kind, shape, *flags)
    return stream, kind, shape, _cache.plan(plan_type, ("batch_norm", kind, shape) + flags, stream, desc)


def batch_norm_forward(x, running_mean=None, running_var=None, weight=None, bias=None, *, training=True,
                       momentum=0.1, eps=1e-5, device=None):
    """(y, mean, rstd) of ``F.batch_norm(x, running_mean, running_var, weight, bias, training, momentum,
    eps)``; in training mean and rstd [C] are the batch's (what ``batch_norm_backward`` takes) and the
    running statistics, when given, are updated in place (the unbiased variance, as PyTorch); in inference
    y uses the running statistics and mean, rstd are None."""
    running = running_mean is not None or running_var is not None
    stream, kind, shape, plan = _batch_plan(_core.BatchNormPlan, x, eps, momentum, training, running, weight, bias,
                                            device)
    y = _arrays.empty(x, shape, kind)
    mean = _arrays.empty(x, plan.stats_shape, plan.stats_kind) if training else None
    rstd = _arrays.empty(x, plan.stats_shape, plan.stats_kind) if training else None
    _arrays.run_plan(plan, stream, x, x=x, weight=weight, bias=bias, y=y, mean=mean, rstd=rstd,
                     running_mean=running_mean, running_var=running_var)
    return tuple(None if a is None else _arrays.finish(x, a) for a in (y, mean, rstd))


def batch_norm(x, running_mean=None, running_var=None, weight=None, bias=None, *, training=True, momentum=0.1,
               eps=1e-5, device=None):
    """``F.batch_norm(x, running_mean, running_var, weight, bias, training, momentum, eps)`` of x [N, C, *]."""
    return batch_norm_forward(x, running_mean, running_var, weight, bias, training=training, momentum=momentum,
                              eps=eps, device=device)[0]


def batch_norm_backward(dy, x, weight, mean=None, rstd=None, *, running_mean=None, running_var=None,
                        training=True, bias=False, eps=1e-5, dx=True, dweight=True, dbias=True, device=None):
    """(dx, dweight, dbias) of ``batch_norm_forward``: in training from the forward's mean and rstd, in
    inference from the running statistics; each None where not asked or not applicable."""
    running = not training
    stream, kind, shape, plan = _batch_plan(_core.BatchNormBackwardPlan, x, eps, 0.1, training, running, weight,
                                            True if bias else None, device)
    c = shape[1]
    outs = [_arrays.empty(dy, shape, kind) if dx else None,
            _arrays.empty(dy, (c,), kind) if dweight and weight is not None else None,
            _arrays.empty(dy, (c,), kind) if dbias and bias else None]
    _arrays.run_plan(plan, stream, dy, dy=dy, x=x, weight=weight, mean=mean, rstd=rstd, running_mean=running_mean,
                     running_var=running_var, dx=outs[0], dweight=outs[1], dbias=outs[2])
    return tuple(None if o is None else _arrays.finish(dy, o) for o in outs)
