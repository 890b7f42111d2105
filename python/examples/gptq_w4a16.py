"""A W4A16 layer from a GPTQ checkpoint's tensors: repack (qweight, scales, g_idx) into Marlin's layout once,
then run the int4 GEMM, against the layer computed with the checkpoint's weight dequantized in NumPy.
The checkpoint here is made in this file, in GPTQ's layout: qweight int32 [K/8, N] holding 8 four-bit values
along K (value j of a word in bits 4j..4j+3), symmetric with the implicit zero point 8, float16 scales [G, N],
and g_idx [K] giving each input channel's group (act-order / desc_act shuffles it).
`python gptq_w4a16.py sim` runs the CUDA kernels on the emulator."""

import sys

import numpy as np
import torch

from baracuda import ops


def gptq_checkpoint(k, n, group, act_order, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.integers(0, 16, size=(k, n), dtype=np.uint32)
    groups = k // group
    scales = (rng.random((groups, n)) * 0.02 + 0.005).astype(np.float16)
    g_idx = np.repeat(np.arange(groups, dtype=np.int32), group)
    if act_order:
        rng.shuffle(g_idx)
    qweight = np.zeros((k // 8, n), dtype=np.uint32)
    for j in range(8):
        qweight |= q[j::8] << np.uint32(4 * j)
    weight = (q.astype(np.float32) - 8) * scales.astype(np.float32)[g_idx]  # W[k, n], the layer's K × N
    return qweight.view(np.int32), scales, g_idx, weight


def main(device="host", act_order=True):
    k, n, group, tokens = 256, 128, 64, 16
    qweight, scales, g_idx, weight = gptq_checkpoint(k, n, group, act_order)
    b_q, m_scales, _, perm = ops.marlin_repack(torch.from_numpy(qweight), torch.from_numpy(scales),
                                               g_idx=torch.from_numpy(g_idx) if act_order else None, group=group,
                                               device=device)
    a = torch.randn(tokens, k, generator=torch.Generator().manual_seed(1)).half()
    c = ops.int4_gemm(a, b_q, m_scales, perm=perm, group=group, device=device)
    expected = a.float().numpy() @ weight
    error = float(np.abs(c.float().numpy() - expected).max() / np.abs(expected).max())
    print(f"W4A16 ({'act-order' if act_order else 'no act-order'}) on {device}: max error {error:.2e} of max |c|")
    return error


if __name__ == "__main__":
    main(*sys.argv[1:])
