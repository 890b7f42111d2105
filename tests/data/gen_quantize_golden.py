#!/usr/bin/python3
"""Generates tests/data/quantize_golden.json: golden values for baracuda's QuantizePlan (quantize, dequantize,
fake-quantize and its backward, the learnable fake-quantize and its backward) under its `PyTorch` convention,
computed by PyTorch's CPU kernels; and, on the same inputs, the values of its `Exact` convention, computed by a
numpy model of division (these are NOT from PyTorch).

    /usr/bin/python3 tests/data/gen_quantize_golden.py     # Debian's python3-torch (1.13); rewrites the file

The script is deterministic (seeded); running it again rewrites the file byte for byte.

Which PyTorch function produced each section (PyTorch 1.13, CPU, built without FBGEMM, so every quantize runs
the scalar `quantize_val`; the script checks each result against a numpy model of the formula below and stops
on any difference, so the facts are checked on every element written):
  quantize (f32)        torch.quantize_per_tensor / torch.quantize_per_channel(x, s, zp, [axis,] dtype) ->
                        .int_repr(), and .dequantize() of that tensor. qint8, quint8 and (per tensor only:
                        1.13 has no per-channel kernel for it) quint4x2. 1.13 quantizes f32 only.
  fake (f16, f32, f64)  torch.fake_quantize_per_tensor_affine(x, s, zp, qmin, qmax) /
                        torch.fake_quantize_per_channel_affine(x, s(f32), zp(int32), axis, qmin, qmax): y, and
                        dx = x.grad after y.backward(dy) (autograd); the mask from
                        torch.ops.aten.fake_quantize_per_{tensor,channel}_affine_cachemask.
  learnable             torch._fake_quantize_learnable_per_tensor_affine / _per_channel_affine(x, s, zp(real),
                        [axis,] qmin, qmax, grad_factor): y, and (f32 only: 1.13's backward takes f32 alone)
                        x.grad, s.grad, zp.grad after y.backward(dy). f16 and f64 cases are forward only.

Facts (PyTorch 1.13 source: aten/src/ATen/native/quantized/affine_quantizer_base.cpp `quantize_val`,
cpu/kernels/QuantizedOpKernels.cpp, FakeQuantPerTensorAffine.cpp, FakeQuantPerChannelAffine.cpp,
cpu/FakeQuantPerTensorAffine/PerChannel kernels; checked by check_conventions() and by the asserts below):
  * quantize:  q = clamp(zp + nearbyint(x * inv), qmin, qmax), inv = 1.0f / float(s) (f32), nearbyint half to
    even, zp added after rounding. baracuda's PyTorch convention is this formula; its Exact convention rounds
    x / s (one correctly rounded division) instead.
  * dequantize: y = (q - zp) * s rounded once to f32 (checked: no element differs from one rounding).
  * quint4x2: .int_repr() is the packed bytes, the EVEN element in the LOW nibble (baracuda's u4 layout).
  * fake-quantize, per tensor and per channel, for T in {f16, f32, f64}: the scale is taken as f32
    (float(s): PyTorch passes it as `float`; per channel it must be an f32 tensor), inv = 1.0f / float(s);
    v = zp + nearbyint(x * inv), where x * inv is an f32 product for f16/f32 data and an f64 product (inv
    widened) for f64 data; y = T((clamp(v) - zp) * float(s)) (the product is exact in f64, then rounded to
    f32 and for f16 again to f16; for f64 data it is the f64 product with float(s) widened: with an f64
    scale that is not an f32 value, y is NOT (q - zp) * s); mask = qmin <= v <= qmax on the UNCLAMPED v;
    dx = dy * mask (dy * 0 keeps dy's sign).
  * learnable forward: a fake-quantize with zp' = clamp(nearbyint(zp)). Per tensor PyTorch reads the zero point
    and scale as f32 (`zero_point[0].item<float>()`), so an f64 zero point is rounded to f32 before nearbyint
    (2.5 + 2^-30 -> 2.5 -> 2); per channel it rounds in the zero point's own type (`zero_point.round()`).
  * learnable backward (f32): per tensor zp' = (int64) clamp(float(zp) + 0.5f, qmin, qmax) (trunc: -3.4 -> -2,
    2.5 -> 3, -2.0 -> -1), per channel zp' = clamp(round_half_even(zp)); in both the mask rounds with zp' added
    BEFORE rounding. Per element, left to right in f32, gf = float(grad_factor):
      v = nearbyint(fma(x, inv, zp'))
      inside:       dx = dy, ds = dy * fma(v - zp', s, -x) * inv * gf, dzp = 0
      v < qmin:     dx = 0,  ds = dy * (qmin - zp') * gf,   dzp = dy * (-1) * s * gf
      v > qmax:     dx = 0,  ds = dy * (qmax - zp') * gf,   dzp = dy * (-1) * s * gf
    The two fmas are not in the source (`zero_point + x * inv_scale` and `xfqi - x` with xfqi = (v - zp') * s):
    the compiler contracts them. The CPU kernels are compiled per capability and the AVX2 one (the one that runs
    here) with -mfma, and GCC contracts C++ by default (-ffp-contract=fast). (nvcc's default --fmad=true would
    fuse the same expressions in PyTorch's CUDA kernel; not checked here.) With the products rounded separately,
    some dx and ds of this data would differ (the file's notes count the elements where the fused rounding of
    v changes the result).
    The terms are then summed over each parameter's elements by Tensor.sum in f32. For one element per parameter
    the sum is the term itself, so those cases (per tensor over [1]; per channel over [C, 1], [1, C], [1, C, 1]) are
    checked bit for bit. (Per channel over a 1-D [C] tensor 1.13 fails: `sum` over an empty dim list reduces
    everything.) Larger cases differ by the summation order only: the test allows the bound in
    quantize_golden_test.cpp (`sum_tolerance`) using ds_abs / dzp_abs.
  * |x * inv| >= 2^63 quantizes to qmin (an undefined float -> int64 conversion) and NaN likewise; the data
    here stays far below (|x * inv| <= 1e6) and has no NaN.

The exact_* tensors (numpy, f32 arithmetic for f16/f32 data and f64 for f64 data, np.rint = half to even):
  q = clamp(rint(x / s) + zp); y = T((clamp(v) - zp) * s) with the scale as given (f64 for f64 data);
  mask on the unclamped v; learnable: zp' = clamp(rint(zp)) in the forward and the backward, v = rint(x / s) +
  zp', inside ds = dy * (y - x) / s, outside ds = dy * (qmin|qmax - zp'), dzp = -dy * s, summed in f64 and then
  multiplied by grad_factor (f64), rounded once to f32 (the script asserts no double-rounding hazard there).
The qb_dx tensors (QuantizeBackward, which PyTorch does not have) are a numpy model of baracuda's straight-through
estimator dx = T((dy / s) * mask) with PyTorch's mask (from its cachemask) or, for exact_qb_dx, the division's.

Inputs: for every case about 45% of x (f16: 70%) are near rounding ties: t = (k + 0.5) * s (the division's tie) or
t = (k + 0.5) / inv (the reciprocal's tie), rounded to the data type and then moved 0..3 ulps (mostly 0 or 1)
with np.nextafter,
k in and just around [qmin - zp, qmax - zp] (the clamp bounds included); the rest are s * N(0, 1) * m with m from
{0.4, 3, 40, 700} (a quarter far outside the range), and +-0 and +-1e6 * s (f16: +-6e4). Scales are mostly not
powers of two (f16: small odd multiples of a power of two, so that (k + 0.5) * s is an f16 value, an exact
tie of the division); with a power-of-two scale the reciprocal and the division agree. Each section
(kind x data type) has elements where nearbyint(x * inv) and nearbyint(x / s) differ: counted, asserted > 0
and written in the notes; the test recounts them from the expected values (PyTorch's against Exact's).
dy = N(0, 1) * m' with m' from {0.1, 1, 10}.

Format: the golden format of docs/testing.md (floats as bit patterns of their type, integers as numbers). Each
case has params kind (quantize | fake | learnable), element (f16 | f32 | f64: x, y, dy, dx), qdtype (s8 | u8 | u4;
"-" for fake / learnable), granularity (per_tensor | per_channel), axis (0 for per_tensor), qmin, qmax,
grad_factor, shape, and these tensors (row-major):
  scale                 one per channel (per tensor: one), in baracuda's scale kind (f32; f64 for f64 data)
  zp                    quantize / fake: s32 zero points; learnable: the real zero points, in the scale kind
  x                     the input
  q                     quantize: PyTorch's int_repr, one integer per element (u4: unpacked)
  packed                quantize u4: PyTorch's packed bytes (u8)
  y                     quantize: .dequantize() of q; fake / learnable: the forward output
  dy, dx                fake / learnable (f32): the output gradient and PyTorch's input gradient
  mask                  fake: PyTorch's cachemask (0/1)
  qb_dx                 fake: QuantizeBackward under the PyTorch convention (numpy model, see above)
  ds, dzp               learnable (f32): PyTorch's dscale, dzero_point (f32, one per parameter)
  ds_abs, dzp_abs       learnable: sum of |per-element term| per parameter (f64 rounded up to f32): the scale of
                        the summation error, for the test's tolerance on cases with more than one element per
                        parameter
  zp_fwd, zp_bwd        learnable: the integer zero points PyTorch's forward and (f32) backward used
  exact_q, exact_y, exact_dx, exact_qb_dx, exact_ds, exact_dzp, exact_ds_abs, exact_dzp_abs
                        the same quantities under baracuda's Exact convention (numpy model of division)
"""

