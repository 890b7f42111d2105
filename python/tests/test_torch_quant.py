"""baracuda.torch's fake-quantize Functions against PyTorch's autograd, and the QAT example."""

import pathlib
import runpy

import pytest

torch = pytest.importorskip("torch")
import baracuda.torch as bt  # noqa: E402


def test_fake_quantize_gradient_is_pytorchs(device):
    g = torch.Generator().manual_seed(1)
    x = (torch.randn(8, 16, generator=g) * 3).requires_grad_()
    scale, zp = torch.tensor([0.04]), torch.tensor([-5], dtype=torch.int32)
    dy = torch.randn(8, 16, generator=g)
    y = bt.fake_quantize(x, scale, zp, device=device)
    (dx,) = torch.autograd.grad(y, x, dy)
    x2 = x.detach().clone().requires_grad_()
    y2 = torch.fake_quantize_per_tensor_affine(x2, 0.04, -5, -128, 127)
    (dx2,) = torch.autograd.grad(y2, x2, dy)
    torch.testing.assert_close(y, y2, rtol=0, atol=0)
    torch.testing.assert_close(dx, dx2, rtol=0, atol=0)


def test_learnable_fake_quantize_per_channel_gradients_are_pytorchs(device):
    g = torch.Generator().manual_seed(2)
    x = (torch.randn(6, 10, generator=g) * 2).requires_grad_()
    scale = (torch.rand(6, generator=g) * 0.05 + 0.01).requires_grad_()
    zp = (torch.randn(6, generator=g) * 3).requires_grad_()
    dy = torch.randn(6, 10, generator=g)
    got = torch.autograd.grad(bt.fake_quantize_learnable(x, scale, zp, 0.25, granularity="per_channel", axis=0,
                                                         device=device), (x, scale, zp), dy)
    ref = torch._fake_quantize_learnable_per_channel_affine(x, scale, zp, 0, -128, 127, 0.25)
    expected = torch.autograd.grad(ref, (x, scale, zp), dy)
    torch.testing.assert_close(got[0], expected[0], rtol=0, atol=0)
    for a, b in zip(got[1:], expected[1:]):  # sums over 10 elements: PyTorch's in f32, baracuda's in f64
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_quantize_ste_gradient(device):
    x = torch.tensor([-10.0, -0.26, 0.0, 0.31, 3.0, 10.0], requires_grad=True)
    scale, zp = torch.tensor([0.05]), torch.tensor([0], dtype=torch.int32)
    q = bt.quantize(x, scale, zp, quant_min=-20, quant_max=20, device=device)
    torch.testing.assert_close(q, torch.tensor([-20.0, -5.0, 0.0, 6.0, 20.0, 20.0]), rtol=0, atol=0)
    (dx,) = torch.autograd.grad(q, x, torch.ones(6))
    inside = torch.tensor([0.0, 1.0, 1.0, 1.0, 0.0, 0.0])  # 3/0.05 = 60 and ±10/0.05 = ±200 are out of range
    torch.testing.assert_close(dx, inside / torch.tensor(0.05), rtol=0, atol=0)


def test_unknown_option():
    with pytest.raises(TypeError, match="unknown options"):
        bt.fake_quantize(torch.zeros(4), torch.ones(1), torch.zeros(1, dtype=torch.int32), axes=0)


def test_qat_example_takes_a_step(device):
    example = pathlib.Path(__file__).resolve().parents[1] / "examples" / "qat_step.py"
    before, after = runpy.run_path(str(example))["main"](device)
    assert after < before
