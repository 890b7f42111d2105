#!/usr/bin/python3
"""Generates tests/data/paged_decode_golden.json: golden values for PagedDecodePlan (decode attention over the paged
KV cache), computed by PyTorch, independent of baracuda's C++.

    /usr/bin/python3 tests/data/gen_paged_decode_golden.py     # Debian's python3-torch (1.13); rewrites the file

Each case gathers every sequence's keys and values out of the cache through its block table (key j of sequence b is
row j % block_size of page block_tables[b, j // block_size], vLLM's "flash" NHD layout [num_blocks, block_size,
H_kv, d]), dequantizes quantized caches as x = c * scale (FP8 E4M3 decoded here from its bit fields, s8 as integers;
scales per tensor or per kv head), and computes attention in float64 with PyTorch tensor ops: S = scale * Q @ K^T,
-inf where a key is not visible, P = torch.softmax(S, -1), O = P @ V, LSE = torch.logsumexp(S, -1); O is rounded
once to the queries' dtype and LSE to float32. Visibility (paged_attention.hpp): with L = min(max(context_len, 0),
max_blocks * block_size), query i of q_len sees key j iff j <= L - q_len + i, j >= L - q_len + i - window_left
(window_left >= 0), and the page id of j is in [0, num_blocks). A query that sees no key gets O = 0, LSE = +inf.
GQA: query head h reads kv head h // (H / H_kv).

Format: the golden format of docs/testing.md; params `kind` (f16/bf16), `cache_kind` (f16/bf16/fp8e4m3/s8),
`batch`, `q_len`, `heads`, `kv_heads`, `head_dim`, `num_blocks`, `block_size`, `max_blocks`, `window_left`,
`scale` (f64 bits), `per_head` (bool); tensors q [B*q_len, H, d], key_cache and value_cache, block_tables (s32
[B, max_blocks]), context_lens (s32 [B]), k_scale and v_scale (f32, quantized caches only), o [B*q_len, H, d],
lse (f32 [B*q_len, H]).
"""

import math
import os
import struct

import torch

import golden_json

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "paged_decode_golden.json")
SEED = 20261128

DT = {"f16": torch.float16, "bf16": torch.bfloat16}


def bits(t, kind):
    t = t.detach().contiguous().reshape(-1)
    if kind == "f32":
        return [struct.unpack("<I", struct.pack("<f", float(v)))[0] for v in t.tolist()]
    if kind == "bf16":  # the upper half of the exactly widened float32
        return [struct.unpack("<I", struct.pack("<f", float(v)))[0] >> 16 for v in t.float().tolist()]
    assert kind == "f16"
    return [struct.unpack("<H", struct.pack("<e", float(v)))[0] for v in t.float().tolist()]


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def e4m3(byte):
    """The value of an FP8 E4M3 bit pattern (OCP: bias 7, no infinities, 0x7F / 0xFF NaN)."""
    s, e, m = byte >> 7, (byte >> 3) & 0xF, byte & 7
    assert not (e == 15 and m == 7), "NaN"
    v = (m / 8.0) * 2.0 ** -6 if e == 0 else (1 + m / 8.0) * 2.0 ** (e - 7)
    return -v if s else v


def cache_values(gen, kind, shape):
    """Random cache contents: (the golden tensor, its exact values as float64)."""
    n = 1
    for d in shape:
        n *= d
    if kind in DT:
        t = ((torch.rand(shape, generator=gen, dtype=torch.float64) * 2 - 1)).to(DT[kind])
        return golden_json.tensor(kind, bits(t, kind), shape), t.double()
    if kind == "s8":
        v = (torch.randint(-127, 128, [n], generator=gen)).tolist()
        return golden_json.tensor("s8", v, shape), torch.tensor(v, dtype=torch.float64).reshape(shape)
    assert kind == "fp8e4m3"
    # Bytes of magnitude at most 6 (exponent field <= 9) with either sign: no NaN.
    raw = torch.randint(0, 0x4C, [n], generator=gen).tolist()
    sign = torch.randint(0, 2, [n], generator=gen).tolist()
    b = [r | (s << 7) for r, s in zip(raw, sign)]
    return golden_json.tensor("fp8e4m3", b, shape), torch.tensor([e4m3(x) for x in b], dtype=torch.float64).reshape(shape)


