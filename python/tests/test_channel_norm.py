"""GroupNorm, InstanceNorm and BatchNorm from Python against F.group_norm, F.instance_norm and F.batch_norm
(training with the running statistics' update, and inference), and their gradients against autograd, on host
and sim; every rejection the plans make reaches Python as the module's error; baracuda.torch's autograd
Functions over them against autograd through torch's own ops (gradcheck, and a training step)."""

import pytest

from baracuda import _core, ops

torch = pytest.importorskip("torch")
F = torch.nn.functional

TOL = {torch.float32: (2e-5, 2e-5), torch.float64: (1e-10, 1e-10), torch.bfloat16: (1.6e-2, 2e-2)}


def data(shape, dtype, seed, lo=-2.0, hi=3.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(shape, generator=g, dtype=torch.float64) * (hi - lo) + lo).to(dtype)


@pytest.mark.parametrize("dtype", list(TOL))
@pytest.mark.parametrize("shape,groups", [((3, 6, 7), 3), ((2, 4, 5, 9), 1), ((2, 4, 5, 9), 4), ((1, 8, 1), 2)])
def test_group_norm_matches_torch(shape, groups, dtype, device):
    x, dy = data(shape, dtype, 1), data(shape, dtype, 2, -1, 1)
    c = shape[1]
    w, b = data((c,), dtype, 3, 0.5, 1.5), data((c,), dtype, 4, -1, 1)
    xd, wd, bd = (t.double().requires_grad_() for t in (x, w, b))
    want = F.group_norm(xd, groups, wd, bd, 1e-5)
    grads = torch.autograd.grad(want, (xd, wd, bd), dy.double())
    y, mean, rstd = ops.group_norm_forward(x, groups, w, b, device=device)
    rtol, atol = TOL[dtype]
    torch.testing.assert_close(y, want.detach().to(dtype), rtol=rtol, atol=atol)
    assert mean.shape == (shape[0], groups) and rstd.dtype == (torch.float64 if dtype == torch.float64
                                                               else torch.float32)
    dx, dw, db = ops.group_norm_backward(dy, x, w, mean, rstd, groups, bias=True, device=device)
    n = x.numel() // c
    torch.testing.assert_close(dx, grads[0].to(dtype), rtol=rtol * 5, atol=atol * 5)
    torch.testing.assert_close(dw, grads[1].to(dtype), rtol=rtol * 5, atol=atol * n)
    torch.testing.assert_close(db, grads[2].to(dtype), rtol=rtol * 5, atol=atol * n)
    torch.testing.assert_close(ops.group_norm(x, groups, w, b, device=device), y, rtol=0, atol=0)


def test_instance_norm_is_group_norm_per_channel(device):
    x = data((2, 3, 4, 5), torch.float64, 5)
    w, b = data((3,), torch.float64, 6, 0.5, 1.5), data((3,), torch.float64, 7)
    want = F.instance_norm(x, weight=w, bias=b, eps=1e-5)
    torch.testing.assert_close(ops.instance_norm(x, w, b, device=device), want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(4, 3, 5), (2, 4, 3, 3), (5, 3)])
def test_batch_norm_training_and_running_stats(shape, dtype, device):
    x, dy = data(shape, dtype, 11), data(shape, dtype, 12, -1, 1)
    c = shape[1]
    w, b = data((c,), dtype, 13, 0.5, 1.5), data((c,), dtype, 14, -1, 1)
    rm, rv = data((c,), dtype, 15, -0.5, 0.5), data((c,), dtype, 16, 0.5, 2.0)
    rm_t, rv_t = rm.double().clone(), rv.double().clone()
    xd, wd, bd = (t.double().requires_grad_() for t in (x, w, b))
    want = F.batch_norm(xd, rm_t, rv_t, wd, bd, training=True, momentum=0.2, eps=1e-5)
    grads = torch.autograd.grad(want, (xd, wd, bd), dy.double())
    y, mean, rstd = ops.batch_norm_forward(x, rm, rv, w, b, training=True, momentum=0.2, device=device)
    rtol, atol = TOL[dtype]
    torch.testing.assert_close(y, want.detach().to(dtype), rtol=rtol, atol=atol)
    torch.testing.assert_close(rm, rm_t.to(dtype), rtol=rtol, atol=atol)  # updated in place
    torch.testing.assert_close(rv, rv_t.to(dtype), rtol=rtol, atol=atol)
    dx, dw, db = ops.batch_norm_backward(dy, x, w, mean, rstd, bias=True, device=device)
    n = x.numel() // c
    torch.testing.assert_close(dx, grads[0].to(dtype), rtol=rtol * 5, atol=atol * 5)
    torch.testing.assert_close(dw, grads[1].to(dtype), rtol=rtol * 5, atol=atol * n)
    torch.testing.assert_close(db, grads[2].to(dtype), rtol=rtol * 5, atol=atol * n)


