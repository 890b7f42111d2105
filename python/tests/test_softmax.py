"""Softmax and log-softmax from Python against torch.softmax / torch.log_softmax (with a temperature and an
additive mask) and their autograd gradients, on host and sim; gradcheck in f64 through baracuda.torch."""

import pytest

import baracuda
from baracuda import ops

torch = pytest.importorskip("torch")
import baracuda.torch as bt  # noqa: E402

TOL = {torch.float32: (2e-6, 1e-6), torch.float64: (1e-12, 1e-12), torch.bfloat16: (1.6e-2, 1e-3),
       torch.float16: (2e-3, 1e-4)}


def data(shape, dtype, seed):
    return (torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * 3).to(dtype)


@pytest.mark.parametrize("dtype", list(TOL))
@pytest.mark.parametrize("shape,dim", [((5, 300), -1), ((40, 33), 0), ((3, 4, 7), 1), ((2, 1100), 1)])
@pytest.mark.parametrize("log", [False, True])
def test_forward_and_backward_match_torch(dtype, shape, dim, log, device):
    x = data(shape, dtype, 1)
    dy = data(shape, dtype, 2)
    xd = x.double().requires_grad_()
    f = torch.log_softmax if log else torch.softmax
    want = f(xd / 0.7, dim)
    (want_dx,) = torch.autograd.grad(want, xd, dy.double())
    got = ops.softmax(x, dim, temperature=0.7, log=log, device=device)
    rtol, atol = TOL[dtype]
    torch.testing.assert_close(got, want.detach().to(dtype), rtol=rtol, atol=atol * 10 if log else atol)
    dx = ops.softmax_backward(dy, got, dim, temperature=0.7, log=log, device=device)
    # dx from the rounded y: its error follows y's, times |dy| and the slice's sum.
    torch.testing.assert_close(dx, want_dx.to(dtype), rtol=rtol * 50, atol=atol * 100)


def test_mask_broadcasts_and_masks_out(device):
    x = data((4, 6), torch.float32, 3)
    mask = torch.zeros(6)
    mask[[1, 4]] = -float("inf")
    got = ops.softmax(x, mask=mask, device=device)
    torch.testing.assert_close(got, torch.softmax(x + mask, -1))
    assert (got[:, [1, 4]] == 0).all()
    full = torch.full((4, 6), -float("inf"))
    assert torch.isnan(ops.softmax(x, mask=full, device=device)).all()  # a fully masked row, as PyTorch
    torch.testing.assert_close(ops.log_softmax(x, mask=mask[None, :], device=device),
                               torch.log_softmax(x + mask, -1))


def test_gradcheck(device):
    x = data((3, 5), torch.float64, 4).requires_grad_()
    mask = torch.tensor([0.0, -1.0, 0.5, 0.0, 2.0], dtype=torch.float64)
    for fn in (bt.softmax, bt.log_softmax):
        assert torch.autograd.gradcheck(lambda t: fn(t, 1, temperature=1.3, mask=mask, device=device), (x,),
                                        eps=1e-6, atol=1e-7, rtol=1e-5)
        assert torch.autograd.gradcheck(lambda t: fn(t, 0, device=device), (x,), eps=1e-6, atol=1e-7, rtol=1e-5)


def test_plan_api_and_errors(device):
    stream = baracuda.Stream.sim() if device == "sim" else baracuda.Stream.host()
    plan = baracuda.SoftmaxPlan.select(stream, baracuda.SoftmaxDescriptor("softmax", "f32", (2, 3), dim=1))
    x = torch.tensor([[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]])
    y = torch.empty(2, 3)
    plan.run(stream, baracuda._arrays.workspace(x, plan.workspace_size), x=x, y=y)
    torch.testing.assert_close(y, torch.softmax(x, 1))
    with pytest.raises(baracuda.InvalidProblem, match="temperature"):
        ops.softmax(x, temperature=0, device=device)
    with pytest.raises(baracuda.InvalidProblem, match="dim 2"):
        ops.softmax(x, 2, device=device)
    with pytest.raises(baracuda.InvalidProblem, match="does not broadcast"):
        ops.softmax(x, mask=torch.zeros(2), device=device)
    with pytest.raises(baracuda.Unsupported):
        ops.softmax(torch.zeros(2, 3, dtype=torch.int32), device=device)