import fractions
import os
import sys

import numpy as np
import torch

import golden_json

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "quantize_golden.json")
SEED = 20260613

F32 = np.float32
F64 = np.float64
RANGES = {"s8": (-128, 127), "u8": (0, 255), "u4": (0, 15)}
TORCH_Q = {"s8": torch.qint8, "u8": torch.quint8, "u4": torch.quint4x2}
NP = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
TORCH_DT = {"f16": torch.float16, "f32": torch.float32, "f64": torch.float64}
OPMATH = {"f16": np.float32, "f32": np.float32, "f64": np.float64}  # baracuda's arithmetic and scale kind
UINT = {np.float16: np.uint16, np.float32: np.uint32, np.float64: np.uint64}


def f32(v):
    return float(np.float32(v))


KIND = {np.float16: "f16", np.float32: "f32", np.float64: "f64"}


class Case:
    """One golden case (docs/testing.md): the case's fields as params, then one tensor per quantity."""

    def __init__(self, cases, kind, elem, qd, axis, qmin, qmax, gf, shape):
        gran = "per_tensor" if axis is None else "per_channel"
        self.tensors = {}
        name = "#%d %s %s %s %s axis %d [%d, %d] grad_factor %r %s" % (len(cases), kind, elem, qd, gran, axis or 0,
                                                                       qmin, qmax, gf, list(shape))
        cases.append(golden_json.case(name, {"kind": kind, "element": elem, "qdtype": qd, "granularity": gran,
                                             "axis": axis or 0, "qmin": qmin, "qmax": qmax,
                                             "grad_factor": golden_json.f64(gf), "shape": list(shape)},
                                      self.tensors))

    def floats(self, tag, a, t):
        """Values a in the float type t, as bit patterns."""
        a = np.ascontiguousarray(np.asarray(a, dtype=t)).reshape(-1)
        self.tensors[tag] = golden_json.tensor(KIND[t], a.view(UINT[t]))

    def ints(self, tag, a, kind="s32"):
        self.tensors[tag] = golden_json.tensor(kind, np.asarray(a).reshape(-1))


def full(p, shape, axis):
    """Parameters p (one per channel; per tensor: axis None) broadcast to a full array of `shape`."""
    p = np.asarray(p)
    v = [1] * len(shape)
    if axis is not None:
        v[axis] = shape[axis]
    return np.ascontiguousarray(np.broadcast_to(p.reshape(v), shape))


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a.view(UINT[a.dtype.type]),
                                                                         b.view(UINT[b.dtype.type]))


