"""The quantize family from Python against PyTorch 1.13's own quantization ops (the default `pytorch`
convention reproduces its CPU kernels bit for bit), forward and backward, on host and sim."""

import numpy as np
import pytest

import baracuda
from baracuda import ops

torch = pytest.importorskip("torch")


def data(shape=(6, 40), seed=2):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g) * 3


def test_every_catalog_op_has_a_function():
    for op in baracuda.quantize_ops():
        assert callable(getattr(ops, op["name"])), op["name"]


@pytest.mark.parametrize("qdtype,kind,zp", [(torch.qint8, "s8", -3), (torch.quint8, "u8", 120)])
def test_quantize_and_dequantize_per_tensor(qdtype, kind, zp, device):
    x, scale = data(), 0.037
    expected = torch.quantize_per_tensor(x, scale, zp, qdtype)
    s, z = torch.tensor([scale]), torch.tensor([zp], dtype=torch.int32)
    q = ops.quantize(x, s, z, quantized=kind, device=device)
    torch.testing.assert_close(q, expected.int_repr(), rtol=0, atol=0)
    y = ops.dequantize(q, s, z, quantized=kind, device=device)
    torch.testing.assert_close(y, expected.dequantize(), rtol=0, atol=0)


def test_quantize_per_channel(device):
    x = data((5, 33))
    scales = torch.tensor([0.02, 0.05, 0.011, 0.3, 0.07])
    zps = torch.tensor([0, -4, 9, 1, -128], dtype=torch.int32)
    expected = torch.quantize_per_channel(x, scales.double(), zps.long(), 0, torch.qint8)
    q = ops.quantize(x, scales, zps, granularity="per_channel", axis=0, device=device)
    torch.testing.assert_close(q, expected.int_repr(), rtol=0, atol=0)


@pytest.mark.parametrize("qmin,qmax", [(-128, 127), (0, 15)])
def test_fake_quantize_per_tensor_and_its_gradient(qmin, qmax, device):
    x = data().requires_grad_()
    scale, zp = 0.05, 2
    y = torch.fake_quantize_per_tensor_affine(x, scale, zp, qmin, qmax)
    dy = data(seed=4)
    (dx,) = torch.autograd.grad(y, x, dy)
    s, z = torch.tensor([scale]), torch.tensor([zp], dtype=torch.int32)
    kw = dict(quant_min=qmin, quant_max=qmax, device=device)
    torch.testing.assert_close(ops.fake_quantize(x, s, z, **kw), y.detach(), rtol=0, atol=0)
    torch.testing.assert_close(ops.fake_quantize_backward(dy, x, s, z, **kw), dx, rtol=0, atol=0)


def test_fake_quantize_per_channel_and_its_gradient(device):
    x = data((4, 9, 5)).requires_grad_()
    scales = torch.tensor([0.1, 0.02, 0.3, 0.05, 0.07])
    zps = torch.tensor([0, 3, -2, 7, -9], dtype=torch.int32)
    y = torch.fake_quantize_per_channel_affine(x, scales, zps, 2, -128, 127)
    dy = data((4, 9, 5), seed=6)
    (dx,) = torch.autograd.grad(y, x, dy)
    kw = dict(granularity="per_channel", axis=2, device=device)
    torch.testing.assert_close(ops.fake_quantize(x, scales, zps, **kw), y.detach(), rtol=0, atol=0)
    torch.testing.assert_close(ops.fake_quantize_backward(dy, x, scales, zps, **kw), dx, rtol=0, atol=0)


def test_learnable_fake_quantize_matches_pytorchs_lsq(device):
    x = data().requires_grad_()
    scale = torch.tensor([0.07], requires_grad=True)
    zp = torch.tensor([1.6], requires_grad=True)
    y = torch._fake_quantize_learnable_per_tensor_affine(x, scale, zp, -128, 127, 0.5)
    dy = data(seed=8)
    dx, ds, dz = torch.autograd.grad(y, (x, scale, zp), dy)
    kw = dict(quant_min=-128, quant_max=127, device=device)
    got = ops.fake_quantize_learnable(x, scale, zp, **kw)
    torch.testing.assert_close(got, y.detach(), rtol=0, atol=0)
    gx, gs, gz = ops.fake_quantize_learnable_backward(dy, x, scale, zp, grad_factor=0.5, **kw)
    torch.testing.assert_close(gx, dx, rtol=0, atol=0)
    # PyTorch sums ds and dzp in f32 in its own order; baracuda in f64, rounded once.
    torch.testing.assert_close(gs, ds, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(gz, dz, rtol=1e-5, atol=1e-6)


def test_quantize_op_errors(device):
    x = np.zeros((2, 4), dtype=np.float32)
    s, z = np.ones(1, dtype=np.float32), np.zeros(1, dtype=np.int32)
    with pytest.raises(ValueError, match="unknown quantize op"):
        ops.quantize_op("quantise", x=x, scale=s, zero_point=z)
    with pytest.raises(TypeError, match="not dy"):
        ops.quantize(x, s, z, dy=x)
    # A data check of host and sim (the zero point's value, read at run).
    with pytest.raises(baracuda.InvalidProblem, match="zero point"):
        ops.quantize(x, s, np.array([200], dtype=np.int32), device=device)  # outside [-128, 127]
    with pytest.raises(baracuda.InvalidProblem):
        ops.quantize(x, np.ones(3, dtype=np.float32), z, device=device)  # the per-tensor scale has shape (1,)


@pytest.mark.parametrize("kind,lo,hi,zp", [("s4", -8, 7, 1), ("u4", 0, 15, 8)])
def test_packed_4bit_quantize_and_dequantize(kind, lo, hi, zp, device):
    x, scale = data((3, 10)), 0.4
    s, z = torch.tensor([scale]), torch.tensor([zp], dtype=torch.int32)
    q = ops.quantize(x, s, z, quantized=kind, device=device)
    assert isinstance(q, baracuda.Tensor) and q.kind == kind and tuple(q.array.shape) == (3, 5)
    qtype = torch.qint8 if kind == "s4" else torch.quint8
    codes = torch.quantize_per_tensor(x, scale, zp, qtype).int_repr().int().clamp(lo, hi)
    nibbles = codes & 0xF
    packed = (nibbles[:, 0::2] | (nibbles[:, 1::2] << 4)).to(torch.uint8)  # the even index in the low nibble
    torch.testing.assert_close(q.array, packed, rtol=0, atol=0)
    y = ops.dequantize(q, s, z, quantized=kind, device=device)
    torch.testing.assert_close(y, (codes - zp).float() * scale, rtol=0, atol=0)
    with pytest.raises(baracuda.InvalidProblem, match="extent must be even"):  # the plan's own message
        ops.quantize(data((3, 9)), s, z, quantized=kind, device=device)
