#!/usr/bin/python3
"""Generates tests/data/attention_golden.json: golden values for FlashAttentionPlan (the forward), computed by
PyTorch, independent of baracuda's C++.

    /usr/bin/python3 tests/data/gen_attention_golden.py     # Debian's python3-torch (1.13); rewrites the file

Each case is scaled dot-product attention written out with PyTorch tensor ops in float64 on the inputs' exact
values, per batch and query head: S = scale * Q @ K^T (torch.matmul), the mask added as -inf where a key is not
visible, P = torch.softmax(S, -1), O = P @ V, LSE = torch.logsumexp(S, -1); O is rounded once to the inputs'
dtype and LSE to float32. The mask is FlashAttention >= 2.1's, bottom-right aligned: query i of a sequence with
s_q queries and s_k keys sees key j iff j >= i + s_k - s_q - window_left (window_left >= 0) and
j <= i + s_k - s_q + window_right (window_right >= 0); causal is window_right = 0. A query that sees no key gets
O = 0 and LSE = +inf (FlashAttention's convention; torch.softmax would give NaN there, so those rows are set
explicitly). GQA: query head h reads kv head h // (H / H_kv) (torch.repeat_interleave of K and V's heads).
scale is the float32 value of the softmax scale (1/sqrt(d) by default), as the library's kernels use it.

Format: the golden format of docs/testing.md; params `kind` (f16/bf16), `batch`, `heads`, `kv_heads`,
`head_dim`, `causal` (bool), `window_left`, `window_right`, `scale` (f64 bits), `varlen` (bool), `seqlen_q`,
`seqlen_k` (padded lengths; the longest sequences when varlen); tensors q [T_q, H, d], k and v [T_k, H_kv, d],
cu_seqlens_q / cu_seqlens_k (s32 [B + 1], varlen only), o [T_q, H, d], lse (f32 [B, H, S_q], or [H, T_q] varlen).
"""

import math
import os
import struct

import torch

import golden_json

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "attention_golden.json")
SEED = 20261127

DT = {"f16": torch.float16, "bf16": torch.bfloat16}


def bits(t, kind):
    t = t.detach().contiguous().reshape(-1)
    if kind == "f32":
        return [struct.unpack("<I", struct.pack("<f", float(v)))[0] for v in t.tolist()]
    if kind == "bf16":  # the upper half of the exactly widened float32
        return [struct.unpack("<I", struct.pack("<f", float(v)))[0] >> 16 for v in t.float().tolist()]
    assert kind == "f16"
    return [struct.unpack("<H", struct.pack("<e", float(v)))[0] for v in t.float().tolist()]


