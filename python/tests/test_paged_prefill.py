"""Chunked prefill over the paged KV cache from Python against a torch reference: each sequence's keys and values
gathered through its block table (pages shuffled, unused pages between; test_paged_decode's helpers), then float64
q·kᵀ·scale with the bottom-right causal mask of the chunk against its whole context (test_attention's rule) and a
window, torch.softmax, ·v, GQA by repeat_interleave; on host and sim; packed ragged chunks (a first chunk, a chunk
of one token, an empty one), the lse, non-causal, contexts shorter than their chunk, invalid page ids, lengths
clamped to the table, int8 and FP8 (ml_dtypes) caches dequantized per tensor and per head, both query tiles, and
rejections."""

import itertools
import math

import numpy as np
import pytest

import baracuda
from baracuda import ops
from test_attention import UNIT, check, data, effective_scale, visible
from test_paged_decode import attend, gather, paged

torch = pytest.importorskip("torch")


def offsets(chunks):
    """cu_seqlens_q int32 [B + 1] of chunks packed in order."""
    return torch.tensor([0, *itertools.accumulate(chunks)], dtype=torch.int32)


def reference(q, kc, vc, table, lens, cu, scale, causal=True, window=-1):
    """float64 o [T_q, H, d], lse [H, T_q]: chunk rows cu[b] .. cu[b + 1] - 1 of q against sequence b's keys."""
    o = torch.zeros(q.shape, dtype=torch.float64)
    lse = torch.full((q.shape[1], q.shape[0]), math.inf, dtype=torch.float64)
    for b, raw in enumerate(lens):
        L = min(max(int(raw), 0), table.shape[1] * kc.shape[1])
        lo, hi = int(cu[b]), int(cu[b + 1])
        if L == 0 or hi == lo:
            continue
        k, v, ok = gather(kc, vc, table, b, L)
        seen = visible(hi - lo, L, window, 0 if causal else -1) & ok[None, :]
        o[lo:hi], chunk_lse = attend(q[lo:hi], k, v, seen, scale)
        lse[:, lo:hi] = chunk_lse.T
    return o, lse


def problem(chunks, lens, h, h_kv, d, bs, dtype, seed):
    """q [Σ chunks, H, d], caches over shuffled pages, the block tables, context_lens and cu_seqlens_q."""
    table, n_blocks = paged(lens, bs, seed)
    q = data((sum(chunks), h, d), dtype, seed + 1)
    kc, vc = data((n_blocks, bs, h_kv, d), dtype, seed + 2), data((n_blocks, bs, h_kv, d), dtype, seed + 3)
    return q, kc, vc, table, torch.tensor(lens, dtype=torch.int32), offsets(chunks)


# (H, H_kv, d, block_size): GQA, MQA, MHA; every head dim and page size.
SHAPES = [(4, 2, 64, 16), (2, 1, 128, 8), (2, 2, 96, 32), (2, 1, 256, 16)]


@pytest.mark.parametrize("dtype", list(UNIT))
@pytest.mark.parametrize("shape", SHAPES)
def test_matches_torch(shape, dtype, device):
    h, h_kv, d, bs = shape
    # A later chunk, a first chunk (L = s_q), one token, a chunk spanning pages, and a sequence with no new token.
    chunks, lens = [7, 12, 1, 20, 0], [30, 12, 17, 41, 9]
    if d == 256:  # the slowest kernel on sim: fewer tokens
        chunks, lens = [5, 9], [21, 9]
    q, kc, vc, table, ctx, cu = problem(chunks, lens, h, h_kv, d, bs, dtype, 1)
    o, lse = ops.paged_prefill(q, kc, vc, table, ctx, cu, return_lse=True, device=device)
    assert o.shape == q.shape and o.dtype == dtype and lse.shape == (h, q.shape[0]) and lse.dtype == torch.float32
    scale = effective_scale(None, d)
    check(o, lse, *reference(q, kc.double(), vc.double(), table, lens, cu, scale), dtype, d, scale)
    o2 = ops.paged_prefill(q, kc, vc, table, ctx, cu, max_seqlen_q=max(chunks), device=device)
    assert torch.equal(o2, o)  # deterministic, and the lse changes nothing


