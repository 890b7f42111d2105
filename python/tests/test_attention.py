"""The attention forward from Python against an explicit float64 PyTorch reference (torch 1.13 has no
scaled_dot_product_attention): q·kᵀ·scale plus the bottom-right mask, softmax, ·v, GQA by repeat_interleave,
packed batches by slicing, on host and sim; causal with s_q ≠ s_k, windows, queries that see no key (o = 0,
lse = +inf), the lse, both query tiles, the plan API, and rejections."""

import itertools
import math

import pytest

import baracuda
from baracuda import ops

torch = pytest.importorskip("torch")

UNIT = {torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8}


def data(shape, dtype, seed, lo=-1.0, hi=1.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(shape, generator=g, dtype=torch.float64) * (hi - lo) + lo).to(dtype)


def visible(s_q, s_k, left, right):
    """[s_q, s_k]: whether query i sees key j (attention.hpp's bottom-right rule; -1 unbounded)."""
    i = torch.arange(s_q)[:, None]
    j = torch.arange(s_k)[None, :]
    seen = torch.ones(s_q, s_k, dtype=torch.bool)
    if left >= 0:
        seen &= j >= i + s_k - s_q - left
    if right >= 0:
        seen &= j <= i + s_k - s_q + right
    return seen


def reference_one(q, k, v, scale, left, right):
    """One sequence, float64: q [s_q, H, d], k and v [s_k, H_kv, d] -> o [s_q, H, d], lse [H, s_q]."""
    group = q.shape[1] // k.shape[1]
    kk = k.double().repeat_interleave(group, dim=1)
    vv = v.double().repeat_interleave(group, dim=1)
    s = torch.einsum("ihd,jhd->hij", q.double(), kk) * scale
    seen = visible(q.shape[0], k.shape[0], left, right)
    s = s.masked_fill(~seen[None], -math.inf)
    any_key = seen.any(-1)[None].expand(s.shape[0], -1)
    lse = torch.where(any_key, torch.logsumexp(s, -1), torch.full_like(s[..., 0], math.inf))
    p = torch.where(any_key[..., None], torch.softmax(s, -1), torch.zeros_like(s))
    return torch.einsum("hij,jhd->ihd", p, vv), lse


def effective_scale(scale, d):
    """The f32 value of the scale the kernels use (1/sqrt(d) by default)."""
    return float(torch.tensor(1.0 / math.sqrt(d) if scale is None else scale, dtype=torch.float32))


def bounds(dtype, d, scale):
    """attention.hpp's accuracy for inputs in [-1, 1]: o within (3u + 2·d·2^-23·τ·Σ|q·k|)·max|v| + u·|o|, lse
    within 2^-16·(1 + |lse|) + 2·d·2^-23·τ·Σ|q·k| (Σ|q·k| ≤ d)."""
    u, score = UNIT[dtype], 2 * d * 2.0 ** -23 * scale * d
    return dict(rtol=u, atol=3 * u + score), dict(rtol=2.0 ** -16, atol=2.0 ** -16 + score)


def check(o, lse, want_o, want_lse, dtype, d, scale):
    o_tol, lse_tol = bounds(dtype, d, scale)
    torch.testing.assert_close(o.double(), want_o, **o_tol)
    if lse is not None:
        assert lse.dtype == torch.float32
        torch.testing.assert_close(lse.double(), want_lse, equal_nan=False, **lse_tol)


@pytest.mark.parametrize("dtype", list(UNIT))
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("shape", [(2, 17, 33, 4, 2, 64), (1, 33, 17, 2, 2, 64), (2, 20, 20, 4, 1, 128),
                                   (1, 9, 40, 2, 1, 96)])
def test_padded_matches_torch(shape, causal, dtype, device):
    b, s_q, s_k, h, h_kv, d = shape
    q, k, v = data((b, s_q, h, d), dtype, 1), data((b, s_k, h_kv, d), dtype, 2), data((b, s_k, h_kv, d), dtype, 3)
    o, lse = ops.flash_attention(q, k, v, causal=causal, return_lse=True, device=device)
    assert o.shape == (b, s_q, h, d) and o.dtype == dtype and lse.shape == (b, h, s_q)
    scale = effective_scale(None, d)
    for i in range(b):
        want_o, want_lse = reference_one(q[i], k[i], v[i], scale, -1, 0 if causal else -1)
        check(o[i], lse[i], want_o, want_lse, dtype, d, scale)
    if causal and s_q > s_k:  # bottom-right: the first s_q - s_k queries see no key
        blind = s_q - s_k
        assert torch.equal(o[:, :blind], torch.zeros_like(o[:, :blind]))
        assert torch.isinf(lse[:, :, :blind]).all() and (lse[:, :, :blind] > 0).all()
        assert torch.isfinite(lse[:, :, blind:]).all()
    # without the lse, the same o
    o2 = ops.flash_attention(q, k, v, causal=causal, device=device)
    assert torch.equal(o2, o)


