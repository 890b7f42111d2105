#!/usr/bin/env python3
"""Generates tests/data/cast_golden.json: golden bit patterns for CastPlan, from tools independent of
baracuda's C++ code (NumPy and ml_dtypes).

    pip install numpy ml_dtypes
    python3 tests/data/gen_cast_golden.py            # rewrites cast_golden.json beside this script

What it produces (one case per source kind: the input bits x, and the output bits of each target):
  [fp8e4m3->f32], [fp8e5m2->f32]   all 256 codes -> f32 (ml_dtypes)
  [f32->...]                       chosen + random f32 values -> f16 (NumPy), bf16, fp8e4m3, fp8e4m3 sat,
                                   fp8e5m2, fp8e5m2 sat (ml_dtypes; "sat" = clip to +-max finite first)
  [f64->...]                       chosen + random f64 values -> the same six targets
  [s64->...]                       chosen + random int64 values -> f32, bf16, f16, fp8e4m3, fp8e5m2

What it checks before writing anything (the script fails otherwise):
  1. ml_dtypes follows PyTorch's non-saturating fp8 semantics: E4M3 ("fn", no infinity) rounds 464 (the
     midpoint between 448 and the first unrepresentable 480) to 448 by ties-to-even, gives NaN above it
     and for +-inf; E5M2 keeps 57344 up to just below 61440, gives +-inf from 61440 on and for +-inf.
  2. An exact rounding routine written here from the IEEE definition (Python integers and fractions,
     round half to even, overflow rules per format) agrees bit for bit with NumPy/ml_dtypes on every f32
     input (f16, bf16, both fp8 kinds, both fp8 modes) and with NumPy on every f64 -> f16 and int64 -> f32.
  3. ml_dtypes converts f64 to bf16 and fp8 through f32 (it rounds twice: e.g. 1 + 2^-8 + 2^-30 -> bf16
     gives 1.0 instead of 1.0078125). baracuda rounds once from the double, so for f64 -> bf16/fp8 and
     int64 -> bf16/fp8 the golden values come from the exact routine of (2), validated by (2); the script
     asserts the double-rounding example above so that a future ml_dtypes that rounds once is noticed.
"""

import math
import os
import sys
from fractions import Fraction

import ml_dtypes
import numpy as np

import golden_json

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "cast_golden.json")
SEED = 20260522

E4M3 = ml_dtypes.float8_e4m3fn
E5M2 = ml_dtypes.float8_e5m2
BF16 = ml_dtypes.bfloat16

# (mantissa bits, exponent bits, bias, ieee specials); ieee=False is OCP E4M3 "fn".
FORMATS = {
    "f16": (10, 5, 15, True),
    "bf16": (7, 8, 127, True),
    "f32": (23, 8, 127, True),
    "fp8e4m3": (3, 4, 7, False),
    "fp8e5m2": (2, 5, 15, True),
}


def fmt_max_bits(m, e, bias, ieee):
    emax = (1 << e) - 1
    if ieee:
        return ((emax - 1) << m) | ((1 << m) - 1)
    return (emax << m) | ((1 << m) - 2)


def fmt_value(bits, m, e, bias, ieee):
    ef = (bits >> m) & ((1 << e) - 1)
    mf = bits & ((1 << m) - 1)
    if ef == 0:
        return Fraction(mf, 1) * Fraction(2) ** (1 - bias - m)
    return Fraction(mf | (1 << m), 1) * Fraction(2) ** (ef - bias - m)


def exact_round(v, name, saturate=False):
    """Rounds v (a Fraction, or 'nan' / '+inf' / '-inf') to format `name`, ties to even; returns the bits."""
    m, e, bias, ieee = FORMATS[name]
    sign_bit = 1 << (m + e)
    emaxf = (1 << e) - 1
    nan = (emaxf << m) | ((1 << (m - 1)) if ieee else ((1 << m) - 1))
    if v == "nan":
        return nan
    neg = v == "-inf" or (not isinstance(v, str) and (v < 0))
    sign = sign_bit if neg else 0
    maxb = fmt_max_bits(m, e, bias, ieee)

    def overflow():
        if saturate:
            return sign | maxb
        return sign | (emaxf << m) if ieee else sign | nan

    if isinstance(v, str):
        return overflow()
    a = abs(v)
    if a == 0:
        return sign  # signed zero (v == 0 from a Fraction is +0; callers pass -0.0 separately)
    emin = 1 - bias
    ex = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** ex > a:
        ex -= 1
    while Fraction(2) ** (ex + 1) <= a:
        ex += 1
    ex = max(ex, emin)
    q = Fraction(2) ** (ex - m)
    r = a / q
    n = r.numerator // r.denominator
    rem = r - n
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2 == 1):
        n += 1
    if n * q > fmt_value(maxb, m, e, bias, ieee):
        return overflow()
    field = ex + bias
    if n >= (1 << (m + 1)):
        n //= 2
        field += 1
    if n < (1 << m):
        return sign | n
    return sign | (field << m) | (n & ((1 << m) - 1))