def make(name, gen, kind, cache_kind, heads, kv_heads, dim, lens, q_len, block_size, window_left=-1, per_head=False,
         bad_pages=(), raw_lens=None, scale=None):
    b = len(lens)
    pages_per = [(n + block_size - 1) // block_size for n in lens]
    max_blocks = max(pages_per + [1])
    num_blocks = sum(pages_per) + 2
    perm = torch.randperm(num_blocks, generator=gen).tolist()  # pages out of order, with unused ones between
    table = [[-1] * max_blocks for _ in range(b)]
    nxt = 0
    for s in range(b):
        for p in range(pages_per[s]):
            table[s][p] = perm[nxt]
            nxt += 1
    for s, p, v in bad_pages:
        table[s][p] = v
    ctx = list(raw_lens) if raw_lens is not None else list(lens)
    q = ((torch.rand([b * q_len, heads, dim], generator=gen, dtype=torch.float64) * 2 - 1)).to(DT[kind])
    shape = [num_blocks, block_size, kv_heads, dim]
    kt, kvals = cache_values(gen, cache_kind, shape)
    vt, vvals = cache_values(gen, cache_kind, shape)
    quant = cache_kind not in DT or cache_kind != kind
    ns = kv_heads if per_head else 1
    ks = [f32(0.05 + 0.1 * float(x)) for x in torch.rand([ns], generator=gen, dtype=torch.float64)] if quant else []
    vs = [f32(0.05 + 0.1 * float(x)) for x in torch.rand([ns], generator=gen, dtype=torch.float64)] if quant else []
    if quant:
        kvals = kvals * torch.tensor([ks[h if per_head else 0] for h in range(kv_heads)],
                                     dtype=torch.float64).reshape(1, 1, -1, 1)
        vvals = vvals * torch.tensor([vs[h if per_head else 0] for h in range(kv_heads)],
                                     dtype=torch.float64).reshape(1, 1, -1, 1)
    tau = f32(scale if scale is not None else 1.0 / math.sqrt(dim))
    o = torch.zeros(b * q_len, heads, dim, dtype=torch.float64)
    lse = torch.zeros(b * q_len, heads, dtype=torch.float64)
    group = heads // kv_heads
    for s in range(b):
        L = min(max(ctx[s], 0), max_blocks * block_size)
        pg = torch.tensor([table[s][j // block_size] for j in range(L)], dtype=torch.int64)
        off = torch.tensor([j % block_size for j in range(L)], dtype=torch.int64)
        valid = (pg >= 0) & (pg < num_blocks)
        safe = torch.where(valid, pg, torch.zeros_like(pg))
        k = kvals[safe, off].repeat_interleave(group, dim=1)  # [L, H, d]
        v = vvals[safe, off].repeat_interleave(group, dim=1)
        i = torch.arange(q_len).reshape(-1, 1)
        j = torch.arange(L).reshape(1, -1)
        last = L - q_len + i
        seen = (j <= last) & valid.reshape(1, -1)
        if window_left >= 0:
            seen &= j >= last - window_left
        qs = q[s * q_len:(s + 1) * q_len].double()  # [q_len, H, d]
        sc = tau * torch.matmul(qs.permute(1, 0, 2), k.permute(1, 2, 0))  # [H, q_len, L]
        sc = sc.masked_fill(~seen, float("-inf"))
        empty = ~seen.any(dim=1)
        p = torch.softmax(sc, dim=-1)
        ob = torch.matmul(p, v.permute(1, 0, 2)).permute(1, 0, 2)  # [q_len, H, d]
        lb = torch.logsumexp(sc, dim=-1).permute(1, 0)  # [q_len, H]
        ob[empty] = 0.0
        lb[empty] = float("inf")
        o[s * q_len:(s + 1) * q_len] = ob
        lse[s * q_len:(s + 1) * q_len] = lb
    assert not torch.isnan(o).any() and not torch.isnan(lse).any()
    params = {"kind": kind, "cache_kind": cache_kind, "batch": b, "q_len": q_len, "heads": heads,
              "kv_heads": kv_heads, "head_dim": dim, "num_blocks": num_blocks, "block_size": block_size,
              "max_blocks": max_blocks, "window_left": window_left, "scale": golden_json.f64(tau),
              "per_head": per_head}
    tensors = {"q": golden_json.tensor(kind, bits(q, kind), list(q.shape)), "key_cache": kt, "value_cache": vt,
               "block_tables": golden_json.tensor("s32", [x for row in table for x in row], [b, max_blocks]),
               "context_lens": golden_json.tensor("s32", ctx),
               "o": golden_json.tensor(kind, bits(o.to(DT[kind]), kind), list(o.shape)),
               "lse": golden_json.tensor("f32", bits(lse.float(), "f32"), list(lse.shape))}
    if quant:
        tensors["k_scale"] = golden_json.tensor("f32", bits(torch.tensor(ks, dtype=torch.float32), "f32"))
        tensors["v_scale"] = golden_json.tensor("f32", bits(torch.tensor(vs, dtype=torch.float32), "f32"))
    return golden_json.case(name, params, tensors)


def main():
    gen = torch.Generator().manual_seed(SEED)
    cases = [
        make("f16 d64 gqa2 lengths 1 17 40 0", gen, "f16", "f16", 4, 2, 64, [1, 17, 40, 0], 1, 16),
        make("bf16 d128 gqa4 q_len 2 window 10", gen, "bf16", "bf16", 8, 2, 128, [33, 2], 2, 16, window_left=10),
        make("f16 fp8 per tensor d64", gen, "f16", "fp8e4m3", 2, 1, 64, [20, 50], 1, 16),
        make("bf16 s8 per head d64 pages of 8", gen, "bf16", "s8", 4, 2, 64, [19], 3, 8, per_head=True),
        make("f16 d128 gqa2 invalid page, over-long and negative lengths", gen, "f16", "f16", 2, 1, 128, [48, 20, 5],
             1, 16, bad_pages=[(0, 1, -3), (1, 0, 100000)], raw_lens=[1 << 30, 20, -4]),
        make("bf16 fp8 per head d256 gqa8 sharp scale", gen, "bf16", "fp8e4m3", 8, 1, 256, [40], 1, 32,
             per_head=True, scale=0.25),
    ]
    notes = ["float64 gather through the block tables, then matmul/softmax/logsumexp per sequence and query head with "
             "the bottom-right causal mask among the new tokens; rows that see no key set to o = 0, lse = +inf",
             "FP8 E4M3 bytes decoded from their bit fields by this script; quantized values times their f32 scale",
             "o rounded once from float64 to the kind (Tensor.to), lse to float32",
             "checked before writing: no NaN in o or lse"]
    golden_json.write(OUT, "tests/data/gen_paged_decode_golden.py", {"torch": torch.__version__}, notes, cases)


if __name__ == "__main__":
    main()
