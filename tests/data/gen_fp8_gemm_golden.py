#!/usr/bin/env python3
"""Generates tests/data/fp8_gemm_golden.json: golden outputs of Fp8GemmPlan, from tools independent of
baracuda's C++ code (NumPy, ml_dtypes and Python's exact rationals).

    pip install numpy ml_dtypes
    python3 tests/data/gen_fp8_gemm_golden.py       # rewrites fp8_gemm_golden.json beside this script

The operands: A [M, K] and B [N, K] are FP8 codes made by ml_dtypes (float8_e4m3fn, float8_e5m2: round to
nearest even) from normal samples whose magnitude varies by row and by 128-wide K block, clipped to the
format's range first (ml_dtypes maps overflow to NaN, not to the largest finite value). The scales are f32.

The operation (include/baracuda/ops/fp8_gemm.hpp), evaluated exactly with fractions.Fraction on the values
ml_dtypes decodes the codes to, then rounded once:
  Tensor:   acc[m, n] = a_scale * b_scale * sum_k A[m, k] * B[n, k]
  Block128: acc[m, n] = sum_kb a_scale[m, kb] * b_scale[n // 128, kb] * sum_{k in block kb} A[m, k] * B[n, k]
  v = alpha * acc (+ bias[n]); v = relu(v) where asked;
  f16/bf16/f32 D: round(v);  FP8 D: round_saturating(v * d_scale);  amax = round_f32(max |v|).
The rounding is gen_cast_golden.py's exact routine (ties to even); for every output the script checks that
ml_dtypes' own conversion of the f64 nearest to the exact value gives the same bits wherever that f64 is not
within one f64 ulp of a rounding boundary (so the two sources are one rule).

One case per line in the golden format of docs/testing.md: params a_kind, b_kind, out, scaling, alpha (f64 bits),
activation ("none" / "relu"), bias_kind (absent without a bias), m, n, k; tensors a, b, a_scale, b_scale, bias,
d_scale (FP8 D), d, amax (FP8 D).
"""

import math
import os
import sys
from fractions import Fraction

import ml_dtypes
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import golden_json  # noqa: E402
from gen_cast_golden import exact_of_float, exact_round  # noqa: E402

OUT = os.path.join(HERE, "fp8_gemm_golden.json")
SEED = 20261127

FP8 = {"fp8e4m3": (ml_dtypes.float8_e4m3fn, 448.0), "fp8e5m2": (ml_dtypes.float8_e5m2, 57344.0)}
FLOATS = {"f16": (np.float16, np.uint16), "bf16": (ml_dtypes.bfloat16, np.uint16), "f32": (np.float32, np.uint32)}


