#!/usr/bin/python3
"""Generates tests/data/channel_norm_golden.json: golden values for GroupNormPlan, BatchNormPlan and their
backward plans, computed by PyTorch (forward ops and autograd), independent of baracuda's C++.

    /usr/bin/python3 tests/data/gen_channel_norm_golden.py     # Debian's python3-torch (1.13); rewrites the file

What each op is in PyTorch here:
  group_norm     F.group_norm(x, groups, weight, bias, eps); the saved statistics from torch.native_group_norm
                 (mean, rstd [N, G])
  instance_norm  F.instance_norm(x, weight=weight, bias=bias, eps=eps) (no running statistics): baracuda's
                 GroupNorm with groups = C; mean and rstd from torch.native_group_norm with G = C
  batch_norm     F.batch_norm(x, running_mean, running_var, weight, bias, training, momentum, eps): training
                 updates copies of the running statistics in place (running_mean_out, running_var_out; the
                 variance unbiased); the saved statistics from torch.native_batch_norm (save_mean, save_invstd
                 [C]); inference (training False) uses the running statistics and updates nothing
The gradients are autograd's: y.backward(dy), then x.grad, weight.grad, bias.grad.

Inputs are non-uniform (random values in [-2, 3] plus a per-channel offset, so channels differ in mean and
spread); the cases are small and ragged: N = 1, spatial extent 1, rank 2 to 4, a channel of identical values.
Each case is computed in float64 and in float32 (PyTorch's CPU kernels accumulate float32 in float64 for
batch norm and in float32 for group norm); a few in bfloat16 (float16 is not offered by PyTorch 1.13's CPU
GroupNorm).

Format: the golden format of docs/testing.md; each case has params op, dtype, groups, eps, momentum, training,
affine and the tensors (in the case's dtype; mean and rstd in the kind PyTorch returns them)
  x, dy                         inputs, x's shape
  weight, bias                  [C] (affine cases only)
  running_mean, running_var     [C] (batch_norm only): the values before the forward
  y                             PyTorch's output
  mean, rstd                    the saved statistics (group_norm, instance_norm, batch_norm training)
  running_mean_out, running_var_out   batch_norm: the running statistics after the forward
  dx, dweight, dbias            autograd's gradients (dweight, dbias in affine cases)
"""

import os
import struct

import torch
import torch.nn.functional as F

import golden_json

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "channel_norm_golden.json")
SEED = 20261127

KIND = {torch.float32: "f32", torch.float64: "f64", torch.bfloat16: "bf16"}


def bits(t):
    t = t.detach().contiguous().reshape(-1)
    if t.dtype == torch.float64:
        return [struct.unpack("<Q", struct.pack("<d", float(v)))[0] for v in t.tolist()]
    if t.dtype == torch.bfloat16:  # the upper half of the exactly widened float32
        return [struct.unpack("<I", struct.pack("<f", float(v)))[0] >> 16 for v in t.float().tolist()]
    return [struct.unpack("<I", struct.pack("<f", float(v)))[0] for v in t.tolist()]


def tensor(t):
    return golden_json.tensor(KIND[t.dtype], bits(t), list(t.shape))


def inputs(gen, shape, dtype, constant_channel):
    c = shape[1]
    offset = torch.linspace(-1.5, 2.0, c, dtype=torch.float64).reshape([1, c] + [1] * (len(shape) - 2))
    x = (torch.rand(shape, generator=gen, dtype=torch.float64) * 5 - 2) * (1 + offset.abs()) + offset
    if constant_channel:
        x[:, 1] = 0.75
    dy = torch.rand(shape, generator=gen, dtype=torch.float64) * 2 - 1
    w = torch.rand([c], generator=gen, dtype=torch.float64) + 0.5
    b = torch.rand([c], generator=gen, dtype=torch.float64) * 2 - 1
    rm = torch.rand([c], generator=gen, dtype=torch.float64) - 0.5
    rv = torch.rand([c], generator=gen, dtype=torch.float64) * 1.5 + 0.5
    return [t.to(dtype) for t in (x, dy, w, b, rm, rv)]


def group_case(name, gen, op, shape, groups, dtype, affine, eps, constant_channel=False):
    x, dy, w, b, _, _ = inputs(gen, shape, dtype, constant_channel)
    n, c = shape[0], shape[1]
    hw = 1
    for d in shape[2:]:
        hw *= d
    xg = x.clone().requires_grad_(True)
    wg = w.clone().requires_grad_(True) if affine else None
    bg = b.clone().requires_grad_(True) if affine else None
    if op == "instance_norm":
        groups = c
        y = F.instance_norm(xg, weight=wg, bias=bg, eps=eps)
    else:
        y = F.group_norm(xg, groups, wg, bg, eps)
    y.backward(dy)
    _, mean, rstd = torch.native_group_norm(x, w if affine else None, b if affine else None, n, c, hw, groups, eps)
    t = {"x": tensor(x), "dy": tensor(dy), "y": tensor(y), "mean": tensor(mean), "rstd": tensor(rstd),
         "dx": tensor(xg.grad)}
    if affine:
        t.update({"weight": tensor(w), "bias": tensor(b), "dweight": tensor(wg.grad), "dbias": tensor(bg.grad)})
    params = {"op": op, "dtype": KIND[dtype], "groups": groups, "eps": golden_json.f64(eps),
              "momentum": golden_json.f64(0), "training": True, "affine": affine}
    return golden_json.case(name, params, t)


