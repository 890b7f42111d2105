"""The attention backward from Python against PyTorch's autograd in float64 through an explicit attention (torch 1.13
has no scaled_dot_product_attention): q·kᵀ·scale plus the bottom-right mask, softmax, ·v, GQA by
repeat_interleave, packed batches by slicing, on host and sim; causal with s_q ≠ s_k (queries that see no key),
windows, head dims 64/96/128, the same bits on a second run, and rejections."""

import itertools
import math

import pytest

import baracuda
from baracuda import ops
from test_attention import UNIT, data, effective_scale, visible

torch = pytest.importorskip("torch")


def reference_grads(q, k, v, d_o, scale, left, right):
    """One sequence, float64 autograd: (dq, dk, dv) of sum(o·d_o), o the attention of q [s_q, H, d] over k and
    v [s_k, H_kv, d]. Rows that see no key give o = 0 and no gradient (their scores are zeroed before the softmax,
    so no NaN reaches the graph)."""
    q, k, v = (a.double().requires_grad_() for a in (q, k, v))
    group = q.shape[1] // k.shape[1]
    kk, vv = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    seen = visible(q.shape[0], k.shape[0], left, right)
    any_key = seen.any(-1)
    s = torch.einsum("ihd,jhd->hij", q, kk) * scale
    s = s.masked_fill(~seen[None], -math.inf).masked_fill(~any_key[None, :, None], 0.0)
    p = torch.softmax(s, -1) * any_key[None, :, None]
    o = torch.einsum("hij,jhd->ihd", p, vv)
    (o * d_o.double()).sum().backward()
    return q.grad, k.grad, v.grad


def check(got, want, dtype):
    """P and dS are rounded to the element kind before their products (attention_backward.hpp): a few units of
    that kind's rounding of the largest gradient, element by element."""
    u = UNIT[dtype]
    for g, w, name in zip(got, want, ("dq", "dk", "dv")):
        assert g.dtype == dtype, name
        scale = float(w.abs().max()) if w.numel() else 0.0
        torch.testing.assert_close(g.double(), w, rtol=8 * u, atol=8 * u * scale + 1e-6, msg=name)


def forward(q, k, v, device, **kw):
    return ops.flash_attention(q, k, v, return_lse=True, device=device, **kw)


@pytest.mark.parametrize("dtype", list(UNIT))
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("shape", [(2, 17, 33, 4, 2, 64), (1, 33, 17, 2, 2, 64), (1, 20, 20, 4, 1, 128),
                                   (1, 9, 40, 2, 1, 96)])
def test_padded_matches_autograd(shape, causal, dtype, device):
    b, s_q, s_k, h, h_kv, d = shape
    q, k, v = data((b, s_q, h, d), dtype, 11), data((b, s_k, h_kv, d), dtype, 12), data((b, s_k, h_kv, d), dtype, 13)
    d_o = data((b, s_q, h, d), dtype, 14)
    o, lse = forward(q, k, v, device, causal=causal)
    dq, dk, dv = ops.flash_attention_backward(d_o, q, k, v, o, lse, causal=causal, device=device)
    assert dq.shape == q.shape and dk.shape == k.shape and dv.shape == v.shape
    scale = effective_scale(None, d)
    for i in range(b):
        want = reference_grads(q[i], k[i], v[i], d_o[i], scale, -1, 0 if causal else -1)
        check((dq[i], dk[i], dv[i]), want, dtype)
    if causal and s_q > s_k:  # the first s_q - s_k queries see no key: no gradient
        blind = s_q - s_k
        assert torch.equal(dq[:, :blind], torch.zeros_like(dq[:, :blind]))
    again = ops.flash_attention_backward(d_o, q, k, v, o, lse, causal=causal, device=device)
    assert all(torch.equal(a, b) for a, b in zip(again, (dq, dk, dv)))  # deterministic


