#!/usr/bin/python3
"""Generates tests/data/dynamic_range_vllm_golden.json: golden values for baracuda's DynamicRangeQuantizePlan under
its `Vllm` convention, computed by a NumPy model of vLLM's dynamic per-token int8 quantization kernels.

    /usr/bin/python3 tests/data/gen_dynamic_range_vllm_golden.py     # NumPy only; rewrites the file

The script is deterministic (seeded); running it again rewrites the file byte for byte. It is a MODEL written from
vLLM's source, not vLLM's output (vLLM needs a GPU): the kernels modelled are

    vllm-project/vllm  csrc/quantization/compressed_tensors/int8_quant_kernels.cu
    at commit fc4a42832215fcd219b0ab0d4b5b99e41baf8d45 (after PR #19233, 2025)

  * dynamic_scaled_int8_quant_kernel (symmetric, `dynamic_scaled_int8_quant` without azp), per token:
        thread_max = 0.f; thread_max = fmaxf(thread_max, fabsf(float(x)))     (fmaxf: a NaN element is skipped)
        absmax = BlockReduce(thread_max, cub::Max)
        scale_out = absmax / 127.f
        inv_s = (absmax == 0.f) ? 0.f : 127.f / absmax
        q = float_to_int8_rn(float(x) * inv_s)          (cvt.rni.sat.s8.f32: half to even, saturate, NaN -> 0)
  * dynamic_scaled_int8_azp_quant_kernel (asymmetric, with azp), per token:
        MinMax(): min = FLT_MAX (numeric_limits<float>::max()), max = -FLT_MAX (numeric_limits<float>::lowest())
        mm += float(x): min = fminf(min, x), max = fmaxf(max, x)  (a NaN element is skipped; no widening to 0)
        s = (mm.max - mm.min) / 255.f
        zp = nearbyintf(-128.f - mm.min / s)            (round half to even)
        azp = int32_t(zp)                               (cvt.rzi.s32.f32 on the GPU: NaN -> 0, saturating)
        inv_s = 1.f / s
        q = int32_to_int8(float_to_int32_rn(float(x) * inv_s) + azp)
            float_to_int32_rn: cvt.rni.sat.s32.f32 (half to even, saturate to int32, NaN -> 0);
            "+ azp": int32 addition (wraps on the GPU); int32_to_int8: cvt.sat.s8.s32 (saturate).

Every operation is f32 (the inputs are f16 / bf16 / f32 values, converted exactly). The model computes with
np.float32 scalars and arrays everywhere (each NumPy f32 operation is one IEEE f32 operation rounding to nearest
even), np.rint for round-half-to-even. It assumes nvcc's defaults for these kernels: correctly rounded f32
division and subnormals kept (no --use_fast_math / -ftz), and no contraction to FMA (none of the expressions is
a product followed by a sum).

baracuda generalises the constants to any quantized kind and range [qmin, qmax] (dynamic_range_quantize.hpp):
127 -> qmax, 255 -> qmax - qmin, -128 -> qmin, and both saturations are to [qmin, qmax]. vLLM itself only does
s8 over [-128, 127]; the s8 [-128, 127] cases below are vLLM's own arithmetic, the others (u8 [0, 255], s8
[-127, 127], s4 [-8, 7], u4 [0, 15]) the generalisation.

One choice the source leaves open, modelled as baracuda defines it: fminf / fmaxf of +0 and -0 order -0 < +0, so
the reduction's result does not depend on the order (vLLM's cub reduction order is not specified). It only
decides the sign of a zero scale (s = max - min of a row of zeros is +0).

Inputs (per token, each row a different kind; f16 / bf16 rows are rounded to the element type first): random
rows with an outlier, all-negative, all-positive, far from zero (so the asymmetric zero point is far outside
[qmin, qmax]), all +0, mixed +-0, a positive and a negative constant, a few NaN, all NaN, near rounding ties of
x * inv_s (k + 0.5 moved 0 or 1 ulp of the element type), exact ties of x / s (f32: s = 3 * 2^-6, x = (k + 0.5)
* s; f16 / bf16: the values of the type, found by trying all of them in the row's range, where rint(x * inv_s)
differs from rint(x / s)), tiny (f32: subnormal, so qmax / absmax overflows to inf), with
+inf / -inf, and huge values whose max - min overflows. The notes count, per case, the elements where
rint(x * inv_s) differs from rint(x / s) (the products the model rounds against a division), and asserts some exist.

Format: the golden format of docs/testing.md, one case each:
  params  element (f32 | f16 | bf16), qdtype (s8 | u8 | s4 | u4), mode (symmetric | asymmetric), qmin, qmax,
          tokens, hidden, rows (the kind of each row)
  x       [tokens, hidden] in the element type
  scale   [tokens] f32
  zp      [tokens] s32          (symmetric: all 0)
  q       [tokens, hidden] s32  (the logical quantized values)
"""

