"""Rotary embedding from Python against PyTorch: HF's rotate_half (NeoX) and GPT-J's rotate_every_two applied
with torch in float64, over the plan's frequencies and the f32 angle RopePlan defines, on host and sim; the
frequencies of the llama3 and YaRN scalings against HF's formulas; a vLLM cos_sin_cache; in place over a fused
qkv tensor; the backward's round trip; rejections."""

import math

import pytest

import baracuda
from baracuda import ops

torch = pytest.importorskip("torch")

TOL = {torch.float32: (1e-5, 1e-5), torch.bfloat16: (1.6e-2, 2e-2), torch.float16: (2e-3, 2e-3)}


def data(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(shape, generator=g, dtype=torch.float64) * 8 - 4).to(dtype)


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def rotate_every_two(x):
    return torch.stack((-x[..., 1::2], x[..., ::2]), dim=-1).flatten(-2)


def reference(x, cos, sin, style, rot):
    """HF's apply_rotary_pos_emb (NeoX) or GPT-J's, in float64; cos, sin [T, rot/2]."""
    x = x.double()
    xr, xp = x[..., :rot], x[..., rot:]
    if style == "neox":
        c, s = torch.cat((cos, cos), -1)[:, None, :], torch.cat((sin, sin), -1)[:, None, :]
        y = xr * c + rotate_half(xr) * s
    else:
        c, s = cos.repeat_interleave(2, -1)[:, None, :], sin.repeat_interleave(2, -1)[:, None, :]
        y = xr * c + rotate_every_two(xr) * s
    return torch.cat((y, xp), -1)


def plan_frequencies(q, k, positions, rot, **kw):
    """The plan's inv_freq and attention factor, through the plan API."""
    desc = baracuda.RopeDescriptor("neox", "f32", q.shape[0], q.shape[1], q.shape[2], rot_dim=rot, **kw)
    plan = baracuda.RopePlan.select(baracuda.Stream.host(), desc)
    return torch.tensor(plan.inv_freq, dtype=torch.float32), plan.attention_factor


def cos_sin(positions, inv, m):
    angle = positions.float()[:, None] * inv[None, :]  # the f32 angle rope.hpp defines
    return angle.double().cos() * m, angle.double().sin() * m


@pytest.mark.parametrize("dtype", list(TOL))
@pytest.mark.parametrize("style", ["neox", "gptj"])
@pytest.mark.parametrize("shape", [(9, 4, 2, 64, 64), (5, 3, 1, 80, 32), (4, 2, 0, 40, 24)])
def test_matches_torch(style, shape, dtype, device):
    t, h, hk, d, rot = shape
    q, k = data((t, h, d), dtype, 1), (data((t, hk, d), dtype, 2) if hk else None)
    positions = torch.tensor([3, 0, 511, 17, 100, 250, 7, 64, 1][:t], dtype=torch.int64)
    inv, m = plan_frequencies(q, k, positions, rot)
    cos, sin = cos_sin(positions, inv, m)
    q_out, k_out = ops.rope(q, k, positions, style=style, rot_dim=rot, device=device)
    rtol, atol = TOL[dtype]
    torch.testing.assert_close(q_out, reference(q, cos, sin, style, rot).to(dtype), rtol=rtol, atol=atol)
    if hk:
        torch.testing.assert_close(k_out, reference(k, cos, sin, style, rot).to(dtype), rtol=rtol, atol=atol)
    else:
        assert k_out is None
    torch.testing.assert_close(q_out[..., rot:], q[..., rot:], rtol=0, atol=0)