def exact_of_float(x):
    """A Python float (or numpy scalar) as an exact Fraction, or a special marker."""
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    if x == 0:
        return Fraction(0)
    return Fraction(x)


def round_float(x, name, saturate=False):
    bits = exact_round(exact_of_float(x), name, saturate)
    if float(x) == 0 and math.copysign(1.0, float(x)) < 0:
        bits |= 1 << (FORMATS[name][0] + FORMATS[name][1])
    return bits


def u16(a):
    return a.view(np.uint16).astype(np.uint64)


def u8(a):
    return a.view(np.uint8).astype(np.uint64)


def same_or_both_nan(a_bits, b_bits, name):
    m, e, bias, ieee = FORMATS[name]
    mask = (1 << (m + e)) - 1

    def isnan(b):
        ef = (b >> m) & ((1 << e) - 1)
        mf = b & ((1 << m) - 1)
        if ieee:
            return ef == (1 << e) - 1 and mf != 0
        return ef == (1 << e) - 1 and mf == (1 << m) - 1

    return a_bits == b_bits or (isnan(a_bits) and isnan(b_bits)) or (
        (a_bits & mask) == 0 and (b_bits & mask) == 0 and a_bits == b_bits)


def check_fp8_semantics():
    def e4(v):
        return int(np.array([v], np.float32).astype(E4M3).view(np.uint8)[0])

    def e5(v):
        return int(np.array([v], np.float32).astype(E5M2).view(np.uint8)[0])

    nxt = float(np.nextafter(np.float32(464), np.float32(1000)))
    assert e4(448) == 0x7E and e4(464) == 0x7E, "E4M3: 448 and the tie 464 must give 448"
    assert e4(nxt) & 0x7F == 0x7F and e4(480) & 0x7F == 0x7F, "E4M3: above 464 must give NaN"
    assert e4(float("inf")) & 0x7F == 0x7F and e4(-float("inf")) & 0x7F == 0x7F, "E4M3: +-inf must give NaN"
    below = float(np.nextafter(np.float32(61440), np.float32(0)))
    assert e5(57344) == 0x7B and e5(below) == 0x7B, "E5M2: up to just below 61440 must give 57344"
    assert e5(61440) == 0x7C and e5(-61440) == 0xFC, "E5M2: 61440 (tie to even) must give inf"
    assert e5(float("inf")) == 0x7C, "E5M2: inf must stay inf"
    # ml_dtypes rounds f64 through f32 (see the module comment).
    d = np.array([1 + 2.0**-8 + 2.0**-30], np.float64)
    assert int(u16(d.astype(BF16))[0]) == 0x3F80, "ml_dtypes f64->bf16 now rounds once: use it directly"
    assert round_float(d[0], "bf16") == 0x3F81


