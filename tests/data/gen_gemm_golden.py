#!/usr/bin/python3
"""Generates tests/data/gemm_golden.json: golden values for GemmPlan, computed by PyTorch, independent of
baracuda's C++.

    /usr/bin/python3 tests/data/gen_gemm_golden.py     # Debian's python3-torch (1.13); rewrites the file

What each case is in PyTorch (every op evaluated in float64 on the inputs' exact values, then rounded once to
the output dtype: PyTorch 1.13's CPU matmul has no float16 kernel, and a float64 evaluation is the exact
result up to double's rounding, which is what GemmPlan's contract compares with):
  linear       y = F.linear(x, w, b) (op(A) = x [M, K] row-major, op(B) = wᵀ: w [N, K] is column-major [K, N])
  addmm        d = torch.addmm(c, a, b, beta=beta, alpha=alpha)
  gelu / silu / relu   the activation (F.gelu with approximate 'none' or 'tanh', F.silu, F.relu) of linear's
               output, which is also the pre-activation aux output
  dw           the linear layer's weight gradient dW = dYᵀ·X (op(A) = dYᵀ, column-major) and its bias
               gradient db = dY.sum(0) (GemmPlan's bias_grad: Σ_k op(A)[m, k])
  bmm          torch.baddbmm(c, a, b, beta, alpha) over a batch, with op(A) broadcast (torch.expand)

Format: the golden format of docs/testing.md; each case has params `in`, `out` (kind names), `layout_a`,
`layout_b` ("row_major" / "col_major": how the C++ test lays op(A) and op(B) out), `alpha`, `beta` (f64 bits),
`activation` (LinearActivation's name), `batch`, `broadcast_a` (bool), and the tensors, each in logical
row-major order of its logical shape: a [batch?, M, K] = op(A), b [batch?, K, N] = op(B), c, bias [N], and the
outputs d, aux (pre-activation, when asked), bias_grad [M] (when asked).
"""

import os
import struct

import torch
import torch.nn.functional as F

import golden_json

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "gemm_golden.json")
SEED = 20261127

DT = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32, "f64": torch.float64}


def bits(t, kind):
    t = t.detach().contiguous().reshape(-1)
    if kind == "f64":
        return [struct.unpack("<Q", struct.pack("<d", float(v)))[0] for v in t.tolist()]
    if kind == "f32":
        return [struct.unpack("<I", struct.pack("<f", float(v)))[0] for v in t.tolist()]
    if kind == "bf16":  # the upper half of the exactly widened float32
        return [struct.unpack("<I", struct.pack("<f", float(v)))[0] >> 16 for v in t.float().tolist()]
    assert kind == "f16"
    return [struct.unpack("<H", struct.pack("<e", float(v)))[0] for v in t.float().tolist()]


def tensor(t, kind):
    return golden_json.tensor(kind, bits(t, kind), list(t.shape))


def rand(shape, kind, gen, scale=1.0):
    return ((torch.rand(shape, generator=gen, dtype=torch.float64) * 2 - 1) * scale).to(DT[kind])


def act(v, name):
    if name == "none":
        return v
    if name == "relu":
        return F.relu(v)
    if name == "silu":
        return F.silu(v)
    if name == "gelu_erf":
        return F.gelu(v)
    assert name == "gelu_tanh"
    return F.gelu(v, approximate="tanh")


def make(name, gen, m, n, k, kin, kout, layout_a="row_major", layout_b="col_major", alpha=1.0, beta=0.0,
         bias=False, activation="none", aux=False, bias_grad=False, batch=1, broadcast_a=False):
    bshape = [] if batch == 1 else [batch]
    a = rand([m, k] if broadcast_a else bshape + [m, k], kin, gen)
    b = rand(bshape + [k, n], kin, gen)
    c = rand(bshape + [m, n], kout, gen) if beta != 0.0 else None
    bv = rand([n], kout, gen) if bias else None
    a64 = a.double().expand(bshape + [m, k]) if broadcast_a else a.double()
    if batch == 1:
        v = torch.addmm(c.double(), a64, b.double(), beta=beta, alpha=alpha) if c is not None \
            else alpha * torch.mm(a64, b.double())
    else:
        v = torch.baddbmm(c.double(), a64, b.double(), beta=beta, alpha=alpha) if c is not None \
            else alpha * torch.bmm(a64, b.double())
    if bv is not None:
        v = v + bv.double()
    d = act(v, activation).to(DT[kout])
    tensors = {"a": tensor(a64.to(DT[kin]) if broadcast_a else a, kin), "b": tensor(b, kin), "d": tensor(d, kout)}
    if c is not None:
        tensors["c"] = tensor(c, kout)
    if bv is not None:
        tensors["bias"] = tensor(bv, kout)
    if aux:
        tensors["aux"] = tensor(v.to(DT[kout]), kout)
    if bias_grad:
        tensors["bias_grad"] = tensor(a.double().sum(-1).to(DT[kout]), kout)
    params = {"in": kin, "out": kout, "layout_a": layout_a, "layout_b": layout_b, "alpha": golden_json.f64(alpha),
              "beta": golden_json.f64(beta), "activation": activation, "batch": batch, "broadcast_a": broadcast_a,
              "has_bias": bias, "has_aux": aux, "bias_grad": bias_grad}
    return golden_json.case(name, params, tensors)


def main():
    gen = torch.Generator().manual_seed(SEED)
    cases = [
        make("linear f32", gen, 5, 6, 7, "f32", "f32", bias=True),
        make("linear f32 wide", gen, 3, 70, 33, "f32", "f32", bias=True),
        make("addmm f32", gen, 4, 9, 11, "f32", "f32", "row_major", "row_major", alpha=2.0, beta=0.5),
        make("addmm f64 col col", gen, 6, 5, 13, "f64", "f64", "col_major", "col_major", alpha=-1.5, beta=0.25),
        make("linear bf16 gelu aux", gen, 7, 10, 48, "bf16", "bf16", bias=True, activation="gelu_erf", aux=True),
        make("linear f16 gelu_tanh to f32", gen, 9, 8, 40, "f16", "f32", bias=True, activation="gelu_tanh"),
        make("linear f16 silu", gen, 3, 17, 24, "f16", "f16", bias=True, activation="silu", aux=True),
        make("linear bf16 relu to f32", gen, 4, 12, 16, "bf16", "f32", bias=True, activation="relu"),
        make("dw bf16 with db", gen, 6, 5, 20, "bf16", "bf16", "col_major", "row_major", bias_grad=True),
        make("dw f32 with db", gen, 8, 3, 31, "f32", "f32", "col_major", "row_major", bias_grad=True),
        make("bmm f32 broadcast a", gen, 3, 4, 9, "f32", "f32", "row_major", "row_major", alpha=1.0, beta=1.0,
             batch=3, broadcast_a=True),
    ]
    notes = ["every case evaluated in float64 by PyTorch on the inputs' exact values (addmm, baddbmm, F.linear's "
             "bias, F.gelu/F.silu/F.relu), then rounded once to the output dtype",
             "float16 inputs are cast to float64 first: PyTorch 1.13's CPU addmm has no float16 kernel",
             "tensors are op(A) and op(B) in logical row-major order; the C++ test lays them out per layout_a/b"]
    golden_json.write(OUT, "tests/data/gen_gemm_golden.py", {"torch": torch.__version__}, notes, cases)


if __name__ == "__main__":
    main()