@pytest.mark.parametrize("causal, window", [(False, -1), (False, 6), (True, 4)])
def test_masks_and_scale(causal, window, device):
    dtype, h, h_kv, d, bs = torch.bfloat16, 4, 1, 64, 16
    chunks, lens = [9, 16], [25, 16]
    q, kc, vc, table, ctx, cu = problem(chunks, lens, h, h_kv, d, bs, dtype, 5)
    o, lse = ops.paged_prefill(q, kc, vc, table, ctx, cu, causal=causal, window_left=window, scale=0.2,
                               return_lse=True, device=device)
    scale = effective_scale(0.2, d)
    want = reference(q, kc.double(), vc.double(), table, lens, cu, scale, causal, window)
    check(o, lse, *want, dtype, d, scale)


def test_short_contexts_invalid_pages_and_clamping(device):
    dtype, h, h_kv, d, bs = torch.float16, 2, 1, 64, 8
    chunks, lens = [6, 5, 4], [40, 20, 8]
    q, kc, vc, table, _, cu = problem(chunks, lens, h, h_kv, d, bs, dtype, 9)
    n_blocks = kc.shape[0]
    table[0, 2] = -3  # keys 16 .. 23 of sequence 0 masked
    table[1, 0] = n_blocks + 5  # and keys 0 .. 7 of sequence 1
    raw = [1 << 30, 20, 2]  # clamped to 40; 20; 2 < 4 tokens: the first two see no key
    ctx = torch.tensor(raw, dtype=torch.int32)
    o, lse = ops.paged_prefill(q, kc, vc, table, ctx, cu, return_lse=True, device=device)
    scale = effective_scale(None, d)
    check(o, lse, *reference(q, kc.double(), vc.double(), table, raw, cu, scale), dtype, d, scale)
    first = int(cu[2])
    assert torch.isinf(lse[:, first:first + 2]).all() and torch.isfinite(lse[:, first + 2:]).all()
    assert torch.equal(o[first:first + 2], torch.zeros_like(o[first:first + 2]))


def test_int8_cache_per_head(device):
    dtype, h, h_kv, d, bs = torch.float16, 4, 2, 64, 8
    chunks, lens = [7, 12, 1], [30, 12, 17]
    table, n_blocks = paged(lens, bs, 21)
    g = torch.Generator().manual_seed(22)
    kc, vc = (torch.randint(-127, 128, (n_blocks, bs, h_kv, d), generator=g, dtype=torch.int8) for _ in range(2))
    # In [1/254, 1/127]: dequantized K and V in [-1, 1], test_attention's bounds. k_scale a strided view.
    k_scale = ((torch.rand(2 * h_kv, generator=g) + 1) / 254)[::2]
    v_scale = (torch.rand(h_kv, generator=g) + 1) / 254
    q, ctx, cu = data((sum(chunks), h, d), dtype, 23), torch.tensor(lens, dtype=torch.int32), offsets(chunks)
    table[0, 1] = -1  # keys 8 .. 15 of sequence 0 masked
    o, lse = ops.paged_prefill(q, kc, vc, table, ctx, cu, k_scale=k_scale, v_scale=v_scale, return_lse=True,
                               device=device)
    assert o.dtype == dtype
    ks, vs = (s.double().reshape(1, 1, h_kv, 1) for s in (k_scale, v_scale))
    scale = effective_scale(None, d)
    check(o, lse, *reference(q, kc.double() * ks, vc.double() * vs, table, lens, cu, scale), dtype, d, scale)