def chosen_f32():
    v = [0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 0.1, 1 / 3, 65504.0, 65519.0, 65520.0, 65536.0, -65520.0,
         448.0, 464.0, 480.0, 496.0, 57344.0, 61439.0, 61440.0, 65536.0, 1e10, -1e10, 3.4028234663852886e38,
         float("inf"), -float("inf"), float("nan"), 2.0**-24, 2.0**-25, 3 * 2.0**-26, 2.0**-14, 2.0**-15,
         2.0**-9, 2.0**-10, 3 * 2.0**-11, 2.0**-16, 2.0**-17, 2.0**-6, 2.0**-7, 2.0**-126, 2.0**-133, 2.0**-134,
         2.0**-149, 1.17549435e-38]
    # Ties and near-ties for f16 (11 bits), bf16 (8), e4m3 (4), e5m2 (3) around several binades.
    for p in (11, 8, 4, 3):
        for ex in (-20, -8, -3, 0, 1, 7, 8, 14, 15):
            base = 2.0**ex
            for k in (1, 3, 5):
                t = base * (1 + k * 2.0**-p)
                v += [t, -t, float(np.nextafter(np.float32(t), np.float32(0))),
                      float(np.nextafter(np.float32(t), np.float32(1e30)))]
    # Around the fp8 overflow thresholds.
    for b in (448.0, 464.0, 480.0, 57344.0, 61440.0, 65504.0, 65520.0):
        x = np.float32(b)
        for _ in range(3):
            v += [float(x), -float(x)]
            x = np.nextafter(x, np.float32(1e30))
        x = np.float32(b)
        for _ in range(3):
            x = np.nextafter(x, np.float32(0))
            v += [float(x)]
    return np.array(v, dtype=np.float32)


def random_f32(rng, n):
    bits = rng.integers(0, 2**32, size=n, dtype=np.uint64).astype(np.uint32)
    # Half of them with exponents where the narrow formats live (|x| in [2^-20, 2^17)).
    half = n // 2
    exp = rng.integers(127 - 20, 127 + 17, size=half, dtype=np.uint64).astype(np.uint32)
    bits[:half] = (bits[:half] & np.uint32(0x807FFFFF)) | (exp << np.uint32(23))
    return bits.view(np.float32)


def random_f64(rng, n):
    bits = rng.integers(0, 2**63, size=n, dtype=np.uint64) | (rng.integers(0, 2, size=n, dtype=np.uint64) << 63)
    half = n // 2
    exp = rng.integers(1023 - 20, 1023 + 17, size=half, dtype=np.uint64)
    bits[:half] = (bits[:half] & np.uint64(0x800FFFFFFFFFFFFF)) | (exp << np.uint64(52))
    return bits.view(np.float64)


def chosen_f64():
    v = [1 + 2.0**-8 + 2.0**-30, 1 + 2.0**-8 - 2.0**-30, 1 + 2.0**-11 + 2.0**-40, 1 + 2.0**-11 - 2.0**-40,
         1 + 2.0**-4 + 2.0**-40, 1 + 2.0**-4 - 2.0**-40, 1 + 2.0**-3 + 2.0**-40, 464.0 + 2.0**-30,
         464.0 - 2.0**-30, 61440.0 - 2.0**-30, 65520.0 - 2.0**-30, 1e300, -1e300, 1e-300, 5e-324,
         3.4028235677973366e38, 3.3961e38, 0.0, -0.0, float("inf"), -float("inf"), float("nan")]
    for p in (11, 8, 4, 3):
        for ex in (-20, -3, 0, 5, 14):
            for k in (1, 3):
                t = 2.0**ex * (1 + k * 2.0**-p)
                v += [t + 2.0 ** (ex - 45), t - 2.0 ** (ex - 45), -(t + 2.0 ** (ex - 45))]
    return np.array(v, dtype=np.float64)


def chosen_s64(rng):
    v = [0, 1, -1, 2**24 + 1, 2**24 + 3, 2**53 + 1, 2**53 + 3, -(2**53 + 1), 2**63 - 1, -(2**63),
         2**40 + 2**32 + 1, 2**40 + 2**32, 2**40 + 2**32 - 1, 65504, 65519, 65520, -65520, 448, 464, 465, 480,
         57344, 61439, 61440, 1000, -1000, 255, 256, 257]
    for ex in range(1, 63):
        for k in (1, 3):
            base = 1 << ex
            for d in (-1, 0, 1):
                x = base + k * (base >> 8) + d if ex > 8 else base + d
                if -(2**63) <= x < 2**63:
                    v += [x, -x]
    v += [int(x) for x in rng.integers(-(2**63), 2**63 - 1, size=200, dtype=np.int64)]
    v += [int(x) for x in rng.integers(-(2**20), 2**20, size=100, dtype=np.int64)]
    return v