def test_scalings_follow_hf(device):
    q, k = data((6, 2, 128), torch.float32, 3), data((6, 1, 128), torch.float32, 4)
    positions = torch.tensor([0, 1, 4000, 8191, 20000, 65000], dtype=torch.int32)
    base = 1.0 / (500000.0 ** (torch.arange(0, 128, 2, dtype=torch.float64) / 128))
    # Llama 3.1: HF's _compute_llama3_parameters in float64.
    wavelen = 2 * math.pi / base
    smooth = (8192 / wavelen - 1) / (4 - 1)
    want = torch.where(wavelen > 8192, base / 8, base)
    medium = ~(wavelen < 8192 / 4) & ~(wavelen > 8192)
    want = torch.where(medium, (1 - smooth) * want / 8 + smooth * want, want)
    kw = dict(theta=500000.0, scaling="llama3", factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
              original_max_position=8192)
    inv, m = plan_frequencies(q, k, positions, 128, **kw)
    torch.testing.assert_close(inv.double(), want, rtol=2 ** -23, atol=0)
    assert m == 1.0
    cos, sin = cos_sin(positions, inv, m)
    q_out, k_out = ops.rope(q, k, positions, device=device, **kw)
    torch.testing.assert_close(q_out, reference(q, cos, sin, "neox", 128).float(), rtol=1e-5, atol=2e-5)
    # YaRN (factor 4, L0 4096): the attention factor 0.1 ln 4 + 1 multiplies cos and sin.
    kw = dict(theta=10000.0, scaling="yarn", factor=4.0, original_max_position=4096)
    inv, m = plan_frequencies(q, k, positions, 128, **kw)
    assert m == pytest.approx(0.1 * math.log(4) + 1, rel=1e-7)
    cos, sin = cos_sin(positions, inv, m)
    q_out, k_out = ops.rope(q, k, positions, style="gptj", device=device, **kw)
    torch.testing.assert_close(k_out, reference(k, cos, sin, "gptj", 128).float(), rtol=1e-5, atol=2e-5)


def test_cache_and_fused_qkv_in_place(device):
    t, h, hk, d = 7, 4, 2, 64
    inv = 1.0 / (10000.0 ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
    freqs = torch.arange(32, dtype=torch.float32)[:, None] * inv[None, :]
    cache = torch.cat((freqs.cos(), freqs.sin()), -1)  # vLLM's cos_sin_cache [max_position, rot_dim]
    positions = torch.tensor([0, 5, 31, 40, -2, 12, 9], dtype=torch.int64)  # 40 and -2 are clamped
    qkv = data((t, h + 2 * hk, d), torch.bfloat16, 5)
    before = qkv.clone()
    q, k = qkv[:, :h], qkv[:, h:h + hk]
    ops.rope(q, k, positions, cos_sin_cache=cache, inplace=True, device=device)
    rows = positions.clamp(0, 31)
    cos, sin = cache[rows, : d // 2].double(), cache[rows, d // 2:].double()
    torch.testing.assert_close(qkv[:, :h], reference(before[:, :h], cos, sin, "neox", d).bfloat16(), rtol=1.6e-2,
                               atol=2e-2)
    torch.testing.assert_close(qkv[:, h:h + hk], reference(before[:, h:h + hk], cos, sin, "neox", d).bfloat16(),
                               rtol=1.6e-2, atol=2e-2)
    assert torch.equal(qkv[:, h + hk:], before[:, h + hk:])  # v untouched


def test_backward_is_the_inverse(device):
    q, k = data((5, 3, 48), torch.float32, 6), data((5, 1, 48), torch.float32, 7)
    positions = torch.tensor([1, 900, 33, 4000, 2], dtype=torch.int64)
    q1, k1 = ops.rope(q, k, positions, style="gptj", rot_dim=32, device=device)
    q2, k2 = ops.rope_backward(q1, k1, positions, style="gptj", rot_dim=32, device=device)
    torch.testing.assert_close(q2, q, rtol=0, atol=1e-5)
    torch.testing.assert_close(k2, k, rtol=0, atol=1e-5)
    # The backward of y = R x is R^T dy: <R x, dy> = <x, R^T dy>.
    dy = data((5, 3, 48), torch.float32, 8)
    dq, _ = ops.rope_backward(dy, None, positions, style="gptj", rot_dim=32, device=device)
    assert float((q1.double() * dy.double()).sum()) == pytest.approx(float((q.double() * dq.double()).sum()),
                                                                     rel=1e-5)


def test_rejections():
    q = torch.zeros(2, 2, 8)
    positions = torch.zeros(2, dtype=torch.int64)
    with pytest.raises(baracuda.InvalidProblem, match="rot_dim"):
        ops.rope(q, None, positions, rot_dim=5)
    with pytest.raises(baracuda.InvalidProblem, match="positions"):
        ops.rope(q, None, positions.float())
    with pytest.raises(ValueError, match="rope style"):
        ops.rope(q, None, positions, style="half")
    with pytest.raises(baracuda.InvalidProblem, match="theta"):
        ops.rope(q, None, positions, theta=0.5)
    with pytest.raises(baracuda.Unsupported):
        ops.rope(q.double(), None, positions)
