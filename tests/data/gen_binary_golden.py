#!/usr/bin/python3
"""Generates tests/data/binary_golden.json: golden results for the binary family (BinaryPlan, ComparePlan,
BinaryBackwardPlan) computed by PyTorch on the CPU, independent of baracuda's C++ code.

    /usr/bin/python3 tests/data/gen_binary_golden.py    # Debian's python3-torch (1.13) and NumPy

What it produces (the golden format of docs/testing.md; one case per (section, element kind, op), with params
section, kind, op and these tensors):
  forward    a b out          torch.<op>(a, b) for every op the catalog gives the kind
  compare    a b out          torch.eq/ne/lt/le/gt/ge(a, b); out is bool
  backward   dy a b da db     autograd: y = torch.<op>(a, b); y.backward(dy); da = a.grad, db = b.grad
Floating kinds (f16, bf16, f32, f64; backward f32 and f64) use every pair of a set of special values
(+-0, +-1, 2, 0.5, -2.5, 3, -7, 0.1, +-inf, NaN) plus random pairs; integer kinds (s8, u8, s32, s64) every
pair of edge values (0, +-1, MIN, MAX, ...). Left out, because PyTorch has no defined answer there:
  - integer fmod/remainder by 0 (PyTorch raises ZeroDivisionError; baracuda returns 0, tested by hand)
    and s32/s64 MIN fmod/remainder -1 (SIGFPE in PyTorch's CPU kernel; baracuda returns 0, tested by hand);
  - maximum/minimum of +0 and -0 (PyTorch's scalar and vectorized CPU paths return different zeros;
    baracuda's documented choice is tested by hand).
Where PyTorch 1.13's CPU backend has no kernel for a 16-bit kind (e.g. atan2 and hypot for f16), the
result is computed in f32 and rounded once to the kind, which is what PyTorch's CUDA kernels do; the file's
notes list those (op, kind) pairs.

What it checks before writing anything (the script fails otherwise):
  1. remainder is PyTorch's fmod-based formula (m = fmod(a, b); m += b when m != 0 and the signs differ):
     remainder(-1, inf) = inf and remainder(-4, 2) = -0, which the floor formula a - floor(a/b)*b does not give.
  2. pow(0, 0) = 1, pow(-8, 1/3) = NaN, maximum/minimum propagate NaN, hypot(inf, NaN) = inf.
  3. The autograd formulas baracuda documents (binary.hpp) at their special points: pow's masks at b = 0
     and at a = 0 with b >= 0, maximum's dy/2 on ties and dy to both inputs with NaN, copysign's 0 at a = 0,
     fmod's and remainder's -dy * trunc/floor(a / b).
  4. integer add/mul wrap around (s8: 127 + 1 = -128; u8: 200 * 2 = 144).
"""

import math
import os
import random
import struct
import sys

import numpy as np
import torch

import golden_json

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "binary_golden.json")
SEED = 20260523

FLOAT_KINDS = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32, "f64": torch.float64}
INT_KINDS = {"s8": torch.int8, "u8": torch.uint8, "s32": torch.int32, "s64": torch.int64}
BITS = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64, "s8": 8, "u8": 8, "s32": 32, "s64": 64}