# ------------------------------------------------------------------------------------------------------
# numpy models (elementwise, over full arrays with explicit dtypes)
# ------------------------------------------------------------------------------------------------------


def inv_f32(s):
    """PyTorch's reciprocal: 1.0f / float(s), in f32."""
    return (F32(1) / np.asarray(s).astype(F32)).astype(F32)


def scaled(x, s, elem, conv):
    """x against the scale before rounding, in the opmath type: x * inv (pytorch) or x / s (exact)."""
    m = OPMATH[elem]
    xm = x.astype(m)
    with np.errstate(all="ignore"):
        if conv == "pytorch":
            return (xm * inv_f32(s).astype(m)).astype(m)
        return (xm / s.astype(m)).astype(m)


def unclamped(x, s, zp, elem, conv):
    """nearbyint(scaled) + zp (zp an integer-valued array), in the opmath type."""
    m = OPMATH[elem]
    return (np.rint(scaled(x, s, elem, conv)) + zp.astype(m)).astype(m)


def fq_y(v, zp, s, qmin, qmax, elem, conv):
    """T((clamp(v) - zp) * s_used): s_used = float(s) widened for pytorch, s for exact."""
    m = OPMATH[elem]
    c = (np.clip(v, qmin, qmax) - zp.astype(m)).astype(m)
    su = s.astype(F32).astype(m) if conv == "pytorch" else s.astype(m)
    return (c * su).astype(m).astype(NP[elem])


def qb_dx(dy, s, mask, elem):
    """baracuda's QuantizeBackward: T((dy / s) * mask), in the opmath type."""
    m = OPMATH[elem]
    with np.errstate(all="ignore"):
        return ((dy.astype(m) / s.astype(m)).astype(m) * mask.astype(m)).astype(m).astype(NP[elem])


def torch_learnable_zp(zps, qmin, qmax, per_tensor, forward):
    """The integer zero points PyTorch's learnable forward / backward use (see the docstring)."""
    if per_tensor:
        z = np.asarray(zps).astype(F32)  # zero_point[0].item<float>()
        if forward:
            return np.clip(np.rint(z), qmin, qmax)
        return np.trunc(np.clip((z + F32(0.5)).astype(F32), qmin, qmax))
    return np.clip(np.rint(np.asarray(zps)), qmin, qmax)  # zero_point.round().clamp_(): its own type


def to_f32(fr):
    """A Fraction rounded correctly (half to even) to f32."""
    d = float(fr)  # correctly rounded to f64; an f32 midpoint is an f64 value, so only d itself can be one
    r = F32(d)
    if F64(r) == d:
        return r
    lo = r if F64(r) < d else np.nextafter(r, F32(-np.inf))
    hi = np.nextafter(lo, F32(np.inf))
    mid = (fractions.Fraction(float(lo)) + fractions.Fraction(float(hi))) / 2
    if fr != mid:
        return lo if fr < mid else hi
    return lo if int(np.asarray(lo).view(np.uint32)) % 2 == 0 else hi


def fma32(a, b, c):
    """f32 fma(a, b, c): a * b + c rounded once, elementwise."""
    a, b, c = np.broadcast_arrays(np.asarray(a, F32), np.asarray(b, F32), np.asarray(c, F32))
    out = np.empty(a.shape, dtype=F32)
    for i in np.ndindex(a.shape):
        fa, fb, fc = (fractions.Fraction(float(v[i])) for v in (a, b, c))
        out[i] = to_f32(fa * fb + fc)
    return out


def learnable_torch_terms(x, dy, s, zpb, qmin, qmax, gf):
    """PyTorch's learnable backward per element (f32): (dx, ds term, dzp term), grad_factor included. Its
    CPU kernel (built for AVX2, with -mfma) and its CUDA kernel contract `zp + x * inv` and `xfq - x` (xfq =
    (v - zp) * s) into fmas: v = nearbyint(fma(x, inv, zp)), ds = dy * fma(v - zp, s, -x) * inv * gf."""
    inv = inv_f32(s)
    v = np.rint(fma32(x, inv, zpb))
    inside = (v >= qmin) & (v <= qmax)
    diff = fma32((np.clip(v, qmin, qmax) - zpb).astype(F32), s, -x)
    g = F32(gf)
    ds_in = ((((dy * diff).astype(F32) * inv).astype(F32)) * g).astype(F32)
    small = (qmin - zpb).astype(F32)
    big = (qmax - zpb).astype(F32)
    ds_out = (np.where(v < qmin, (dy * small).astype(F32), (dy * big).astype(F32)) * g).astype(F32)
    dzp_out = (((dy * F32(-1)).astype(F32) * s).astype(F32) * g).astype(F32)
    ds = np.where(inside, ds_in, ds_out).astype(F32)
    dzp = np.where(inside, F32(0), dzp_out).astype(F32)
    dx = (dy * inside.astype(F32)).astype(F32)
    return v, dx, ds, dzp


def learnable_exact_terms(x, dy, s, zpf, qmin, qmax):
    """baracuda's Exact learnable backward per element (f32), before grad_factor."""
    v = unclamped(x, s, zpf, "f32", "exact")
    inside = (v >= qmin) & (v <= qmax)
    y = ((v - zpf).astype(F32) * s).astype(F32)
    ds_in = ((dy * (y - x).astype(F32)).astype(F32) / s).astype(F32)
    ds_out = np.where(v < qmin, (dy * (qmin - zpf).astype(F32)).astype(F32),
                      (dy * (qmax - zpf).astype(F32)).astype(F32))
    ds = np.where(inside, ds_in, ds_out).astype(F32)
    dzp = np.where(inside, F32(0), ((-dy) * s).astype(F32)).astype(F32)
    dx = (dy * inside.astype(F32)).astype(F32)
    return v, dx, ds, dzp


