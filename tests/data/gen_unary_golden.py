#!/usr/bin/env python3
"""Generates tests/data/unary_golden.json: golden values of the unary ops and their gradients, from PyTorch
(independent of baracuda's C++ code).

    /usr/bin/python3 tests/data/gen_unary_golden.py     # Debian's python3-torch (1.13) and NumPy
                                                         # rewrites unary_golden.json beside this script

What it produces: for every op of include/baracuda/ops/unary_ops.def (its input domain from
tests/ops/unary_test_catalog.hpp), in f64 and f32, with its default parameters (and, for the ops that take
parameters, a second set), one case in the golden format of docs/testing.md, named "op dtype name=value ...":

    params   op, dtype, each parameter by name; y_not_compared, dx_not_compared: indices of the points
             whose y or dx is not compared (see below; their bits are 0)
    tensors  x y dy dx            (one element per point)

over special values (+-0, +-inf, NaN, huge magnitudes, the op's domain edges and kinks) and random points
of the op's domain. y = f(x) and dx = torch.autograd.grad(y, x, dy): each point is its own one-element
tensor, so PyTorch runs the scalar form of its CPU kernels, which is the form of its CUDA kernels (its
vectorized CPU path differs at a few kinks and NaN inputs, e.g. hardswish'(3) and hardtanh'(NaN)).
cbrt is not a PyTorch op: its values come from numpy.cbrt and its gradient from autograd of
sign(x)*|x|^(1/3) (not at 0, where that composite gives NaN: not compared).

In f32, a value PyTorch's f32 kernel computes further from PyTorch's own f64 result (rounded to f32) than
baracuda's f32 tolerance is not compared: PyTorch's formula loses accuracy there (e.g. 1 - x*x in the
gradients of asin, acos, atanh, acosh near |x| = 1) or overflows an intermediate (gelu_tanh' at 1e30), so
it is no reference. The script prints how many values each op drops.

What it checks before writing (the script fails otherwise), so that a PyTorch whose conventions differ is
noticed: round is half-to-even; sign(NaN) = 0; the scalar kernels give hardswish'(3) = 1.5, hardtanh'(NaN)
= 1, relu'(NaN) = 1 (threshold_backward on the result), softshrink(NaN) = 0; logit's eps=None means no
clamp; celu rejects alpha = 0 and softshrink a negative lambd.
"""

import math
import os
import re
import sys

import numpy as np
import torch
import torch.nn.functional as F

import golden_json

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "unary_golden.json")
CATALOG = os.path.join(HERE, "..", "..", "include", "baracuda", "ops", "unary_ops.def")
TEST_CATALOG = os.path.join(HERE, "..", "ops", "unary_test_catalog.hpp")
SEED = 20260601
N_RANDOM = 10

torch.set_default_dtype(torch.float64)
NAN, INF = float("nan"), float("inf")


def cbrt_composite(x):
    return torch.sign(x) * torch.abs(x).pow(1.0 / 3.0)


