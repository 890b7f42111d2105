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


def test_checkpoint_packers_match_the_formats_and_the_device_repack(device):
    rng = np.random.default_rng(9)
    k, n, group = 128, 64, 64
    w = rng.standard_normal((k, n)).astype(np.float32)
    sym = baracuda.quantize_int4(w, group, "symmetric")
    qweight, qzeros, scales, g_idx = baracuda.gptq_pack(sym)
    # GPTQ's layout, packed here independently: value j of a word along K in bits 4j..4j+3, zeros stored as 7s.
    q = sym.q.astype(np.uint32)
    expected = np.zeros((k // 8, n), dtype=np.uint32)
    for j in range(8):
        expected |= q[j::8] << np.uint32(4 * j)
    np.testing.assert_array_equal(qweight.view(np.uint32), expected)
    assert (qzeros.view(np.uint32) == 0x77777777).all()
    np.testing.assert_array_equal(g_idx, np.arange(k) // group)
    back = baracuda.gptq_unpack(qweight, qzeros, scales, g_idx, group, "symmetric")
    np.testing.assert_array_equal(back.q, sym.q)
    np.testing.assert_array_equal(back.scales, sym.scales)
    # The device repack of the checkpoint gives the host converter's bytes.
    b_q, m_scales, _, _ = ops.marlin_repack(qweight, scales, group=group, device=device)
    host_b_q, host_scales, _, _ = baracuda.marlin_from_int4(sym)
    np.testing.assert_array_equal(b_q, host_b_q)
    np.testing.assert_array_equal(m_scales, host_scales)
    asym = baracuda.quantize_int4(w, group, "asymmetric")
    a_qweight, a_qzeros, a_scales = baracuda.awq_pack(asym)
    again = baracuda.awq_unpack(a_qweight, a_qzeros, a_scales, group)
    np.testing.assert_array_equal(again.q, asym.q)
    np.testing.assert_array_equal(again.zeros, asym.zeros)
    b_q, m_scales, zeros, _ = ops.marlin_repack(a_qweight, a_scales, qzeros=a_qzeros, group=group, format="awq",
                                                device=device)
    host = baracuda.marlin_from_int4(asym)
    for got, want in zip((b_q, m_scales, zeros), host[:3]):
        np.testing.assert_array_equal(got, want)