def reduce_params(a, shape, axis):
    """Sum over each parameter's elements, in f64."""
    if axis is None:
        return np.array([np.sum(a, dtype=F64)])
    other = tuple(i for i in range(len(shape)) if i != axis)
    return np.sum(a.astype(F64), axis=other).reshape(-1)


def round_up_f32(v):
    """f64 values rounded up to f32 (a bound stays a bound)."""
    v = np.asarray(v, dtype=F64)
    r = v.astype(F32)
    return np.where(r.astype(F64) < v, np.nextafter(r, F32(np.inf)), r).astype(F32)


def times_factor_f32(sums, gf):
    """f32(sum * gf) as baracuda's devices compute it (f64 product, then f32), asserting that this equals the
    correctly rounded product (no double rounding: the host multiplies in long double)."""
    out = (np.asarray(sums, dtype=F64) * F64(gf)).astype(F32)
    for total, got in zip(np.asarray(sums, dtype=F64), out):
        d = float(F64(total) * F64(gf))
        if F64(F32(d)) == d:
            continue
        lo = np.nextafter(F32(d), F32(-np.inf)) if F64(F32(d)) > d else F32(d)
        hi = np.nextafter(lo, F32(np.inf))
        mid = (fractions.Fraction(float(lo)) + fractions.Fraction(float(hi))) / 2
        exact = fractions.Fraction(float(total)) * fractions.Fraction(float(gf))
        assert fractions.Fraction(d) != mid or exact == mid, "double rounding in sum * grad_factor: change the case"
        assert got in (lo, hi)
    return out


# ------------------------------------------------------------------------------------------------------
# Inputs
# ------------------------------------------------------------------------------------------------------


class Inputs:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def x(self, shape, s_full, z_full, qmin, qmax, elem, tie_frac=None):
        """x of type `elem` for full-shape scales s_full and integer zero points z_full (see the docstring)."""
        t = NP[elem]
        if tie_frac is None:  # f16's near ties rarely separate the reciprocal from the division: more of them
            tie_frac = 0.7 if elem == "f16" else 0.45
        n = int(np.prod(shape))
        sf = s_full.reshape(-1).astype(F64)
        zf = z_full.reshape(-1).astype(F64)
        m = self.rng.choice([0.4, 3.0, 40.0, 700.0], size=n)
        x = (self.rng.standard_normal(n) * m * sf).astype(t)
        inv = inv_f32(s_full.reshape(-1)).astype(F64)
        idx = self.rng.permutation(n)
        n_ties = int(round(n * tie_frac))
        for i in idx[:n_ties]:
            lo, hi = int(qmin - zf[i]) - 2, int(qmax - zf[i]) + 1
            k = int(self.rng.integers(lo, hi + 1))
            if self.rng.random() < 0.3:
                k = int(self.rng.choice([qmin - zf[i] - 1, qmin - zf[i], qmax - zf[i] - 1, qmax - zf[i]]))
            tie = (k + 0.5) * sf[i] if self.rng.random() < 0.5 else (k + 0.5) / inv[i]
            v = np.asarray(tie).astype(t)
            step = int(self.rng.choice([0, 0, 1, -1, 1, -1, 2, -2, 3, -3]))
            for _ in range(abs(step)):
                v = np.nextafter(v, t(np.inf) if step > 0 else t(-np.inf))
            x[i] = v
        rest = idx[n_ties:]
        big = 6e4 if elem == "f16" else None
        for j, i in enumerate(rest[: min(4, len(rest)) if n >= 8 else 0]):
            val = [0.0, -0.0, 1.0, -1.0][j]
            if abs(val) == 1.0:
                val = val * (min(1e6 * sf[i], big) if big else 1e6 * sf[i])
            x[i] = t(val)
        return x.reshape(shape)

    def dy(self, n_shape, elem):
        m = self.rng.choice([0.1, 1.0, 10.0], size=int(np.prod(n_shape))).reshape(n_shape)
        return (self.rng.standard_normal(n_shape) * m).astype(NP[elem])

    def scales(self, c, kind):
        """c scales: 'pow2', 'f32' (random f32 values), 'odd' (odd multiples of 2^-e, f16-friendly)."""
        if kind == "pow2":
            return [2.0 ** -int(e) for e in self.rng.integers(-2, 9, size=c)]
        if kind == "odd":
            odd = self.rng.choice([3, 7, 13, 15, 41, 47, 55, 61, 63], size=c)  # 1/s far from an f32 value
            return [float(o) * 2.0 ** -int(e) for o, e in zip(odd, self.rng.integers(5, 10, size=c))]
        return [f32(v) for v in self.rng.uniform(0.005, 2.0, size=c)]


# ------------------------------------------------------------------------------------------------------
# Bookkeeping
# ------------------------------------------------------------------------------------------------------

STATS = {"elements": 0, "cases": 0}
SECTIONS = {}  # "kind/elem" -> [elements, near-tie differences]


def count_diff(kind, elem, x, s_full, z_full):
    """Elements where nearbyint(x * inv) and nearbyint(x / s) differ (in the data type's opmath)."""
    a = np.rint(scaled(x, s_full, elem, "pytorch"))
    b = np.rint(scaled(x, s_full, elem, "exact"))
    d = int(np.sum(a != b))
    sec = SECTIONS.setdefault("%s/%s" % (kind, elem), [0, 0])
    sec[0] += x.size
    sec[1] += d
    STATS["elements"] += x.size
    STATS["cases"] += 1
    return d


# ------------------------------------------------------------------------------------------------------
# Cases
# ------------------------------------------------------------------------------------------------------


