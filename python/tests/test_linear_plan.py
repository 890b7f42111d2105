"""The dense linear layer (LinearPlan, LinearBackwardPlan) from Python against PyTorch's own F.linear and autograd,
on host and sim: ``ops.linear`` / ``ops.linear_backward`` (leading dims, strided and transposed x, with and
without bias, each gradient alone), ``baracuda.torch.linear`` under autograd (gradcheck in f64), the plan API, and
a QAT training step (fake-quantized weight → linear → MSE loss → backward → SGD) against the same step in torch."""

import pytest

import baracuda
from baracuda import _core, ops

torch = pytest.importorskip("torch")
F = torch.nn.functional
bt = pytest.importorskip("baracuda.torch")

UNIT = {torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8, torch.float32: 2.0 ** -24, torch.float64: 2.0 ** -53}


def rand(shape, dtype, seed, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return ((torch.rand(shape, generator=g, dtype=torch.float64) * 2 - 1) * scale).to(dtype)


def check(got, ref64, mag, terms, out_dtype, in_dtype, device):
    """|got − ref| ≤ 2(terms + 3)·u·mag (u: 2^-24 for the kernels' f32 sums, 2^-53 on host or for f64) plus one
    rounding to the output kind."""
    u = 2.0 ** -53 if device == "host" or in_dtype == torch.float64 else 2.0 ** -24
    tol = 2 * (terms + 3) * u * mag + UNIT[out_dtype] * ref64.abs() + 2.0 ** -30
    assert got.dtype == out_dtype
    err = (got.double() - ref64).abs()
    assert bool((err <= tol).all()), f"max error {float(err.max())}"


@pytest.mark.parametrize("dtype,output", [(torch.float32, None), (torch.float64, None), (torch.float16, None),
                                          (torch.bfloat16, None), (torch.bfloat16, "f32")])
@pytest.mark.parametrize("bias", [False, True])
def test_linear_against_f_linear(dtype, output, bias, device):
    x, w = rand((3, 17, 48), dtype, 1), rand((33, 48), dtype, 2, 0.3)
    b = rand((33,), torch.float32 if output else dtype, 3) if bias else None
    y = ops.linear(x, w, b, output=output, device=device)
    out_dtype = torch.float32 if output else dtype
    ref = F.linear(x.double(), w.double(), None if b is None else b.double())
    mag = F.linear(x.double().abs(), w.double().abs(), None if b is None else b.double().abs())
    assert y.shape == (3, 17, 33)
    check(y, ref, mag, 48, out_dtype, dtype, device)


def test_linear_strided_and_transposed_x(device):
    wide = rand((17, 64), torch.float32, 4)
    w = rand((20, 48), torch.float32, 5)
    for x in (wide[:, :48], rand((48, 17), torch.float32, 6).t(), rand((48,), torch.float32, 7)):
        y = ops.linear(x, w, device=device)
        ref = F.linear(x.double(), w.double())
        check(y, ref, F.linear(x.double().abs(), w.double().abs()), 48, torch.float32, torch.float32, device)
    # A weight that is itself a transposed tensor (column-major).
    wt = rand((48, 20), torch.float32, 8).t()
    y = ops.linear(wide[:, :48], wt, device=device)
    check(y, F.linear(wide[:, :48].double(), wt.double()), F.linear(wide[:, :48].double().abs(), wt.double().abs()),
          48, torch.float32, torch.float32, device)


@pytest.mark.parametrize("grads", [(True, True, True), (True, False, False), (False, True, False),
                                   (False, False, True), (False, True, True)])
def test_linear_backward_against_autograd(grads, device):
    dtype = torch.float32
    x = rand((2, 9, 40), dtype, 1).requires_grad_()
    w = rand((24, 40), dtype, 2, 0.3).requires_grad_()
    b = rand((24,), dtype, 3).requires_grad_()
    dy = rand((2, 9, 24), dtype, 4)
    F.linear(x.double(), w.double(), b.double()).backward(dy.double())
    dx, dw, db = ops.linear_backward(dy, x.detach(), w.detach(), dx=grads[0], dw=grads[1], db=grads[2],
                                     device=device)
    for want, got, ref, terms in ((grads[0], dx, x.grad, 24), (grads[1], dw, w.grad, 18), (grads[2], db, b.grad, 18)):
        if not want:
            assert got is None
            continue
        assert got.shape == ref.shape
        check(got, ref, ref.abs() + 40.0, terms, dtype, dtype, device)


def test_torch_linear_gradcheck(device):
    x = rand((2, 3, 5), torch.float64, 1).requires_grad_()
    w = rand((4, 5), torch.float64, 2).requires_grad_()
    b = rand((4,), torch.float64, 3).requires_grad_()
    assert torch.autograd.gradcheck(lambda x, w, b: bt.linear(x, w, b, device=device), (x, w, b))
    assert torch.autograd.gradcheck(lambda x, w: bt.linear(x, w, device=device), (x, w))


def test_torch_linear_matches_autograd(device):
    x = rand((6, 16), torch.float32, 1).requires_grad_()
    w = rand((10, 16), torch.float32, 2).requires_grad_()
    b = rand((10,), torch.float32, 3).requires_grad_()
    y = bt.linear(x, w, b, device=device)
    (y * y).sum().backward()
    grads = [t.grad.clone() for t in (x, w, b)]
    for t in (x, w, b):
        t.grad = None
    yr = F.linear(x, w, b)
    (yr * yr).sum().backward()
    torch.testing.assert_close(y, yr, rtol=1e-5, atol=1e-5)
    for g, t in zip(grads, (x, w, b)):
        torch.testing.assert_close(g, t.grad, rtol=1e-5, atol=1e-5)
    # Only the gradients autograd asks for: x frozen.
    x2 = x.detach()
    w.grad = None
    bt.linear(x2, w, device=device).sum().backward()
    assert x2.grad is None
    torch.testing.assert_close(w.grad, torch.ones(10, 6) @ x2, rtol=1e-5, atol=1e-5)


def test_plan_api(device):
    stream = _core.Stream.sim() if device == "sim" else _core.Stream.host()
    d = _core.LinearDescriptor(rows=5, in_features=16, out_features=7, input="f32", output="f32", has_bias=True,
                               grad_bias=True)
    fwd = _core.LinearPlan.select(stream, d)
    bwd = _core.LinearBackwardPlan.select(stream, d)
    assert fwd.sku.startswith("linear/f32")
    assert bwd.sku.startswith("linear_backward/f32")
    assert fwd.workspace_size == 0
    x, w, b = rand((5, 16), torch.float32, 1), rand((7, 16), torch.float32, 2), rand((7,), torch.float32, 3)
    y = torch.empty(5, 7)
    fwd.run(stream, None, x=x, w=w, bias=b, y=y)
    torch.testing.assert_close(y, F.linear(x, w, b), rtol=1e-5, atol=1e-5)
    with pytest.raises(baracuda.InvalidProblem, match="missing"):
        fwd.run(stream, None, x=x, w=w, bias=b)
    with pytest.raises(baracuda.Unsupported):
        _core.LinearPlan.select(stream, _core.LinearDescriptor(rows=1, in_features=1, out_features=1, input="f16",
                                                               output="bf16"))


def test_qat_training_step(device):
    """One SGD step of a fake-quantized linear layer on baracuda (fake_quantize → linear → MSE → backward)
    against the same step in torch (torch.fake_quantize_per_channel_affine, F.linear)."""
    x, target = rand((12, 32), torch.float32, 1), rand((12, 8), torch.float32, 2)
    w0, b0 = rand((8, 32), torch.float32, 3, 0.3), rand((8,), torch.float32, 4)
    scale = (w0.abs().amax(dim=1) * 0.75 / 127).float()
    zp = torch.zeros(8, dtype=torch.int32)
    results = []
    for ours in (True, False):
        w, b = w0.clone().requires_grad_(), b0.clone().requires_grad_()
        if ours:
            wq = bt.fake_quantize(w, scale, zp, quantized="s8", granularity="per_channel", axis=0, device=device)
            y = bt.linear(x, wq, b, device=device)
        else:
            wq = torch.fake_quantize_per_channel_affine(w, scale, zp, 0, -128, 127)
            y = F.linear(x, wq, b)
        loss = F.mse_loss(y, target)
        loss.backward()
        with torch.no_grad():
            w -= 0.1 * w.grad
            b -= 0.1 * b.grad
        results.append((loss.detach(), w.grad.clone(), b.grad.clone(), w.detach(), b.detach()))
    assert bool((results[1][1] == 0).any()), "some weights clamp, so the straight-through mask matters"
    for ours, ref in zip(results[0], results[1]):
        torch.testing.assert_close(ours, ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("activation,ref", [("relu", F.relu), ("silu", F.silu), ("gelu_erf", F.gelu),
                                            ("gelu_tanh", lambda z: F.gelu(z, approximate="tanh"))])
def test_plan_api_activation_forward_and_backward(activation, ref, device):
    """The plans with a fused activation: y and the saved pre-activation, then the backward from y's gradient
    through the pre-activation, against autograd of act(F.linear(...)) in f64."""
    stream = _core.Stream.sim() if device == "sim" else _core.Stream.host()
    m, k, n = 9, 24, 13
    d = _core.LinearDescriptor(rows=m, in_features=k, out_features=n, input="f32", output="f32", has_bias=True,
                               activation=activation, has_preactivation=True, grad_bias=True)
    fwd = _core.LinearPlan.select(stream, d)
    bwd = _core.LinearBackwardPlan.select(stream, d)
    x, w, b, dy = (rand((m, k), torch.float32, 1), rand((n, k), torch.float32, 2, 0.5),
                   rand((n,), torch.float32, 3), rand((m, n), torch.float32, 4))
    y, z = torch.empty(m, n), torch.empty(m, n)
    fwd.run(stream, None, x=x, w=w, bias=b, y=y, preactivation=z)
    dx, dw, db = torch.empty(m, k), torch.empty(n, k), torch.empty(n)
    ws = torch.empty(bwd.workspace_size + 256, dtype=torch.uint8)
    off = -ws.data_ptr() % 256
    bwd.run(stream, ws[off:off + bwd.workspace_size], dy=dy, x=x, w=w, preactivation=z, dx=dx, dw=dw, db=db)
    x64, w64, b64 = (t.double().requires_grad_() for t in (x, w, b))
    z64 = F.linear(x64, w64, b64)
    ref(z64).backward(dy.double())
    torch.testing.assert_close(z, z64.detach().float(), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(y, ref(z64).detach().float(), rtol=1e-5, atol=1e-5)
    for got, want in ((dx, x64.grad), (dw, w64.grad), (db, b64.grad)):
        torch.testing.assert_close(got, want.float(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("activation,ref", [("relu", F.relu), ("silu", F.silu), ("gelu_erf", F.gelu),
                                            ("gelu_tanh", lambda z: F.gelu(z, approximate="tanh"))])
def test_torch_linear_with_activation(activation, ref, device):
    """baracuda.torch.linear(..., activation=) against act(F.linear(...)) and its autograd; gradcheck in f64."""
    x = rand((2, 5, 12), torch.float32, 1).requires_grad_()
    w = rand((7, 12), torch.float32, 2, 0.5).requires_grad_()
    b = rand((7,), torch.float32, 3).requires_grad_()
    dy = rand((2, 5, 7), torch.float32, 4)
    y = bt.linear(x, w, b, activation=activation, device=device)
    y.backward(dy)
    grads = [t.grad.clone() for t in (x, w, b)]
    x64, w64, b64 = (t.detach().double().requires_grad_() for t in (x, w, b))
    y64 = ref(F.linear(x64, w64, b64))
    y64.backward(dy.double())
    torch.testing.assert_close(y, y64.detach().float(), rtol=1e-5, atol=1e-5)
    for g, t in zip(grads, (x64, w64, b64)):
        torch.testing.assert_close(g, t.grad.float(), rtol=1e-4, atol=1e-4)
    if activation != "relu":  # relu's kink makes finite differences unreliable
        xs, ws, bs = (rand(s, torch.float64, i).requires_grad_() for i, s in enumerate(((3, 4), (2, 4), (2,))))
        assert torch.autograd.gradcheck(lambda x, w, b: bt.linear(x, w, b, activation=activation, device=device),
                                        (xs, ws, bs))