# op -> (function of (x, params), extra special inputs)
OPS = {
    "neg": (lambda x, p: torch.neg(x), []),
    "abs": (lambda x, p: torch.abs(x), []),
    "sign": (lambda x, p: torch.sign(x), []),
    "reciprocal": (lambda x, p: torch.reciprocal(x), []),
    "square": (lambda x, p: torch.square(x), []),
    "sqrt": (lambda x, p: torch.sqrt(x), []),
    "rsqrt": (lambda x, p: torch.rsqrt(x), []),
    "cbrt": (None, [-27.0, 8.0]),
    "exp": (lambda x, p: torch.exp(x), [88.0, 89.0, -745.0, 709.0, 710.0]),
    "exp2": (lambda x, p: torch.exp2(x), [127.0, 128.0, 1023.0, 1024.0]),
    "expm1": (lambda x, p: torch.expm1(x), [1e-10, -1e-10]),
    "log": (lambda x, p: torch.log(x), [1e-300, 1e-30]),
    "log2": (lambda x, p: torch.log2(x), [0.125, 1024.0]),
    "log10": (lambda x, p: torch.log10(x), [1e-5]),
    "log1p": (lambda x, p: torch.log1p(x), [-0.999, 1e-10]),
    "sin": (lambda x, p: torch.sin(x), [math.pi]),
    "cos": (lambda x, p: torch.cos(x), [math.pi / 2]),
    "tan": (lambda x, p: torch.tan(x), [1.5, -1.5]),
    "asin": (lambda x, p: torch.asin(x), [0.999, -0.999]),
    "acos": (lambda x, p: torch.acos(x), [0.999, -0.999]),
    "atan": (lambda x, p: torch.atan(x), []),
    "sinh": (lambda x, p: torch.sinh(x), [710.0, 90.0]),
    "cosh": (lambda x, p: torch.cosh(x), [710.0, 90.0]),
    "tanh": (lambda x, p: torch.tanh(x), []),
    "asinh": (lambda x, p: torch.asinh(x), []),
    "acosh": (lambda x, p: torch.acosh(x), [1.0001, 0.5]),
    "atanh": (lambda x, p: torch.atanh(x), [0.999, -0.999]),
    "floor": (lambda x, p: torch.floor(x), [2.5, -2.5, 0.7, -0.7]),
    "ceil": (lambda x, p: torch.ceil(x), [2.5, -2.5, 0.7, -0.7]),
    "round": (lambda x, p: torch.round(x), [2.5, -2.5, 3.5, 0.7, -0.7, 4503599627370495.5]),
    "trunc": (lambda x, p: torch.trunc(x), [2.5, -2.5, 0.7, -0.7]),
    "frac": (lambda x, p: torch.frac(x), [2.75, -2.75]),
    "erf": (lambda x, p: torch.erf(x), []),
    "erfc": (lambda x, p: torch.erfc(x), [5.0, 9.0, 27.0]),
    "lgamma": (lambda x, p: torch.lgamma(x), [-2.5, -1.5, -0.25, -2.0, 1.4616321449683622, 4.0]),
    "relu": (lambda x, p: F.relu(x), []),
    "relu6": (lambda x, p: F.relu6(x), [5.5, 6.5]),
    "leaky_relu": (lambda x, p: F.leaky_relu(x, **p), []),
    "elu": (lambda x, p: F.elu(x, **p), []),
    "selu": (lambda x, p: F.selu(x), []),
    "celu": (lambda x, p: F.celu(x, **p), []),
    "gelu": (lambda x, p: F.gelu(x), [-5.0, 5.0]),
    "gelu_tanh": (lambda x, p: F.gelu(x, approximate="tanh"), [-5.0, 5.0]),
    "silu": (lambda x, p: F.silu(x), []),
    "mish": (lambda x, p: F.mish(x), []),
    "sigmoid": (lambda x, p: torch.sigmoid(x), [-40.0, 40.0]),
    "logit": (lambda x, p: torch.logit(x, eps=p.get("eps")), [0.1, 0.2, 0.25, 0.75, 0.8, 0.9, 1.5]),
    "softplus": (lambda x, p: F.softplus(x, **p), [9.5, 10.0, 10.5, 19.5, 20.5, -30.0]),
    "softsign": (lambda x, p: F.softsign(x), []),
    "tanhshrink": (lambda x, p: F.tanhshrink(x), []),
    "hardswish": (lambda x, p: F.hardswish(x), [-3.5, 2.5]),
    "hardsigmoid": (lambda x, p: F.hardsigmoid(x), [-3.5, 2.5]),
    "hardtanh": (lambda x, p: F.hardtanh(x, **p), [-2.0, 0.5, 0.75]),
    "hardshrink": (lambda x, p: F.hardshrink(x, **p), [0.75, -0.75]),
    "softshrink": (lambda x, p: F.softshrink(x, **p), [0.75, -0.75]),
    "threshold": (lambda x, p: F.threshold(x, **p), [0.5, 0.75]),
}

# The second parameter set of the ops that take parameters (the first is the catalog's defaults).
EXTRA_PARAMS = {
    "leaky_relu": {"negative_slope": 0.2},
    "elu": {"alpha": 0.5},
    "celu": {"alpha": 2.0},
    "logit": {"eps": 0.2},
    "softplus": {"beta": 2.0, "threshold": 10.0},
    "hardtanh": {"min_val": -2.0, "max_val": 0.5},
    "hardshrink": {"lambd": 0.75},
    "softshrink": {"lambd": 0.75},
}
# torch's keyword for a catalog parameter name, where they differ.
REQUIRED_DEFAULTS = {"threshold": {"threshold": 0.5, "value": -2.0}}