def quantize_case(cases, inp, qd, shape, scales, zps, axis=None):
    qmin, qmax = RANGES[qd]
    scales = np.asarray(scales, dtype=F32)
    zps = np.asarray(zps, dtype=np.int64)
    s_f, z_f = full(scales, shape, axis), full(zps, shape, axis)
    x = inp.x(shape, s_f, z_f, qmin, qmax, "f32")
    xt = torch.from_numpy(x.copy())
    if axis is not None:
        qt = torch.quantize_per_channel(xt, torch.from_numpy(scales.astype(F64)), torch.from_numpy(zps), axis,
                                        TORCH_Q[qd])
    else:
        qt = torch.quantize_per_tensor(xt, float(scales[0]), int(zps[0]), TORCH_Q[qd])
    rep = qt.int_repr().numpy()
    yt = qt.dequantize().numpy()
    q_pt = np.clip(unclamped(x, s_f, z_f, "f32", "pytorch"), qmin, qmax).astype(np.int64)
    q_ex = np.clip(unclamped(x, s_f, z_f, "f32", "exact"), qmin, qmax).astype(np.int64)
    if qd == "u4":
        flat = q_pt.reshape(-1)
        assert flat.size % 2 == 0
        assert np.array_equal(rep.reshape(-1), (flat[0::2] | (flat[1::2] << 4)).astype(np.uint8)), "quint4x2"
    else:
        assert np.array_equal(rep.astype(np.int64), q_pt), "quantize = clamp(zp + nearbyint(x * (1.0f / s)))"
    y_one = ((q_pt - z_f).astype(F64) * s_f.astype(F64)).astype(F32)
    assert same_bits(y_one, yt.astype(F32)), "dequantize = (q - zp) * s, one rounding"
    count_diff("quantize", "f32", x, s_f, z_f)
    c = Case(cases, "quantize", "f32", qd, axis, qmin, qmax, 1.0, shape)
    c.floats("scale", scales, F32)
    c.ints("zp", zps)
    c.floats("x", x, F32)
    c.ints("q", q_pt)
    if qd == "u4":
        c.ints("packed", rep.reshape(-1), "u8")
    c.floats("y", yt, F32)
    c.ints("exact_q", q_ex)


def fake_case(cases, inp, elem, shape, scales, zps, qmin, qmax, axis=None):
    t, m = NP[elem], OPMATH[elem]
    scales = np.asarray(scales, dtype=m)
    if axis is not None or elem != "f64":
        assert np.array_equal(scales.astype(F32).astype(m), scales), "PyTorch takes f32 scales here"
    zps = np.asarray(zps, dtype=np.int64)
    s_f, z_f = full(scales, shape, axis), full(zps, shape, axis)
    x = inp.x(shape, s_f, z_f, qmin, qmax, elem)
    dy = inp.dy(shape, elem)
    xt = torch.from_numpy(x.copy()).requires_grad_(True)
    if axis is not None:
        st, zt = torch.from_numpy(scales.astype(F32)), torch.from_numpy(zps.astype(np.int32))
        yt = torch.fake_quantize_per_channel_affine(xt, st, zt, axis, qmin, qmax)
        _, mt = torch.ops.aten.fake_quantize_per_channel_affine_cachemask(xt.detach(), st, zt, axis, qmin, qmax)
    else:
        yt = torch.fake_quantize_per_tensor_affine(xt, float(scales[0]), int(zps[0]), qmin, qmax)
        _, mt = torch.ops.aten.fake_quantize_per_tensor_affine_cachemask(xt.detach(), float(scales[0]),
                                                                        int(zps[0]), qmin, qmax)
    yt.backward(torch.from_numpy(dy.copy()))
    y, dx, mask = yt.detach().numpy(), xt.grad.numpy(), mt.numpy()
    v_pt = unclamped(x, s_f, z_f, elem, "pytorch")
    v_ex = unclamped(x, s_f, z_f, elem, "exact")
    m_pt = (v_pt >= qmin) & (v_pt <= qmax)
    m_ex = (v_ex >= qmin) & (v_ex <= qmax)
    assert same_bits(y, fq_y(v_pt, z_f, s_f, qmin, qmax, elem, "pytorch")), "fake-quantize forward (%s)" % elem
    assert np.array_equal(mask, m_pt), "fake-quantize mask"
    assert same_bits(dx, (dy * m_pt.astype(t)).astype(t)), "fake-quantize backward: dy * mask"
    count_diff("fake", elem, x, s_f, z_f)
    c = Case(cases, "fake", elem, "-", axis, qmin, qmax, 1.0, shape)
    c.floats("scale", scales, m)
    c.ints("zp", zps)
    c.floats("x", x, t)
    c.floats("y", y, t)
    c.floats("dy", dy, t)
    c.floats("dx", dx, t)
    c.ints("mask", mask.astype(np.int64))
    c.floats("qb_dx", qb_dx(dy, s_f, m_pt, elem), t)
    c.floats("exact_y", fq_y(v_ex, z_f, s_f, qmin, qmax, elem, "exact"), t)
    c.floats("exact_dx", (dy * m_ex.astype(t)).astype(t), t)
    c.floats("exact_qb_dx", qb_dx(dy, s_f, m_ex, elem), t)


def learnable_torch(x, dy, scales, zps, qmin, qmax, gf, axis, elem):
    """PyTorch's forward, and (f32) its autograd gradients. Per channel the scale is an f32 tensor."""
    xt = torch.from_numpy(x.copy()).requires_grad_(True)
    sc = scales if axis is None else scales.astype(F32)
    st = torch.from_numpy(sc.copy()).requires_grad_(True)
    zt = torch.from_numpy(zps.copy()).requires_grad_(True)
    if axis is None:
        yt = torch._fake_quantize_learnable_per_tensor_affine(xt, st, zt, qmin, qmax, gf)
    else:
        yt = torch._fake_quantize_learnable_per_channel_affine(xt, st, zt, axis, qmin, qmax, gf)
    if dy is None:
        return yt.detach().numpy(), None, None, None
    yt.backward(torch.from_numpy(dy.copy()))
    return yt.detach().numpy(), xt.grad.numpy(), st.grad.numpy().reshape(-1), zt.grad.numpy().reshape(-1)


