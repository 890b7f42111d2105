"""Gated activations and cast from Python against PyTorch, forward and backward, on host and sim."""

import pytest

import baracuda
from baracuda import ops

torch = pytest.importorskip("torch")
F = torch.nn.functional


def torch_gated(kind, x, dim, layout, alpha=1.702, limit=7.0):
    if layout == "interleaved":
        n = x.shape[dim]
        gate, lin = x.index_select(dim, torch.arange(0, n, 2)), x.index_select(dim, torch.arange(1, n, 2))
    else:
        first, second = x.chunk(2, dim)
        gate, lin = (second, first) if layout == "second_half" else (first, second)
    if kind == "swiglu_clamped":
        c = gate.clamp(max=limit)
        return c * torch.sigmoid(alpha * c) * (lin.clamp(-limit, limit) + 1)
    act = {"glu": torch.sigmoid, "reglu": F.relu, "swiglu": F.silu, "geglu": F.gelu,
           "geglu_tanh": lambda g: F.gelu(g, approximate="tanh")}[kind]
    return act(gate) * lin


KINDS = baracuda.gated_activation_kinds()


def test_glu_is_torchs():
    x = torch.randn(4, 6, dtype=torch.float64)
    torch.testing.assert_close(torch_gated("glu", x, -1, "second_half"), F.glu(x, -1))


@pytest.mark.parametrize("layout", ["second_half", "first_half", "interleaved"])
@pytest.mark.parametrize("kind", KINDS)
def test_forward_and_backward_match_torch(kind, layout, device):
    g = torch.Generator().manual_seed(3)
    x = (torch.randn(5, 3, 16, generator=g, dtype=torch.float64) * 4).requires_grad_()
    dim = -1
    expected = torch_gated(kind, x, dim, layout)
    got = ops.gated_activation(kind, x, split_dim=dim, layout=layout, device=device)
    torch.testing.assert_close(got, expected.detach(), rtol=1e-12, atol=1e-13)
    dy = torch.randn(expected.shape, generator=g, dtype=torch.float64)
    (dx_expected,) = torch.autograd.grad(expected, x, dy)
    dx = ops.gated_activation_backward(kind, dy, x.detach(), split_dim=dim, layout=layout, device=device)
    torch.testing.assert_close(dx, dx_expected, rtol=1e-11, atol=1e-12)


def test_named_functions_and_split_dim(device):
    x = torch.randn(6, 4, 3, dtype=torch.float32)
    torch.testing.assert_close(ops.swiglu(x, split_dim=0, device=device), torch_gated("swiglu", x, 0, "second_half"))


@pytest.mark.parametrize("src,dst", [(torch.float32, torch.float16), (torch.float32, torch.bfloat16),
                                     (torch.float16, torch.float32), (torch.bfloat16, torch.float64),
                                     (torch.float64, torch.float32)])
def test_cast_matches_torch(src, dst, device):
    g = torch.Generator().manual_seed(1)
    x = (torch.randn(1000, generator=g, dtype=torch.float64) * 1000).to(src)
    kind = {torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32", torch.float64: "f64"}[dst]
    y = ops.cast(x, kind, device=device)
    assert y.dtype == dst
    torch.testing.assert_close(y, x.to(dst), rtol=0, atol=0)