@pytest.mark.parametrize("dtype", list(UNIT))
@pytest.mark.parametrize("causal,window", [(False, (3, 2)), (False, (0, 0)), (False, (5, -1)), (True, (4, -1)),
                                           (False, (-1, 6)), (True, (0, 0))])
def test_windows(causal, window, dtype, device):
    b, s_q, s_k, h, d = 1, 24, 14, 2, 64
    q, k, v = data((b, s_q, h, d), dtype, 4), data((b, s_k, h, d), dtype, 5), data((b, s_k, h, d), dtype, 6)
    o, lse = ops.flash_attention(q, k, v, causal=causal, window=window, return_lse=True, device=device)
    right = 0 if causal else window[1]
    scale = effective_scale(None, d)
    want_o, want_lse = reference_one(q[0], k[0], v[0], scale, window[0], right)
    check(o[0], lse[0], want_o, want_lse, dtype, d, scale)
    blind = ~visible(s_q, s_k, window[0], right).any(-1)
    if right >= 0:
        assert blind.any()  # s_q > s_k: the first rows see no key
    assert torch.equal(o[0, blind], torch.zeros_like(o[0, blind]))
    assert (lse[0][:, blind] == math.inf).all()
    assert torch.isfinite(lse[0][:, ~blind]).all()


@pytest.mark.parametrize("dtype", list(UNIT))
@pytest.mark.parametrize("causal", [False, True])
def test_varlen_matches_torch(causal, dtype, device):
    lens_q, lens_k = [5, 0, 17, 3, 70], [9, 4, 17, 1, 66]  # s_q > s_k too: causal rows that see no key
    h, h_kv, d = 8, 2, 64
    cu_q = torch.tensor(list(itertools.accumulate(lens_q, initial=0)), dtype=torch.int32)
    cu_k = torch.tensor(list(itertools.accumulate(lens_k, initial=0)), dtype=torch.int32)
    q = data((int(cu_q[-1]), h, d), dtype, 7)
    k, v = data((int(cu_k[-1]), h_kv, d), dtype, 8), data((int(cu_k[-1]), h_kv, d), dtype, 9)
    o, lse = ops.flash_attention(q, k, v, causal=causal, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k, return_lse=True,
                                 device=device)
    assert o.shape == q.shape and lse.shape == (h, q.shape[0])
    scale = effective_scale(None, d)
    for b in range(len(lens_q)):
        rq, rk = slice(int(cu_q[b]), int(cu_q[b + 1])), slice(int(cu_k[b]), int(cu_k[b + 1]))
        want_o, want_lse = reference_one(q[rq], k[rk], v[rk], scale, -1, 0 if causal else -1)
        check(o[rq], lse[:, rq], want_o, want_lse, dtype, d, scale)
    # explicit longest lengths give the same bits
    o2 = ops.flash_attention(q, k, v, causal=causal, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k, max_seqlen_q=70,
                             max_seqlen_k=66, device=device)
    assert torch.equal(o2, o)


@pytest.mark.parametrize("d", [64, 96, 128])
def test_query_tiles(d, device):
    """tile="rows128" (FlashAttention-2's 128-row query tile): against torch, and the same bits as "rows64"."""
    b, s_q, s_k, h, h_kv, dtype = 1, 200, 150, 4, 2, torch.bfloat16
    q, k, v = data((b, s_q, h, d), dtype, 21), data((b, s_k, h_kv, d), dtype, 22), data((b, s_k, h_kv, d), dtype, 23)
    o, lse = ops.flash_attention(q, k, v, causal=True, window=(40, -1), tile="rows128", return_lse=True,
                                 device=device)
    scale = effective_scale(None, d)
    want_o, want_lse = reference_one(q[0], k[0], v[0], scale, 40, 0)
    check(o[0], lse[0], want_o, want_lse, dtype, d, scale)
    o64, lse64 = ops.flash_attention(q, k, v, causal=True, window=(40, -1), tile="rows64", return_lse=True,
                                     device=device)
    assert torch.equal(o64, o) and torch.equal(lse64, lse)


def test_scale_and_one_sequence(device):
    q, k, v = data((11, 4, 64), torch.bfloat16, 10), data((13, 4, 64), torch.bfloat16, 11), data(
        (13, 4, 64), torch.bfloat16, 12)
    o, lse = ops.flash_attention(q, k, v, scale=0.3, return_lse=True, device=device)  # a 3-D q: one sequence
    assert o.shape == (11, 4, 64) and lse.shape == (1, 4, 11)
    scale = effective_scale(0.3, 64)
    want_o, want_lse = reference_one(q, k, v, scale, -1, -1)
    check(o, lse[0], want_o, want_lse, torch.bfloat16, 64, scale)
    # the scale matters: the default 1/8 gives another result
    assert not torch.equal(ops.flash_attention(q, k, v, device=device), o)


