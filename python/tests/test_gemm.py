"""The dense GEMM (GemmPlan) from Python against PyTorch's own ops (torch.matmul, F.linear, torch.addmm,
torch.baddbmm, F.gelu / F.silu / F.relu, autograd's bias gradient), on host and sim. The references run in
float64 on the same inputs and are rounded once; the bound is the documented one, K·2^-24·Σ|a·b| for the kernel's
f32 sums (2^-53 on the host) plus one rounding of the output kind."""

import math

import pytest

import baracuda
from baracuda import ops

torch = pytest.importorskip("torch")
F = torch.nn.functional

UNIT = {torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8, torch.float32: 2.0 ** -24, torch.float64: 2.0 ** -53}


def rand(shape, dtype, seed):
    return (torch.rand(shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * 2 - 1).to(dtype)


def check(got, ref64, mag, k, out_dtype, in_dtype, device):
    """|got − ref| ≤ 2(K + 3)·u·mag (u: the backend's opmath unit) + 1.2× for activations, + u_out·|ref|."""
    u = 2.0 ** -53 if device == "host" or in_dtype == torch.float64 else 2.0 ** -24
    tol = 2.4 * (k + 3) * u * mag + 16 * u * ref64.abs() + UNIT[out_dtype] * ref64.abs() + 2.0 ** -24
    err = (got.double() - ref64).abs()
    assert got.dtype == out_dtype
    assert bool((err <= tol).all()), f"max error {float(err.max())} over bound {float(tol.min())}"


@pytest.mark.parametrize("dtype,out", [(torch.float32, None), (torch.float64, None), (torch.bfloat16, None),
                                       (torch.float16, "f32")])
@pytest.mark.parametrize("ta,tb", [(False, False), (False, True), (True, False), (True, True)])
def test_matmul_every_layout(dtype, out, ta, tb, device):
    m, n, k = 17, 33, 48
    a = rand((k, m), dtype, 1).t() if ta else rand((m, k), dtype, 1)
    b = rand((n, k), dtype, 2).t() if tb else rand((k, n), dtype, 2)
    d = ops.gemm(a, b, output=out, device=device)
    out_dtype = torch.float32 if out == "f32" else dtype
    ref = torch.matmul(a.double(), b.double())
    check(d, ref, torch.matmul(a.double().abs(), b.double().abs()), k, out_dtype, dtype, device)


@pytest.mark.parametrize("activation,fn", [("none", lambda v: v), ("relu", F.relu), ("silu", F.silu),
                                           ("gelu_erf", F.gelu), ("gelu_tanh", lambda v: F.gelu(v, approximate="tanh"))])
def test_linear_with_activation_and_aux(activation, fn, device):
    x, w, bias = rand((9, 40), torch.float32, 3), rand((24, 40), torch.float32, 4), rand((24,), torch.float32, 5)
    d, aux, g = ops.gemm(x, w.t(), bias=bias, activation=activation, aux=True, device=device)
    assert g is None
    v = F.linear(x.double(), w.double(), bias.double())
    mag = torch.matmul(x.double().abs(), w.double().abs().t()) + bias.double().abs()
    check(aux, v, mag, 40, torch.float32, torch.float32, device)
    check(d, fn(v), mag, 40, torch.float32, torch.float32, device)


def test_weight_gradient_and_bias_gradient_match_autograd(device):
    """dW = dYᵀ·X and db = Σ rows of dY, as autograd computes them for F.linear."""
    x = rand((31, 20), torch.float64, 6).requires_grad_()
    w = rand((12, 20), torch.float64, 7).requires_grad_()
    b = rand((12,), torch.float64, 8).requires_grad_()
    dy = rand((31, 12), torch.float64, 9)
    F.linear(x, w, b).backward(dy)
    dw, _, db = ops.gemm(dy.t(), x.detach(), bias_grad=True, device=device)
    torch.testing.assert_close(dw, w.grad, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(db, b.grad, rtol=1e-12, atol=1e-12)
    dx = ops.gemm(dy, w.detach(), device=device)  # dX = dY·W
    torch.testing.assert_close(dx, x.grad, rtol=1e-12, atol=1e-12)


def test_addmm_and_in_place(device):
    a, b, c = rand((6, 13), torch.float32, 10), rand((13, 5), torch.float32, 11), rand((6, 5), torch.float32, 12)
    ref = torch.addmm(c.double(), a.double(), b.double(), beta=0.5, alpha=-1.5)
    mag = 1.5 * torch.matmul(a.double().abs(), b.double().abs()) + 0.5 * c.double().abs()
    check(ops.gemm(a, b, c, alpha=-1.5, beta=0.5, device=device), ref, mag, 13, torch.float32, torch.float32, device)
    r = ops.gemm(a, b, c, alpha=-1.5, beta=0.5, out=c, device=device)  # D over C, exactly
    assert r is c
    check(c, ref, mag, 13, torch.float32, torch.float32, device)


def test_batched_with_a_broadcast_operand(device):
    a = rand((7, 16), torch.bfloat16, 13).expand(3, 7, 16)  # batch stride 0
    b = rand((3, 16, 9), torch.bfloat16, 14)
    c = rand((3, 7, 9), torch.bfloat16, 15)
    d = ops.gemm(a, b, c, device=device)
    ref = torch.baddbmm(c.double(), a.double(), b.double())
    mag = torch.matmul(a.double().abs(), b.double().abs()) + c.double().abs()
    check(d, ref, mag, 16, torch.bfloat16, torch.bfloat16, device)


def test_plan_api_and_rejections():
    desc = baracuda.GemmDescriptor(4, 5, 6, input="f32", output="f32", layout_b="col_major", has_bias=True)
    plan = baracuda.GemmPlan.select(baracuda.Stream.sim(), desc)
    assert plan.sku.startswith("gemm/f32->f32/rcr/bias/sim/f32/simt"), plan.sku
    assert plan.workspace_size == 0
    with pytest.raises(baracuda.Unsupported):
        baracuda.GemmPlan.select(baracuda.Stream.host(), baracuda.GemmDescriptor(4, 5, 6, input="f32", output="f16"))
    with pytest.raises(baracuda.InvalidProblem):
        baracuda.GemmPlan.select(baracuda.Stream.host(), baracuda.GemmDescriptor(4, 5, 6, input="f32", output="f32",
                                                                                lda=3))
    a, w = torch.zeros(4, 6), torch.zeros(5, 6)
    with pytest.raises(baracuda.InvalidProblem, match="missing"):
        plan.run(baracuda.Stream.sim(), a=a, b=w.t(), d=torch.zeros(4, 5))
    with pytest.raises(baracuda.InvalidProblem, match="descriptor"):  # w itself is not column-major [K, N]
        plan.run(baracuda.Stream.sim(), a=a, b=w.reshape(6, 5), bias=torch.zeros(5), d=torch.zeros(4, 5))
    assert math.isfinite(float(ops.matmul(a, w.t()).sum()))
