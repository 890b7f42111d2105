"""The FP8 family from Python against ml_dtypes' fp8 types (the OCP formats) and TransformerEngine's delayed
scaling formula, on host and sim."""

import numpy as np
import pytest

import baracuda
from baracuda import ops

ml_dtypes = pytest.importorskip("ml_dtypes")
torch = pytest.importorskip("torch")

FP8 = {"fp8e4m3": (ml_dtypes.float8_e4m3fn, 448.0), "fp8e5m2": (ml_dtypes.float8_e5m2, 57344.0)}


@pytest.mark.parametrize("kind", sorted(FP8))
def test_quantize_and_dequantize_numpy(kind, device):
    dtype, fp8_max = FP8[kind]
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((7, 33)) * 100).astype(np.float32)
    x[0, :3] = [np.nan, np.inf, -1e9]
    scale = np.array([1.7], dtype=np.float32)
    scale_inv = np.zeros(1, dtype=np.float32)
    y, amax = ops.fp8_quantize(x, scale, kind=kind, scale_inv=scale_inv, device=device)
    assert y.dtype == dtype
    expected = np.clip(x * scale[0], -fp8_max, fp8_max).astype(dtype)  # saturating, round to nearest even
    np.testing.assert_array_equal(y.view(np.uint8)[1:], expected.view(np.uint8)[1:])
    assert np.isnan(y[0, 0].astype(np.float32)) and y[0, 1] == fp8_max and y[0, 2] == -fp8_max
    assert np.isnan(amax[0])  # the pytorch convention propagates NaN
    assert scale_inv[0] == np.float32(1) / np.float32(1.7)
    back = ops.fp8_dequantize(y, scale_inv, device=device)
    np.testing.assert_array_equal(back[1:], y[1:].astype(np.float32) * scale_inv[0])


def test_transformer_engine_amax_skips_nan(device):
    x = np.array([1.0, np.nan, -3.5], dtype=np.float32)
    _, amax = ops.fp8_quantize(x, np.ones(1, dtype=np.float32), convention="transformer_engine", device=device)
    assert amax[0] == 3.5


def test_torch_without_fp8_gets_a_tensor_over_uint8(device):
    x = torch.linspace(-500, 500, 11)
    y, amax = ops.fp8_quantize(x, torch.ones(1), device=device)
    if hasattr(torch, "float8_e4m3fn"):
        assert y.dtype == torch.float8_e4m3fn
    else:
        assert isinstance(y, baracuda.Tensor) and y.kind == "fp8e4m3" and y.array.dtype == torch.uint8
    assert amax.item() == 500
    back = ops.fp8_dequantize(y, torch.ones(1), device=device)
    assert back[0].item() == -448 and back[-1].item() == 448


def test_delayed_scaling_step(device):
    history = np.array([5.0, 1.0, 20.0, np.nan], dtype=np.float32)  # slot 0: this step's amax
    scale, scale_inv = np.array([1.0], dtype=np.float32), np.zeros(1, dtype=np.float32)
    ops.fp8_scaling_update(history, scale, scale_inv, margin=1, device=device)
    expected_scale = np.float32(448.0 * 2.0**-1) / np.float32(20.0)
    assert scale[0] == expected_scale and scale_inv[0] == np.float32(1) / expected_scale
    # The roll: new[i] = old[i + 1] for 1 <= i < H - 1, new[H - 1] = old[0], new[0] = 0.
    assert history[0] == 0 and history[1] == 20.0 and np.isnan(history[2]) and history[3] == 5.0
