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