SPECIALS = [NAN, -INF, -1e300, -1e30, -1000.0, -100.0, -20.0, -10.0, -6.0, -3.0, -2.0, -1.0, -0.5, -1e-3, -1e-8,
            -0.0, 0.0, 1e-8, 1e-3, 0.5, 1.0, 2.0, 3.0, 6.0, 10.0, 20.0, 100.0, 1000.0, 1e30, 1e300, INF]
SPECIAL_DY = 1.25


def parse_catalog():
    """name -> (param string, domain lo, domain hi): the parameters from the catalog, the domain from the
    tests' table beside it (tests/ops/unary_test_catalog.hpp, keyed by the enumerator)."""
    domains = {}
    for m in re.finditer(r"^\s+\{UnaryKind::(\w+),\s*\{([-+0-9.e]+),\s*([-+0-9.e]+)\}", open(TEST_CATALOG).read(),
                         re.M):
        domains[m.group(1)] = (float(m.group(2)), float(m.group(3)))
    ops = {}
    for m in re.finditer(r'^BARACUDA_UNARY_OP\((\w+),\s*(\w+),\s*"([^"]*)"', open(CATALOG).read(), re.M):
        if m.group(2) not in domains:
            sys.exit("%s: no entry for UnaryKind::%s" % (TEST_CATALOG, m.group(2)))
        ops[m.group(1)] = (m.group(3),) + domains[m.group(2)]
    return ops


def defaults_of(spec):
    p = {}
    for item in spec.split():
        m = re.match(r"(\w+)(?:=([-+0-9.]+))?", item)
        if m.group(2) is not None:
            p[m.group(1)] = float(m.group(2))
    return p


def bits(v, dtype):
    if dtype == torch.float64:
        return "%016x" % np.array([v], dtype=np.float64).view(np.uint64)[0]
    return "%08x" % np.array([v], dtype=np.float32).view(np.uint32)[0]


def evaluate(name, fn, x, dy, dtype, params):
    """(y, dx or None) for one point, in `dtype`."""
    if name == "cbrt":
        npt = np.float64 if dtype == torch.float64 else np.float32
        y = float(np.cbrt(npt(x)))
        if x == 0 or math.isnan(x) or math.isinf(x):
            return y, None
        xt = torch.tensor([x], dtype=dtype, requires_grad=True)
        (dx,) = torch.autograd.grad(cbrt_composite(xt), xt, torch.tensor([dy], dtype=dtype))
        return y, float(dx[0])
    xt = torch.tensor([x], dtype=dtype, requires_grad=True)
    yt = fn(xt, params)
    if not yt.requires_grad:
        return float(yt[0]), None
    (dx,) = torch.autograd.grad(yt, xt, torch.tensor([dy], dtype=dtype), allow_unused=True)
    return float(yt[0].detach()), (0.0 if dx is None else float(dx[0]))


def close_f32(v32, v64):
    """PyTorch's f32 result agrees with its f64 result rounded to f32, within baracuda's f32 tolerance."""
    ref = float(np.float32(v64))
    if math.isnan(v32) or math.isnan(ref):
        return math.isnan(v32) and math.isnan(ref)
    if math.isinf(v32) or math.isinf(ref):
        return v32 == ref
    return abs(v32 - ref) <= 1e-5 + 1.3e-6 * abs(ref)


def check_conventions():
    def one(fn, x, **kw):
        xt = torch.tensor([x], requires_grad=True)
        y = fn(xt, **kw)
        (d,) = torch.autograd.grad(y, xt)
        return float(y[0].detach()), float(d[0])

    assert torch.round(torch.tensor([0.5, 1.5, 2.5, -0.5])).tolist() == [0.0, 2.0, 2.0, -0.0]
    assert torch.sign(torch.tensor([NAN])).tolist() == [0.0]
    assert one(F.hardswish, 3.0)[1] == 1.5 and one(F.hardswish, -3.0)[1] == -0.5
    assert one(F.hardtanh, NAN)[1] == 1.0 and one(F.relu, NAN)[1] == 1.0
    assert one(F.softshrink, NAN)[0] == 0.0
    assert math.isinf(one(torch.logit, 0.0)[0])
    for bad in (lambda: F.celu(torch.tensor([1.0]), alpha=0.0), lambda: F.softshrink(torch.tensor([1.0]), -1.0)):
        try:
            bad()
        except RuntimeError:
            continue
        raise AssertionError("PyTorch accepted a parameter it used to reject")