import sys

import numpy as np

import golden_json

f32 = np.float32
FLT_MAX = np.finfo(np.float32).max
OUT = __file__.rsplit("/", 1)[0] + "/dynamic_range_vllm_golden.json"


# ------------------------------------------------------------------------------------------------ the model

def zero_signed_min(vals):
    """min of non-NaN f32 values with -0 < +0 (fminf reduction)."""
    m = f32(np.min(vals))
    if m == 0:
        zeros = vals[vals == 0]
        m = f32(-0.0) if np.any(np.signbit(zeros)) else f32(0.0)
    return m


def zero_signed_max(vals):
    """max of non-NaN f32 values with +0 > -0 (fmaxf reduction)."""
    m = f32(np.max(vals))
    if m == 0:
        zeros = vals[vals == 0]
        m = f32(0.0) if np.any(~np.signbit(zeros)) else f32(-0.0)
    return m


def rni_sat(v, lo, hi):
    """cvt.rni.sat to [lo, hi] of f32 values (NaN -> 0), as int64."""
    r = np.rint(v.astype(np.float64))  # rint of an f32 value is exact in f64
    r = np.where(np.isnan(r), 0.0, r)
    return np.clip(r, lo, hi).astype(np.int64)


def rzi_s32(v):
    """cvt.rzi.s32.f32 of one f32 value: NaN -> 0, saturating."""
    if np.isnan(v):
        return 0
    d = float(v)
    if d >= 2147483648.0:
        return 2147483647
    if d <= -2147483648.0:
        return -2147483648
    return int(np.trunc(d))


def vllm_symmetric(row, qmin, qmax):
    """dynamic_scaled_int8_quant_kernel on one token (row: f32 array) -> (scale, zp, q, differing)."""
    absmax = f32(0.0)
    a = np.abs(row)                         # fabsf
    a = a[~np.isnan(a)]                     # fmaxf skips NaN
    if a.size:
        absmax = np.maximum(absmax, f32(np.max(a)))
    scale = f32(absmax / f32(qmax))
    inv_s = f32(0.0) if absmax == f32(0.0) else f32(f32(qmax) / absmax)
    q = rni_sat((row * inv_s).astype(np.float32), qmin, qmax)   # cvt.rni.sat (generalised range)
    div = rni_sat((row / scale).astype(np.float32), qmin, qmax) if scale != 0 else q
    return scale, 0, q, int(np.sum(q != div))


def vllm_asymmetric(row, qmin, qmax):
    """dynamic_scaled_int8_azp_quant_kernel on one token (row: f32 array) -> (scale, zp, q, differing)."""
    vals = row[~np.isnan(row)]               # fminf / fmaxf skip NaN
    mn, mx = f32(FLT_MAX), f32(-FLT_MAX)     # MinMax(): max(), lowest(); they stay for an all-+inf / all--inf row
    if vals.size:
        lo, hi = zero_signed_min(vals), zero_signed_max(vals)
        mn = lo if lo < mn else mn
        mx = hi if hi > mx else mx
    s = f32(f32(mx - mn) / f32(qmax - qmin))
    zp = rzi_s32(np.rint(f32(f32(qmin) - f32(mn / s))))
    inv_s = f32(f32(1.0) / s)
    t = rni_sat((row * inv_s).astype(np.float32), -2147483648, 2147483647)   # float_to_int32_rn
    total = (t + zp) & 0xFFFFFFFF                                            # int32 addition, wrapping
    total = np.where(total >= 2**31, total - 2**32, total)
    q = np.clip(total, qmin, qmax)                                           # int32_to_int8 (generalised)
    tdiv = rni_sat((row / s).astype(np.float32), -2147483648, 2147483647)
    tot2 = (tdiv + zp) & 0xFFFFFFFF
    tot2 = np.where(tot2 >= 2**31, tot2 - 2**32, tot2)
    differing = int(np.sum(q != np.clip(tot2, qmin, qmax)))
    return s, zp, q, differing


