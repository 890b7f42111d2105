"""The int8 GEMM family and dynamic-range quantization from Python against independent references (PyTorch's
integer matmul and quantize_per_tensor, f64 float math), on host and sim."""

import pytest

import baracuda
from baracuda import ops

torch = pytest.importorskip("torch")


def ints(shape, lo, hi, seed):
    return torch.randint(lo, hi, shape, generator=torch.Generator().manual_seed(seed), dtype=torch.int32)


@pytest.mark.parametrize("a_kind,lo", [("s8", -128), ("u8", 0)])
def test_int_gemm_is_the_integer_product(a_kind, lo, device):
    a = ints((7, 64), lo, lo + 256, 1).to(torch.int8 if a_kind == "s8" else torch.uint8)
    b = ints((24, 64), -128, 128, 2).to(torch.int8)
    c = ops.int_gemm(a, b, device=device)
    assert c.dtype == torch.int32
    torch.testing.assert_close(c, a.int() @ b.int().t(), rtol=0, atol=0)


def test_int_gemm_on_padded_rows(device):
    """Row strides above K (views of wider buffers) reach the descriptor's leading dimensions; c's padding stays."""
    a = ints((7, 96), -128, 128, 11).to(torch.int8)[:, :64]
    b = ints((24, 80), -128, 128, 12).to(torch.int8)[:, :64]
    wide = torch.full((7, 30), 7, dtype=torch.int32)
    c = ops.int_gemm(a, b, out=wide[:, :24], device=device)
    torch.testing.assert_close(c, a.int() @ b.int().t(), rtol=0, atol=0)
    assert bool((wide[:, 24:] == 7).all())


def reference_per_token(x):
    """PyTorch's arithmetic, independently: s = max(-min(lo, 0), max(hi, 0)) / 127 in f32, then
    torch.quantize_per_tensor row by row."""
    lo = torch.clamp(x.min(dim=1).values, max=0)
    hi = torch.clamp(x.max(dim=1).values, min=0)
    s = torch.maximum(-lo, hi) / torch.tensor(127.0)
    s = torch.where(s == 0, torch.ones_like(s), s)
    q = torch.stack([torch.quantize_per_tensor(r, float(v), 0, torch.qint8).int_repr() for r, v in zip(x, s)])
    return q, s


def test_dynamic_range_quantize_per_token(device):
    x = torch.randn(9, 48, generator=torch.Generator().manual_seed(3)) * 4
    x[2] = 0  # an all-zero row: s = 1
    q, s, zp = ops.dynamic_range_quantize(x, device=device)
    q_ref, s_ref = reference_per_token(x)
    assert zp is None
    torch.testing.assert_close(s, s_ref, rtol=0, atol=0)
    torch.testing.assert_close(q, q_ref, rtol=0, atol=0)


@pytest.mark.parametrize("activation", ["none", "relu", "silu"])
def test_quantized_linear(activation, device):
    g = torch.Generator().manual_seed(4)
    x = torch.randn(6, 64, generator=g)
    w = ints((32, 64), -127, 128, 5).to(torch.int8)
    w_scale = torch.rand(32, generator=g) * 0.01 + 0.001
    bias = torch.randn(32, generator=g)
    y = ops.quantized_linear(x, w, w_scale, bias, activation=activation, device=device)
    q, s = reference_per_token(x)
    acc = (q.double() @ w.double().t()) * s.double()[:, None] * w_scale.double()[None, :] + bias.double()
    act = {"none": lambda v: v, "relu": torch.relu, "silu": torch.nn.functional.silu}[activation]
    torch.testing.assert_close(y.double(), act(acc), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("output,tol", [("f32", 1e-6), ("f16", 1e-3)])
def test_smooth_quant_linear(output, tol, device):
    g = torch.Generator().manual_seed(6)
    x_q = ints((5, 32), -128, 128, 7).to(torch.int8)
    w = ints((16, 32), -127, 128, 8).to(torch.int8)
    w_scale = torch.rand(16, generator=g) * 0.01
    bias = torch.randn(16, generator=g).to({"f32": torch.float32, "f16": torch.float16}[output])
    y = ops.smooth_quant_linear(x_q, w, w_scale, bias, x_scale=0.02, output=output, device=device)
    expected = 0.02 * (x_q.double() @ w.double().t()) * w_scale.double() + bias.double()
    torch.testing.assert_close(y.double(), expected, rtol=tol, atol=tol)


def test_strides_a_plan_does_not_take_are_a_clear_error(device):
    a = torch.zeros(64, 8, dtype=torch.int8).t()  # [8, 64] with K not contiguous
    b = torch.zeros(16, 64, dtype=torch.int8)
    with pytest.raises(baracuda.Error, match="stride|contiguous"):
        ops.int_gemm(a, b, device=device)


def test_linear_errors(device):
    x = torch.zeros(4, 30)  # K = 30: weight rows are not 16-byte aligned multiples
    w = torch.zeros(8, 30, dtype=torch.int8)
    with pytest.raises(baracuda.Error) as e:
        ops.quantized_linear(x, w, torch.ones(8), device=device)
    assert "K" in str(e.value) or "align" in str(e.value)
    with pytest.raises(ValueError, match="unknown linear activation"):
        ops.quantized_linear(torch.zeros(4, 32), torch.zeros(8, 32, dtype=torch.int8), torch.ones(8), activation="gelu")


def test_smooth_quant_example(device):
    import pathlib
    import runpy

    example = pathlib.Path(__file__).resolve().parents[1] / "examples" / "smooth_quant.py"
    error, error_raw = runpy.run_path(str(example))["main"](device)
    assert error < 0.02 and error < error_raw
