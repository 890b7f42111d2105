#!/usr/bin/env python3
"""PyTorch's scaled_dot_product_attention on the profiler's attention_prefill shapes, timed as the profiler times.

The peer of `baracuda-profiler --op attention_prefill` (tools/profiler/scenarios/attention.cpp): the same
batches (B x S = 8 x 2048 and 1 x 16384), 32 query heads on 8 kv heads, head dim 128, f16 and bf16,
non-causal and causal (bottom-right: S_q = S_k here, so top-left and bottom-right agree), the same flop count
(4 * B * H * S_q * S_k * d, halved for causal). Each backend PyTorch has on the card is timed on its own
(FLASH_ATTENTION is FlashAttention-2, EFFICIENT_ATTENTION is xFormers'/CUTLASS's, CUDNN_ATTENTION cuDNN's); a
backend that refuses a case prints its reason. Timing: CUDA events, the L2 flushed (a 256 MiB write) before
each of 20 timed runs after 5 warm-ups, the median reported. Output: one CSV row a case on stdout.
Usage: python3 tools/gpu/sdpa_baseline.py [repeat]
"""
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

REPEAT = int(sys.argv[1]) if len(sys.argv) > 1 else 20
WARMUP = 5
H, H_KV, D = 32, 8, 128
SHAPES = [(8, 2048), (1, 16384)]
BACKENDS = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.CUDNN_ATTENTION]


def median_us(fn, flush):
    for _ in range(WARMUP):
        fn()
    times = []
    for _ in range(REPEAT):
        flush.zero_()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e3)
    return statistics.median(times)


def main():
    dev = torch.device("cuda")
    flush = torch.empty(256 << 20, dtype=torch.uint8, device=dev)
    print(f"# {torch.cuda.get_device_name()} torch {torch.__version__} cudnn {torch.backends.cudnn.version()}")
    print("backend,dtype,B,S,H,H_kv,d,causal,us,tflops,max_abs_diff_vs_math")
    gen = torch.Generator(device=dev).manual_seed(0)
    for dtype in (torch.float16, torch.bfloat16):
        for b, s in SHAPES:
            # q, k in [-2, 2], v in [1, 2], as the profiler's scenario draws them; torch's layout [B, H, S, d].
            q = (torch.rand(b, H, s, D, generator=gen, device=dev) * 4 - 2).to(dtype)
            k = (torch.rand(b, H_KV, s, D, generator=gen, device=dev) * 4 - 2).to(dtype)
            v = (torch.rand(b, H_KV, s, D, generator=gen, device=dev) + 1).to(dtype)
            for causal in (False, True):
                flops = 4.0 * b * H * s * s * D / (2 if causal else 1)
                ref = None
                for backend in BACKENDS:
                    name = str(backend).split(".")[-1]

                    def fn():
                        return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)

                    try:
                        with sdpa_kernel([backend]):
                            out = fn()
                            us = median_us(fn, flush)
                    except RuntimeError as e:
                        print(f"{name},{dtype},{b},{s},{H},{H_KV},{D},{int(causal)},refused,,{str(e)[:80]!r}")
                        continue
                    if ref is None:  # the first backend's output is the comparison point of the others
                        ref = out.float()
                    diff = (out.float() - ref).abs().max().item()
                    print(f"{name},{dtype},{b},{s},{H},{H_KV},{D},{int(causal)},{us:.1f},{flops / us / 1e6:.1f},{diff:.3g}",
                          flush=True)


if __name__ == "__main__":
    main()