def learnable_case(cases, inp, elem, shape, scales, zps, qmin, qmax, gf, axis=None, tie_frac=None):
    t, m = NP[elem], OPMATH[elem]
    per_tensor = axis is None
    scales = np.asarray(scales, dtype=m)
    zps = np.asarray(zps, dtype=m)
    backward = elem == "f32"
    zp_fwd = torch_learnable_zp(zps, qmin, qmax, per_tensor, True)
    zp_bwd = torch_learnable_zp(zps, qmin, qmax, per_tensor, False)
    zp_ex = np.clip(np.rint(zps), qmin, qmax)  # Exact: the forward's rounding, in the scale's type
    s_f = full(scales, shape, axis)
    zf_f, zb_f, ze_f = (full(z, shape, axis).astype(m) for z in (zp_fwd, zp_bwd, zp_ex))
    x = inp.x(shape, s_f, zf_f, qmin, qmax, elem, tie_frac)
    dy = inp.dy(shape, elem) if backward else None
    y, dx, ds, dzp = learnable_torch(x, dy, scales, zps, qmin, qmax, gf, axis, elem)
    v_pt = unclamped(x, s_f, zf_f, elem, "pytorch")
    assert same_bits(y, fq_y(v_pt, zf_f, s_f, qmin, qmax, elem, "pytorch")), "learnable forward (%s)" % elem
    v_ex = unclamped(x, s_f, ze_f, elem, "exact")
    y_ex = fq_y(v_ex, ze_f, s_f, qmin, qmax, elem, "exact")
    count_diff("learnable", elem, x, s_f, zf_f)
    c = Case(cases, "learnable", elem, "-", axis, qmin, qmax, gf, shape)
    c.floats("scale", scales, m)
    c.floats("zp", zps, m)
    c.ints("zp_fwd", zp_fwd)
    c.floats("x", x, t)
    c.floats("y", y, t)
    c.floats("exact_y", y_ex, t)
    if not backward:
        return
    n = x.size // len(ds)
    v_fused, dx_e, ds_t, dzp_t = learnable_torch_terms(x, dy, s_f, zb_f, qmin, qmax, gf)
    v_plain = np.rint((zb_f + (x * inv_f32(s_f)).astype(F32)).astype(F32))
    STATS["fma_mask"] = STATS.get("fma_mask", 0) + int(np.sum(v_fused != v_plain))
    assert same_bits(dx, dx_e), "learnable backward dx: zero point %s" % zp_bwd
    ds_e, dzp_e = reduce_params(ds_t, shape, axis), reduce_params(dzp_t, shape, axis)
    ds_abs, dzp_abs = reduce_params(np.abs(ds_t), shape, axis), reduce_params(np.abs(dzp_t), shape, axis)
    if n == 1:
        assert same_bits(ds, ds_e.astype(F32)) and same_bits(dzp, dzp_e.astype(F32)), ("one-term sums", ds, ds_e)
    bound = lambda a: (n + 8) * 2.0 ** -23 * a + 1e-30
    assert np.all(np.abs(ds_e - ds) <= bound(ds_abs)) and np.all(np.abs(dzp_e - dzp) <= bound(dzp_abs))
    _, xdx, xds_t, xdzp_t = learnable_exact_terms(x, dy, s_f, ze_f, qmin, qmax)
    xds, xdzp = reduce_params(xds_t, shape, axis), reduce_params(xdzp_t, shape, axis)
    c.ints("zp_bwd", zp_bwd)
    c.floats("dy", dy, t)
    c.floats("dx", dx, t)
    c.floats("ds", ds, F32)
    c.floats("dzp", dzp, F32)
    c.floats("ds_abs", round_up_f32(ds_abs), F32)
    c.floats("dzp_abs", round_up_f32(dzp_abs), F32)
    c.floats("exact_dx", xdx, t)
    c.floats("exact_ds", times_factor_f32(xds, gf), F32)
    c.floats("exact_dzp", times_factor_f32(xdzp, gf), F32)
    c.floats("exact_ds_abs", round_up_f32(reduce_params(np.abs(xds_t), shape, axis) * abs(gf)), F32)
    c.floats("exact_dzp_abs", round_up_f32(reduce_params(np.abs(xdzp_t), shape, axis) * abs(gf)), F32)
    STATS["zp_quirk"] = STATS.get("zp_quirk", 0) + int(np.any(zp_bwd != zp_fwd))


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
    # |x * inv| >= 2^63 and NaN quantize to qmin (not used in the data).
    assert torch.quantize_per_tensor(torch.tensor([1e30, float("nan")]), 1.0, 3, torch.qint8).int_repr().tolist() \
        == [-128, -128]
    # The reciprocal: x = 1.55f, s = 0.1f: x / s rounds to 15.499999 -> 15, x * (1.0f / s) to 15.5 -> 16.
    x, s = F32(1.55), F32(0.1)
    assert np.rint(x / s) == 15 and np.rint(x * (F32(1) / s)) == 16
    assert torch.quantize_per_tensor(torch.tensor([1.55]), f32(0.1), 0, torch.qint8).int_repr().item() == 16
    # f64 data: the scale is used as f32. s = 0.1 (f64): float(0.1) = 0.100000001490116; y = 2 * that.
    y = torch.fake_quantize_per_tensor_affine(torch.tensor([0.2], dtype=torch.float64), 0.1, 0, -128, 127)
    assert y.item() == 2 * float(F32(0.1)) != 0.2, y
    # Learnable per tensor: the zero point is read as f32 (forward 2.5 + 2^-30 -> 2.5 -> 2; per channel: 3).
    x = torch.tensor([-3.0], dtype=torch.float64)
    z = torch.tensor([2.5 + 2.0 ** -30], dtype=torch.float64)
    y = torch._fake_quantize_learnable_per_tensor_affine(x, torch.tensor([1.0], dtype=torch.float64), z, 0, 127, 1.)
    assert y.item() == -2.0, y  # zp 2: clamp(-3 + 2) = 0, (0 - 2) * 1
    y = torch._fake_quantize_learnable_per_channel_affine(x.view(1, 1), torch.tensor([1.0]), z, 0, 0, 127, 1.)
    assert y.item() == -3.0, y  # zp 3
    # Learnable backward, per tensor: zp = -2.0 is used as -1 (trunc(zp + 0.5)); the forward uses -2.
    x = torch.tensor([-0.75], requires_grad=True)
    sc = torch.tensor([1.0], requires_grad=True)
    zp = torch.tensor([-2.0], requires_grad=True)
    y = torch._fake_quantize_learnable_per_tensor_affine(x, sc, zp, -2, 5, 1.0)
    y.backward(torch.ones(1))
    assert y.tolist() == [0.0], y
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
        assert sc.grad.tolist() == [0.5], (per_channel, sc.grad)
    # grad_factor multiplies each term in f32: gf = 0.1 -> float(0.1).
    x = torch.tensor([[9.0]], requires_grad=True)
    sc = torch.tensor([1.0], requires_grad=True)
    zp = torch.tensor([0.0], requires_grad=True)
    y = torch._fake_quantize_learnable_per_channel_affine(x, sc, zp, 0, -4, 3, 0.1)
    y.backward(torch.tensor([[3.0]]))
    assert sc.grad.item() == float(F32(F32(3.0) * F32(3.0)) * F32(0.1)), sc.grad  # above: dy * (qmax - zp) * gf