# The catalog (include/baracuda/ops/binary_ops.def): op -> (torch function, integer-capable).
FORWARD = {
    "add": (torch.add, True),
    "sub": (torch.sub, True),
    "mul": (torch.mul, True),
    "div": (torch.div, False),
    "pow": (torch.pow, False),
    "maximum": (torch.maximum, True),
    "minimum": (torch.minimum, True),
    "atan2": (torch.atan2, False),
    "fmod": (torch.fmod, True),
    "remainder": (torch.remainder, True),
    "copysign": (torch.copysign, False),
    "hypot": (torch.hypot, False),
}
COMPARE = {"eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le, "gt": torch.gt, "ge": torch.ge}

INF = math.inf
NAN = math.nan
SPECIAL = [0.0, -0.0, 1.0, -1.0, 2.0, 0.5, -2.5, 3.0, -7.0, 0.1, INF, -INF, NAN]

INT_VALUES = {
    "s8": [0, 1, -1, 2, -3, 5, -7, 100, 127, -128],
    "u8": [0, 1, 2, 3, 7, 100, 200, 255],
    "s32": [0, 1, -1, 3, -7, 65536, 1000003, 2**31 - 1, -(2**31)],
    "s64": [0, 1, -1, 3, -7, 2**32 + 1, -(10**12), 2**63 - 1, -(2**63)],
}


def bits_of(t, kind):
    """The raw bits of every element of a 1-D tensor, as integers."""
    n = BITS[kind]
    view = {8: torch.uint8, 16: torch.int16, 32: torch.int32, 64: torch.int64}[n]
    raw = t.contiguous().view(view).tolist() if t.dtype != torch.uint8 else t.tolist()
    return [v & ((1 << n) - 1) for v in raw]


def hexs(values, kind):
    return ["%0*x" % (BITS[kind] // 4, v) for v in values]


def float_pairs(kind, rng):
    pairs = [(a, b) for a in SPECIAL for b in SPECIAL]
    pairs += [(rng.uniform(-5, 5), rng.uniform(-5, 5)) for _ in range(24)]
    pairs += [(rng.uniform(0.1, 4), rng.uniform(-3, 3)) for _ in range(16)]  # pow: positive bases
    a = torch.tensor([p[0] for p in pairs], dtype=torch.float64).to(FLOAT_KINDS[kind])
    b = torch.tensor([p[1] for p in pairs], dtype=torch.float64).to(FLOAT_KINDS[kind])
    return a, b


def mixed_zeros(a, b):
    """Elements where a and b are zeros of opposite signs."""
    return (a == 0) & (b == 0) & (torch.signbit(a) != torch.signbit(b))


def check_semantics():
    f64 = torch.float64
    t = lambda *v: torch.tensor(v, dtype=f64)
    r = torch.remainder(t(-1.0, -4.0), t(INF, 2.0))
    assert r[0].item() == INF and r[1].item() == 0 and math.copysign(1, r[1].item()) < 0, r
    assert torch.pow(t(0.0), t(0.0)).item() == 1
    assert math.isnan(torch.pow(t(-8.0), t(1 / 3)).item())
    assert math.isnan(torch.maximum(t(NAN), t(1.0)).item()) and math.isnan(torch.minimum(t(1.0), t(NAN)).item())
    assert torch.hypot(t(INF), t(NAN)).item() == INF

    def grads(fn, a, b, dy):
        a = t(*a).requires_grad_()
        b = t(*b).requires_grad_()
        fn(a, b).backward(t(*dy))
        return a.grad.tolist(), b.grad.tolist()

    da, db = grads(torch.pow, (0.0, 0.0, 2.0), (0.0, 2.0, 0.0), (1.0, -1.0, 1.0))
    assert da == [0.0, 0.0, 0.0] and db[0] == 0 and db[1] == 0 and db[2] == math.log(2), (da, db)
    da, db = grads(torch.maximum, (1.0, NAN, 3.0), (1.0, 1.0, 2.0), (1.0, 1.0, 1.0))
    assert da == [0.5, 1.0, 1.0] and db == [0.5, 1.0, 0.0], (da, db)
    da, db = grads(torch.copysign, (0.0, -2.0), (-1.0, 1.0), (1.0, 1.0))
    assert da == [0.0, -1.0] and db == [0.0, 0.0], (da, db)
    da, db = grads(torch.fmod, (-7.0,), (2.0,), (1.0,))
    assert da == [1.0] and db == [3.0], (da, db)  # -dy * trunc(-3.5)
    da, db = grads(torch.remainder, (-7.0,), (2.0,), (1.0,))
    assert da == [1.0] and db == [4.0], (da, db)  # -dy * floor(-3.5)

    assert torch.add(torch.tensor([127], dtype=torch.int8), torch.tensor([1], dtype=torch.int8)).item() == -128
    assert torch.mul(torch.tensor([200], dtype=torch.uint8), torch.tensor([2], dtype=torch.uint8)).item() == 144


def main():
    check_semantics()
    rng = random.Random(SEED)
    cases = []
    counts = {}
    via_f32 = []

    def emit(title, rows):
        """rows: [op, hex bits...] in the order of the section's tensors; one case per run of one op."""
        section, kind = title.split()
        names = ["dy", "a", "b", "da", "db"] if section == "backward" else ["a", "b", "out"]
        kinds = [kind] * len(names)
        if section == "compare":
            kinds[-1] = "bool"

        def column(k, hexes):
            v = [int(h, 16) for h in hexes]
            if k in INT_KINDS and k[0] == "s":  # two's complement bits -> the signed value
                v = [x - (1 << BITS[k]) if x >> (BITS[k] - 1) else x for x in v]
            return golden_json.tensor(k, v)

        start = 0
        while start < len(rows):
            op = rows[start][0]
            end = start
            while end < len(rows) and rows[end][0] == op:
                end += 1
            cols = list(zip(*[r[1:] for r in rows[start:end]]))
            params = {"section": section, "kind": kind, "op": op}
            cases.append(golden_json.case("%s %s %s" % (section, kind, op), params,
                                          {n: column(k, c) for n, k, c in zip(names, kinds, cols)}))
            start = end
        counts[title] = len(rows)

    for kind, dtype in FLOAT_KINDS.items():
        a, b = float_pairs(kind, rng)
        rows = []
        for op, (fn, _) in FORWARD.items():
            keep = ~mixed_zeros(a, b) if op in ("maximum", "minimum") else torch.ones_like(a, dtype=torch.bool)
            x, y = a[keep], b[keep]
            try:
                out = fn(x, y)
            except RuntimeError:  # no CPU kernel for this 16-bit kind: compute in f32, round once (as CUDA does)
                out = fn(x.float(), y.float()).to(dtype)
                via_f32.append("%s %s" % (op, kind))
            assert out.dtype == dtype
            for xa, xb, o in zip(hexs(bits_of(x, kind), kind), hexs(bits_of(y, kind), kind), hexs(bits_of(out, kind), kind)):
                rows.append([op, xa, xb, o])
        emit("forward " + kind, rows)

        rows = []
        for op, fn in COMPARE.items():
            out = fn(a, b).to(torch.uint8).tolist()
            for xa, xb, o in zip(hexs(bits_of(a, kind), kind), hexs(bits_of(b, kind), kind), out):
                rows.append([op, xa, xb, str(o)])
        emit("compare " + kind, rows)

    for kind, dtype in INT_KINDS.items():
        vals = INT_VALUES[kind]
        pairs = [(x, y) for x in vals for y in vals]
        rows = []
        for op, (fn, int_ok) in FORWARD.items():
            if not int_ok:
                continue
            sel = pairs
            if op in ("fmod", "remainder"):
                lo = -(1 << (BITS[kind] - 1))
                sel = [(x, y) for x, y in pairs if y != 0 and not (kind in ("s32", "s64") and x == lo and y == -1)]
            a = torch.tensor([p[0] for p in sel], dtype=dtype)
            b = torch.tensor([p[1] for p in sel], dtype=dtype)
            out = fn(a, b)
            assert out.dtype == dtype, (op, kind, out.dtype)
            for xa, xb, o in zip(hexs(bits_of(a, kind), kind), hexs(bits_of(b, kind), kind), hexs(bits_of(out, kind), kind)):
                rows.append([op, xa, xb, o])
        emit("forward " + kind, rows)

        a = torch.tensor([p[0] for p in pairs], dtype=dtype)
        b = torch.tensor([p[1] for p in pairs], dtype=dtype)
        rows = []
        for op, fn in COMPARE.items():
            out = fn(a, b).to(torch.uint8).tolist()
            for xa, xb, o in zip(hexs(bits_of(a, kind), kind), hexs(bits_of(b, kind), kind), out):
                rows.append([op, xa, xb, str(o)])
        emit("compare " + kind, rows)

    for kind in ("f32", "f64"):
        dtype = FLOAT_KINDS[kind]
        a0, b0 = float_pairs(kind, rng)
        dys = [1.0, -0.75, 2.0, 0.3125, -1.5]
        dy = torch.tensor([dys[i % len(dys)] for i in range(a0.numel())], dtype=dtype)
        rows = []
        for op, (fn, _) in FORWARD.items():
            a = a0.clone().requires_grad_()
            b = b0.clone().requires_grad_()
            fn(a, b).backward(dy)
            cols = [bits_of(dy, kind), bits_of(a0, kind), bits_of(b0, kind), bits_of(a.grad, kind), bits_of(b.grad, kind)]
            for r in zip(*[hexs(c, kind) for c in cols]):
                rows.append([op] + list(r))
        emit("backward " + kind, rows)

    notes = ["Golden results for the binary family (PyTorch on the CPU); see the generator for what was checked and "
             "left out.",
             "One case per (section, kind, op): forward a b out | compare a b out (bool) | backward dy a b da db."]
    if via_f32:
        notes.append("Computed in f32 and rounded once to the 16-bit kind (PyTorch's CPU has no kernel for them): "
                     + ", ".join(via_f32) + ".")
    golden_json.write(OUT, "tests/data/gen_binary_golden.py", {"torch": torch.__version__, "numpy": np.__version__},
                      notes, cases)
    for k, v in counts.items():
        print("%-16s %6d rows" % (k, v))
    print("wrote", OUT)


if __name__ == "__main__":
    sys.exit(main())
