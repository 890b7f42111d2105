"""A quantization-aware training step on baracuda's ops: a SwiGLU MLP whose weights are fake-quantized per
output channel (int8, learnable scales: LSQ), forward, backward and one optimizer step. Runs on the host
reference by default; `python qat_step.py sim` runs the CUDA kernels on the emulator."""

import sys

import torch

import baracuda.torch as bt


def main(device="host"):
    torch.manual_seed(0)
    hidden, inner, tokens = 32, 48, 64
    w_up = torch.nn.Parameter(torch.randn(2 * inner, hidden) / hidden**0.5)
    w_down = torch.nn.Parameter(torch.randn(hidden, inner) / inner**0.5)
    # One learnable scale and zero point per output channel (LSQ initialisation: 2·mean|w|/√qmax).
    s_up = torch.nn.Parameter(2 * w_up.detach().abs().mean(1) / 127**0.5)
    s_down = torch.nn.Parameter(2 * w_down.detach().abs().mean(1) / 127**0.5)
    z_up, z_down = torch.zeros(2 * inner), torch.zeros(hidden)
    params = [w_up, w_down, s_up, s_down]
    opt = torch.optim.Adam(params, lr=1e-2)
    x, target = torch.randn(tokens, hidden), torch.randn(tokens, hidden)

    def loss():
        q = dict(granularity="per_channel", axis=0, device=device, grad_factor=1.0 / (hidden * 127) ** 0.5)
        h = x @ bt.fake_quantize_learnable(w_up, s_up, z_up, **q).t()
        a = bt.swiglu(h, layout="first_half", device=device)
        y = a @ bt.fake_quantize_learnable(w_down, s_down, z_down, **q).t()
        return torch.nn.functional.mse_loss(y, target)

    before = loss()
    opt.zero_grad()
    before.backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in params)
    opt.step()
    after = loss().item()
    print(f"QAT step on {device}: loss {before.item():.4f} -> {after:.4f}")
    return before.item(), after


if __name__ == "__main__":
    main(*sys.argv[1:])
