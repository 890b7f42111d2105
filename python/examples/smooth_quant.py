"""SmoothQuant inference on baracuda's ops: migrate the activation outliers into the weight (smoothing), quantize
the activation per tensor with a static scale and the weight per output channel, run SmoothQuantLinear, and
compare with the float layer. `python smooth_quant.py sim` runs the CUDA kernels on the emulator."""

import sys

import torch

from baracuda import ops


def main(device="host", alpha=0.5):
    g = torch.Generator().manual_seed(0)
    tokens, k, n = 32, 128, 64
    x = torch.randn(tokens, k, generator=g)
    x[:, ::16] *= 40  # a few outlier channels, as in LLM activations
    w = torch.randn(n, k, generator=g) / k**0.5
    bias = torch.randn(n, generator=g) * 0.1
    y_float = x @ w.t() + bias

    # Smoothing: s_j = max|x_j|^alpha / max|w_j|^(1 - alpha); x / s and w * s give the same product.
    s = x.abs().amax(0).pow(alpha) / w.abs().amax(0).pow(1 - alpha)
    x_s, w_s = x / s, w * s

    # Static per-tensor activation scale (calibrated on this batch), symmetric int8.
    x_scale = float(x_s.abs().max() / 127)
    x_q = ops.quantize(x_s, torch.tensor([x_scale]), torch.zeros(1, dtype=torch.int32), device=device)
    # Per-output-channel symmetric int8 weight: one row per output channel is a "token" of W.
    w_q, w_scale, _ = ops.dynamic_range_quantize(w_s, granularity="per_token", device=device)

    y = ops.smooth_quant_linear(x_q, w_q, w_scale, bias, x_scale=x_scale, output="f32", device=device)
    error = float((y - y_float).norm() / y_float.norm())

    # Without smoothing the outliers set the activation scale and the other channels lose their precision.
    x_scale_raw = float(x.abs().max() / 127)
    x_q_raw = ops.quantize(x, torch.tensor([x_scale_raw]), torch.zeros(1, dtype=torch.int32), device=device)
    w_q_raw, w_scale_raw, _ = ops.dynamic_range_quantize(w, granularity="per_token", device=device)
    y_raw = ops.smooth_quant_linear(x_q_raw, w_q_raw, w_scale_raw, bias, x_scale=x_scale_raw, output="f32",
                                    device=device)
    error_raw = float((y_raw - y_float).norm() / y_float.norm())
    print(f"SmoothQuant on {device}: relative error {error:.4f} (without smoothing {error_raw:.4f})")
    return error, error_raw


if __name__ == "__main__":
    main(*sys.argv[1:])
