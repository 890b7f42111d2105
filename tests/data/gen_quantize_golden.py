#!/usr/bin/python3
"""Generates tests/data/quantize_golden.txt: golden values for baracuda's QuantizePlan (quantize, dequantize,
fake-quantize and its backward, the learnable fake-quantize and its backward), computed by PyTorch's CPU
kernels, independent of baracuda's C++.

    /usr/bin/python3 tests/data/gen_quantize_golden.py     # Debian's python3-torch (1.13); rewrites the file

The script is deterministic (seeded); running it again rewrites the file byte for byte.

What each case runs in PyTorch (all float32; scales are float32 values):
  quantize     torch.quantize_per_tensor / torch.quantize_per_channel(x, s, zp, axis, dtype) -> .int_repr(),
               and .dequantize() of that tensor. Dtypes qint8, quint8 and (per tensor only, PyTorch 1.13 has no
               per-channel kernel for it) quint4x2.
  fake         torch.fake_quantize_per_tensor_affine / torch.fake_quantize_per_channel_affine(x, s, zp(int32),
               [axis,] qmin, qmax) forward, and dx = autograd of y.backward(dy).
  learnable    torch._fake_quantize_learnable_per_tensor_affine / _per_channel_affine(x, s, zp(float32),
               [axis,] qmin, qmax, grad_factor) forward, and autograd's (dx, dscale, dzero_point) for dy.

Facts this data rests on (checked by check_conventions() below, and against the torch source,
aten/src/ATen/native/quantized/{FakeQuantPerTensorAffine,FakeQuantPerChannelAffine}.cpp and
cpu/kernels/QuantizedOpKernels.cpp):
  * PyTorch's CPU kernels multiply by a float32 reciprocal: q = clamp(zp + nearbyint(x * (1.0f / s)), qmin, qmax)
    (nearbyint: half to even). baracuda divides: nearbyint(x / s). Both are computed here in numpy float32; with
    a power-of-two scale they agree exactly; where they do not (non-power-of-two scales, near ties), the element
    is listed on the case's `skip` line and the test skips (and counts) it. No other element is skipped.
  * |x / s| >= 2^63 quantizes to qmin in PyTorch (the float -> int64 conversion overflows), whatever the sign;
    the "far outside" values here stay below 1e7 * s.
  * quint4x2 (torch.quantize_per_tensor only): .int_repr() is the packed bytes, two values per byte, the EVEN
    element in the LOW nibble, the odd one in the high nibble (an odd element count leaves the last high nibble 0).
    This is baracuda's packed u4 layout; the `packed` line holds those bytes.
  * dequantize: y = (q - zp) * s. baracuda documents one rounding; PyTorch's vectorized CPU paths may evaluate it
    as fma(q, s, -zp * s), so every element where PyTorch's result differs from the correctly rounded (q - zp) * s
    would be listed on the `skip_y` line. With this data there are none (the header line counts them).
  * fake-quantize: y = (clamp(qv, qmin, qmax) - zp) * s, qv = zp + nearbyint(x * (1.0f / s)); dx = dy * mask,
    mask = qmin <= qv <= qmax on the UNCLAMPED qv (inclusive).
  * learnable, zero-point rounding, which differs between the variants and between forward and backward:
      per tensor, forward:   zp_int = clamp(nearbyint(zp), qmin, qmax)            (half to even)
      per tensor, backward:  zp_int = (int64) clamp(zp + 0.5f, qmin, qmax)         (trunc(zp + 0.5): half up for
                             zp >= -0.5, but one too high for every negative zp below -0.5, e.g. -2.0 -> -1,
                             -1.2 -> 0; and 2.5 -> 3 where the forward gives 2)
      per channel, both:     zp_int = clamp(torch.round(zp), qmin, qmax)           (half to even)
    and both backward kernels round with the zero point added first: xq = nearbyint(zp_int + x * (1.0f / s))
    (the forward adds it after rounding), which differs from the forward at exact ties when zp_int is odd.
    Per element (before grad_factor, then summed over each parameter's elements):
      inside [qmin, qmax]: dx = dy, ds = dy * (xfq - x) * (1.0f / s), dzp = 0   (xfq = (xq - zp_int) * s)
      xq < qmin:           dx = 0,  ds = dy * (qmin - zp_int),        dzp = -dy * s
      xq > qmax:           dx = 0,  ds = dy * (qmax - zp_int),        dzp = -dy * s
    baracuda's convention (include/baracuda/ops/quantize.hpp) uses the forward's rounding of zp and of x / s in
    the backward too. The learnable inputs here contain no exact ties, so the tie difference does not arise
    (the script asserts it). For a per-tensor case whose backward zero point differs from the forward's (a
    negative or x.5 zp), the case also holds `dx_fwdzp`, `ds_fwdzp`, `dzp_fwdzp`: PyTorch's per-channel
    learnable backward on x viewed as [1, n] with axis 0 (one channel), whose zero point rounds like the
    forward's; the script checks that the two differ only by that zero point.

Inputs: x = s * N(0, 1) * m with m drawn per element from {0.4, 3, 40, 700} (a quarter of the elements far outside
the range), plus exact ties x = (k + 0.5) * s at random k in and around the range, some at the clamp bounds, and some of
them moved to a float32 neighbour of the tie (not for the learnable cases), ±0 and values at ±1e6 * s;
dy = N(0, 1) * m' with m' from {0.1, 1, 10}. With a non-power-of-two scale, (k + 0.5) * s rounded to float32 is
a near tie: those are the elements where the reciprocal and the division can disagree.

Format (float32 values as 8-digit hex bit patterns; integers in decimal):
  case <kind> <qdtype> <granularity> <axis> <qmin> <qmax> <grad_factor> <rank> <dims...>
      kind: quantize | fake | learnable; qdtype: s8 | u8 | u4 | - (fake/learnable); granularity: per_tensor |
      per_channel; axis: the per-channel axis (0 for per_tensor); grad_factor: repr() of the float (learnable)
  scale <f32...>        one per channel (per tensor: one)
  zp <int...>           quantize / fake: int32 zero points; learnable: `zp` holds f32 bit patterns
  x <f32...>            the input, row-major
  q <int...>            quantize: PyTorch's int_repr, one integer per element (u4: the unpacked values)
  packed <hex bytes>    quantize u4: PyTorch's packed bytes, two hex digits each
  y <f32...>            quantize: .dequantize() of q; fake / learnable: the forward output
  dy <f32...>           fake / learnable: the output gradient
  dx <f32...>           fake / learnable: the input gradient
  ds <f32...>           learnable: dscale, one per parameter
  dzp <f32...>          learnable: dzero_point, one per parameter
  ds_abs <f32...>       learnable: sum over each parameter's elements of |per-element ds term| (float64 rounded up
                        to f32), the scale of the summation error, for the test's tolerance
  dzp_abs <f32...>      likewise for dzp
  zp_fwd <int...>       learnable: the integer zero points PyTorch's forward used
  zp_bwd <int...>       learnable: the integer zero points PyTorch's backward used
  dx_fwdzp, ds_fwdzp, dzp_fwdzp   learnable per tensor where zp_bwd != zp_fwd (see above)
  ds_abs_fwdzp, dzp_abs_fwdzp     their sums of |per-element term|, as ds_abs / dzp_abs
  skip <idx...>         element indices where nearbyint(x * (1/s)) and nearbyint(x / s) give different results
                        (quantize: different q; fake: different y or mask); may be empty
  skip_y <idx...>       quantize: element indices where PyTorch's dequantize differs from one rounding
"""