# ------------------------------------------------------------------------------------------------ element types

def to_bf16_bits(a32):
    """f32 array -> bf16 bit patterns (round to nearest even; NaN stays a quiet NaN)."""
    b = a32.astype(np.float32).view(np.uint32).astype(np.uint64)
    nan = np.isnan(a32)
    rounded = (b + 0x7FFF + ((b >> 16) & 1)) >> 16
    return np.where(nan, 0x7FC0, rounded).astype(np.uint16)


def in_element(values64, element):
    """(f32 values exactly representable in `element`, their bit patterns as hex strings)."""
    with np.errstate(over="ignore", invalid="ignore"):
        if element == "f32":
            a = values64.astype(np.float32)
            return a, ["%08x" % v for v in a.view(np.uint32)]
        if element == "f16":
            h = values64.astype(np.float16)
            return h.astype(np.float32), ["%04x" % v for v in h.view(np.uint16)]
        bits = to_bf16_bits(values64.astype(np.float32))
        a = (bits.astype(np.uint32) << 16).view(np.float32)
        return a, ["%04x" % v for v in bits]


# ------------------------------------------------------------------------------------------------ inputs

ROW_KINDS = ["random", "allneg", "allpos", "far", "zeros", "mixedzeros", "constpos", "constneg", "somenan",
             "allnan", "ties", "tiny", "inf", "huge", "random2", "xties"]


