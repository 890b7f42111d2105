"""The W4A16 path from Python: a GPTQ checkpoint made in GPTQ's layout, repacked and multiplied, against the
layer with the weight dequantized independently in NumPy (python/examples/gptq_w4a16.py), on host and sim."""

import pathlib
import runpy

import numpy as np
import pytest

import baracuda
from baracuda import ops

torch = pytest.importorskip("torch")
EXAMPLE = runpy.run_path(str(pathlib.Path(__file__).resolve().parents[1] / "examples" / "gptq_w4a16.py"))


@pytest.mark.parametrize("act_order", [False, True])
def test_gptq_layer(act_order, device):
    assert EXAMPLE["main"](device, act_order) < 2e-3  # f16 output, f32 accumulation


def test_act_order_perm_is_the_stable_argsort():
    g_idx = np.array([1, 0, 1, 0, 0, 1, 1, 0] * 8, dtype=np.int32)  # K = 64, two groups of 32
    perm = baracuda.marlin_act_order_perm(g_idx, 64, 64, 32)
    np.testing.assert_array_equal(perm, np.argsort(g_idx, kind="stable"))


def test_repack_rejects_bad_shapes(device):
    with pytest.raises(baracuda.InvalidProblem, match="N"):
        ops.marlin_repack(torch.zeros(32, 40, dtype=torch.int32), torch.zeros(2, 40, dtype=torch.float16), group=128,
                          device=device)


@pytest.mark.parametrize("scheme,act_order", [("symmetric", False), ("symmetric", True), ("asymmetric", False)])
def test_rtn_quantized_weight_through_marlin(scheme, act_order, device):
    """quantize_int4 (round to nearest) → marlin_from_int4 → int4_gemm, against the exact dequantized weight."""
    rng = np.random.default_rng(5)
    k, n, group = 128, 64, 32
    w = rng.standard_normal((k, n)).astype(np.float32)
    g_idx = rng.permutation(np.repeat(np.arange(k // group, dtype=np.int32), group)) if act_order else None
    weights = baracuda.quantize_int4(w, group, scheme, g_idx)
    assert weights.q.shape == (k, n) and weights.q.max() <= 15 and weights.scales.dtype == np.float16
    w_hat = baracuda.dequantize_int4(weights)
    assert np.abs(w_hat - w).max() <= np.abs(weights.scales.astype(np.float32)).max() * (1.0 if scheme == "asymmetric"
                                                                                           else 0.5) + 1e-6
    b_q, scales, zeros, perm = baracuda.marlin_from_int4(weights, act_order)
    assert (zeros is None) == (scheme == "symmetric") and (perm is None) == (not act_order)
    a = torch.randn(8, k, generator=torch.Generator().manual_seed(2)).half()
    t = {name: None if v is None else torch.from_numpy(v) for name, v in
         dict(b_q=b_q, scales=scales, zeros=zeros, perm=perm).items()}
    c = ops.int4_gemm(a, t["b_q"], t["scales"], zeros=t["zeros"], perm=t["perm"], group=group, device=device)
    expected = a.float().numpy() @ w_hat
    assert np.abs(c.float().numpy() - expected).max() <= 2e-3 * np.abs(expected).max()