def test_plan_api():
    b, s, h, d = 2, 10, 2, 64
    q, k, v = data((b * s, h, d), torch.float16, 13), data((b * s, h, d), torch.float16, 14), data(
        (b * s, h, d), torch.float16, 15)
    desc = baracuda.FlashAttentionDescriptor(b, s, s, h, h, d, element="f16", causal=True, return_lse=True)
    assert (desc.heads, desc.causal, desc.element, desc.window_right, desc.tile) == (2, True, "f16", -1, "auto")
    sim = baracuda.Stream.sim()
    assert baracuda.FlashAttentionPlan.select(sim, desc).sku.endswith("fa2_m16n8k16")
    desc.tile = "rows128"
    assert baracuda.FlashAttentionPlan.select(sim, desc).sku.endswith("fa2_m16n8k16_m128")
    long = baracuda.FlashAttentionDescriptor(b, 128, 128, h, h, d, element="f16")  # auto: 128 query rows a sequence
    assert baracuda.FlashAttentionPlan.select(sim, long).sku.endswith("fa2_m16n8k16_m128")
    wide = baracuda.FlashAttentionDescriptor(b, s, s, h, h, 256, element="f16", tile="rows128")
    with pytest.raises(baracuda.Unsupported, match="128-row"):  # no 128-row kernel at d = 256
        baracuda.FlashAttentionPlan.select(sim, wide)
    desc.tile = "auto"
    plan = baracuda.FlashAttentionPlan.select(baracuda.Stream.host(), desc)
    assert "flash_attention" in plan.sku and plan.workspace_size == 0
    o, lse = torch.empty_like(q), torch.empty(b, h, s, dtype=torch.float32)
    plan.run(baracuda.Stream.host(), q=q, k=k, v=v, o=o, lse=lse)
    scale = effective_scale(None, d)
    for i in range(b):
        rows = slice(i * s, (i + 1) * s)
        want_o, want_lse = reference_one(q[rows], k[rows], v[rows], scale, -1, 0)
        check(o[rows], lse[i], want_o, want_lse, torch.float16, d, scale)
    with pytest.raises(baracuda.InvalidProblem, match="lse"):
        plan.can_implement(baracuda.Stream.host(), q=q, k=k, v=v, o=o)  # the descriptor writes an lse


def test_rejections():
    q, k = torch.zeros(1, 4, 2, 64, dtype=torch.float16), torch.zeros(1, 4, 2, 64, dtype=torch.float16)
    with pytest.raises(baracuda.Unsupported, match="head dimension 80"):
        ops.flash_attention(q.new_zeros(1, 4, 2, 80), k.new_zeros(1, 4, 2, 80), k.new_zeros(1, 4, 2, 80))
    with pytest.raises(baracuda.Unsupported, match="f16 or bf16"):
        ops.flash_attention(q.float(), k.float(), k.float())
    with pytest.raises(baracuda.InvalidProblem, match="must divide"):
        ops.flash_attention(q.new_zeros(1, 4, 3, 64), k, k)
    with pytest.raises(baracuda.InvalidProblem, match="window bounds"):
        ops.flash_attention(q, k, k, window=(-2, 0))
    with pytest.raises(baracuda.InvalidProblem, match="causal is window_right = 0"):
        ops.flash_attention(q, k, k, causal=True, window=(-1, 3))
    with pytest.raises(baracuda.InvalidProblem, match="softmax scale"):
        ops.flash_attention(q, k, k, scale=-1.0)
    with pytest.raises(baracuda.InvalidProblem, match="both cu_seqlens"):
        ops.flash_attention(q[0], k[0], k[0], cu_seqlens_q=torch.tensor([0, 4], dtype=torch.int32))
    with pytest.raises(baracuda.InvalidProblem, match="cu_seqlens_q"):
        cu = torch.tensor([0, 4], dtype=torch.int64)
        ops.flash_attention(q[0], k[0], k[0], cu_seqlens_q=cu, cu_seqlens_k=cu)
    with pytest.raises(baracuda.InvalidProblem, match=r"\[B, S, heads, d\]"):
        ops.flash_attention(q[0, 0], k[0, 0], k[0, 0])
    with pytest.raises(baracuda.InvalidProblem, match="batches"):
        ops.flash_attention(q, k.new_zeros(2, 4, 2, 64), k.new_zeros(2, 4, 2, 64))
    with pytest.raises(ValueError):  # not a tile's name
        ops.flash_attention(q, k, k, tile="rows256")
    with pytest.raises(baracuda.InvalidProblem, match="unit stride along d"):
        ops.flash_attention(q.new_zeros(1, 4, 2, 128)[..., ::2], k, k)