def make_row(kind, hidden, rng, mode, qmin, qmax, element):
    n = hidden
    if kind in ("random", "random2"):
        v = rng.normal(0, 1.5, n)
        v[rng.integers(n)] *= 12  # an outlier channel
        return v
    if kind == "allneg":
        return -(np.abs(rng.normal(0, 2, n)) + 0.05)
    if kind == "allpos":
        return np.abs(rng.normal(0, 2, n)) + 0.05
    if kind == "far":
        return 100.0 + rng.uniform(0, 0.5, n)
    if kind == "zeros":
        return np.zeros(n)
    if kind == "mixedzeros":
        return np.where(rng.integers(0, 2, n) == 1, -0.0, 0.0)
    if kind == "constpos":
        return np.full(n, 0.75)
    if kind == "constneg":
        return np.full(n, -2.5)
    if kind == "somenan":
        v = rng.normal(0, 1, n)
        v[rng.choice(n, size=max(1, n // 10), replace=False)] = np.nan
        return v
    if kind == "allnan":
        return np.full(n, np.nan)
    if kind == "tiny":
        return rng.uniform(-1, 1, n) * 1e-40 if element == "f32" else rng.uniform(-1, 1, n) * 1e-6
    if kind == "inf":
        v = rng.normal(0, 1, n)
        v[rng.integers(n)] = np.inf
        v[rng.integers(n)] = -np.inf
        return v
    if kind == "huge":
        big = 3e38 if element != "f16" else 6e4
        v = rng.uniform(-1, 1, n) * big
        v[0], v[1] = big, -big
        return v
    if kind == "xties" and element != "f32":
        # f16 / bf16: every value of the element type in the row's range is tried, and the row is filled with
        # those whose product x * inv_s rounds differently from the division x / s (few such values exist: up to
        # 400 ranges are drawn until one has some)
        if element == "f16":
            every = np.arange(0, 0x10000, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32)
        else:
            every = (np.arange(0, 0x10000, dtype=np.uint32) << 16).view(np.float32)
        every = every[np.isfinite(every)]
        for _ in range(400):
            base, _ = in_element(np.array([-rng.uniform(1, 8), rng.uniform(1, 8)]), element)
            lo_v, hi_v = base[0], base[1]
            if mode == "symmetric":
                amax = max(-lo_v, hi_v)
                s, inv = f32(amax / f32(qmax)), f32(f32(qmax) / amax)
            else:
                s = f32(f32(hi_v - lo_v) / f32(qmax - qmin))
                inv = f32(f32(1.0) / s)
            inside = every[(every >= lo_v) & (every <= hi_v)]
            hits = inside[np.rint(inside * inv) != np.rint((inside / s).astype(np.float32))]
            if hits.size:
                break
        v = rng.uniform(lo_v, hi_v, n)
        if hits.size:
            v[2:] = rng.choice(hits, size=n - 2)
        v[0], v[1] = lo_v, hi_v
        return v
    if kind == "xties":
        # exact ties of the division: s = 3 * 2^-6 exactly (the range is [qmin, qmax] * s, or [-qmax, qmax] * s),
        # x = (k + 0.5) * s; x * inv_s (inv_s = f32(1 / s) or f32(qmax / amax)) lands just off the tie
        unit = 3.0 * 2.0 ** -6
        lo_k, hi_k = (-qmax, qmax) if mode == "symmetric" else (qmin, qmax)
        v = (rng.integers(lo_k, hi_k, n) + 0.5) * unit
        v[0], v[1] = lo_k * unit, hi_k * unit
        return v
    # near ties of x * inv_s: fix the range first, then place values around (k + 0.5) / inv_s
    lo_v, hi_v = (-rng.uniform(1, 8), rng.uniform(1, 8))
    base, _ = in_element(np.array([lo_v, hi_v]), element)
    lo_v, hi_v = base[0], base[1]
    if mode == "symmetric":
        amax = max(-lo_v, hi_v)
        inv = f32(f32(qmax) / f32(amax))
        kmin, kmax = -qmax, qmax - 1
    else:
        s = f32(f32(hi_v - lo_v) / f32(qmax - qmin))
        inv = f32(f32(1.0) / s)
        kmin, kmax = int(np.ceil(float(lo_v * inv))), int(np.floor(float(hi_v * inv))) - 1
    v = np.empty(n)
    v[0], v[1] = lo_v, hi_v
    for i in range(2, n):
        k = int(rng.integers(kmin, kmax + 1))
        t, _ = in_element(np.array([(k + 0.5) / float(inv)]), element)   # the tie, rounded to the element type
        v[i] = float(np.clip(nudge(t[0], int(rng.choice([-1, 0, 0, 1])), element), lo_v, hi_v))
    return v


def nudge(t, steps, element):
    """t (an f32 value exact in `element`) moved `steps` ulps of the element type."""
    if element == "f32":
        for _ in range(abs(steps)):
            t = np.nextafter(t, f32(np.inf if steps > 0 else -np.inf), dtype=np.float32)
        return t
    if element == "f16":
        h = np.float16(t)
        for _ in range(abs(steps)):
            h = np.nextafter(h, np.float16(np.inf if steps > 0 else -np.inf), dtype=np.float16)
        return f32(h)
    bits = int(np.array([t], dtype=np.float32).view(np.uint32)[0]) >> 16   # bf16: step the 16-bit pattern
    bits += steps if t >= 0 else -steps
    return np.array([bits << 16], dtype=np.uint32).view(np.float32)[0]


# ------------------------------------------------------------------------------------------------ cases

LONG_KINDS = ["random", "ties", "somenan", "far"]
CASES = [
    # element, qdtype, mode, qmin, qmax, tokens, hidden, row kinds
    ("f32", "s8", "symmetric", -128, 127, 16, 48, ROW_KINDS),
    ("f32", "s8", "asymmetric", -128, 127, 16, 48, ROW_KINDS),
    ("f16", "s8", "symmetric", -128, 127, 16, 40, ROW_KINDS),
    ("f16", "s8", "asymmetric", -128, 127, 16, 40, ROW_KINDS),
    ("bf16", "s8", "symmetric", -128, 127, 16, 40, ROW_KINDS),
    ("bf16", "s8", "asymmetric", -128, 127, 16, 40, ROW_KINDS),
    ("f32", "s8", "symmetric", -128, 127, 4, 1030, LONG_KINDS),    # a block per row on the fused path (4120 bytes)
    ("f32", "s8", "asymmetric", -128, 127, 4, 1030, LONG_KINDS),
    ("f32", "s8", "symmetric", -128, 127, 1, 12300, ["ties"]),     # too long for shared memory: two passes
    ("f32", "s8", "asymmetric", -128, 127, 1, 12300, ["ties"]),
    ("f32", "u8", "asymmetric", 0, 255, 16, 32, ROW_KINDS),        # the generalisation
    ("f32", "s8", "symmetric", -127, 127, 16, 32, ROW_KINDS),
    ("f32", "s4", "symmetric", -8, 7, 16, 32, ROW_KINDS),
    ("f32", "u4", "asymmetric", 0, 15, 16, 32, ROW_KINDS),
    ("bf16", "s4", "asymmetric", -8, 7, 16, 32, ROW_KINDS),
]


def main():
    rng = np.random.default_rng(20250613)
    cases = []
    summary = []
    total_diff_f32 = 0
    for (element, qdtype, mode, qmin, qmax, tokens, hidden, kinds) in CASES:
        assert len(kinds) == tokens
        xs, hexes, scales, zps, qs = [], [], [], [], []
        diff = 0
        for kind in kinds:
            with np.errstate(all="ignore"):
                v64 = make_row(kind, hidden, rng, mode, qmin, qmax, element)
                row, hx = in_element(np.asarray(v64, dtype=np.float64), element)
                if mode == "symmetric":
                    s, zp, q, d = vllm_symmetric(row, qmin, qmax)
                else:
                    s, zp, q, d = vllm_asymmetric(row, qmin, qmax)
            diff += d
            xs.append(row)
            hexes += hx
            scales.append(int(np.array([s], dtype=np.float32).view(np.uint32)[0]))
            zps.append(int(zp))
            qs += [int(v) for v in q]
            assert all(qmin <= int(v) <= qmax for v in q)
        assert diff > 0, "no element of %s/%s/%s separates the product from the division" % (element, qdtype, mode)
        if element == "f32":
            total_diff_f32 += diff
        name = "%s/%s/%s [%d, %d] %dx%d" % (element, qdtype, mode, qmin, qmax, tokens, hidden)
        summary.append("%s: %d differ" % (name, diff))
        cases.append(golden_json.case(
            name, {"element": element, "qdtype": qdtype, "mode": mode, "qmin": qmin, "qmax": qmax,
                   "tokens": tokens, "hidden": hidden, "rows": kinds},
            {"x": golden_json.tensor(element, [int(h, 16) for h in hexes], [tokens, hidden]),
             "scale": golden_json.tensor("f32", scales), "zp": golden_json.tensor("s32", zps),
             "q": golden_json.tensor("s32", qs, [tokens, hidden])}))
    assert total_diff_f32 > 0, "no element where the product and the division round differently"
    notes = [
        "Golden values for DynamicRangeQuantizePlan's Vllm convention: a NumPy model of vLLM's "
        "dynamic_scaled_int8_quant and dynamic_scaled_int8_azp_quant kernels (vllm-project/vllm "
        "csrc/quantization/compressed_tensors/int8_quant_kernels.cu at fc4a42832215fcd219b0ab0d4b5b99e41baf8d45), "
        "not vLLM's output. See the generator.",
        "%d cases; elements where rint(x * inv_s) != rint(x / s) (the product modelled vs a division):" % len(CASES),
    ] + summary
    golden_json.write(OUT, "tests/data/gen_dynamic_range_vllm_golden.py", {"numpy": np.__version__}, notes, cases)
    print("wrote %s (%d cases)" % (OUT, len(CASES)), file=sys.stderr)


if __name__ == "__main__":
    main()
