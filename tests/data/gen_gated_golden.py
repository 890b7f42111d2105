#!/usr/bin/python3
"""Generates tests/data/gated_golden.json: golden values for GatedActivationPlan and
GatedActivationBackwardPlan, computed by PyTorch (forward ops and autograd), independent of baracuda's C++.

    /usr/bin/python3 tests/data/gen_gated_golden.py     # Debian's python3-torch (1.13); rewrites the file

What each kind is in PyTorch here (g = gate half, l = linear half of x along split_dim):
  glu             torch.nn.functional.glu on [l | g] (for the second_half layout that is F.glu(x, dim) itself)
  reglu           F.relu(g) * l
  swiglu          F.silu(g) * l
  geglu           F.gelu(g, approximate='none') * l
  geglu_tanh      F.gelu(g, approximate='tanh') * l
  swiglu_clamped  gpt-oss's formula (gpt_oss/torch/model.py, `swiglu`), written out below in torch:
                    x_glu = g.clamp(max=limit); x_lin = l.clamp(-limit, limit)
                    y = x_glu * sigmoid(alpha * x_glu) * (x_lin + 1)
                  and for the interleaved layout on the last dimension the split is gpt-oss's own
                  x[..., ::2], x[..., 1::2].
The gradients are autograd's: dx = d(sum(dy * y))/dx, via y.backward(dy).

Layouts: second_half (g = x[H:2H], F.glu's order), first_half (g = x[0:H], vLLM/TE/Llama),
interleaved (g = x[0::2], l = x[1::2], gpt-oss).

Each case is computed in float64 and in float32 (PyTorch CPU computes float32 in float32).
Cases: random values in [-8, 8] for shapes with the split on the last, the first and a middle dimension,
every kind x layout; a "special" grid per kind (second_half layout; every pair of special gate and linear values:
+-0, +-inf, NaN, huge, subnormal, the clamp boundaries +-7, +-7.5, sigmoid's exp-overflow region); one
clamped case with alpha = 1.0, limit = 3.5.

For float32 the file also holds y64/dx64: the same PyTorch computation on the same float32 inputs in
float64, rounded once to float32, which is the rounding point baracuda documents. PyTorch's own float32
results lose accuracy where its formulas cancel (1 - sigmoid(g) for large g, 1 + tanh(.) and 1 + erf(.) in
GELU's left tail, e.g. gelu(-7) = 0 in float32, so gelu(-7) * inf is NaN where the exact product is -inf);
the script prints how many float32 elements differ from y64/dx64 beyond float32's tolerance.

Format: the golden format of docs/testing.md; each case has params kind, dtype, layout, split_dim, alpha, limit
and the tensors (in the case's dtype)
  x      the input
  dy     the output gradient (the output's shape)
  y      PyTorch's output
  dx     PyTorch's input gradient
  y64    float32 cases only: y computed in float64, rounded to float32
  dx64   float32 cases only: dx likewise
"""

import os
import struct
import sys

import torch
import torch.nn.functional as F

import golden_json

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "gated_golden.json")
SEED = 20260523

KINDS = ["glu", "reglu", "swiglu", "geglu", "geglu_tanh", "swiglu_clamped"]
LAYOUTS = ["second_half", "first_half", "interleaved"]


def split(x, dim, layout):
    """(gate, linear) views of x."""
    n = x.shape[dim]
    if layout == "interleaved":
        if dim == x.dim() - 1:
            return x[..., ::2], x[..., 1::2]  # gpt-oss's own indexing
        sl_g = [slice(None)] * x.dim()
        sl_l = [slice(None)] * x.dim()
        sl_g[dim] = slice(0, n, 2)
        sl_l[dim] = slice(1, n, 2)
        return x[tuple(sl_g)], x[tuple(sl_l)]
    a, b = x.chunk(2, dim)
    return (b, a) if layout == "second_half" else (a, b)


def gpt_oss_clamped(g, l, alpha, limit):
    x_glu = g.clamp(min=None, max=limit)
    x_linear = l.clamp(min=-limit, max=limit)
    out_glu = x_glu * torch.sigmoid(alpha * x_glu)
    return out_glu * (x_linear + 1)


def forward(kind, x, dim, layout, alpha, limit):
    g, l = split(x, dim, layout)
    if kind == "glu":
        if layout == "second_half":
            return F.glu(x, dim)
        return F.glu(torch.cat([l, g], dim), dim)
    if kind == "reglu":
        return F.relu(g) * l
    if kind == "swiglu":
        return F.silu(g) * l
    if kind == "geglu":
        return F.gelu(g, approximate="none") * l
    if kind == "geglu_tanh":
        return F.gelu(g, approximate="tanh") * l
    if kind == "swiglu_clamped":
        return gpt_oss_clamped(g, l, alpha, limit)
    raise ValueError(kind)


def bits(t):
    """The golden tensor of t: its dtype's bit patterns, row-major."""
    shape = list(t.shape)
    t = t.detach().contiguous().reshape(-1)
    if t.dtype == torch.float64:
        return golden_json.tensor("f64", [struct.unpack("<Q", struct.pack("<d", v))[0] for v in t.tolist()], shape)
    # float32: go through the raw storage so NaN payloads and -0 are kept
    return golden_json.tensor("f32", [v & 0xFFFFFFFF for v in t.view(torch.int32).tolist()], shape)


def run(kind, x, dy, dim, layout, alpha, limit):
    xr = x.clone().requires_grad_(True)
    y = forward(kind, xr, dim, layout, alpha, limit)
    y.backward(dy)
    return y.detach(), xr.grad