def test_batch_norm_inference(device):
    x, dy = data((4, 3, 5), torch.float64, 21), data((4, 3, 5), torch.float64, 22, -1, 1)
    w, b = data((3,), torch.float64, 23, 0.5, 1.5), data((3,), torch.float64, 24)
    rm, rv = data((3,), torch.float64, 25, -0.5, 0.5), data((3,), torch.float64, 26, 0.5, 2.0)
    xd, wd, bd = (t.clone().requires_grad_() for t in (x, w, b))
    want = F.batch_norm(xd, rm, rv, wd, bd, training=False, eps=1e-5)
    grads = torch.autograd.grad(want, (xd, wd, bd), dy)
    y = ops.batch_norm(x, rm, rv, w, b, training=False, device=device)
    torch.testing.assert_close(y, want.detach(), rtol=1e-10, atol=1e-10)
    dx, dw, db = ops.batch_norm_backward(dy, x, w, running_mean=rm, running_var=rv, training=False, bias=True,
                                         device=device)
    for got, g in zip((dx, dw, db), grads):
        torch.testing.assert_close(got, g, rtol=1e-9, atol=1e-9)


def test_rejections(device):
    x = data((2, 6, 3), torch.float32, 31)
    with pytest.raises(_core.InvalidProblem, match="group"):
        ops.group_norm(x, 4, device=device)  # 4 does not divide 6
    with pytest.raises(_core.InvalidProblem, match="momentum"):
        ops.batch_norm(x, training=True, momentum=1.5, device=device)
    with pytest.raises(_core.InvalidProblem, match="running"):
        ops.batch_norm(x, training=False, device=device)  # inference needs the running statistics
    with pytest.raises(_core.InvalidProblem, match="weight"):
        ops.group_norm(x, 3, torch.ones(5), device=device)


# ---- baracuda.torch: autograd through the channel norms -------------------------------------------------------


def test_torch_group_norm_gradcheck(device):
    import baracuda.torch as bt
    g = torch.Generator().manual_seed(21)
    x = torch.randn(2, 4, 3, 5, generator=g, dtype=torch.float64).requires_grad_()
    w = (torch.rand(4, generator=g, dtype=torch.float64) + 0.5).requires_grad_()
    b = torch.randn(4, generator=g, dtype=torch.float64).requires_grad_()
    assert torch.autograd.gradcheck(lambda *t: bt.group_norm(t[0], 2, t[1], t[2], device=device), (x, w, b),
                                    eps=1e-6, atol=1e-7, rtol=1e-5)
    assert torch.autograd.gradcheck(lambda t: bt.instance_norm(t, device=device), (x,), eps=1e-6, atol=1e-7,
                                    rtol=1e-5)


@pytest.mark.parametrize("training", [True, False])
def test_torch_batch_norm_matches_torch_autograd(training, device):
    import baracuda.torch as bt
    x, dy = data((4, 3, 5), torch.float64, 31), data((4, 3, 5), torch.float64, 32, -1, 1)
    w, b = data((3,), torch.float64, 33, 0.5, 1.5), data((3,), torch.float64, 34, -1, 1)
    rm, rv = data((3,), torch.float64, 35, -0.5, 0.5), data((3,), torch.float64, 36, 0.5, 2.0)
    mine_in = [t.clone().requires_grad_() for t in (x, w, b)]
    want_in = [t.clone().requires_grad_() for t in (x, w, b)]
    rm_mine, rv_mine, rm_want, rv_want = rm.clone(), rv.clone(), rm.clone(), rv.clone()
    y = bt.batch_norm(mine_in[0], rm_mine, rv_mine, mine_in[1], mine_in[2], training=training, momentum=0.2,
                      device=device)
    want = F.batch_norm(want_in[0], rm_want, rv_want, want_in[1], want_in[2], training=training, momentum=0.2,
                        eps=1e-5)
    torch.testing.assert_close(y, want, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(rm_mine, rm_want, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(rv_mine, rv_want, rtol=1e-12, atol=1e-12)
    (y * dy).sum().backward()
    (want * dy).sum().backward()
    for m, t in zip(mine_in, want_in):
        torch.testing.assert_close(m.grad, t.grad, rtol=1e-9, atol=1e-9)


def test_torch_group_norm_training_step(device):
    """A conv-free training step: group_norm between two linears, the same loss and gradients as torch's."""
    import baracuda.torch as bt
    torch.manual_seed(3)
    lin = torch.nn.Linear(12, 8 * 6, dtype=torch.float64)
    w = torch.nn.Parameter(torch.rand(8, dtype=torch.float64) + 0.5)
    b = torch.nn.Parameter(torch.randn(8, dtype=torch.float64))
    x = torch.randn(5, 12, dtype=torch.float64)

    def loss(norm):
        h = lin(x).view(5, 8, 6)
        return (norm(h) ** 2).mean()

    mine = loss(lambda h: bt.group_norm(h, 4, w, b, device=device))
    grads_mine = torch.autograd.grad(mine, [lin.weight, w, b])
    want = loss(lambda h: F.group_norm(h, 4, w, b, 1e-5))
    grads_want = torch.autograd.grad(want, [lin.weight, w, b])
    torch.testing.assert_close(mine, want, rtol=1e-10, atol=1e-12)
    for m, t in zip(grads_mine, grads_want):
        torch.testing.assert_close(m, t, rtol=1e-8, atol=1e-10)
