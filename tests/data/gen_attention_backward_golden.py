#!/usr/bin/python3
"""Generates tests/data/attention_backward_golden.json: golden gradients for FlashAttentionBackwardPlan, computed by
PyTorch autograd, independent of baracuda's C++.

    /usr/bin/python3 tests/data/gen_attention_backward_golden.py     # Debian's python3-torch (1.13); rewrites the file

Inputs q, k, v and dO are drawn in the case's dtype; the forward is written out with PyTorch tensor ops in float64 on
their exact values, per sequence (gen_attention_golden.py's masks: FlashAttention >= 2.1's bottom-right aligned
windows, causal = window_right 0, GQA by repeat_interleave of K and V's heads): S = scale * Q @ K^T, masked entries
-inf, P = softmax(S) (rows that see no key: P = 0, so O = 0 and no NaN enters autograd), O = P @ V,
LSE = logsumexp(S) (+inf for those rows). Then L = sum(O * dO) and torch.autograd.grad(L, (q, k, v)) in float64: the
exact gradients of the exact forward. Stored: the inputs, O rounded once to the dtype and LSE to float32 (the
forward's outputs the backward takes), and dq, dk, dv rounded once to the dtype. The library's contract uses the
rounded O and LSE, so its gradients differ from these by those roundings' effect (the test's bound says how much).

Format: the golden format of docs/testing.md; params as gen_attention_golden.py's (`kind`, `batch`, `heads`,
`kv_heads`, `head_dim`, `causal`, `window_left`, `window_right`, `scale` (f64 bits), `varlen`, `seqlen_q`,
`seqlen_k`); tensors q, o, do, dq [T_q, H, d]; k, v, dk, dv [T_k, H_kv, d]; lse (f32 [B, H, S_q], or [H, T_q]
varlen); cu_seqlens_q / cu_seqlens_k (s32 [B + 1], varlen only).
"""

import math
import os

import torch

import golden_json
from gen_attention_golden import DT, f32, tensor

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "attention_backward_golden.json")
SEED = 20261128


def forward(q, k, v, scale, causal, left, right):
    """One sequence, differentiable: q [s_q, H, d], k, v [s_k, H_kv, d] (float64) -> o [s_q, H, d], lse [H, s_q]."""
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
    empty = ~seen.any(dim=1)  # [s_q]
    s = scale * torch.matmul(q.permute(1, 0, 2), k.permute(1, 2, 0))  # [H, s_q, s_k]
    # rows that see no key: a zero row of scores, then P = 0 (no -inf - -inf, so no NaN in the graph)
    s = s.masked_fill(~seen | empty.reshape(-1, 1), float("-inf")).masked_fill(empty.reshape(-1, 1), 0.0)
    p = torch.softmax(s, dim=-1) * (~empty).reshape(-1, 1).double()
    o = torch.matmul(p, v.permute(1, 0, 2))  # [H, s_q, d]
    lse = torch.logsumexp(s, dim=-1).detach().clone()
    lse[:, empty] = float("inf")
    return o.permute(1, 0, 2), lse


def make(name, gen, kind, heads, kv_heads, dim, lens_q, lens_k, varlen, causal=False, left=-1, right=-1):
    b = len(lens_q)
    tq, tk = sum(lens_q), sum(lens_k)
    rnd = lambda shape: (torch.rand(shape, generator=gen, dtype=torch.float64) * 2 - 1).to(DT[kind])
    q, k, v = rnd([tq, heads, dim]), rnd([tk, kv_heads, dim]), rnd([tk, kv_heads, dim])
    do = rnd([tq, heads, dim])
    tau = f32(1.0 / math.sqrt(dim))
    qd, kd, vd = (x.double().requires_grad_() for x in (q, k, v))
    s_q_max, s_k_max = max(lens_q + [0]), max(lens_k + [0])
    os_, lses = [], []
    cq, ck = [0], [0]
    for n in range(b):
        cq.append(cq[-1] + lens_q[n])
        ck.append(ck[-1] + lens_k[n])
        ob, lb = forward(qd[cq[n]:cq[n + 1]], kd[ck[n]:ck[n + 1]], vd[ck[n]:ck[n + 1]], tau, causal, left, right)
        os_.append(ob)
        lses.append(lb)
    o = torch.cat(os_, dim=0)
    loss = (o * do.double()).sum()
    dq, dk, dv = torch.autograd.grad(loss, (qd, kd, vd))
    for g in (o, dq, dk, dv):
        assert not torch.isnan(g).any()
    if varlen:
        lse = torch.cat(lses, dim=1)
    else:
        lse = torch.stack(lses, dim=0) if b > 0 else torch.zeros(0, heads, s_q_max, dtype=torch.float64)
        assert all(x == lens_q[0] for x in lens_q) and all(x == lens_k[0] for x in lens_k)
    params = {"kind": kind, "batch": b, "heads": heads, "kv_heads": kv_heads, "head_dim": dim, "causal": causal,
              "window_left": left, "window_right": right, "scale": golden_json.f64(tau), "varlen": varlen,
              "seqlen_q": s_q_max, "seqlen_k": s_k_max}
    tensors = {"q": tensor(q, kind), "k": tensor(k, kind), "v": tensor(v, kind), "do": tensor(do, kind),
               "o": tensor(o.detach().to(DT[kind]), kind), "lse": tensor(lse.float(), "f32"),
               "dq": tensor(dq.to(DT[kind]), kind), "dk": tensor(dk.to(DT[kind]), kind),
               "dv": tensor(dv.to(DT[kind]), kind)}
    if varlen:
        tensors["cu_seqlens_q"] = golden_json.tensor("s32", cq)
        tensors["cu_seqlens_k"] = golden_json.tensor("s32", ck)
    return golden_json.case(name, params, tensors)


def main():
    gen = torch.Generator().manual_seed(SEED)
    cases = [
        make("f16 d64 padded 1x17x17 gqa2", gen, "f16", 2, 1, 64, [17], [17], False),
        make("f16 d64 padded causal 1x20x9 (top rows see nothing)", gen, "f16", 2, 2, 64, [20], [9], False,
             causal=True),
        make("bf16 d128 padded window (5, 3) 1x24x24 gqa4", gen, "bf16", 4, 1, 128, [24], [24], False, left=5,
             right=3),
        make("f16 d64 varlen causal mixed", gen, "f16", 2, 1, 64, [1, 20, 0, 30], [5, 20, 2, 40], True, causal=True),
        make("bf16 d128 varlen gqa8 window (10, -1)", gen, "bf16", 8, 1, 128, [6, 3], [20, 30], True, left=10),
        make("bf16 d96 varlen causal gqa2", gen, "bf16", 2, 1, 96, [5, 12], [5, 20], True, causal=True),
        make("f16 d96 padded 2x5x24", gen, "f16", 1, 1, 96, [5, 5], [24, 24], False),
        make("f16 d128 padded window (0, 0) 1x30x12 (rows and keys outside the band)", gen, "f16", 1, 1, 128, [30],
             [12], False, left=0, right=0),
    ]
    notes = ["float64 forward (matmul/softmax/logsumexp per sequence with explicit bottom-right masks; rows that see "
             "no key: P = 0, o = 0, lse = +inf) and torch.autograd.grad of sum(o * dO) in float64",
             "o, dq, dk, dv rounded once from float64 to the kind (Tensor.to), lse to float32",
             "checked before writing: no NaN in o, dq, dk, dv"]
    golden_json.write(OUT, "tests/data/gen_attention_backward_golden.py", {"torch": torch.__version__}, notes, cases)


if __name__ == "__main__":
    main()