def main():
    np.seterr(over="ignore")  # f64 specials such as 1e300 become inf in f32, as intended
    check_conventions()
    catalog = parse_catalog()
    missing = set(catalog) ^ set(OPS)
    if missing:
        sys.exit("catalog and script disagree about: " + ", ".join(sorted(missing)))
    rng = np.random.default_rng(SEED)
    dropped = {}
    cases = []
    for name in catalog:  # catalog order
        spec, lo, hi = catalog[name]
        fn, extra = OPS[name]
        param_sets = [dict(defaults_of(spec), **REQUIRED_DEFAULTS.get(name, {}))]
        if name in EXTRA_PARAMS:
            param_sets.append(dict(param_sets[0], **EXTRA_PARAMS[name]))
        if name == "logit":
            param_sets[0].pop("eps", None)  # PyTorch's None = the catalog's default -1
        randoms = [(float(v), float(d)) for v, d in zip(rng.uniform(lo, hi, N_RANDOM), rng.uniform(-2, 2, N_RANDOM))]
        for dtype, dname in ((torch.float64, "f64"), (torch.float32, "f32")):
            npt = np.float64 if dtype == torch.float64 else np.float32
            for params in param_sets:
                header = " ".join([name, dname] + ["%s=%r" % (k, v) for k, v in sorted(params.items())])
                cols = {"x": [], "y": [], "dy": [], "dx": []}
                skip = {"y": [], "dx": []}
                kinks = [v for k, v in params.items() if k != "beta"] + [-v for k, v in params.items() if k == "lambd"]
                points = [(x, SPECIAL_DY) for x in SPECIALS + extra + kinks] + randoms
                seen = set()
                for x, dy in points:
                    x, dy = float(npt(x)), float(npt(dy))  # the point as the dtype holds it
                    key = bits(x, dtype)
                    if key in seen:
                        continue
                    seen.add(key)
                    y, dx = evaluate(name, fn, x, dy, dtype, params)
                    if dtype == torch.float32:  # drop what PyTorch's f32 kernels get wrong (see above)
                        y64, dx64 = evaluate(name, fn, x, dy, torch.float64, params)
                        if not close_f32(y, y64):
                            y, dropped[name] = None, dropped.get(name, 0) + 1
                        if dx is not None and not close_f32(dx, dx64):
                            dx, dropped[name] = None, dropped.get(name, 0) + 1
                    for col, v in (("x", x), ("y", y), ("dy", dy), ("dx", dx)):
                        if v is None:
                            skip[col].append(len(cols[col]))
                        cols[col].append(0 if v is None else int(bits(v, dtype), 16))
                case_params = {"op": name, "dtype": dname}
                case_params.update({k: golden_json.f64(v) for k, v in sorted(params.items())})
                case_params.update({"y_not_compared": skip["y"], "dx_not_compared": skip["dx"]})
                cases.append(golden_json.case(header, case_params,
                                              {k: golden_json.tensor(dname, v) for k, v in cols.items()}))
    for name, count in sorted(dropped.items()):
        print("%s: %d f32 values not compared (PyTorch's f32 result is off its f64 result)" % (name, count))
    golden_json.write(OUT, "tests/data/gen_unary_golden.py", {"torch": torch.__version__, "numpy": np.__version__},
                      ["Golden values of the unary ops (PyTorch); see the generator for what was checked.",
                       "One case per (op, dtype, parameters): tensors x y dy dx, one element per point; "
                       "params y_not_compared / dx_not_compared list the points whose y / dx is no reference."],
                      cases)
    print("wrote %s (%d cases)" % (OUT, len(cases)))


if __name__ == "__main__":
    main()
