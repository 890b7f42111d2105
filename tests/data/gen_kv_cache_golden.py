#!/usr/bin/env python3
"""Generates tests/data/kv_cache_golden.json: golden paged KV caches for KvCacheAppendPlan, computed with NumPy
and ml_dtypes, independently of baracuda's C++ code.

    pip install numpy ml_dtypes
    python3 tests/data/gen_kv_cache_golden.py        # rewrites kv_cache_golden.json beside this script

The operation is vLLM's reshape_and_cache_flash (csrc/cache_kernels.cu) on the flash layout
[num_blocks, block_size, num_kv_heads, head_dim]: for each token t with slot s = slot_mapping[t] >= 0, K and V
rows go to cache[s // block_size, s % block_size]. Quantized (its fp8 path, csrc/quantization/fp8/nvidia/
quant_utils.cuh scaled_convert): y = float32(x) / float32(scale) as a NumPy float32 division (IEEE, rounded to
nearest even), then
  - fp8e4m3: clipped to +-448 (that is __NV_SATFINITE: +-inf too; NaN stays NaN) and converted by ml_dtypes
    (float8_e4m3fn, round to nearest even);
  - s8 (baracuda's int8 KV, which vLLM's flash layout does not have): rint (half to even), clipped to
    [-128, 127], NaN -> 0.
baracuda also skips slots >= num_blocks * block_size, where vLLM writes out of bounds; the cases include such
slots and the generator skips them, as the contract says. Unwritten cache elements keep the sentinel byte 0xA5
the tests fill caches with (0xA5A5 for 16-bit kinds, 0xA5A5A5A5 for f32).

One case per (key kind, cache kind, scale layout): params kind, cache, scales, block_size; tensors key, value
[T, H, D], slot_mapping [T] (s64), k_scale and v_scale (f32; absent for a copy) and the expected key_cache and
value_cache [N, B, H, D]. Values: normal(0, 3) with NaN, +-inf, -0, out-of-range magnitudes, and quotients at
rounding ties; in each quantized case, four keys of head 0 (scale 0.9) where x / scale and
x * float32(1 / scale) quantize differently (found by search), so the division is what the data pins down.
"""

import os
import sys

import ml_dtypes
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import golden_json  # noqa: E402

OUT = os.path.join(HERE, "kv_cache_golden.json")
SEED = 20261127
T, H, D, N, B = 7, 2, 16, 3, 4

KINDS = {"f16": (np.float16, np.uint16, 0xA5A5), "bf16": (ml_dtypes.bfloat16, np.uint16, 0xA5A5),
         "f32": (np.float32, np.uint32, 0xA5A5A5A5)}
SLOTS = [9, -1, 2, 12 + 3, 11, 0, 4]  # pages out of order; a padding; 15 >= N*B = 12 is skipped


def quantize(x, scale, cache):
    """x: float32 [H, D]; scale: float32 [H, 1]."""
    with np.errstate(divide="ignore", invalid="ignore"):
        y = (x / scale).astype(np.float32)
    assert y.dtype == np.float32
    if cache == "fp8e4m3":
        return np.clip(y, -448, 448).astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    r = np.rint(np.nan_to_num(y, nan=0.0, posinf=np.inf, neginf=-np.inf))
    return np.clip(r, -128, 127).astype(np.int8)


def reciprocal_differs(dtype, ubits, cache, scale):
    """Up to 4 values x of dtype for which x / scale and x * float32(1 / scale) quantize differently (the
    contract's division and the reciprocal's product part at a rounding boundary)."""
    if ubits == np.uint16:
        x = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(dtype).astype(np.float32)
    else:  # f32: the rounding midpoints times the scale, and their neighbours within 3 ulps
        codes = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float64)
        grid = np.unique(codes[np.isfinite(codes)]) if cache == "fp8e4m3" else np.arange(-128.0, 128.0)
        mids = np.float32((grid[1:] + grid[:-1]) / 2 * np.float64(np.float32(scale)))
        x = np.concatenate([mids.view(np.int32) + d for d in range(-3, 4)]).view(np.float32)
    x = x[np.isfinite(x)]
    s = np.float32(scale)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        a = quantize(x.reshape(1, -1), s.reshape(1, 1), cache).reshape(-1)
        b = quantize((x * (np.float32(1) / s)).astype(np.float32).reshape(1, -1), np.ones((1, 1), np.float32),
                     cache).reshape(-1)
    found = x[a != b][:4]
    assert len(found) == 4, (dtype, cache)
    return found