@pytest.mark.parametrize("per_head, causal, window", [(False, True, -1), (True, False, 5)])
def test_fp8_cache(per_head, causal, window, device):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    h, h_kv, d, bs = 4, 2, 64, 16
    chunks, lens = [9, 4], [25, 40]
    table, n_blocks = paged(lens, bs, 24)
    rng = np.random.default_rng(25)
    # Codes in [-4, 4] and scales at most 0.25: dequantized K and V in [-1, 1].
    kc, vc = (rng.uniform(-4, 4, (n_blocks, bs, h_kv, d)).astype(ml_dtypes.float8_e4m3fn) for _ in range(2))
    k_scale = np.array([0.25, 0.125] if per_head else [0.25], np.float32)
    v_scale = np.array([0.1875, 0.25] if per_head else [0.125], np.float32)
    q = rng.uniform(-1, 1, (sum(chunks), h, d)).astype(ml_dtypes.bfloat16)
    o, lse = ops.paged_prefill(q, kc, vc, table.numpy(), np.array(lens, np.int32), offsets(chunks).numpy(),
                               k_scale=k_scale, v_scale=v_scale, causal=causal, window_left=window, return_lse=True,
                               device=device)
    assert o.dtype == ml_dtypes.bfloat16 and o.shape == q.shape
    ks, vs = (torch.from_numpy(s.astype(np.float64)).reshape(1, 1, -1, 1) for s in (k_scale, v_scale))
    scale = effective_scale(None, d)
    want = reference(torch.from_numpy(q.astype(np.float32)), torch.from_numpy(kc.astype(np.float64)) * ks,
                     torch.from_numpy(vc.astype(np.float64)) * vs, table, lens, offsets(chunks), scale, causal,
                     window)
    check(torch.from_numpy(np.asarray(o).astype(np.float32)), torch.from_numpy(np.asarray(lse)), *want,
          torch.bfloat16, d, scale)


@pytest.mark.parametrize("d", [64, 128])
def test_query_tiles(d, device):
    """tile="rows128": against torch over a bf16 cache, and the same bits as "rows64" (a chunk over 128 rows)."""
    chunks, lens = [150, 3, 40], [200, 3, 90]
    q, kc, vc, table, ctx, cu = problem(chunks, lens, 4, 2, d, 16, torch.bfloat16, 31)
    o, lse = ops.paged_prefill(q, kc, vc, table, ctx, cu, window_left=50, tile="rows128", return_lse=True,
                               device=device)
    scale = effective_scale(None, d)
    check(o, lse, *reference(q, kc.double(), vc.double(), table, lens, cu, scale, True, 50), torch.bfloat16, d,
          scale)
    o64, lse64 = ops.paged_prefill(q, kc, vc, table, ctx, cu, window_left=50, tile="rows64", return_lse=True,
                                   device=device)
    assert torch.equal(o64, o) and torch.equal(lse64, lse)


