#!/usr/bin/env python3
"""Generates tests/data/fp8_te_golden.json: golden data for Fp8QuantizePlan with
QuantConvention::TransformerEngine, from a NumPy model of TransformerEngine's FP8 cast (independent of
baracuda's C++ code).

    pip install numpy ml_dtypes
    python3 tests/data/gen_fp8_te_golden.py         # rewrites fp8_te_golden.json beside this script

The model was written from TransformerEngine's sources at commit d0067d0da6cb01811b8072a7d304f0e00344ce2b:
  - transformer_engine/common/util/vectorized_pointwise.h, `unary_kernel` (the per-tensor cast that
    `CastVectorizedUnaryKernelLauncher` in common/cast/fp8/quantize_fp8.cuh launches; `cast_fp8_1D_kernel`
    there and common/transpose/cast_transpose.cu do the same arithmetic):
        ComputeType max = 0; s = *scale;                        // ComputeType = fp32
        val  = static_cast<ComputeType>(input[i]);              // f16/bf16/f32 -> f32, exact
        max  = fmaxf(fabsf(val), max);                          // on the UNSCALED value; fmaxf skips NaN
        temp = val * s;                                         // one f32 multiplication
        output[i] = static_cast<OutputType>(temp);              // __nv_fp8_e4m3/e5m2 constructor
        max = reduce_max<...>(max, warp_id);                    // warp shuffles + shared memory, fmaxf
        if (threadIdx.x == 0) atomicMaxFloat(amax, max);        // atomicMax on the f32 bits as int
        if (blockIdx.x == 0 && threadIdx.x == 0 && scale_inv) reciprocal<float>(scale_inv, s);
  - transformer_engine/common/utils.cuh: `warp_reduce_max` / `reduce_max` (fmaxf, identity 0),
    `atomicMaxFloat` (`atomicMax(reinterpret_cast<int*>(addr), __float_as_int(value))`),
    `reciprocal<float>` (`__frcp_rn(value)`: the correctly rounded f32 1/value).
  - the __nv_fp8_e4m3/__nv_fp8_e5m2 constructors from float (cuda_fp8.hpp) convert with __NV_SATFINITE:
    round to nearest even; finite overflow and +-inf give +-max finite (448, 57344); NaN gives NaN.

The model, in np.float32 throughout:
  - y: p = np.float32(x) * np.float32(scale) (an f32 product), clipped to +-max finite (which is what
    SATFINITE does to values beyond max + half an ulp, and to +-inf; values between max and that
    threshold round to max anyway) and rounded by ml_dtypes. Each rounding is also checked against the
    exact routine of gen_cast_golden.py (IEEE round half to even from the exact f32 product).
  - amax: the kernel's structure is modelled (blocks of 512 threads, each thread folding fmaxf(|x|, max)
    from 0 over its grid-stride elements, taken one at a time (nvec = 1: the partition cannot change a
    maximum of non-NaN values), the block's fmaxf reduction, one atomicMaxFloat per block onto the
    starting amax as a signed-int maximum of bit patterns), with C's fmaxf (a NaN operand is ignored).
    The plan's non-accumulating mode equals a starting amax of +0.0.
  - scale_inv = np.float32(1) / np.float32(scale) (IEEE f32 division, as __frcp_rn).
TransformerEngine takes no f64 input, so there are no f64 sections (the plan rejects that combination).

One case each in the golden format of docs/testing.md: params in, out; the scalar f32 tensors scale,
amax_start, amax and scale_inv; the inputs x and the fp8 outputs y.
x holds NaNs (both signs, several payloads), +-inf, values whose product lands next to an fp8 rounding
midpoint (within an f32 ulp or two of it, on both sides) at non-power-of-two scales, values near the
saturation thresholds, subnormals and random magnitudes; some sections are all NaN, some have no NaN,
and some start from a non-zero amax (positive above and below the data's maximum, negative, NaN).
"""

import math
import os
import sys

import ml_dtypes
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import golden_json  # noqa: E402
from gen_cast_golden import round_float  # noqa: E402  (the exact IEEE-style rounding, validated there)

OUT = os.path.join(HERE, "fp8_te_golden.json")
SEED = 20261125

FP8 = {"fp8e4m3": (ml_dtypes.float8_e4m3fn, 448.0), "fp8e5m2": (ml_dtypes.float8_e5m2, 57344.0)}
INPUTS = {
    "f16": (np.float16, np.uint16, 4),
    "bf16": (ml_dtypes.bfloat16, np.uint16, 4),
    "f32": (np.float32, np.uint32, 8),
}
# Non-power-of-two scales (so x * scale rounds in f32 and 1 / scale is inexact), one per section kind.
SCALES = [0.3, 448.0 / 3.0, 1.0 / 0.7, 3.7e-3, 57344.0 / 1234.5]

