"""Paged decode attention from Python against a torch reference written here: each sequence's keys and values
gathered through its block table (pages shuffled, unused pages between), dequantized (int8 * scale, FP8 via
ml_dtypes), then float64 q·kᵀ·scale with the bottom-right causal mask among the q_len new tokens (and a window),
torch.softmax, ·v, GQA by repeat_interleave; on host and sim; several splits, lse, an invalid page id, lengths
clamped to the table, and rejections."""

import math

import numpy as np
import pytest

import baracuda
from baracuda import ops
from test_attention import visible

torch = pytest.importorskip("torch")

UNIT = {torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8}


def data(shape, dtype, seed, lo=-1.0, hi=1.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(shape, generator=g, dtype=torch.float64) * (hi - lo) + lo).to(dtype)


def paged(lens, block_size, seed):
    """Block tables int32 [B, max_pages] over shuffled, non-contiguous page ids, and the pool size."""
    pages = [(n + block_size - 1) // block_size for n in lens]
    width, total = max(pages + [1]), sum(pages)
    ids = (torch.randperm(total, generator=torch.Generator().manual_seed(seed)) * 2 + 1).tolist()
    table = torch.full((len(lens), width), -1, dtype=torch.int32)
    n = 0
    for b, p in enumerate(pages):
        table[b, :p] = torch.tensor(ids[n:n + p], dtype=torch.int32)
        n += p
    return table, 2 * total + 1


def gather(kc, vc, table, b, L):
    """Sequence b's first L keys and values [L, H_kv, d] read through its block table (page 0 where the page id is
    outside the cache), and whether each key's page is in the cache (bool [L])."""
    n_blocks, bs = kc.shape[:2]
    pg = torch.tensor([int(table[b, j // bs]) for j in range(L)], dtype=torch.int64)
    off = torch.tensor([j % bs for j in range(L)], dtype=torch.int64)
    ok = (pg >= 0) & (pg < n_blocks)
    safe = torch.where(ok, pg, torch.zeros_like(pg))
    return kc[safe, off], vc[safe, off], ok


def attend(qs, k, v, seen, scale):
    """float64 o [n, H, d] and lse [n, H] of the queries qs [n, H, d] over k, v [L, H_kv, d] (GQA by
    repeat_interleave) where seen [n, L] allows; a query that sees no key gets o = 0 and lse = +inf."""
    h = qs.shape[1]
    k, v = (t.repeat_interleave(h // t.shape[1], dim=1) for t in (k, v))
    s = torch.einsum("ihd,jhd->hij", qs.double(), k) * scale
    s = s.masked_fill(~seen[None], -math.inf)
    any_key = seen.any(-1)[None].expand(h, -1)
    p = torch.where(any_key[..., None], torch.softmax(s, -1), torch.zeros_like(s))
    lse = torch.where(any_key, torch.logsumexp(s, -1), torch.full_like(s[..., 0], math.inf))
    return torch.einsum("hij,jhd->ihd", p, v), lse.T


def reference(q, kc, vc, table, lens, q_len, scale, window=-1):
    """float64 o [B*q_len, H, d], lse [B*q_len, H] from the dequantized caches kc, vc [N, bs, H_kv, d]."""
    o = torch.zeros(q.shape, dtype=torch.float64)
    lse = torch.full((q.shape[0], q.shape[1]), math.inf, dtype=torch.float64)
    for b, raw in enumerate(lens):
        L = min(max(int(raw), 0), table.shape[1] * kc.shape[1])
        if L == 0:
            continue
        k, v, ok = gather(kc, vc, table, b, L)
        seen = visible(q_len, L, window, 0) & ok[None, :]
        rows = slice(b * q_len, (b + 1) * q_len)
        o[rows], lse[rows] = attend(q[rows], k, v, seen, scale)
    return o, lse


def f32(x):
    return float(torch.tensor(x, dtype=torch.float32))


def check(o, lse, want_o, want_lse, dtype, d, scale, vmax=1.0, p_units=1):
    u, score = UNIT[dtype], 4 * d * 2.0 ** -23 * scale * d * 4
    torch.testing.assert_close(o.double(), want_o, rtol=u, atol=(p_units * u + score) * vmax + 2.0 ** -18)
    if lse is not None:
        assert lse.dtype == torch.float32
        torch.testing.assert_close(lse.double(), want_lse, rtol=2.0 ** -20, atol=2.0 ** -20 + score)


@pytest.mark.parametrize("dtype", list(UNIT))
@pytest.mark.parametrize("splits", [0, 1, 3])
@pytest.mark.parametrize("shape", [(8, 2, 64, 1, 16), (4, 1, 128, 2, 16), (2, 2, 96, 3, 8), (8, 8, 256, 1, 32)])
def test_matches_torch(shape, splits, dtype, device):
    h, h_kv, d, q_len, bs = shape
    lens = [1, 15, 16, 17, 70, 0][: 6 if d <= 128 else 3]
    table, n_blocks = paged(lens, bs, 1)
    q = data((len(lens) * q_len, h, d), dtype, 2)
    kc, vc = data((n_blocks, bs, h_kv, d), dtype, 3), data((n_blocks, bs, h_kv, d), dtype, 4)
    ctx = torch.tensor(lens, dtype=torch.int32)
    o, lse = ops.paged_decode(q, kc, vc, table, ctx, q_len=q_len, num_splits=splits, return_lse=True,
                              device=device)
    assert o.shape == q.shape and o.dtype == dtype and lse.shape == (q.shape[0], h)
    scale = f32(1.0 / math.sqrt(d))
    want_o, want_lse = reference(q, kc.double(), vc.double(), table, lens, q_len, scale)
    check(o, lse, want_o, want_lse, dtype, d, scale)
    assert torch.isinf(lse[-q_len:]).all() if lens[-1] == 0 else True
    o2 = ops.paged_decode(q, kc, vc, table, ctx, q_len=q_len, num_splits=splits, device=device)
    assert torch.equal(o2, o)


@pytest.mark.parametrize("dtype", list(UNIT))
@pytest.mark.parametrize("int8", [False, True])
@pytest.mark.parametrize("shape", [(8, 2, 64, 1, 16), (4, 1, 128, 2, 16), (2, 2, 96, 3, 8)])
def test_tensor_core_kernel(shape, int8, dtype, device):
    """kernel="tensor_cores": P rounded to q's kind before P·V (FlashAttentionPlan's bound: 3 units of max|v|)."""
    h, h_kv, d, q_len, bs = shape
    lens = [1, 15, 16, 17, 70, 0]
    table, n_blocks = paged(lens, bs, 9)
    q = data((len(lens) * q_len, h, d), dtype, 10)
    kc, vc = data((n_blocks, bs, h_kv, d), dtype, 11), data((n_blocks, bs, h_kv, d), dtype, 12)
    scales, kd, vd = {}, kc.double(), vc.double()
    if int8:
        kc, vc = (kc.float() * 127).round().to(torch.int8), (vc.float() * 127).round().to(torch.int8)
        scales = dict(k_scale=torch.tensor([0.01], dtype=torch.float32),
                      v_scale=torch.tensor([0.02], dtype=torch.float32))
        kd, vd = kc.double() * f32(0.01), vc.double() * f32(0.02)
    ctx = torch.tensor(lens, dtype=torch.int32)
    o, lse = ops.paged_decode(q, kc, vc, table, ctx, q_len=q_len, kernel="tensor_cores", return_lse=True, device=device,
                              **scales)
    scale = f32(1.0 / math.sqrt(d))
    want_o, want_lse = reference(q, kd, vd, table, lens, q_len, scale)
    check(o, lse, want_o, want_lse, dtype, d, scale, vmax=float(vd.abs().max()), p_units=3)
    o2 = ops.paged_decode(q, kc, vc, table, ctx, q_len=q_len, kernel="tensor_cores", device=device, **scales)
    assert torch.equal(o2, o)


def test_window_and_4d_q(device):
    dtype, h, h_kv, d, q_len, bs = torch.bfloat16, 4, 1, 64, 3, 16
    lens = [40, 2]
    table, n_blocks = paged(lens, bs, 5)
    q = data((len(lens), q_len, h, d), dtype, 6)
    kc, vc = data((n_blocks, bs, h_kv, d), dtype, 7), data((n_blocks, bs, h_kv, d), dtype, 8)
    o, lse = ops.paged_decode(q, kc, vc, table, torch.tensor(lens, dtype=torch.int32), window_left=5, scale=0.2,
                              return_lse=True, device=device)
    assert o.shape == q.shape and lse.shape == (2, q_len, h)
    want_o, want_lse = reference(q.reshape(-1, h, d), kc.double(), vc.double(), table, lens, q_len, f32(0.2), 5)
    check(o.reshape(-1, h, d), lse.reshape(-1, h), want_o, want_lse, dtype, d, f32(0.2))
    assert torch.isinf(lse[1, 0]).all()  # length 2 < q_len 3: the first query sees no key
    assert torch.equal(o[1, 0], torch.zeros_like(o[1, 0]))


@pytest.mark.parametrize("per_head", [False, True])
def test_int8_cache(per_head, device):
    dtype, h, h_kv, d, bs = torch.float16, 4, 2, 64, 16
    lens = [33, 9]
    table, n_blocks = paged(lens, bs, 9)
    g = torch.Generator().manual_seed(10)
    kc = torch.randint(-127, 128, (n_blocks, bs, h_kv, d), generator=g, dtype=torch.int8)
    vc = torch.randint(-127, 128, (n_blocks, bs, h_kv, d), generator=g, dtype=torch.int8)
    n = h_kv if per_head else 1
    k_scale = torch.rand(n, generator=g, dtype=torch.float32) / 127 + 0.002
    v_scale = torch.rand(n, generator=g, dtype=torch.float32) / 127 + 0.002
    q = data((len(lens), h, d), dtype, 11)
    o, lse = ops.paged_decode(q, kc, vc, table, torch.tensor(lens, dtype=torch.int32), k_scale=k_scale,
                              v_scale=v_scale, num_splits=2, return_lse=True, device=device)
    ks = k_scale.double().reshape(1, 1, -1, 1).expand(1, 1, h_kv, 1)
    vs = v_scale.double().reshape(1, 1, -1, 1).expand(1, 1, h_kv, 1)
    scale = f32(1.0 / math.sqrt(d))
    want_o, want_lse = reference(q, kc.double() * ks, vc.double() * vs, table, lens, 1, scale)
    check(o, lse, want_o, want_lse, dtype, d, scale)


def test_fp8_cache(device):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    h, h_kv, d, bs = 2, 1, 64, 16
    lens = [20]
    table, n_blocks = paged(lens, bs, 12)
    rng = np.random.default_rng(13)
    kc = rng.uniform(-4, 4, (n_blocks, bs, h_kv, d)).astype(ml_dtypes.float8_e4m3fn)
    vc = rng.uniform(-4, 4, (n_blocks, bs, h_kv, d)).astype(ml_dtypes.float8_e4m3fn)
    q = rng.uniform(-1, 1, (1, h, d)).astype(np.float16)
    k_scale, v_scale = np.array([0.25], np.float32), np.array([0.5], np.float32)
    o = ops.paged_decode(q, kc, vc, table.numpy(), np.array(lens, np.int32), k_scale=k_scale, v_scale=v_scale,
                         device=device)
    scale = f32(1.0 / math.sqrt(d))
    want_o, _ = reference(torch.from_numpy(q), torch.from_numpy(kc.astype(np.float64)) * 0.25,
                          torch.from_numpy(vc.astype(np.float64)) * 0.5, table, lens, 1, scale)
    check(torch.from_numpy(np.asarray(o)), None, want_o, None, torch.float16, d, scale, vmax=2.0)


def test_invalid_pages_and_long_lengths(device):
    dtype, h, h_kv, d, bs = torch.float16, 2, 1, 64, 16
    lens = [40, 20]
    table, n_blocks = paged(lens, bs, 14)
    table[0, 1] = -3
    table[1, 0] = n_blocks + 5
    raw = [1 << 30, -2]  # clamped to 48 (its third page is -1: masked) and 0
    q = data((2, h, d), dtype, 15)
    kc, vc = data((n_blocks, bs, h_kv, d), dtype, 16), data((n_blocks, bs, h_kv, d), dtype, 17)
    o, lse = ops.paged_decode(q, kc, vc, table, torch.tensor(raw, dtype=torch.int32), num_splits=3,
                              return_lse=True, device=device)
    scale = f32(1.0 / math.sqrt(d))
    want_o, want_lse = reference(q, kc.double(), vc.double(), table, raw, 1, scale)
    check(o, lse, want_o, want_lse, dtype, d, scale)
    assert torch.isinf(lse[1]).all() and torch.isfinite(lse[0]).all()


def test_plan_api_and_rejections():
    desc = baracuda.PagedDecodeDescriptor(batch=2, q_len=1, heads=8, kv_heads=2, head_dim=128, num_blocks=64,
                                          block_size=16, max_blocks_per_seq=32, element="bf16", cache_kind="fp8e4m3")
    plan = baracuda.PagedDecodePlan.select(baracuda.Stream.sim(), desc)
    assert "paged_decode" in plan.sku and plan.chosen_splits > 1 and plan.workspace_size > 0
    assert baracuda.PagedDecodePlan.select(baracuda.Stream.host(), desc).chosen_splits == 1
    assert desc.kernel == "auto" and plan.sku.endswith("split_kv_simt")
    desc.kernel = "tensor_cores"
    assert baracuda.PagedDecodePlan.select(baracuda.Stream.sim(), desc).sku.endswith("split_kv_tc")
    many = baracuda.PagedDecodeDescriptor(batch=16, q_len=1, heads=8, kv_heads=2, head_dim=128, num_blocks=64,
                                          block_size=16, max_blocks_per_seq=32, element="bf16", cache_kind="bf16")
    assert many.kernel == "auto"  # from 16 sequences over a 16-bit cache at d = 128: the tensor cores
    assert baracuda.PagedDecodePlan.select(baracuda.Stream.sim(), many).sku.endswith("split_kv_tc")
    with pytest.raises(baracuda.Unsupported):  # no tensor-core kernel at d = 256
        baracuda.PagedDecodePlan.select(baracuda.Stream.sim(), baracuda.PagedDecodeDescriptor(
            batch=1, q_len=1, heads=2, kv_heads=1, head_dim=256, num_blocks=4, block_size=16, max_blocks_per_seq=2,
            kernel="tensor_cores"))
    with pytest.raises(ValueError):  # not a kernel's name
        baracuda.PagedDecodeDescriptor(batch=1, q_len=1, heads=2, kv_heads=1, head_dim=64, num_blocks=4,
                                       block_size=16, max_blocks_per_seq=2, kernel="tensor")
    with pytest.raises(baracuda.Unsupported):
        baracuda.PagedDecodePlan.select(baracuda.Stream.host(), baracuda.PagedDecodeDescriptor(
            batch=1, q_len=1, heads=2, kv_heads=1, head_dim=80, num_blocks=4, block_size=16, max_blocks_per_seq=2))
    with pytest.raises(baracuda.InvalidProblem):
        baracuda.PagedDecodePlan.select(baracuda.Stream.host(), baracuda.PagedDecodeDescriptor(
            batch=1, q_len=1, heads=3, kv_heads=2, head_dim=64, num_blocks=4, block_size=16, max_blocks_per_seq=2))
    q = data((2, 4, 64), torch.float16, 1)
    kc = data((4, 16, 2, 64), torch.float16, 2)
    table = torch.zeros((2, 2), dtype=torch.int32)
    with pytest.raises(baracuda.InvalidProblem):  # context_lens of the wrong length
        ops.paged_decode(q, kc, kc.clone(), table, torch.tensor([3], dtype=torch.int32))
    with pytest.raises(baracuda.InvalidProblem):
        ops.paged_decode(q, kc, kc.clone(), table[0], torch.tensor([3, 4], dtype=torch.int32))