def batch_case(name, gen, shape, dtype, affine, training, eps, momentum, constant_channel=False):
    x, dy, w, b, rm, rv = inputs(gen, shape, dtype, constant_channel)
    xg = x.clone().requires_grad_(True)
    wg = w.clone().requires_grad_(True) if affine else None
    bg = b.clone().requires_grad_(True) if affine else None
    rm_out, rv_out = rm.clone(), rv.clone()
    y = F.batch_norm(xg, rm_out, rv_out, wg, bg, training=training, momentum=momentum, eps=eps)
    y.backward(dy)
    t = {"x": tensor(x), "dy": tensor(dy), "running_mean": tensor(rm), "running_var": tensor(rv), "y": tensor(y),
         "running_mean_out": tensor(rm_out), "running_var_out": tensor(rv_out), "dx": tensor(xg.grad)}
    if training:
        _, mean, invstd = torch.native_batch_norm(x, w if affine else None, b if affine else None, rm.clone(),
                                                  rv.clone(), True, momentum, eps)
        t.update({"mean": tensor(mean), "rstd": tensor(invstd)})
    if affine:
        t.update({"weight": tensor(w), "bias": tensor(b), "dweight": tensor(wg.grad), "dbias": tensor(bg.grad)})
    params = {"op": "batch_norm", "dtype": KIND[dtype], "groups": 0, "eps": golden_json.f64(eps),
              "momentum": golden_json.f64(momentum), "training": training, "affine": affine}
    return golden_json.case(name, params, t)


def main():
    gen = torch.Generator().manual_seed(SEED)
    cases = []
    for dtype in (torch.float64, torch.float32):
        k = KIND[dtype]
        cases.append(group_case("group_norm_%s_3x6x7_g3" % k, gen, "group_norm", [3, 6, 7], 3, dtype, True, 1e-5))
        cases.append(group_case("group_norm_%s_2x4x5x9_g2" % k, gen, "group_norm", [2, 4, 5, 9], 2, dtype, True, 1e-5))
        cases.append(group_case("group_norm_%s_1x8x1_g4" % k, gen, "group_norm", [1, 8, 1], 4, dtype, True, 1e-3))
        cases.append(group_case("group_norm_%s_2x6_g1_plain" % k, gen, "group_norm", [2, 6], 1, dtype, False, 1e-5))
        cases.append(group_case("group_norm_%s_2x4x6_g4_constant" % k, gen, "group_norm", [2, 4, 6], 4, dtype, True,
                                1e-5, constant_channel=True))
        cases.append(group_case("instance_norm_%s_2x3x7" % k, gen, "instance_norm", [2, 3, 7], 3, dtype, True, 1e-5))
        cases.append(group_case("instance_norm_%s_1x4x3x3_plain" % k, gen, "instance_norm", [1, 4, 3, 3], 4, dtype,
                                False, 1e-5))
        cases.append(batch_case("batch_norm_%s_3x6x7_train" % k, gen, [3, 6, 7], dtype, True, True, 1e-5, 0.1))
        cases.append(batch_case("batch_norm_%s_2x4x5x9_train" % k, gen, [2, 4, 5, 9], dtype, True, True, 1e-5, 0.3))
        cases.append(batch_case("batch_norm_%s_5x3_train_plain" % k, gen, [5, 3], dtype, False, True, 1e-5, 1.0))
        cases.append(batch_case("batch_norm_%s_1x4x6_train_constant" % k, gen, [1, 4, 6], dtype, True, True, 1e-5,
                                0.1, constant_channel=True))
        cases.append(batch_case("batch_norm_%s_3x6x7_eval" % k, gen, [3, 6, 7], dtype, True, False, 1e-5, 0.1))
        cases.append(batch_case("batch_norm_%s_1x8x1_eval" % k, gen, [1, 8, 1], dtype, True, False, 1e-3, 0.1))
    # bfloat16 (PyTorch's CPU kernels take it for both ops; not float16, which its GroupNorm lacks): a few cases.
    bf = torch.bfloat16
    cases.append(group_case("group_norm_bf16_3x6x7_g3", gen, "group_norm", [3, 6, 7], 3, bf, True, 1e-5))
    cases.append(group_case("instance_norm_bf16_2x3x7", gen, "instance_norm", [2, 3, 7], 3, bf, True, 1e-5))
    cases.append(batch_case("batch_norm_bf16_3x6x7_train", gen, [3, 6, 7], bf, True, True, 1e-5, 0.1))
    cases.append(batch_case("batch_norm_bf16_3x6x7_eval", gen, [3, 6, 7], bf, True, False, 1e-5, 0.1))
    notes = [
        "group_norm: F.group_norm; instance_norm: F.instance_norm without running statistics (baracuda's GroupNorm "
        "with groups = C); mean and rstd from torch.native_group_norm.",
        "batch_norm: F.batch_norm on copies of the running statistics (updated in place in training, the variance "
        "unbiased); mean and rstd from torch.native_batch_norm; gradients by autograd (eval-mode backward too).",
        "float32, float64 and (a few cases) bfloat16 on PyTorch's CPU kernels; bfloat16's saved statistics are "
        "bfloat16 where PyTorch returns them so.",
    ]
    tools = {"torch": torch.__version__}
    golden_json.write(OUT, "tests/data/gen_channel_norm_golden.py", tools, notes, cases)
    print("wrote %d cases to %s" % (len(cases), OUT))


if __name__ == "__main__":
    main()