def test_plan_api_and_rejections():
    desc = baracuda.PagedPrefillDescriptor(batch=2, total_q=40, max_seqlen_q=32, heads=8, kv_heads=2, head_dim=128,
                                           num_blocks=64, block_size=16, max_blocks_per_seq=32, element="bf16",
                                           return_lse=True)
    assert desc.causal and desc.window_left == -1 and desc.element == "bf16" and desc.tile == "auto"
    sim = baracuda.PagedPrefillPlan.select(baracuda.Stream.sim(), desc)
    host = baracuda.PagedPrefillPlan.select(baracuda.Stream.host(), desc)
    assert "fa2_m16n8k16_paged" in sim.sku and "reference" in host.sku and sim.workspace_size == 0
    assert desc.cache_kind == "bf16" and desc.scale_layout == "per_tensor"  # cache_kind defaults to element
    quantized = baracuda.PagedPrefillDescriptor(batch=2, total_q=40, max_seqlen_q=32, heads=8, kv_heads=2,
                                                head_dim=128, num_blocks=64, block_size=16, max_blocks_per_seq=32,
                                                element="bf16", cache_kind="fp8e4m3", scale_layout="per_head")
    assert quantized.cache_kind == "fp8e4m3" and quantized.scale_layout == "per_head"
    baracuda.PagedPrefillPlan.select(baracuda.Stream.sim(), quantized)
    quantized.tile = "rows128"
    assert baracuda.PagedPrefillPlan.select(baracuda.Stream.sim(), quantized).sku.endswith("paged_m128")

    def select(**changes):
        fields = dict(batch=1, total_q=4, max_seqlen_q=4, heads=2, kv_heads=1, head_dim=64, num_blocks=4,
                      block_size=16, max_blocks_per_seq=2)
        baracuda.PagedPrefillPlan.select(baracuda.Stream.host(), baracuda.PagedPrefillDescriptor(**{**fields,
                                                                                                     **changes}))

    select()
    for bad in (dict(head_dim=80), dict(block_size=24), dict(element="f32"), dict(cache_kind="f32"),
                dict(cache_kind="u8"), dict(element="bf16", cache_kind="f16")):
        with pytest.raises(baracuda.Unsupported):
            select(**bad)
    with pytest.raises(baracuda.InvalidProblem):
        select(heads=3, kv_heads=2)
    with pytest.raises(ValueError):  # not a tile's name
        select(tile="rows32")
    with pytest.raises(baracuda.Unsupported, match="128-row"):  # no 128-row kernel at d = 256
        baracuda.PagedPrefillPlan.select(baracuda.Stream.sim(), baracuda.PagedPrefillDescriptor(
            batch=1, total_q=4, max_seqlen_q=4, heads=2, kv_heads=1, head_dim=256, num_blocks=4, block_size=16,
            max_blocks_per_seq=2, tile="rows128"))

    q, kc, vc, table, ctx, cu = problem([3, 2], [3, 9], 4, 2, 64, 16, torch.float16, 13)
    with pytest.raises(baracuda.InvalidProblem):  # context_lens of the wrong length
        ops.paged_prefill(q, kc, vc, table, ctx[:1], cu)
    with pytest.raises(baracuda.InvalidProblem):  # a value cache of another kind than the key cache's
        ops.paged_prefill(q, kc, vc.to(torch.bfloat16), table, ctx, cu)
    with pytest.raises(baracuda.Unsupported):  # a bf16 cache under f16 q
        ops.paged_prefill(q, kc.to(torch.bfloat16), vc.to(torch.bfloat16), table, ctx, cu)
    one = torch.ones(1, dtype=torch.float32)
    with pytest.raises(baracuda.InvalidProblem):  # scales for a cache of q's kind
        ops.paged_prefill(q, kc, vc, table, ctx, cu, k_scale=one, v_scale=one)
    codes = torch.zeros(kc.shape, dtype=torch.int8)
    with pytest.raises(baracuda.InvalidProblem):  # an int8 cache without its scales
        ops.paged_prefill(q, codes, codes, table, ctx, cu)
    with pytest.raises(baracuda.InvalidProblem):  # v_scale missing
        ops.paged_prefill(q, codes, codes, table, ctx, cu, k_scale=one)
    with pytest.raises(baracuda.InvalidProblem):  # per head ([2]) for k, per tensor for v
        ops.paged_prefill(q, codes, codes, table, ctx, cu, k_scale=torch.ones(2), v_scale=one)
    with pytest.raises(baracuda.InvalidProblem):
        ops.paged_prefill(q, kc, vc, table, ctx, cu[None])
    plan = baracuda.PagedPrefillPlan.select(baracuda.Stream.host(), baracuda.PagedPrefillDescriptor(
        batch=2, total_q=5, max_seqlen_q=3, heads=4, kv_heads=2, head_dim=64, num_blocks=kc.shape[0], block_size=16,
        max_blocks_per_seq=table.shape[1]))
    args = dict(q=q, key_cache=kc, value_cache=vc, block_tables=table, context_lens=ctx, cu_seqlens_q=cu)
    plan.run(baracuda.Stream.host(), **args, o=torch.empty_like(q))
    with pytest.raises(baracuda.InvalidProblem):  # o over q
        plan.run(baracuda.Stream.host(), **args, o=q)
