"""The dense linear layer's functions, part of :mod:`baracuda.ops`: ``linear(x, w, b)`` (``F.linear``) and
``linear_backward(dy, x, w)`` (dx, dW, db), through LinearPlan and LinearBackwardPlan
(include/baracuda/ops/linear.hpp: nn.Linear composed from GemmPlans)."""

from . import _arrays, _cache, _core


def _strides(a):
    a = _arrays.unwrap(a)
    if _arrays.framework(a) == "torch":
        return tuple(int(v) for v in a.stride())
    return tuple(int(v) // a.itemsize for v in a.strides)


def _rows(shape, strides, what):
    """(rows, layout, ld) of a [..., F] view: its leading dims flattened into rows (without a copy), then
    row-major (unit stride along the features) or column-major (unit stride along the rows)."""
    if len(shape) < 1:
        raise _core.InvalidProblem(f"linear: {what} needs at least one dimension")
    rows, f = 1, shape[-1]
    for d in shape[:-1]:
        rows *= d
    row, following = None, None
    for d, s in reversed(list(zip(shape[:-1], strides[:-1]))):
        if d == 1:
            continue
        if row is None:
            row = s
        elif s != following:
            raise _core.InvalidProblem(f"linear: {what}'s leading dims do not flatten into rows (strides "
                                       f"{strides}); make it contiguous")
        following = s * d
    col = strides[-1]
    if (col == 1 or f == 1) and (rows <= 1 or row >= max(1, f)):
        return rows, "row_major", (row if rows > 1 else max(1, f))
    if (rows <= 1 or row == 1) and (f == 1 or col >= max(1, rows)):
        return rows, "col_major", (col if f > 1 else max(1, rows))
    raise _core.InvalidProblem(f"linear: {what} needs a unit stride along its rows or its features (strides "
                               f"{strides}); make it contiguous")


def _row_major(a, what):
    rows, layout, ld = _rows(_arrays.shape_of(a), _strides(a), what)
    if layout != "row_major" and _arrays.shape_of(a)[-1] > 1:
        raise _core.InvalidProblem(f"linear: {what} must be row-major (unit stride along its last dim)")
    return ld if layout == "row_major" else max(1, _arrays.shape_of(a)[-1])


def linear(x, w, b=None, *, activation="none", preactivation=False, output=None, out=None, device=None):
    """``F.linear(x, w, b)``: y = act(x·wᵀ + b) with x [..., K] (any leading dims, row- or column-major rows,
    e.g. a slice of wider rows or a transposed tensor), w [N, K], b [N]; y [..., N] of the output kind
    (``output``, default x's; f16 and bf16 may give "f32", b then of that kind too). ``activation`` one of
    ``baracuda.linear_activations()`` (fused into the GEMM); ``preactivation=True`` returns ``(y, z)`` with z
    the activation's argument, which ``linear_backward`` takes."""
    sx, sw = _arrays.shape_of(x), _arrays.shape_of(w)
    if len(sw) != 2:
        raise _core.InvalidProblem(f"linear: w must be 2-D [N, K], not {sw}")
    rows, lx, ldx = _rows(sx, _strides(x), "x")
    _, lw, ldw = _rows(sw, _strides(w), "w")
    kin = _arrays.kind_of(x)
    kout = output or kin
    yshape = tuple(sx[:-1]) + (sw[0],)
    y = _arrays.output(x, out, yshape, kout, "out")
    z = _arrays.empty(x, yshape, kout) if preactivation else None
    desc = dict(rows=rows, in_features=sx[-1], out_features=sw[0], input=kin, output=kout, layout_x=lx, ld_x=ldx,
                layout_w=lw, ld_w=ldw, has_bias=b is not None, ld_y=_row_major(y, "out"), activation=activation,
                has_preactivation=bool(preactivation))
    stream = _arrays.stream_for(x, device)
    plan = _cache.plan(_core.LinearPlan, tuple(sorted(desc.items())), stream, _core.LinearDescriptor(**desc))
    _arrays.run_plan(plan, stream, x, x=x, w=w, bias=b, y=y, preactivation=z)
    y = _arrays.finish(x, y) if out is None else out
    return (y, _arrays.finish(x, z)) if preactivation else y


def linear_backward(dy, x, w, *, dx=True, dw=True, db=False, activation="none", preactivation=None, output=None,
                    device=None):
    """The gradients of ``linear`` from dy [..., N] (of x's kind): ``(dx, dw, db)`` — dx = dz·w [..., K],
    dw = dzᵀ·x [N, K], db = Σ_rows dz [N] — each None unless asked for; of the output kind (``output``, default
    dy's). dz is dy without an activation, else dy·act'(z) from the forward's ``preactivation`` z (then input
    and output kinds are one). x is read only for dw, w only for dx (either may then be None)."""
    if not (dx or dw or db):
        return None, None, None
    sdy = _arrays.shape_of(dy)
    rows, ldy_layout, ldy = _rows(sdy, _strides(dy), "dy")
    n = sdy[-1]
    ref = w if w is not None else x
    k = _arrays.shape_of(ref)[-1]
    kin = _arrays.kind_of(dy)
    kout = output or kin
    desc = dict(rows=rows, in_features=k, out_features=n, input=kin, output=kout, layout_dy=ldy_layout, ld_dy=ldy,
                grad_input=bool(dx), grad_weight=bool(dw), grad_bias=bool(db), activation=activation)
    if activation != "none":
        if preactivation is None:
            raise _core.InvalidProblem(f"linear_backward: the activation {activation!r} needs the forward's "
                                       "preactivation")
        desc["ld_preactivation"] = _row_major(preactivation, "preactivation")
    if dw:
        _, lx, ldx = _rows(_arrays.shape_of(x), _strides(x), "x")
        desc.update(layout_x=lx, ld_x=ldx)
    if dx:
        _, lw, ldw = _rows(_arrays.shape_of(w), _strides(w), "w")
        desc.update(layout_w=lw, ld_w=ldw)
    gx = _arrays.empty(dy, tuple(sdy[:-1]) + (k,), kout) if dx else None
    gw = _arrays.empty(dy, (n, k), kout) if dw else None
    gb = _arrays.empty(dy, (n,), kout) if db else None
    stream = _arrays.stream_for(dy, device)
    plan = _cache.plan(_core.LinearBackwardPlan, tuple(sorted(desc.items())), stream, _core.LinearDescriptor(**desc))
    _arrays.run_plan(plan, stream, dy, dy=dy, x=x if dw else None, w=w if dx else None,
                     preactivation=preactivation if activation != "none" else None, dx=gx, dw=gw, db=gb)
    return tuple(None if g is None else _arrays.finish(dy, g) for g in (gx, gw, gb))