def main():
    np.seterr(all="ignore")  # overflow to inf/NaN is what is being recorded
    check_fp8_semantics()
    rng = np.random.default_rng(SEED)
    cases = []

    def section(src, targets, x_bits, cols):
        """One case per source kind: tensor x, and one tensor per target (named as in `targets`)."""
        kind = lambda t: t.split(":")[0]  # noqa: E731
        tensors = {"x": golden_json.tensor(src, x_bits)}
        tensors.update({t: golden_json.tensor(kind(t), cols[t]) for t in targets})
        cases.append(golden_json.case(f"{src}->" + ",".join(targets), {"in": src, "targets": targets}, tensors))

    # fp8 -> f32: all 256 codes.
    for name, t in (("fp8e4m3", E4M3), ("fp8e5m2", E5M2)):
        codes = np.arange(256, dtype=np.uint8)
        f = codes.view(t).astype(np.float32).view(np.uint32)
        section(name, ["f32"], codes, {"f32": f})

    targets = ["f16", "bf16", "fp8e4m3", "fp8e4m3:sat", "fp8e5m2", "fp8e5m2:sat"]

    # f32 -> narrow: NumPy / ml_dtypes directly (single rounding from f32), cross-checked with exact_round.
    x32 = np.concatenate([chosen_f32(), random_f32(rng, 1200)])
    clip = lambda a, mx: np.where(np.isnan(a), a, np.clip(a, -mx, mx)).astype(a.dtype)  # noqa: E731
    cols = {
        "f16": u16(x32.astype(np.float16)),
        "bf16": u16(x32.astype(BF16)),
        "fp8e4m3": u8(x32.astype(E4M3)),
        "fp8e4m3:sat": u8(clip(x32, np.float32(448)).astype(E4M3)),
        "fp8e5m2": u8(x32.astype(E5M2)),
        "fp8e5m2:sat": u8(clip(x32, np.float32(57344)).astype(E5M2)),
    }
    for t in targets:
        name, sat = t.split(":")[0], t.endswith(":sat")
        for i, x in enumerate(x32):
            mine = round_float(x, name, sat)
            assert same_or_both_nan(mine, int(cols[t][i]), name), f"f32 {x!r} -> {t}: {mine:x} vs {int(cols[t][i]):x}"
    section("f32", targets, x32.view(np.uint32), cols)

    # f64 -> narrow: f16 from NumPy (single rounding, cross-checked); bf16/fp8 from exact_round.
    x64 = np.concatenate([chosen_f64(), random_f64(rng, 1200)])
    f16_np = u16(x64.astype(np.float16))
    cols = {t: [] for t in targets}
    for i, x in enumerate(x64):
        mine_f16 = round_float(x, "f16")
        assert same_or_both_nan(mine_f16, int(f16_np[i]), "f16"), f"f64 {x!r} -> f16"
        outs = [int(f16_np[i])] + [round_float(x, t.split(":")[0], t.endswith(":sat")) for t in targets[1:]]
        for t, o in zip(targets, outs):
            cols[t].append(o)
    section("f64", targets, x64.view(np.uint64), cols)

    # s64 -> f32 (NumPy, cross-checked), bf16/f16/fp8 (exact_round).
    s64 = chosen_s64(rng)
    f32_np = np.array(s64, dtype=np.int64).astype(np.float32).view(np.uint32)
    int_targets = ["f32", "bf16", "f16", "fp8e4m3", "fp8e5m2"]
    cols = {t: [] for t in int_targets}
    for i, x in enumerate(s64):
        mine = exact_round(Fraction(x), "f32")
        assert mine == int(f32_np[i]), f"s64 {x} -> f32: {mine:x} vs {int(f32_np[i]):x}"
        outs = [mine] + [exact_round(Fraction(x), t) for t in int_targets[1:]]
        for t, o in zip(int_targets, outs):
            cols[t].append(o)
    section("s64", int_targets, s64, cols)

    golden_json.write(
        OUT, "tests/data/gen_cast_golden.py", {"numpy": np.__version__, "ml_dtypes": ml_dtypes.__version__},
        ["Golden bit patterns for CastPlan; see the generator for what was checked.",
         "One case per source kind: tensor x (the inputs) and one tensor per target of params.targets, "
         "named as the target (':sat': saturating, values clipped to +-max finite first)."],
        cases)
    print(f"wrote {OUT}: {len(cases)} cases", file=sys.stderr)


if __name__ == "__main__":
    main()