@pytest.mark.parametrize("dtype", list(UNIT))
@pytest.mark.parametrize("causal,window", [(False, (3, 2)), (True, (4, -1)), (False, (-1, 6))])
def test_windows(causal, window, dtype, device):
    s_q, s_k, h, d = 24, 14, 2, 64
    q, k, v = data((1, s_q, h, d), dtype, 15), data((1, s_k, h, d), dtype, 16), data((1, s_k, h, d), dtype, 17)
    d_o = data((1, s_q, h, d), dtype, 18)
    o, lse = forward(q, k, v, device, causal=causal, window=window)
    grads = ops.flash_attention_backward(d_o, q, k, v, o, lse, causal=causal, window=window, device=device)
    right = 0 if causal else window[1]
    want = reference_grads(q[0], k[0], v[0], d_o[0], effective_scale(None, d), window[0], right)
    check(tuple(g[0] for g in grads), want, dtype)
    unseen = ~visible(s_q, s_k, window[0], right).any(0)  # keys no query sees get dk = dv = 0
    for g in grads[1:]:
        assert torch.equal(g[0, unseen], torch.zeros_like(g[0, unseen]))


@pytest.mark.parametrize("dtype", list(UNIT))
def test_varlen_matches_autograd(dtype, device):
    lens_q, lens_k = [5, 0, 17, 3, 40], [9, 4, 17, 1, 36]
    h, h_kv, d = 8, 2, 64
    cu_q = torch.tensor(list(itertools.accumulate(lens_q, initial=0)), dtype=torch.int32)
    cu_k = torch.tensor(list(itertools.accumulate(lens_k, initial=0)), dtype=torch.int32)
    q, d_o = data((int(cu_q[-1]), h, d), dtype, 19), data((int(cu_q[-1]), h, d), dtype, 20)
    k, v = data((int(cu_k[-1]), h_kv, d), dtype, 21), data((int(cu_k[-1]), h_kv, d), dtype, 22)
    kw = dict(causal=True, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k)
    o, lse = forward(q, k, v, device, **kw)
    dq, dk, dv = ops.flash_attention_backward(d_o, q, k, v, o, lse, device=device, **kw)
    scale = effective_scale(None, d)
    for b in range(len(lens_q)):
        rq, rk = slice(int(cu_q[b]), int(cu_q[b + 1])), slice(int(cu_k[b]), int(cu_k[b + 1]))
        want = reference_grads(q[rq], k[rk], v[rk], d_o[rq], scale, -1, 0)
        check((dq[rq], dk[rk], dv[rk]), want, dtype)


def test_plan_api():
    s, h, d = 8, 2, 64
    q, k, v, d_o = (data((s, h, d), torch.float16, 30 + i) for i in range(4))
    desc = baracuda.FlashAttentionDescriptor(1, s, s, h, h, d, element="f16", causal=True, return_lse=True)
    o, lse = torch.empty_like(q), torch.empty(1, h, s, dtype=torch.float32)
    baracuda.FlashAttentionPlan.select(baracuda.Stream.host(), desc).run(baracuda.Stream.host(), q=q, k=k, v=v, o=o,
                                                                          lse=lse)
    plan = baracuda.FlashAttentionBackwardPlan.select(baracuda.Stream.host(), desc)
    assert "flash_attention_backward" in plan.sku and plan.workspace_size >= h * s * 4  # D, f32 [H, T_q]
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    ws = torch.empty(plan.workspace_size, dtype=torch.uint8)
    plan.run(baracuda.Stream.host(), ws, q=q, k=k, v=v, o=o, d_o=d_o, lse=lse, dq=dq, dk=dk, dv=dv)
    want = reference_grads(q, k, v, d_o, effective_scale(None, d), -1, 0)
    check((dq, dk, dv), want, torch.float16)
    with pytest.raises(baracuda.InvalidProblem, match="lse"):
        plan.can_implement(baracuda.Stream.host(), q=q, k=k, v=v, o=o, d_o=d_o, dq=dq, dk=dk, dv=dv)


def test_rejections():
    q = data((1, 8, 2, 256), torch.float16, 23)
    with pytest.raises(baracuda.Unsupported, match="head"):
        ops.flash_attention_backward(q, q, q, q, q, torch.zeros(1, 2, 8))
    q, k = data((1, 8, 2, 64), torch.float16, 24), data((1, 8, 1, 64), torch.float16, 25)
    o, lse = forward(q, k, k, "host")
    with pytest.raises(baracuda.InvalidProblem, match="d_o must have q's shape"):
        ops.flash_attention_backward(q[:, :4], q, k, k, o, lse)
    with pytest.raises(baracuda.InvalidProblem, match="lse"):
        ops.flash_attention_backward(q, q, k, k, o, lse[:, :, :4])