THREADS = 512  # unary_kernel_threads
WARP = 32


# --------------------------------------------------------------------------------------------------
# The model of TransformerEngine's kernel
# --------------------------------------------------------------------------------------------------

def fmaxf(a, b):
    """C's fmaxf on np.float32: a NaN operand is ignored (both NaN: NaN)."""
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    return a if a >= b else b


def f32_bits_as_int(f):
    return int(np.array([f], np.float32).view(np.int32)[0])


def atomic_max_float(addr_bits, value):
    """atomicMaxFloat: atomicMax on the int32 reinterpretation of the f32 bits."""
    return max(addr_bits, f32_bits_as_int(value))


def te_amax(val32, start_bits, blocks):
    """The amax unary_kernel leaves in *amax: each thread's fmaxf fold over its grid-stride elements,
    reduce_max over the block (fmaxf, identity 0), one atomicMaxFloat per block."""
    n = len(val32)
    nthreads = blocks * THREADS
    thread_max = [np.float32(0)] * nthreads
    for i in range(n):  # nvec = 1 view of the loop: element i belongs to thread i % nthreads
        t = i % nthreads
        thread_max[t] = fmaxf(np.float32(abs(val32[i])), thread_max[t])
    amax = start_bits
    for b in range(blocks):
        m = np.float32(0)
        for t in range(b * THREADS, (b + 1) * THREADS):
            m = fmaxf(m, thread_max[t])
        amax = atomic_max_float(amax, m)
    return amax & 0xFFFFFFFF


def te_cast(x, scale32, fp8, fmax, fp8_name):
    """y bytes of static_cast<fp8>(float(x) * scale) with SATFINITE."""
    val32 = x.astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        p = (val32 * scale32).astype(np.float32)
    y = np.clip(p, -fmax, fmax).astype(fp8).view(np.uint8)
    for yb, pv in zip(y, p):
        if not math.isnan(float(pv)):
            want = round_float(pv, fp8_name, saturate=True)
            assert int(yb) == want, f"ml_dtypes and the exact rounding disagree on {pv!r}"
    return [int(b) for b in y], val32


# --------------------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------------------

def fp8_positive_values(fp8):
    codes = np.arange(0, 0x80, dtype=np.uint8).view(fp8).astype(np.float64)
    return sorted(v for v in codes if math.isfinite(v))


def step(x, in_type, in_bits, d):
    """The input-kind value d ulps from x (by bit pattern; x positive, finite)."""
    b = np.array([x], dtype=in_type).view(in_bits)
    b = b + in_bits(d) if d >= 0 else b - in_bits(-d)
    return float(b.view(in_type)[0])


def near_ties(rng, fp8, fmax, scale32, in_type, in_bits, count):
    """Inputs whose f32 product with the scale is next to an fp8 rounding midpoint: the input-kind value
    nearest midpoint / scale and its neighbours, both signs."""
    vals = fp8_positive_values(fp8)
    mids = [(a + b) / 2 for a, b in zip(vals, vals[1:])] + [fmax + (fmax - vals[-2]) / 2]  # saturation tie
    picks = list(rng.choice(len(mids), size=count, replace=False))
    picks += [0, 1, len(mids) - 2, len(mids) - 1]  # subnormal ties and the ones next to the maximum
    out = []
    for k in sorted(set(int(p) for p in picks)):
        target = mids[k] / float(scale32)
        with np.errstate(over="ignore"):
            centre = float(np.array([target], np.float64).astype(in_type)[0])
        if not math.isfinite(centre) or centre == 0:
            continue
        for d in (-1, 0, 1):
            v = step(centre, in_type, in_bits, d)
            out.append(v if rng.integers(0, 2) else -v)
    return out


def nans(in_name):
    """NaN bit patterns of the input kind: quiet and signalling payloads, both signs."""
    if in_name == "f32":
        return [0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FFFFFFF, 0xFF812345]
    if in_name == "f16":
        return [0x7E00, 0xFE00, 0x7C01, 0x7FFF, 0xFD55]
    return [0x7FC0, 0xFFC0, 0x7F81, 0x7FFF, 0xFF85]  # bf16


