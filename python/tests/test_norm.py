"""RMSNorm and LayerNorm from Python against F.layer_norm and an explicit f64 RMSNorm formula, and their
gradients against autograd, on host and sim; gradcheck in f64 through baracuda.torch."""

import pytest

from baracuda import ops

torch = pytest.importorskip("torch")
import baracuda.torch as bt  # noqa: E402

TOL = {torch.float32: (2e-5, 2e-5), torch.float64: (1e-10, 1e-10), torch.bfloat16: (1.6e-2, 2e-2),
       torch.float16: (2e-3, 2e-3)}


def data(shape, dtype, seed, lo=-2.0, hi=3.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(shape, generator=g, dtype=torch.float64) * (hi - lo) + lo).to(dtype)


def rms_ref(x, w, eps):
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps) * w


@pytest.mark.parametrize("dtype", list(TOL))
@pytest.mark.parametrize("shape", [(6, 200), (2, 3, 700), (64,), (2, 3000)])
@pytest.mark.parametrize("op", ["rms_norm", "layer_norm"])
def test_forward_and_backward_match_torch(op, shape, dtype, device):
    x, dy = data(shape, dtype, 1), data(shape, dtype, 2, -1, 1)
    w, b = data(shape[-1:], dtype, 3, 0.5, 1.5), data(shape[-1:], dtype, 4, -1, 1)
    xd, wd, bd = (t.double().requires_grad_() for t in (x, w, b))
    layer = op == "layer_norm"
    eps = 1e-5
    want = torch.nn.functional.layer_norm(xd, shape[-1:], wd, bd, eps) if layer else rms_ref(xd, wd, eps)
    grads = torch.autograd.grad(want, (xd, wd, bd) if layer else (xd, wd), dy.double())
    y, mean, rstd = ops.norm(op, x, w, b if layer else None, eps=eps, device=device)
    rtol, atol = TOL[dtype]
    torch.testing.assert_close(y, want.detach().to(dtype), rtol=rtol, atol=atol)
    assert rstd.dtype == (torch.float64 if dtype == torch.float64 else torch.float32) and rstd.shape == shape[:-1]
    assert (mean is None) != layer
    dx, dw, db = ops.norm_backward(op, dy, x, w, mean, rstd, bias=layer, eps=eps, device=device)
    torch.testing.assert_close(dx, grads[0].to(dtype), rtol=rtol * 5, atol=atol * 5)
    rows = x.numel() // shape[-1]
    torch.testing.assert_close(dw, grads[1].to(dtype), rtol=rtol * 5, atol=atol * rows)
    if layer:
        torch.testing.assert_close(db, grads[2].to(dtype), rtol=rtol * 5, atol=atol * rows)
    else:
        assert db is None


def test_functions_and_gradcheck(device):
    x = data((3, 8), torch.float64, 5).requires_grad_()
    w = data((8,), torch.float64, 6, 0.5, 1.5).requires_grad_()
    b = data((8,), torch.float64, 7).requires_grad_()
    torch.testing.assert_close(ops.layer_norm(x.detach(), w.detach(), b.detach(), device=device),
                               torch.nn.functional.layer_norm(x, (8,), w, b).detach())
    torch.testing.assert_close(ops.rms_norm(x.detach(), device=device), rms_ref(x, 1, 1e-6).detach())
    assert torch.autograd.gradcheck(lambda *t: bt.layer_norm(*t, device=device), (x, w, b), eps=1e-6, atol=1e-7,
                                    rtol=1e-5)
    assert torch.autograd.gradcheck(lambda *t: bt.rms_norm(*t, device=device), (x, w), eps=1e-6, atol=1e-7,
                                    rtol=1e-5)
    assert torch.autograd.gradcheck(lambda t: bt.layer_norm(t, device=device), (x,), eps=1e-6, atol=1e-7, rtol=1e-5)


def test_errors(device):
    import baracuda

    x = torch.zeros(2, 4)
    with pytest.raises(baracuda.InvalidProblem, match="no bias"):
        ops.norm("rms_norm", x, torch.ones(4), torch.zeros(4), device=device)
    with pytest.raises(baracuda.InvalidProblem, match="eps"):
        ops.rms_norm(x, eps=-1, device=device)
    with pytest.raises(baracuda.InvalidProblem, match="weight"):
        ops.rms_norm(x, torch.ones(5), device=device)
    with pytest.raises(baracuda.Unsupported):
        ops.layer_norm(torch.zeros(2, 4, dtype=torch.int32), device=device)