def fp8_matrix(rng, kind, rows, k):
    dtype, lim = FP8[kind]
    mag = np.array([[2.0 ** ((r % 7) - 3 + ((i // 128) % 3) - 1) for i in range(k)] for r in range(rows)])
    x = np.clip(rng.standard_normal((rows, k)) * mag, -lim, lim).astype(np.float32)
    q = x.astype(dtype)
    return q.view(np.uint8).astype(np.uint64).reshape(-1).tolist(), q.astype(np.float64)


def f32_array(values):
    a = np.asarray(values, dtype=np.float32)
    return a.view(np.uint32).astype(np.uint64).reshape(-1).tolist(), a.astype(np.float64)


def round_to(kind, exact):
    """The bits of the exact Fraction rounded once to `kind` (FP8 saturating), checked against ml_dtypes/NumPy."""
    fp8 = kind in FP8
    bits = exact_round(exact, kind, saturate=fp8)
    nearest = float(exact)
    lo, hi = math.nextafter(nearest, -math.inf), math.nextafter(nearest, math.inf)
    safe = exact_round(Fraction(lo), kind, fp8) == exact_round(Fraction(hi), kind, fp8) == bits
    if safe:
        if fp8:
            dtype, lim = FP8[kind]
            check = np.array([min(max(nearest, -lim), lim)], dtype=np.float64).astype(np.float32).astype(dtype)
            assert int(check.view(np.uint8)[0]) == bits, (kind, nearest)
        else:
            dtype, udtype = FLOATS[kind]
            assert int(np.array([nearest]).astype(dtype).view(udtype)[0]) == bits, (kind, nearest)
    return bits


def bias_values(rng, kind, n):
    dtype, udtype = FLOATS[kind]
    b = rng.uniform(-1.0, 1.0, n).astype(dtype)
    return b.view(udtype).astype(np.uint64).tolist(), b.astype(np.float64)


def make_case(rng, name, a_kind, b_kind, out, scaling, m, n, k, alpha=1.0, relu=False, bias_kind=None):
    tensors = {}
    a_bits, a = fp8_matrix(rng, a_kind, m, k)
    b_bits, b = fp8_matrix(rng, b_kind, n, k)
    tensors["a"] = golden_json.tensor(a_kind, a_bits, [m, k])
    tensors["b"] = golden_json.tensor(b_kind, b_bits, [n, k])
    kb = (k + 127) // 128
    if scaling == "tensor":
        sa_bits, sa = f32_array([2.0 ** rng.uniform(-4, 2)])
        sb_bits, sb = f32_array([2.0 ** rng.uniform(-4, 2)])
        tensors["a_scale"] = golden_json.tensor("f32", sa_bits, [1])
        tensors["b_scale"] = golden_json.tensor("f32", sb_bits, [1])
    else:
        sa_bits, sa = f32_array(2.0 ** rng.uniform(-4, 2, (m, kb)))
        sb_bits, sb = f32_array(2.0 ** rng.uniform(-4, 2, ((n + 127) // 128, kb)))
        sa, sb = sa.reshape(m, kb), sb.reshape((n + 127) // 128, kb)
        tensors["a_scale"] = golden_json.tensor("f32", sa_bits, [m, kb])
        tensors["b_scale"] = golden_json.tensor("f32", sb_bits, [(n + 127) // 128, kb])
    bias = None
    if bias_kind is not None:
        bias_bits, bias = bias_values(rng, bias_kind, n)
        tensors["bias"] = golden_json.tensor(bias_kind, bias_bits, [n])
    d_scale = None
    if out in FP8:
        ds_bits, ds = f32_array([2.0 ** rng.uniform(-1, 3)])
        tensors["d_scale"] = golden_json.tensor("f32", ds_bits, [1])
        d_scale = Fraction(float(ds[0]))
    fa = [[Fraction(float(x)) for x in row] for row in a]
    fb = [[Fraction(float(x)) for x in row] for row in b]
    d_bits, amax = [], Fraction(0)
    for i in range(m):
        for j in range(n):
            acc = Fraction(0)
            for blk in range(kb):
                part = sum(fa[i][t] * fb[j][t] for t in range(blk * 128, min(k, blk * 128 + 128)))
                if scaling == "tensor":
                    acc += part
                else:
                    acc += Fraction(float(sa[i][blk])) * Fraction(float(sb[j // 128][blk])) * part
            if scaling == "tensor":
                acc *= Fraction(float(sa[0])) * Fraction(float(sb[0]))
            v = Fraction(alpha) * acc
            if bias is not None:
                v += Fraction(float(bias[j]))
            if relu and v < 0:
                v = Fraction(0)
            amax = max(amax, abs(v))
            d_bits.append(round_to(out, v * d_scale if d_scale is not None else v))
    tensors["d"] = golden_json.tensor(out, d_bits, [m, n])
    if out in FP8:
        tensors["amax"] = golden_json.tensor("f32", [round_to("f32", amax)], [1])
    params = {"a_kind": a_kind, "b_kind": b_kind, "out": out, "scaling": scaling, "alpha": golden_json.f64(alpha),
              "activation": "relu" if relu else "none", "m": m, "n": n, "k": k}
    if bias_kind is not None:
        params["bias_kind"] = bias_kind
    return golden_json.case(name, params, tensors)


def main():
    assert exact_of_float(1.5) == Fraction(3, 2)
    rng = np.random.default_rng(SEED)
    e4, e5 = "fp8e4m3", "fp8e5m2"
    cases = [
        make_case(rng, "tensor_e4e4_bf16", e4, e4, "bf16", "tensor", 7, 9, 64),
        make_case(rng, "tensor_e4e5_f16_bias_relu", e4, e5, "f16", "tensor", 5, 12, 160, 0.5, True, "f16"),
        make_case(rng, "tensor_e5e4_f32_bias", e5, e4, "f32", "tensor", 6, 10, 96, 1.0, False, "f32"),
        make_case(rng, "tensor_e4e4_fp8e4m3_amax", e4, e4, e4, "tensor", 8, 8, 128, 0.25),
        make_case(rng, "tensor_e4e5_fp8e5m2_amax_bias", e4, e5, e5, "tensor", 5, 7, 48, 1.0, False, "bf16"),
        make_case(rng, "block_e4e4_bf16", e4, e4, "bf16", "block128", 9, 150, 288),
        make_case(rng, "block_e4e4_fp8e4m3_relu_bias", e4, e4, e4, "block128", 4, 130, 272, 1.0, True, "bf16"),
        make_case(rng, "block_e5e4_f32", e5, e4, "f32", "block128", 3, 20, 400, 2.0),
    ]
    notes = [
        "A and B are FP8 codes made by ml_dtypes from clipped normal samples; the outputs are the exact rational "
        "result rounded once (gen_cast_golden.py's routine), checked against ml_dtypes/NumPy conversions away "
        "from rounding boundaries.",
    ]
    tools = {"numpy": np.__version__, "ml_dtypes": ml_dtypes.__version__, "python": sys.version.split()[0]}
    golden_json.write(OUT, "tests/data/gen_fp8_gemm_golden.py", tools, notes, cases)


if __name__ == "__main__":
    main()