import os
import struct
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "quantize_golden.txt")
SEED = 20260601

F32 = np.float32
RANGES = {"s8": (-128, 127), "u8": (0, 255), "u4": (0, 15)}
TORCH_Q = {"s8": torch.qint8, "u8": torch.quint8, "u4": torch.quint4x2}


def f32(v):
    return float(np.float32(v))


def hexf(a):
    a = np.ascontiguousarray(np.asarray(a, dtype=np.float32)).reshape(-1)
    return ["%08x" % int(b) for b in a.view(np.uint32)]


def ints(a):
    return [str(int(v)) for v in np.asarray(a).reshape(-1)]


def rint(a):
    return np.rint(a)  # half to even, as nearbyint in the default rounding mode


def param_view(p, shape, axis, per_channel):
    """p (one per channel) broadcast against a tensor of `shape`."""
    p = np.asarray(p)
    if not per_channel:
        return p.reshape([1] * len(shape))
    v = [1] * len(shape)
    v[axis] = shape[axis]
    return p.reshape(v)


# ------------------------------------------------------------------------------------------------------
# Inputs
# ------------------------------------------------------------------------------------------------------


class Inputs:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def x(self, shape, s_b, qmin, qmax, zp_b, ties=True):
        """x for scales/zero points broadcast as s_b/zp_b (float32)."""
        n = int(np.prod(shape))
        m = self.rng.choice([0.4, 3.0, 40.0, 700.0], size=n).reshape(shape)
        t = self.rng.standard_normal(shape) * m
        s = np.broadcast_to(s_b, shape).astype(np.float64)
        x = (t * s).astype(np.float32)
        flat = x.reshape(-1)
        sf = s.reshape(-1)
        zf = np.broadcast_to(zp_b, shape).astype(np.float64).reshape(-1)
        idx = self.rng.permutation(n)
        at = 0
        if ties:
            # exact ties (k + 0.5) * s, k in and just around the representable range, incl. the clamp bounds
            for i in idx[: max(2, n // 6)]:
                lo, hi = qmin - zf[i] - 2, qmax - zf[i] + 2
                k = int(self.rng.integers(int(lo), int(hi) + 1))
                if self.rng.random() < 0.3:
                    k = int(self.rng.choice([qmin - zf[i] - 1, qmin - zf[i], qmax - zf[i] - 1, qmax - zf[i]]))
                v = np.float32((k + 0.5) * sf[i])
                r = self.rng.random()
                if r < 0.15:  # the float32 neighbours of the tie
                    v = np.nextafter(v, np.float32(np.inf))
                elif r < 0.3:
                    v = np.nextafter(v, np.float32(-np.inf))
                flat[i] = v
            at = max(2, n // 6)
        special = [0.0, -0.0, 1e6, -1e6]
        for j, i in enumerate(idx[at : at + min(4, n - at)]):
            flat[i] = np.float32(special[j] * (sf[i] if abs(special[j]) > 1 else 1.0))
        return x

    def dy(self, shape):
        m = self.rng.choice([0.1, 1.0, 10.0], size=int(np.prod(shape))).reshape(shape)
        return (self.rng.standard_normal(shape) * m).astype(np.float32)


# ------------------------------------------------------------------------------------------------------
# The numpy float32 evaluations (reciprocal as PyTorch, division as baracuda)
# ------------------------------------------------------------------------------------------------------


def q_both(x, s_b, zp_b, qmin, qmax):
    """(unclamped q with the reciprocal, with the division) in float64 integers."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        inv = (F32(1) / s_b.astype(np.float32)).astype(np.float32)
        r_rec = rint((x * inv).astype(np.float32)).astype(np.float64)
        r_div = rint((x / s_b.astype(np.float32)).astype(np.float32)).astype(np.float64)
    return r_rec + zp_b, r_div + zp_b


def fq_value(qv, zp_b, s_b, qmin, qmax):
    """(clamp(qv) - zp) * s in float32 (one rounding)."""
    c = np.clip(qv, qmin, qmax) - zp_b
    return (c.astype(np.float32) * s_b.astype(np.float32)).astype(np.float32)


STATS = {"skip": 0, "skip_y": 0, "elements": 0, "cases": 0}


# ------------------------------------------------------------------------------------------------------
# Cases
# ------------------------------------------------------------------------------------------------------


def header_line(kind, qd, per_channel, axis, qmin, qmax, gf, shape):
    return "case %s %s %s %d %d %d %r %d %s" % (kind, qd, "per_channel" if per_channel else "per_tensor",
                                                axis if per_channel else 0, qmin, qmax, gf, len(shape),
                                                " ".join(str(d) for d in shape))


def quantize_case(lines, inp, qd, shape, scales, zps, axis=None):
    per_channel = axis is not None
    qmin, qmax = RANGES[qd]
    scales = np.asarray(scales, dtype=np.float32)
    zps = np.asarray(zps, dtype=np.int64)
    s_b = param_view(scales, shape, axis, per_channel)
    z_b = param_view(zps, shape, axis, per_channel)
    x = inp.x(shape, s_b, qmin, qmax, z_b)
    xt = torch.from_numpy(x.copy())
    if per_channel:
        qt = torch.quantize_per_channel(xt, torch.from_numpy(scales.astype(np.float64)), torch.from_numpy(zps),
                                        axis, TORCH_Q[qd])
    else:
        qt = torch.quantize_per_tensor(xt, float(scales[0]), int(zps[0]), TORCH_Q[qd])
    rep = qt.int_repr().numpy()
    yt = qt.dequantize().numpy().astype(np.float32)
    rec, div = q_both(x, s_b, z_b, qmin, qmax)
    q_rec, q_div = np.clip(rec, qmin, qmax), np.clip(div, qmin, qmax)
    if qd == "u4":
        flat = q_rec.reshape(-1).astype(np.int64)
        lo, hi = flat[0::2], np.append(flat[1::2], np.zeros(len(flat) % 2, dtype=np.int64))
        packed = (lo | (hi << 4)).astype(np.uint8)
        assert np.array_equal(rep.reshape(-1), packed), "quint4x2: even element in the low nibble"
        q = q_rec.astype(np.int64)
    else:
        q = rep.astype(np.int64)
        assert np.array_equal(q, q_rec), "PyTorch's quantize is clamp(zp + nearbyint(x * (1/s)))"
    skip = np.flatnonzero((q_rec != q_div).reshape(-1))
    y_one = ((q.astype(np.float64) - z_b) * s_b.astype(np.float64)).astype(np.float32)
    skip_y = np.flatnonzero((y_one.view(np.uint32) != yt.view(np.uint32)).reshape(-1))
    assert np.all(np.abs(y_one.astype(np.float64) - yt) <= np.abs(y_one.astype(np.float64)) * 2.0 ** -22), \
        "dequantize within an ulp of one rounding"
    STATS["skip"] += len(skip)
    STATS["skip_y"] += len(skip_y)
    STATS["elements"] += x.size
    lines.append(header_line("quantize", qd, per_channel, axis or 0, qmin, qmax, 1.0, shape))
    lines.append("scale " + " ".join(hexf(scales)))
    lines.append("zp " + " ".join(ints(zps)))
    lines.append("x " + " ".join(hexf(x)))
    lines.append("q " + " ".join(ints(q)))
    if qd == "u4":
        lines.append("packed " + " ".join("%02x" % int(b) for b in rep.reshape(-1)))
    lines.append("y " + " ".join(hexf(yt)))
    lines.append("skip " + " ".join(ints(skip)))
    lines.append("skip_y " + " ".join(ints(skip_y)))


def fake_case(lines, inp, shape, scales, zps, qmin, qmax, axis=None):
    per_channel = axis is not None
    scales = np.asarray(scales, dtype=np.float32)
    zps = np.asarray(zps, dtype=np.int64)
    s_b = param_view(scales, shape, axis, per_channel)
    z_b = param_view(zps, shape, axis, per_channel)
    x = inp.x(shape, s_b, qmin, qmax, z_b)
    dy = inp.dy(shape)
    xt = torch.from_numpy(x.copy()).requires_grad_(True)
    if per_channel:
        yt = torch.fake_quantize_per_channel_affine(xt, torch.from_numpy(scales),
                                                    torch.from_numpy(zps.astype(np.int32)), axis, qmin, qmax)
    else:
        yt = torch.fake_quantize_per_tensor_affine(xt, float(scales[0]), int(zps[0]), qmin, qmax)
    yt.backward(torch.from_numpy(dy.copy()))
    y = yt.detach().numpy()
    dx = xt.grad.numpy()
    rec, div = q_both(x, s_b, z_b, qmin, qmax)
    y_rec, y_div = fq_value(rec, z_b, s_b, qmin, qmax), fq_value(div, z_b, s_b, qmin, qmax)
    m_rec, m_div = (rec >= qmin) & (rec <= qmax), (div >= qmin) & (div <= qmax)
    assert np.array_equal(y.view(np.uint32), y_rec.view(np.uint32)), "fake-quantize forward"
    assert np.array_equal(dx, np.where(m_rec, dy, F32(0)).astype(np.float32)), "fake-quantize backward"
    skip = np.flatnonzero(((y_rec.view(np.uint32) != y_div.view(np.uint32)) | (m_rec != m_div)).reshape(-1))
    STATS["skip"] += len(skip)
    STATS["elements"] += x.size
    lines.append(header_line("fake", "-", per_channel, axis or 0, qmin, qmax, 1.0, shape))
    lines.append("scale " + " ".join(hexf(scales)))
    lines.append("zp " + " ".join(ints(zps)))
    lines.append("x " + " ".join(hexf(x)))
    lines.append("y " + " ".join(hexf(y)))
    lines.append("dy " + " ".join(hexf(dy)))
    lines.append("dx " + " ".join(hexf(dx)))
    lines.append("skip " + " ".join(ints(skip)))


def learnable_torch(x, dy, scales, zps, qmin, qmax, gf, axis):
    xt = torch.from_numpy(x.copy()).requires_grad_(True)
    st = torch.from_numpy(scales.copy()).requires_grad_(True)
    zt = torch.from_numpy(zps.copy()).requires_grad_(True)
    if axis is None:
        yt = torch._fake_quantize_learnable_per_tensor_affine(xt, st, zt, qmin, qmax, gf)
    else:
        yt = torch._fake_quantize_learnable_per_channel_affine(xt, st, zt, axis, qmin, qmax, gf)
    yt.backward(torch.from_numpy(dy.copy()))
    return yt.detach().numpy(), xt.grad.numpy(), st.grad.numpy(), zt.grad.numpy()


def learnable_terms(x, dy, s_b, zpi_b, qmin, qmax, zp_first):
    """PyTorch's backward per element, in float32: (dx, ds term, dzp term) before grad_factor."""
    inv = (F32(1) / s_b).astype(np.float32)
    t = (x * inv).astype(np.float32)
    if zp_first:
        xq = rint((zpi_b.astype(np.float32) + t).astype(np.float32))
    else:
        xq = rint(t) + zpi_b
    inside = (xq >= qmin) & (xq <= qmax)
    xfq = ((np.clip(xq, qmin, qmax) - zpi_b).astype(np.float32) * s_b).astype(np.float32)
    ds_in = ((dy * (xfq - x).astype(np.float32)).astype(np.float32) * inv).astype(np.float32)
    ds_out = np.where(xq < qmin, dy * (qmin - zpi_b).astype(np.float32), dy * (qmax - zpi_b).astype(np.float32))
    ds = np.where(inside, ds_in, ds_out.astype(np.float32))
    dzp = np.where(inside, F32(0), (-dy * s_b).astype(np.float32))
    dx = np.where(inside, dy, F32(0)).astype(np.float32)
    return xq, dx, ds, dzp


def reduce_params(a, shape, axis):
    if axis is None:
        return np.array([np.sum(a, dtype=np.float64)])
    other = tuple(i for i in range(len(shape)) if i != axis)
    return np.sum(a.astype(np.float64), axis=other)


def round_up_f32(v):
    """float64 values rounded up to float32 (a bound stays a bound)."""
    r = np.asarray(v, dtype=np.float32)
    return np.where(r.astype(np.float64) < v, np.nextafter(r, np.float32(np.inf)), r).astype(np.float32)


def learnable_case(lines, inp, shape, scales, zps, qmin, qmax, gf, axis=None):
    per_channel = axis is not None
    scales = np.asarray(scales, dtype=np.float32)
    zps = np.asarray(zps, dtype=np.float32)
    s_b = param_view(scales, shape, axis, per_channel)
    zp_fwd = np.clip(rint(zps), qmin, qmax).astype(np.int64)
    if per_channel:
        zp_bwd = zp_fwd
    else:  # (int64) clamp(zp + 0.5f, qmin, qmax): truncation toward zero
        zp_bwd = np.trunc(np.clip((zps + F32(0.5)).astype(np.float32), qmin, qmax)).astype(np.int64)
    zf_b = param_view(zp_fwd, shape, axis, per_channel)
    zb_b = param_view(zp_bwd, shape, axis, per_channel)
    x = inp.x(shape, s_b, qmin, qmax, zf_b, ties=False)
    dy = inp.dy(shape)
    y, dx, ds, dzp = learnable_torch(x, dy, scales, zps, qmin, qmax, gf, axis)
    # The forward: fake-quantize with zp_fwd (reciprocal); the backward: the terms above, with zp_bwd.
    rec, div = q_both(x, s_b, zf_b, qmin, qmax)
    assert np.array_equal(y.view(np.uint32), fq_value(rec, zf_b, s_b, qmin, qmax).view(np.uint32)), "learnable fwd"
    xq, dx_e, ds_t, dzp_t = learnable_terms(x, dy, s_b, zb_b, qmin, qmax, zp_first=True)
    assert np.array_equal(dx, dx_e), "learnable backward dx: zero point %s" % zp_bwd
    gf32 = F32(gf)
    ds_e = reduce_params((ds_t * gf32).astype(np.float32), shape, axis)
    dzp_e = reduce_params((dzp_t * gf32).astype(np.float32), shape, axis)
    ds_abs = reduce_params(np.abs((ds_t * gf32).astype(np.float32)), shape, axis)
    dzp_abs = reduce_params(np.abs((dzp_t * gf32).astype(np.float32)), shape, axis)
    n = x.size // len(ds_e)
    bound = lambda a: (n + 8) * 2.0 ** -23 * a + 1e-30
    assert np.all(np.abs(ds_e - ds) <= bound(ds_abs)), (ds_e, ds)
    assert np.all(np.abs(dzp_e - dzp) <= bound(dzp_abs)), (dzp_e, dzp)
    # No element where the backward's rounding (zp first, reciprocal) differs from the forward's convention
    # with the same integer zero point (i.e. no exact ties; no reciprocal/division disagreement).
    _, div_b = q_both(x, s_b, zb_b, qmin, qmax)
    assert np.array_equal(xq, div_b), "learnable inputs must avoid ties"
    _, div_f = q_both(x, s_b, zf_b, qmin, qmax)
    assert np.array_equal(fq_value(div_f, zf_b, s_b, qmin, qmax).view(np.uint32), y.view(np.uint32))
    STATS["elements"] += x.size
    lines.append(header_line("learnable", "-", per_channel, axis or 0, qmin, qmax, gf, shape))
    lines.append("scale " + " ".join(hexf(scales)))
    lines.append("zp " + " ".join(hexf(zps)))
    lines.append("zp_fwd " + " ".join(ints(zp_fwd)))
    lines.append("zp_bwd " + " ".join(ints(zp_bwd)))
    lines.append("x " + " ".join(hexf(x)))
    lines.append("y " + " ".join(hexf(y)))
    lines.append("dy " + " ".join(hexf(dy)))
    lines.append("dx " + " ".join(hexf(dx)))
    lines.append("ds " + " ".join(hexf(ds)))
    lines.append("dzp " + " ".join(hexf(dzp)))
    lines.append("ds_abs " + " ".join(hexf(round_up_f32(ds_abs))))
    lines.append("dzp_abs " + " ".join(hexf(round_up_f32(dzp_abs))))
    if not per_channel and zp_bwd[0] != zp_fwd[0]:
        # The same backward with the forward's zero point: PyTorch's per-channel op on one channel.
        x1, dy1 = x.reshape(1, -1), dy.reshape(1, -1)
        _, dx_c, ds_c, dzp_c = learnable_torch(x1, dy1, scales, zps, qmin, qmax, gf, 0)
        dx_c = dx_c.reshape(shape)
        xq_c, dx_ce, ds_tc, dzp_tc = learnable_terms(x, dy, s_b, zf_b, qmin, qmax, zp_first=True)
        assert np.array_equal(dx_c, dx_ce)
        n_all = x.size + 8
        assert abs(np.sum(ds_tc * gf32, dtype=np.float64) - ds_c[0]) <= n_all * 2.0 ** -23 * np.sum(
            np.abs(ds_tc * gf32), dtype=np.float64) + 1e-30
        assert not (np.array_equal(dx_c, dx) and np.allclose(ds_c, ds) and np.allclose(dzp_c, dzp)), \
            "a per-tensor case with zp_bwd != zp_fwd should show the difference"
        lines.append("dx_fwdzp " + " ".join(hexf(dx_c)))
        lines.append("ds_fwdzp " + " ".join(hexf(ds_c)))
        lines.append("dzp_fwdzp " + " ".join(hexf(dzp_c)))
        lines.append("ds_abs_fwdzp " + " ".join(hexf(round_up_f32(reduce_params(
            np.abs((ds_tc * gf32).astype(np.float32)), shape, None)))))
        lines.append("dzp_abs_fwdzp " + " ".join(hexf(round_up_f32(reduce_params(
            np.abs((dzp_tc * gf32).astype(np.float32)), shape, None)))))
        STATS["zp_quirk"] = STATS.get("zp_quirk", 0) + 1


# ------------------------------------------------------------------------------------------------------
# Conventions checked before writing anything
# ------------------------------------------------------------------------------------------------------


def check_conventions():
    # quint4x2: even element in the low nibble.
    q = torch.quantize_per_tensor(torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0]), 1.0, 0, torch.quint4x2)
    assert q.int_repr().tolist() == [0x21, 0x43, 0x05], q.int_repr()
    # Half to even, zp added after rounding (zp odd).
    t = torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5])
    assert torch.quantize_per_tensor(t, 1.0, 1, torch.qint8).int_repr().tolist() == [1, 3, 3, 1, -1]
    assert torch.fake_quantize_per_tensor_affine(t, 1.0, 1, -128, 127).tolist() == [0.0, 2.0, 2.0, 0.0, -2.0]
    # |x / s| >= 2^63 quantizes to qmin (documented above; such inputs are not used).
    assert torch.quantize_per_tensor(torch.tensor([1e30]), 1.0, 0, torch.qint8).int_repr().tolist() == [-128]
    # The reciprocal: where x * (1/s) and x / s round differently (near ties, s = 0.1f), PyTorch follows the
    # reciprocal.
    s = np.float32(0.1)
    inv = F32(1) / s
    found = 0
    for k in range(-120, 120):
        t = np.float32((k + 0.5) * float(s))
        for x in (t, np.nextafter(t, F32(np.inf)), np.nextafter(t, F32(-np.inf))):
            a, b = rint(np.float32(x * inv)), rint(np.float32(x / s))
            if a != b:
                got = torch.quantize_per_tensor(torch.tensor([float(x)]), float(s), 0, torch.qint8).int_repr().item()
                assert got == int(a), (x, a, b, got)
                found += 1
    if not found:
        raise AssertionError("no reciprocal/division disagreement found")
    # Learnable backward, per tensor: zp = -2.0 is used as -1 (trunc(zp + 0.5)); the forward uses -2.
    x = torch.tensor([-0.75 + 0.0], requires_grad=True)
    sc = torch.tensor([1.0], requires_grad=True)
    zp = torch.tensor([-2.0], requires_grad=True)
    y = torch._fake_quantize_learnable_per_tensor_affine(x, sc, zp, -2, 5, 1.0)
    y.backward(torch.ones(1))
    # forward: nearbyint(-0.75) + -2 = -3 < qmin -> y = (qmin - zp) * s = 0
    assert y.tolist() == [0.0], y
    # backward with zp -1: xq = nearbyint(-1 - 0.75) = -2 = qmin: inside, dx = 1, ds = (xfq - x)/s = -1 + 0.75
    assert x.grad.tolist() == [1.0] and sc.grad.tolist() == [-0.25] and zp.grad.tolist() == [0.0], \
        (x.grad, sc.grad, zp.grad)
    # Learnable backward rounds with zp added first: x = 0.5, zp = 1 -> nearbyint(1.5) = 2 (forward: 0 + 1 = 1).
    for per_channel in (False, True):
        x = torch.tensor([0.5, 2.5], requires_grad=True)
        sc = torch.tensor([1.0], requires_grad=True)
        zp = torch.tensor([1.0], requires_grad=True)
        if per_channel:
            y = torch._fake_quantize_learnable_per_channel_affine(x.view(1, 2), sc, zp, 0, -128, 127, 1.0)
        else:
            y = torch._fake_quantize_learnable_per_tensor_affine(x, sc, zp, -128, 127, 1.0)
        y.backward(torch.tensor([1.0, 0.0]).view(y.shape))
        assert y.reshape(-1).tolist() == [0.0, 2.0], y
        # ds = (xfq - x) / s with xfq = (2 - 1) * 1 = 1 (backward) -> 0.5; the forward's y = 0 would give -0.5
        assert sc.grad.tolist() == [0.5], (per_channel, sc.grad)
    # Per-channel learnable: torch.round (half to even) both ways: 2.5 -> 2 in the backward as well.
    x = torch.tensor([[-0.75]], requires_grad=True)
    sc = torch.tensor([1.0], requires_grad=True)
    zp = torch.tensor([2.5], requires_grad=True)
    y = torch._fake_quantize_learnable_per_channel_affine(x, sc, zp, 0, 0, 5, 1.0)
    y.backward(torch.ones(1, 1))
    # zp 2: nearbyint(2 - 0.75) = 1, inside: xfq = -1, ds = -0.25 (zp 3 would give xfq = -1 as well: use dzp/ds)
    assert y.tolist() == [[-1.0]] and sc.grad.tolist() == [-0.25], (y, sc.grad)


