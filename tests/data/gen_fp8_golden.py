#!/usr/bin/env python3
"""Generates tests/data/fp8_golden.json: golden fp8 bytes and amax values for Fp8QuantizePlan, from tools
independent of baracuda's C++ code (NumPy and ml_dtypes).

    pip install numpy ml_dtypes
    python3 tests/data/gen_fp8_golden.py            # rewrites fp8_golden.json beside this script

The operation: y = saturate_to_fp8(x * scale), amax = max |x| (f32; NaN if any x is NaN).
  - f16, bf16, f32 inputs: the product is an f32 multiplication (NumPy), clipped to +-max finite (which
    also maps +-inf to +-max; NaN stays NaN) and converted by ml_dtypes (round to nearest even).
  - f64 inputs: the product is an f64 multiplication, rounded once to fp8 by the exact routine of
    gen_cast_golden.py (ml_dtypes would round twice, through f32; see that script). For every f32 product
    the script checks that the exact routine and ml_dtypes agree, so the two sources are one rule.

One case per (input kind, fp8 kind, scale) in the golden format of docs/testing.md: params in, out; the
scalar f32 tensors scale and amax; the inputs x and the fp8 outputs y.
The values are non-uniform: chosen boundaries (fp8 maxima and the rounding midpoints next to them,
subnormals, ties, signed zeros, values far out of range) and log-uniform random magnitudes. NaN and
+-inf are in the scale = 1 sections only, so the other sections check a finite amax.
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

OUT = os.path.join(HERE, "fp8_golden.json")
SEED = 20260523

FP8 = {"fp8e4m3": (ml_dtypes.float8_e4m3fn, 448.0), "fp8e5m2": (ml_dtypes.float8_e5m2, 57344.0)}
INPUTS = {
    "f16": (np.float16, np.uint16, 4),
    "bf16": (ml_dtypes.bfloat16, np.uint16, 4),
    "f32": (np.float32, np.uint32, 8),
    "f64": (np.float64, np.uint64, 16),
}
SCALES = [1.0, 0.3, 448.0 / 3.0, 2.0**-12]

CHOSEN = [
    0.0, -0.0, 1.0, -1.0, 0.1, -3.14159, 1.0625, 1.1875, -1.0625,  # E4M3 ties at 1 + 1/16, 1 + 3/16
    448.0, 464.0, 465.0, 480.0, -500.0, 57344.0, 61439.0, 61440.0, -1e5, 1e30, -3.4e38,
    2.0**-6, 2.0**-9, 2.0**-10, 3 * 2.0**-11, 2.0**-14, 2.0**-16, 2.0**-17, 3 * 2.0**-18,  # fp8 subnormals, ties
    1e-40, -6e-8,  # subnormal in f32 / f16
]
SPECIALS = [math.nan, math.inf, -math.inf]


def values(rng, with_specials):
    mags = np.exp2(rng.uniform(-20.0, 20.0, 64))
    signs = np.where(rng.integers(0, 2, 64) == 1, -1.0, 1.0)
    v = CHOSEN + list(mags * signs)
    return v + SPECIALS if with_specials else v


def quantize_f32_path(x32, scale32, fp8, fmax):
    """x32, scale32: float32 arrays/scalars. NumPy f32 product, clip, ml_dtypes rounding."""
    with np.errstate(over="ignore", invalid="ignore"):
        p = (x32 * scale32).astype(np.float32)
    return np.clip(p, -fmax, fmax).astype(fp8).view(np.uint8), p


def main():
    rng = np.random.default_rng(SEED)
    cases = []
    for in_name, (in_type, in_bits, width) in INPUTS.items():
        for fp8_name, (fp8, fmax) in FP8.items():
            for si, scale in enumerate(SCALES):
                scale32 = np.float32(scale)
                with np.errstate(over="ignore"):
                    x = np.array(values(rng, si == 0), dtype=np.float64).astype(in_type)
                x64 = x.astype(np.float64)
                if in_name == "f64":
                    with np.errstate(over="ignore", invalid="ignore"):
                        prod = x64 * np.float64(scale32)
                    y = [round_float(p, fp8_name, saturate=True) for p in prod]
                else:
                    y_ml, prod32 = quantize_f32_path(x.astype(np.float32), scale32, fp8, fmax)
                    y = [int(b) for b in y_ml]
                    exact = [round_float(p, fp8_name, saturate=True) for p in prod32]
                    for a, b, p in zip(y, exact, prod32):
                        both_nan = math.isnan(float(p))
                        assert a == b or both_nan, f"ml_dtypes and the exact rounding disagree on {p!r}"
                amax = np.float32(np.nan) if np.isnan(x64).any() else np.float32(np.max(np.abs(x64)))
                amax_bits = 0x7FC00000 if math.isnan(amax) else int(amax.view(np.uint32))
                scale_bits = int(scale32.view(np.uint32))
                cases.append(golden_json.case(
                    f"{in_name}->{fp8_name} scale {scale_bits:08x}", {"in": in_name, "out": fp8_name},
                    {"scale": golden_json.tensor("f32", [scale_bits], []),
                     "amax": golden_json.tensor("f32", [amax_bits], []),
                     "x": golden_json.tensor(in_name, x.view(in_bits)),
                     "y": golden_json.tensor(fp8_name, y)}))
    golden_json.write(
        OUT, "tests/data/gen_fp8_golden.py", {"numpy": np.__version__, "ml_dtypes": ml_dtypes.__version__},
        ["Golden fp8 bytes and amax for Fp8QuantizePlan; see the generator.",
         "Each case: params in/out (kinds), scalar f32 tensors scale and amax, the inputs x and the fp8 bytes y."],
        cases)
    print(f"wrote {OUT}: {len(cases)} cases")


if __name__ == "__main__":
    main()
