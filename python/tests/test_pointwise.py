"""Binary, compare, ternary, where, fill, sequences and affine from Python against PyTorch, on host and sim."""

import numpy as np
import pytest

import baracuda
from baracuda import ops

torch = pytest.importorskip("torch")

G = torch.Generator().manual_seed(11)
A = torch.randn(4, 1, 6, generator=G, dtype=torch.float64) * 3
B = torch.randn(5, 1, generator=G, dtype=torch.float64) * 3 + 0.5  # broadcasts against A to (4, 5, 6)


@pytest.mark.parametrize("op", baracuda.binary_ops())
def test_binary_matches_torch(op, device):
    expected = getattr(torch, op)(A, B)
    got = getattr(ops, op)(A, B, device=device)
    assert got.shape == (4, 5, 6)
    torch.testing.assert_close(got, expected, rtol=1e-12, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("op", baracuda.compare_ops())
def test_compare_matches_torch(op, device):
    b = B.round()
    torch.testing.assert_close(getattr(ops, op)(A.round(), b, device=device), getattr(torch, op)(A.round(), b))


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "maximum", "pow", "atan2", "hypot"])
def test_binary_backward_matches_autograd(op, device):
    a, b = A.clone().requires_grad_(), B.clone().abs().requires_grad_()
    y = getattr(torch, op)(a, b)
    dy = torch.randn(y.shape, generator=G, dtype=torch.float64)
    ga, gb = torch.autograd.grad(y, (a, b), dy)
    da, db = ops.binary_backward(op, dy, a.detach(), b.detach(), device=device)
    # The plan leaves the broadcast reduction to the caller (issue 17's ReduceToPlan will do it).
    torch.testing.assert_close(da.sum(dim=1, keepdim=True), ga, rtol=1e-11, atol=1e-12, equal_nan=True)
    torch.testing.assert_close(db.sum(dim=(0, 2)).reshape(5, 1), gb, rtol=1e-11, atol=1e-12, equal_nan=True)


def test_ternary_ops_match_torch(device):
    a = torch.randn(3, 8, generator=G, dtype=torch.float64)
    lo, hi = torch.full((1, 8), -0.5, dtype=torch.float64), torch.full((3, 1), 0.7, dtype=torch.float64)
    torch.testing.assert_close(ops.clamp(a, lo, hi, device=device), torch.clamp(a, lo, hi))
    w = torch.rand(8, generator=G, dtype=torch.float64)
    b = torch.randn(3, 8, generator=G, dtype=torch.float64)
    torch.testing.assert_close(ops.lerp(a, b, w, device=device), torch.lerp(a, b, w))
    torch.testing.assert_close(ops.addcmul(a, b, w, value=0.3, device=device), torch.addcmul(a, b, w, value=0.3))
    c = w + 0.5
    torch.testing.assert_close(ops.addcdiv(a, b, c, value=-2.0, device=device), torch.addcdiv(a, b, c, value=-2.0))
    da, db, dc = ops.ternary_backward("addcmul", torch.ones(3, 8, dtype=torch.float64), a, b, w, value=0.3,
                                      device=device)
    torch.testing.assert_close(db, (0.3 * w).expand(3, 8))


def test_where_matches_torch(device):
    cond = torch.rand(4, 6, generator=G) > 0.5
    a, b = torch.randn(4, 6, generator=G), torch.zeros(1, 6)
    torch.testing.assert_close(ops.where(cond, a, b, device=device), torch.where(cond, a, b))


def test_fill_arange_linspace_affine(device):
    out = torch.empty(3, 4, dtype=torch.int32)
    assert ops.fill_(out, 7, device=device) is out and bool((out == 7).all())
    np.testing.assert_array_equal(ops.arange(0, 10, 3, kind="s32", device=device), np.arange(0, 10, 3))
    ref = torch.empty(0, dtype=torch.float64)
    torch.testing.assert_close(ops.linspace(-1, 2, 7, kind="f64", like=ref, device=device),
                               torch.linspace(-1, 2, 7, dtype=torch.float64))
    x = torch.randn(5, generator=G)
    torch.testing.assert_close(ops.affine(x, 2.0, -1.0, device=device), 2.0 * x - 1.0)


def test_broadcast_errors(device):
    with pytest.raises(baracuda.InvalidProblem, match="broadcast"):
        ops.add(torch.zeros(3, 4), torch.zeros(5), device=device)