# ------------------------------------------------------------------------------------------------------


def main():
    check_conventions()
    torch.manual_seed(0)
    inp = Inputs(SEED)
    lines = []
    p2 = [2.0 ** -4, 2.0 ** -7, 0.5, 4.0, 2.0 ** -10]
    npow = [f32(0.1), f32(0.0371), f32(3.3), f32(0.7), f32(0.013)]

    # quantize / dequantize, per tensor
    for qd, zps in (("s8", [0, -3, 17]), ("u8", [128, 0, 97])):
        for s, zp in zip(p2[:3], zps):
            quantize_case(lines, inp, qd, [7, 9], [s], [zp])
        quantize_case(lines, inp, qd, [3, 4, 5], [p2[3]], [zps[2]])
        for s, zp in zip(npow[:2], zps[:2]):
            quantize_case(lines, inp, qd, [6, 10], [s], [zp])
    for s, zp, shape in ((p2[0], 0, [6, 8]), (p2[2], 7, [4, 6]), (p2[4], 3, [3, 2, 10]), (npow[2], 8, [5, 6])):
        quantize_case(lines, inp, "u4", shape, [s], [zp])

    # quantize / dequantize, per channel: axis 0 and 1 of a 2-D and a 3-D tensor
    def pc_params(c, qd, pow2=True):
        if pow2:
            sc = [2.0 ** -int(e) for e in inp.rng.integers(-2, 9, size=c)]
        else:
            sc = [f32(v) for v in inp.rng.uniform(0.005, 2.0, size=c)]
        lo, hi = (-20, 21) if qd == "s8" else (90, 160)
        zp = [int(v) for v in inp.rng.integers(lo, hi, size=c)]
        return sc, zp

    for qd in ("s8", "u8"):
        for shape, axis in (([6, 11], 0), ([6, 11], 1), ([4, 5, 6], 0), ([4, 5, 6], 1), ([3, 4, 7], 2)):
            sc, zp = pc_params(shape[axis], qd)
            quantize_case(lines, inp, qd, shape, sc, zp, axis)
        for shape, axis in (([8, 12], 1), ([5, 3, 8], 0)):
            sc, zp = pc_params(shape[axis], qd, pow2=False)
            quantize_case(lines, inp, qd, shape, sc, zp, axis)

    # fake-quantize forward and backward
    for s, zp, qmin, qmax, shape in ((p2[0], 0, -128, 127, [7, 9]), (p2[1], 5, -128, 127, [4, 5, 6]),
                                     (p2[2], 130, 0, 255, [6, 10]), (p2[3], -3, -8, 7, [5, 7]),
                                     (p2[0], 3, 0, 15, [6, 6]), (p2[1], 0, -127, 127, [8, 8]),
                                     (npow[0], 1, -128, 127, [8, 9]), (npow[3], 40, 0, 100, [6, 9])):
        fake_case(lines, inp, shape, [s], [zp], qmin, qmax)
    for shape, axis, qmin, qmax, pow2 in (([6, 11], 0, -128, 127, True), ([6, 11], 1, 0, 255, True),
                                          ([4, 5, 6], 0, -8, 7, True), ([4, 5, 6], 1, -128, 127, True),
                                          ([3, 4, 7], 2, 0, 15, True), ([8, 12], 1, -128, 127, False)):
        c = shape[axis]
        sc, _ = pc_params(c, "s8", pow2)
        zp = [int(v) for v in inp.rng.integers(qmin, qmax + 1, size=c)]
        fake_case(lines, inp, shape, sc, zp, qmin, qmax, axis)

    # learnable fake-quantize (float zero points, grad_factor != 1)
    for s, zp, qmin, qmax, gf, shape in (
            (p2[0], 3.3, -128, 127, 0.5, [7, 9]),
            (p2[1], 0.0, -128, 127, 1.0, [6, 8]),
            (p2[2], 100.49, 0, 255, 0.25, [5, 6, 4]),
            (p2[3], 7.5, 0, 15, 1.5, [6, 6]),        # .5 with an odd floor: 8 both ways
            (npow[0], 5.7, -128, 127, 0.125, [8, 9]),
            (p2[0], 2.5, -8, 7, 0.5, [6, 7]),        # forward 2, PyTorch's per-tensor backward 3
            (p2[1], -3.4, -128, 127, 1.0, [7, 8]),   # forward -3, backward -2
            (p2[2], -5.0, -8, 7, 0.75, [5, 9])):     # an integer zp: forward -5, backward -4
        learnable_case(lines, inp, shape, [f32(s)], [f32(zp)], qmin, qmax, gf)
    for shape, axis, qmin, qmax, gf, zps in (
            ([6, 5], 0, -128, 127, 0.5, [-2.5, 1.5, 0.3, 3.7, -1.2, 126.6]),
            ([6, 5], 1, 0, 255, 0.25, [0.0, 127.5, 128.5, 254.7, 12.49]),
            ([4, 5, 6], 0, -8, 7, 1.0, [-0.5, 2.5, 6.9, -7.6]),
            ([4, 5, 6], 2, -128, 127, 0.5, [-10.5, 3.5, 0.7, -0.7, 20.2, 9.5]),
            ([3, 4, 7], 1, 0, 15, 2.0, [7.5, 0.49, 14.5, 3.2])):
        sc, _ = pc_params(shape[axis], "s8")
        learnable_case(lines, inp, shape, sc, [f32(z) for z in zps], qmin, qmax, gf, axis)

    header = [
        "# Golden values for QuantizePlan, made by tests/data/gen_quantize_golden.py with PyTorch %s (CPU)"
        % torch.__version__,
        "# (quantize_per_tensor/per_channel + int_repr + dequantize, fake_quantize_per_tensor/per_channel_affine,",
        "# _fake_quantize_learnable_per_tensor/per_channel_affine, autograd gradients). See the script.",
        "# %d elements; %d skipped where x*(1/s) and x/s round differently; %d dequantized elements not one rounding"
        % (STATS["elements"], STATS["skip"], STATS["skip_y"]),
    ]
    text = "\n".join(header + lines) + "\n"
    with open(OUT, "w") as f:
        f.write(text)
    print("wrote %s: %d cases, %d bytes; %s; %d per-tensor learnable cases with PyTorch's backward zero point"
          " differing from the forward's" % (OUT, sum(1 for l in lines if l.startswith("case ")), len(text),
                                             header[-1][2:], STATS.get("zp_quirk", 0)))


if __name__ == "__main__":
    sys.exit(main())
