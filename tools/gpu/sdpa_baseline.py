#!/usr/bin/env python3
"""PyTorch's scaled_dot_product_attention on the profiler's attention shapes, timed as the profiler times: the
peers of `--op attention_prefill` (the forward), `--op attention_backward` (its backward through autograd: the
backward kernels alone, the forward run once outside the timed region) and `--op paged_decode` (a device-to-device
copy of the same K and V bytes: the decode rows' bandwidth ceiling).

The peer of `baracuda-profiler --op attention_prefill` (tools/profiler/scenarios/attention_prefill.cpp): the same
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


def backward(flush):
    """SDPA's backward on the attention_backward rows (causal, 8 x 2048 and 1 x 16384): dq, dk, dv from a saved
    forward; flops 2.5x the forward's (FlashAttention's count: five products against two), halved for causal."""
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev).manual_seed(1)
    print("backend,dtype,B,S,H,H_kv,d,causal,backward_us,tflops")
    for dtype in (torch.float16, torch.bfloat16):
        for b, s in SHAPES:
            q = (torch.rand(b, H, s, D, generator=gen, device=dev) * 4 - 2).to(dtype).requires_grad_()
            k = (torch.rand(b, H_KV, s, D, generator=gen, device=dev) * 4 - 2).to(dtype).requires_grad_()
            v = (torch.rand(b, H_KV, s, D, generator=gen, device=dev) + 1).to(dtype).requires_grad_()
            d_o = torch.rand(b, H, s, D, generator=gen, device=dev).to(dtype)
            flops = 2.5 * 4.0 * b * H * s * s * D / 2
            for backend in (SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION):
                name = str(backend).split(".")[-1]
                try:
                    with sdpa_kernel([backend]):
                        o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
                        us = median_us(lambda: torch.autograd.grad(o, (q, k, v), d_o, retain_graph=True), flush)
                except RuntimeError as e:
                    print(f"{name},{dtype},{b},{s},{H},{H_KV},{D},1,refused,{str(e)[:80]!r}")
                    continue
                print(f"{name},{dtype},{b},{s},{H},{H_KV},{D},1,{us:.1f},{flops / us / 1e6:.1f}", flush=True)


def decode_copy(flush):
    """A device-to-device copy of the K and V bytes of the paged_decode rows (tools/profiler/scenarios/paged_decode.cpp:
    B x context in {1, 8} x {1k, 4k, 16k, 32k}, 64 x {1k, 4k}, 256 x 1k; 8 kv heads of 128; 2-byte and 1-byte
    caches): GB/s counting the bytes read and written, as the profiler counts its rows' reads."""
    dev = torch.device("cuda")
    print("op,cache_bytes,B,context,kv_bytes,copy_us,read_gbps")
    cases = [(b, c) for b in (1, 8) for c in (1024, 4096, 16384, 32768)] + [(64, 1024), (64, 4096), (256, 1024)]
    for elem in (2, 1):
        for b, c in cases:
            n = 2 * b * c * H_KV * D * elem  # K and V
            src = torch.empty(n, dtype=torch.uint8, device=dev)
            dst = torch.empty_like(src)
            us = median_us(lambda: dst.copy_(src), flush)
            print(f"copy,{elem},{b},{c},{n},{us:.1f},{n / us / 1e3:.1f}", flush=True)


if __name__ == "__main__":
    main()
    _flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    backward(_flush)
    decode_copy(_flush)