# ------------------------------------------------------------------------------------------------------


def main():
    check_conventions()
    torch.manual_seed(0)
    inp = Inputs(SEED)
    cases = []
    p2 = [2.0 ** -4, 2.0 ** -7, 0.5, 4.0, 2.0 ** -10]
    npow = [f32(0.1), f32(0.0371), f32(3.3), f32(0.7), f32(0.013), f32(0.00214854861)]

    # quantize / dequantize, per tensor (f32 data; 1.13 quantizes nothing else)
    for qd, zps in (("s8", [0, -3, 17, 1, -100, 5]), ("u8", [128, 0, 97, 255, 3, 1])):
        quantize_case(cases, inp, qd, [7, 9], [p2[0]], [zps[0]])
        quantize_case(cases, inp, qd, [3, 4, 5], [p2[3]], [zps[2]])
        for s, zp, shape in zip(npow, zps, ([6, 10], [7, 9], [5, 12], [64], [4, 4, 4], [9, 7])):
            quantize_case(cases, inp, qd, shape, [s], [zp])
    for s, zp, shape in ((p2[0], 0, [6, 8]), (npow[0], 7, [4, 6]), (p2[4], 3, [3, 2, 10]), (npow[2], 8, [5, 6]),
                         (npow[4], 1, [8, 8]), (npow[5], 15, [2, 16])):
        quantize_case(cases, inp, "u4", shape, [s], [zp])

    # quantize / dequantize, per channel
    def zps_for(c, qmin, qmax):
        return [int(v) for v in inp.rng.integers(qmin, qmax + 1, size=c)]

    for qd in ("s8", "u8"):
        qmin, qmax = RANGES[qd]
        for shape, axis, kind in (([6, 11], 0, "pow2"), ([6, 11], 1, "f32"), ([4, 5, 6], 0, "f32"),
                                  ([4, 5, 6], 1, "pow2"), ([3, 4, 7], 2, "f32"), ([8, 12], 1, "f32"),
                                  ([5, 3, 8], 0, "f32"), ([16, 1], 0, "f32")):
            quantize_case(cases, inp, qd, shape, inp.scales(shape[axis], kind), zps_for(shape[axis], qmin, qmax),
                          axis)

    # fake-quantize forward and backward, f16 / f32 / f64
    for elem in ("f32", "f16", "f64"):
        skind = "odd" if elem == "f16" else "f32"
        pt_scales = {"f32": [p2[0], npow[0], npow[1], npow[3], npow[5], p2[2], npow[4], npow[2]],
                     "f16": [p2[0], 3 / 64, 5 / 128, 7 / 256, 13 / 1024, 11 / 32, 25 / 512, 19 / 64],
                     "f64": [p2[0], 0.1, 0.0371, npow[3], 0.00214854861, 0.7, npow[4], 3.3]}[elem]
        for s, zp, (qmin, qmax), shape in zip(pt_scales, (0, 5, 130, -3, 3, 0, 1, 40),
                                              ((-128, 127), (-128, 127), (0, 255), (-8, 7), (0, 15), (-127, 127),
                                               (-128, 127), (0, 100)),
                                              ([7, 9], [4, 5, 6], [6, 10], [5, 7], [6, 6], [8, 8], [8, 9], [6, 9])):
            fake_case(cases, inp, elem, shape, [s], [zp], qmin, qmax)
        for shape, axis, qmin, qmax, kind in (([6, 11], 0, -128, 127, "pow2"), ([6, 11], 1, 0, 255, skind),
                                              ([4, 5, 6], 0, -8, 7, skind), ([4, 5, 6], 1, -128, 127, skind),
                                              ([3, 4, 7], 2, 0, 15, skind), ([8, 12], 1, -128, 127, skind),
                                              ([24, 1], 0, -128, 127, skind)):
            c = shape[axis]
            fake_case(cases, inp, elem, shape, inp.scales(c, kind), zps_for(c, qmin, qmax), qmin, qmax, axis)

    # learnable, f32 forward and backward. One element per parameter: bit-exact sums.
    zp_pool = [-3.4, -2.0, -0.5, -0.6, -1.5, 0.5, 1.5, 2.5, 3.3, 7.5, -5.0, 100.49, 126.6, 130.2, -130.7, 0.0,
               4.0, f32(2.4999998), -2.5, 5.7]
    ranges = [(-128, 127), (0, 255), (-8, 7), (0, 15), (-127, 127), (-4, 3)]
    gfs = [0.5, 1.0, 0.25, 1.5, 0.3, 0.1, 2.0, 0.75, 1.0 / 3.0]
    for i, zp in enumerate(zp_pool):
        for j in range(2):
            qmin, qmax = ranges[(i + j) % len(ranges)]
            s = inp.scales(1, "pow2" if (i + j) % 7 == 0 else "f32")
            learnable_case(cases, inp, "f32", [1], s, [f32(zp)], qmin, qmax, gfs[(2 * i + j) % len(gfs)],
                           tie_frac=1.0 if j == 0 else 0.0)
    for shape, axis, qmin, qmax, gf in (([40, 1], 0, -128, 127, 0.5), ([1, 40], 1, 0, 255, 0.3),
                                        ([1, 24, 1], 1, -8, 7, 1.5), ([32, 1], 0, 0, 15, 1.0),
                                        ([1, 32], 1, -4, 3, 0.1)):
        c = shape[axis]
        zps = [f32(v) for v in inp.rng.choice(zp_pool + list(inp.rng.uniform(qmin - 3, qmax + 3, size=8)), size=c)]
        learnable_case(cases, inp, "f32", shape, inp.scales(c, "f32"), zps, qmin, qmax, gf, axis)
    # learnable, f32, several elements per parameter (sums within a tolerance)
    for s, zp, qmin, qmax, gf, shape in (
            (p2[0], 3.3, -128, 127, 0.5, [7, 9]),
            (npow[1], 0.0, -128, 127, 1.0, [6, 8]),
            (p2[2], 100.49, 0, 255, 0.25, [5, 6, 4]),
            (npow[3], 7.5, 0, 15, 1.5, [6, 6]),
            (npow[0], 5.7, -128, 127, 0.125, [8, 9]),
            (npow[5], 2.5, -8, 7, 0.5, [6, 7]),        # forward 2, PyTorch's per-tensor backward 3
            (npow[4], -3.4, -128, 127, 1.0, [7, 8]),   # forward -3, backward -2
            (npow[2], -5.0, -8, 7, 0.75, [5, 9])):     # an integer zp: forward -5, backward -4
        learnable_case(cases, inp, "f32", shape, [f32(s)], [f32(zp)], qmin, qmax, gf)
    for shape, axis, qmin, qmax, gf, zps in (
            ([6, 5], 0, -128, 127, 0.5, [-2.5, 1.5, 0.3, 3.7, -1.2, 126.6]),
            ([6, 5], 1, 0, 255, 0.25, [0.0, 127.5, 128.5, 254.7, 12.49]),
            ([4, 5, 6], 0, -8, 7, 1.0, [-0.5, 2.5, 6.9, -7.6]),
            ([4, 5, 6], 2, -128, 127, 0.5, [-10.5, 3.5, 0.7, -0.7, 20.2, 9.5]),
            ([3, 4, 7], 1, 0, 15, 2.0, [7.5, 0.49, 14.5, 3.2])):
        learnable_case(cases, inp, "f32", shape, inp.scales(shape[axis], "f32"), [f32(z) for z in zps], qmin, qmax,
                       gf, axis)
    # learnable forward, f16 and f64 (1.13 has no backward for them)
    for elem, scales in (("f16", [61 / 512, 63 / 256, 13 / 1024, 0.5]), ("f64", [0.1, 0.0371, npow[3], 2.0 ** -5])):
        for s, zp, (qmin, qmax), shape in zip(scales, (2.5, -3.4, 100.49, 7.5), ((-8, 7), (-128, 127), (0, 255),
                                                                                (0, 15)),
                                              ([6, 7], [7, 8], [5, 6, 4], [6, 6])):
            learnable_case(cases, inp, elem, shape, [s], [zp], qmin, qmax, 1.0)
        for shape, axis, qmin, qmax, zps in (([6, 5], 0, -128, 127, [-2.5, 1.5, 0.3, 3.7, -1.2, 126.6]),
                                             ([4, 5, 6], 2, 0, 15, [7.5, 0.49, 14.5, 3.2, 15.7, -0.6]),
                                             ([12, 8], 1, -8, 7, [-0.5, 2.5, 6.9, -7.6, 0.0, 1.5, -3.5, 7.49])):
            learnable_case(cases, inp, elem, shape, inp.scales(shape[axis], "odd" if elem == "f16" else "f32"), zps,
                           qmin, qmax, 1.0, axis)
    # f64 zero points that are not f32 values: per tensor PyTorch rounds them to f32 first, per channel not.
    for zp in (2.5 + 2.0 ** -30, -3.5 - 2.0 ** -31, 6.5 + 2.0 ** -29):
        learnable_case(cases, inp, "f64", [8, 8], [0.1], [zp], 0 if zp > 0 else -8, 15 if zp > 0 else 7, 1.0)
    learnable_case(cases, inp, "f64", [3, 16], inp.scales(3, "f32"), [2.5 + 2.0 ** -30, -0.5 - 2.0 ** -30,
                                                                      6.5 + 2.0 ** -29], 0, 15, 1.0, 0)

    # Every section must hold elements where the reciprocal and the division round differently.
    for name, (n, d) in sorted(SECTIONS.items()):
        assert d > 0, "section %s: no element where x * (1/s) and x / s round differently" % name
    summary = "; ".join("%s %d elements, %d differ" % (k, v[0], v[1]) for k, v in sorted(SECTIONS.items()))
    notes = [
        "Golden values for QuantizePlan from PyTorch on the CPU (quantize_per_tensor/per_channel + int_repr + "
        "dequantize, fake_quantize_per_tensor/per_channel_affine, _fake_quantize_learnable_per_tensor/"
        "per_channel_affine, autograd gradients); the exact_* and qb_dx tensors are a numpy model of baracuda's "
        "conventions, not PyTorch. See the generator.",
        "%d cases, %d elements; nearbyint(x * (1/s)) != nearbyint(x / s) per section: %s"
        % (STATS["cases"], STATS["elements"], summary),
        "learnable f32 backward: %d elements where PyTorch's nearbyint(fma(x, inv, zp)) differs from"
        " nearbyint(zp + f32(x * inv))" % STATS["fma_mask"],
    ]
    golden_json.write(OUT, "tests/data/gen_quantize_golden.py", {"torch": torch.__version__, "numpy": np.__version__},
                      notes, cases)
    print("wrote %s: %d cases; %d learnable f32 cases with PyTorch's backward zero point differing"
          " from the forward's\n%s\n%s" % (OUT, STATS["cases"], STATS.get("zp_quirk", 0), notes[-2], notes[-1]))


if __name__ == "__main__":
    sys.exit(main())