def values(rng, dtype, boundary=()):
    v = rng.normal(0, 3, size=(T, H, D)).astype(np.float32)
    flat = v.reshape(-1)
    specials = [np.nan, np.inf, -np.inf, -0.0, 1e4, -1e4, 0.25, 1.25, -2.5, 448.0, 0.0107421875]
    for i, s in enumerate(specials):
        flat[i * 9 + 1] = s
    for i, x in enumerate(boundary):  # head 0 (scale 0.9) of tokens 0..3, element 0
        v[i, 0, 0] = x
    return v.astype(dtype)


def main():
    rng = np.random.default_rng(SEED)
    cases = []
    for kname, (dtype, ubits, sentinel) in KINDS.items():
        for cache in (kname, "fp8e4m3", "s8"):
            for scales in (("per_tensor",) if cache == kname else ("per_tensor", "per_head")):
                boundary = () if cache == kname else reciprocal_differs(dtype, ubits, cache, 0.9)
                key, value = values(rng, dtype, boundary), values(rng, dtype)
                if cache == kname:
                    kc = np.full((N, B, H, D), sentinel, ubits)
                    vc = kc.copy()
                else:
                    kc = np.full((N, B, H, D), 0xA5, np.uint8)
                    vc = kc.copy()
                    n = H if scales == "per_head" else 1
                    k_scale = np.array([0.9, 0.043][:n], np.float32)  # head 0: the boundary values' scale
                    v_scale = rng.choice(np.array([0.25, 0.11, 2.3, 0.09], np.float32), n, replace=False)
                for t, s in enumerate(SLOTS):
                    if s < 0 or s >= N * B:
                        continue
                    for src, dst, sc in ((key, kc, None if cache == kname else k_scale),
                                         (value, vc, None if cache == kname else v_scale)):
                        if sc is None:
                            dst[s // B, s % B] = src[t].view(ubits)
                        else:
                            q = quantize(src[t].astype(np.float32), sc.reshape(-1, 1), cache)
                            dst[s // B, s % B] = q.view(np.uint8)
                ckind = cache
                tensors = {"key": golden_json.tensor(kname, key.view(ubits).reshape(-1), key.shape),
                           "value": golden_json.tensor(kname, value.view(ubits).reshape(-1), value.shape),
                           "slot_mapping": golden_json.tensor("s64", SLOTS)}
                if cache != kname:
                    tensors["k_scale"] = golden_json.tensor("f32", k_scale.view(np.uint32))
                    tensors["v_scale"] = golden_json.tensor("f32", v_scale.view(np.uint32))
                    as_bits = (lambda a: a.view(np.int8).reshape(-1)) if cache == "s8" else (lambda a: a.reshape(-1))
                else:
                    as_bits = lambda a: a.reshape(-1)  # noqa: E731
                tensors["key_cache"] = golden_json.tensor(ckind, as_bits(kc), kc.shape)
                tensors["value_cache"] = golden_json.tensor(ckind, as_bits(vc), vc.shape)
                cases.append(golden_json.case(f"{kname}->{cache} {scales}",
                                              {"kind": kname, "cache": cache, "scales": scales, "block_size": B},
                                              tensors))
    golden_json.write(
        OUT, "tests/data/gen_kv_cache_golden.py", {"numpy": np.__version__, "ml_dtypes": ml_dtypes.__version__},
        ["vLLM reshape_and_cache_flash's formula: y = float32(x) / float32(scale), then E4M3 with SATFINITE "
         "(np.clip to +-448, then ml_dtypes) or s8 (rint, clip, NaN -> 0)",
         "slots < 0 and >= num_blocks * block_size are skipped; unwritten elements hold the 0xA5 sentinel bytes"],
        cases)


if __name__ == "__main__":
    main()