def far_apart(a, b):
    """Elements of float32 tensors a, b that differ beyond float32's tolerance (NaN == NaN, inf exact)."""
    a64, b64 = a.double(), b.double()
    both_nan = torch.isnan(a64) & torch.isnan(b64)
    close = (a64 - b64).abs() <= 1e-5 + 1.3e-6 * b64.abs()
    exact = a64 == b64
    return int((~(both_nan | close | exact)).sum())


STATS = {"elements": 0, "far": 0}


def emit(cases, kind, dtype, layout, dim, alpha, limit, x, dy):
    y, dx = run(kind, x, dy, dim, layout, alpha, limit)
    name = "f64" if dtype == torch.float64 else "f32"
    params = {"kind": kind, "dtype": name, "layout": layout, "split_dim": dim, "alpha": golden_json.f64(alpha),
              "limit": golden_json.f64(limit)}
    tensors = {"x": bits(x), "dy": bits(dy), "y": bits(y), "dx": bits(dx)}
    if dtype == torch.float32:
        # The same formula on the same (float32) inputs evaluated in float64, rounded once to float32.
        y64, dx64 = run(kind, x.double(), dy.double(), dim, layout, alpha, limit)
        y64, dx64 = y64.float(), dx64.float()
        tensors.update({"y64": bits(y64), "dx64": bits(dx64)})
        STATS["elements"] += y.numel() + dx.numel()
        STATS["far"] += far_apart(y, y64) + far_apart(dx, dx64)
    cases.append(golden_json.case("%s %s %s split_dim %d alpha %r limit %r %s" % (
        kind, name, layout, dim, alpha, limit, list(x.shape)), params, tensors))


def special_grid(dtype, layout):
    """x of shape [|G|*|L|, 2] holding every (gate, linear) pair, for the given layout."""
    inf, nan = float("inf"), float("nan")
    gates = [0.0, -0.0, 1.0, -2.5, inf, -inf, nan, 3e4, -3e4, 88.5, -88.5, 1e-40, 7.0, -7.0, 7.5, 6.9990234375]
    linears = [0.0, -0.0, 1.5, -2.25, inf, -inf, nan, 3e4, 7.0, -7.0, 7.5, -7.5]
    pairs = [(g, l) for g in gates for l in linears]
    x = torch.empty(len(pairs), 2, dtype=dtype)
    gi, li = (1, 0) if layout == "second_half" else (0, 1)  # width 2: interleaved == first_half
    for r, (g, l) in enumerate(pairs):
        x[r, gi] = g
        x[r, li] = l
    return x


def check_conventions():
    """Sanity checks of the conventions the golden data rests on; the script stops if one fails."""
    x = torch.tensor([[1.0, -2.0, 0.5, 3.0]], dtype=torch.float64)
    a, b = x[:, :2], x[:, 2:]
    assert torch.equal(F.glu(x, -1), a * torch.sigmoid(b)), "F.glu gates with the second half"
    y = torch.tensor([[1.0, 2.0, 3.0, 4.0]], dtype=torch.float64)
    g, l = split(y, 1, "interleaved")
    assert g.tolist() == [[1.0, 3.0]] and l.tolist() == [[2.0, 4.0]], "interleaved: gate at even indices"
    # The gradient through clamp passes at the boundary and is 0 beyond it and for NaN.
    t = torch.tensor([7.0, 7.5, float("nan")], dtype=torch.float64, requires_grad=True)
    t.clamp(max=7.0).sum().backward()
    assert t.grad.tolist() == [1.0, 0.0, 0.0], t.grad
    # ReLU's gradient passes for NaN (threshold_backward on the result: zeroes only where result <= 0).
    t = torch.tensor([float("nan"), 0.0, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
    F.relu(t).sum().backward()
    assert t.grad.tolist() == [1.0, 0.0, 0.0, 1.0], t.grad


def main():
    check_conventions()
    gen = torch.Generator().manual_seed(SEED)
    cases = []
    shapes = [([4, 6], 1), ([6, 5], 0), ([2, 6, 3], 1), ([3, 2, 8], -1)]
    for dtype in (torch.float64, torch.float32):
        for kind in KINDS:
            for layout in LAYOUTS:
                for shape, dim in shapes:
                    x = (torch.rand(shape, generator=gen, dtype=torch.float64) * 16 - 8).to(dtype)
                    out_shape = list(shape)
                    out_shape[dim] //= 2
                    dy = (torch.rand(out_shape, generator=gen, dtype=torch.float64) * 4 - 2).to(dtype)
                    emit(cases, kind, dtype, layout, dim, 1.702, 7.0, x, dy)
                if layout == "second_half":
                    x = special_grid(dtype, layout)
                    dy = (torch.rand([x.shape[0], 1], generator=gen, dtype=torch.float64) * 4 - 2).to(dtype)
                    emit(cases, kind, dtype, layout, 1, 1.702, 7.0, x, dy)
        x = (torch.rand([5, 8], generator=gen, dtype=torch.float64) * 12 - 6).to(dtype)
        dy = (torch.rand([5, 4], generator=gen, dtype=torch.float64) * 4 - 2).to(dtype)
        emit(cases, "swiglu_clamped", dtype, "interleaved", 1, 1.0, 3.5, x, dy)

    notes = [
        "Golden values for the gated activations (F.glu, F.relu/silu/gelu products, gpt-oss's clamped SwiGLU; "
        "autograd gradients). See the generator.",
        "float32: %d of %d PyTorch float32 elements differ from the float64 evaluation beyond float32's tolerance."
        % (STATS["far"], STATS["elements"]),
    ]
    golden_json.write(OUT, "tests/data/gen_gated_golden.py", {"torch": torch.__version__}, notes, cases)
    print("wrote %s: %d cases; %s" % (OUT, len(cases), notes[-1]))


if __name__ == "__main__":
    sys.exit(main())