def tensor(t, kind):
    return golden_json.tensor(kind, bits(t, kind), list(t.shape))


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def attend(q, k, v, scale, causal, left, right):
    """One sequence: q [s_q, H, d], k, v [s_k, H_kv, d] (float64) -> o [s_q, H, d], lse [H, s_q]."""
    s_q, h, d = q.shape
    s_k, h_kv = k.shape[0], k.shape[1]
    if causal:
        right = 0
    k = k.repeat_interleave(h // h_kv, dim=1)
    v = v.repeat_interleave(h // h_kv, dim=1)
    i = torch.arange(s_q, dtype=torch.int64).reshape(-1, 1)
    j = torch.arange(s_k, dtype=torch.int64).reshape(1, -1)
    diag = i + s_k - s_q
    seen = torch.ones(s_q, s_k, dtype=torch.bool)
    if left >= 0:
        seen &= j >= diag - left
    if right >= 0:
        seen &= j <= diag + right
    s = scale * torch.matmul(q.permute(1, 0, 2), k.permute(1, 2, 0))  # [H, s_q, s_k]
    s = s.masked_fill(~seen, float("-inf"))
    empty = ~seen.any(dim=1)  # [s_q]
    p = torch.softmax(s, dim=-1)
    o = torch.matmul(p, v.permute(1, 0, 2))  # [H, s_q, d]
    lse = torch.logsumexp(s, dim=-1)  # [H, s_q]
    o[:, empty, :] = 0.0
    lse[:, empty] = float("inf")
    assert not torch.isnan(o).any() and not torch.isnan(lse).any()
    return o.permute(1, 0, 2), lse


def make(name, gen, kind, heads, kv_heads, dim, lens_q, lens_k, varlen, causal=False, left=-1, right=-1,
         scale=None, range_qk=1.0):
    b = len(lens_q)
    tq, tk = sum(lens_q), sum(lens_k)
    rnd = lambda shape, r: ((torch.rand(shape, generator=gen, dtype=torch.float64) * 2 - 1) * r).to(DT[kind])
    q = rnd([tq, heads, dim], range_qk)
    k = rnd([tk, kv_heads, dim], range_qk)
    v = rnd([tk, kv_heads, dim], 1.0)
    tau = f32(scale if scale is not None else 1.0 / math.sqrt(dim))
    o = torch.zeros(tq, heads, dim, dtype=torch.float64)
    s_q_max, s_k_max = max(lens_q + [0]), max(lens_k + [0])
    lse = torch.zeros(heads, tq, dtype=torch.float64) if varlen else torch.zeros(b, heads, s_q_max, dtype=torch.float64)
    cq, ck = [0], [0]
    for n in range(b):
        cq.append(cq[-1] + lens_q[n])
        ck.append(ck[-1] + lens_k[n])
        ob, lb = attend(q[cq[n]:cq[n + 1]].double(), k[ck[n]:ck[n + 1]].double(), v[ck[n]:ck[n + 1]].double(), tau,
                        causal, left, right)
        o[cq[n]:cq[n + 1]] = ob
        if varlen:
            lse[:, cq[n]:cq[n + 1]] = lb
        else:
            lse[n] = lb
    params = {"kind": kind, "batch": b, "heads": heads, "kv_heads": kv_heads, "head_dim": dim, "causal": causal,
              "window_left": left, "window_right": right, "scale": golden_json.f64(tau), "varlen": varlen,
              "seqlen_q": s_q_max, "seqlen_k": s_k_max}
    tensors = {"q": tensor(q, kind), "k": tensor(k, kind), "v": tensor(v, kind),
               "o": tensor(o.to(DT[kind]), kind), "lse": tensor(lse.float(), "f32")}
    if varlen:
        tensors["cu_seqlens_q"] = golden_json.tensor("s32", cq)
        tensors["cu_seqlens_k"] = golden_json.tensor("s32", ck)
    else:
        assert all(x == lens_q[0] for x in lens_q) and all(x == lens_k[0] for x in lens_k)
    return golden_json.case(name, params, tensors)


def main():
    gen = torch.Generator().manual_seed(SEED)
    cases = [
        make("f16 d64 padded 2x17x17 gqa2", gen, "f16", 2, 1, 64, [17, 17], [17, 17], False),
        make("f16 d64 padded causal 1x20x9 (top rows see nothing)", gen, "f16", 2, 2, 64, [20], [9], False,
             causal=True),
        make("bf16 d64 padded causal 1x9x70", gen, "bf16", 4, 1, 64, [9], [70], False, causal=True),
        make("f16 d128 padded window (5, 3) 1x40x40", gen, "f16", 1, 1, 128, [40], [40], False, left=5, right=3),
        make("bf16 d128 padded window (0, 0) 1x30x12", gen, "bf16", 1, 1, 128, [30], [12], False, left=0, right=0),
        make("f16 d64 varlen causal mixed", gen, "f16", 2, 1, 64, [1, 30, 0, 45], [5, 30, 2, 66], True, causal=True),
        make("bf16 d128 varlen gqa8 window (10, -1)", gen, "bf16", 8, 1, 128, [6, 3], [20, 30], True, left=10),
        make("f16 d64 padded sharp scale 0.5", gen, "f16", 1, 1, 64, [33], [80], False, scale=0.5, range_qk=3.0),
        make("bf16 d96 varlen causal gqa2", gen, "bf16", 2, 1, 96, [5, 12], [5, 20], True, causal=True),
        make("f16 d96 padded 2x5x24", gen, "f16", 1, 1, 96, [5, 5], [24, 24], False),
        make("bf16 d256 varlen window (4, 2)", gen, "bf16", 2, 1, 256, [5, 3], [8, 12], True, left=4, right=2),
    ]
    notes = ["float64 matmul/softmax/logsumexp per sequence and query head with explicit bottom-right masks; rows "
             "that see no key set to o = 0, lse = +inf (FlashAttention's convention)",
             "o rounded once from float64 to the kind (Tensor.to), lse to float32",
             "checked before writing: no NaN in o or lse"]
    golden_json.write(OUT, "tests/data/gen_attention_golden.py", {"torch": torch.__version__}, notes, cases)


if __name__ == "__main__":
    main()