def section_inputs(rng, kind, in_name, in_type, in_bits, fp8, fmax, scale32):
    """x bit patterns for one section. kind: mixed (NaN, +-inf, near-ties, random), nan (NaN but no inf:
    a finite amax), finite (no NaN, no inf), allnan."""
    inf_bits = {"f32": (0x7F800000, 0xFF800000), "f16": (0x7C00, 0xFC00), "bf16": (0x7F80, 0xFF80)}[in_name]
    if kind == "allnan":
        pats = nans(in_name) * 41  # 205 elements: more than one vector, a ragged tail
        return np.array(pats[:203], dtype=in_bits)
    vals = near_ties(rng, fp8, fmax, scale32, in_type, in_bits, 24)
    sat = fmax / float(scale32)  # inputs near the saturation threshold
    vals += [sat, -sat * 1.0625, sat * 1.2, 0.0, -0.0, 1e-6, -3e-5]
    mags = np.exp2(rng.uniform(-12.0, 12.0, 80))
    vals += list(mags * np.where(rng.integers(0, 2, 80) == 1, -1.0, 1.0))
    with np.errstate(over="ignore"):
        x = np.array(vals, dtype=np.float64).astype(in_type).view(in_bits).copy()
    x = x[np.isfinite(x.view(in_type).astype(np.float32))]  # overflowed conversions (f16) out
    if kind in ("mixed", "nan"):
        specials = np.array(nans(in_name) + (list(inf_bits) if kind == "mixed" else []), dtype=in_bits)
        where = rng.choice(len(x) + len(specials), size=len(specials), replace=False)
        out = list(x)
        for pos, s in sorted(zip(where, specials)):
            out.insert(int(pos), s)
        x = np.array(out, dtype=in_bits)
    return x


def main():
    rng = np.random.default_rng(SEED)
    cases = []
    # (section kind, amax start): the start 0 sections double as the non-accumulating plan's.
    plans = [("nan", 0.0), ("mixed", 0.0), ("finite", 0.0), ("allnan", 0.0), ("nan", 1e9), ("nan", 0.25),
             ("allnan", 3.5), ("nan", -2.0), ("allnan", -2.0), ("mixed", math.nan), ("nan", math.nan)]
    for in_name, (in_type, in_bits, width) in INPUTS.items():
        for fp8_name, (fp8, fmax) in FP8.items():
            for si, (kind, start) in enumerate(plans):
                scale32 = np.float32(SCALES[si % len(SCALES)])
                x_bits = section_inputs(rng, kind, in_name, in_type, in_bits, fp8, fmax, scale32)
                x = x_bits.view(in_type)
                y, val32 = te_cast(x, scale32, fp8, fmax, fp8_name)
                start_bits = f32_bits_as_int(np.float32(start))
                blocks = max(1, -(-len(x) // THREADS))
                amax = te_amax(val32, start_bits, blocks)
                scale_inv = np.float32(1) / scale32
                f32 = lambda bits: golden_json.tensor("f32", [bits], [])  # noqa: E731
                cases.append(golden_json.case(
                    f"{in_name}->{fp8_name} #{si} {kind} start {start}", {"in": in_name, "out": fp8_name},
                    {"scale": f32(int(scale32.view(np.uint32))), "amax_start": f32(start_bits & 0xFFFFFFFF),
                     "amax": f32(amax), "scale_inv": f32(int(scale_inv.view(np.uint32))),
                     "x": golden_json.tensor(in_name, x_bits), "y": golden_json.tensor(fp8_name, y)}))
    # Sanity of the model itself: NaN is skipped, inf counts, all-NaN gives the start (or 0).
    assert te_amax(np.array([np.nan, 2.0, -3.0], np.float32), 0, 1) == f32_bits_as_int(np.float32(3.0))
    assert te_amax(np.array([np.nan, -np.inf], np.float32), 0, 1) == 0x7F800000
    assert te_amax(np.array([np.nan], np.float32), f32_bits_as_int(np.float32(-1.0)), 1) == 0
    assert te_amax(np.array([np.nan], np.float32), 0x7FC00000, 1) == 0x7FC00000
    golden_json.write(
        OUT, "tests/data/gen_fp8_te_golden.py", {"numpy": np.__version__, "ml_dtypes": ml_dtypes.__version__},
        ["Golden data for Fp8QuantizePlan with QuantConvention::TransformerEngine, from a model of "
         "TransformerEngine's cast; see the generator.",
         "Each case: params in/out (kinds), scalar f32 tensors scale, amax_start, amax and scale_inv, the inputs x "
         "and the fp8 bytes y."],
        cases)
    print(f"wrote {OUT}: {len(cases)} cases")


if __name__ == "__main__":
    main()
