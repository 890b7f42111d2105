"""The paged KV cache append from Python against a NumPy model of vLLM's reshape_and_cache_flash: key and value
written at their slots (pages out of order, a padding slot, one past the caches), copied or quantized as
float32(x) / float32(scale) to float8_e4m3fn (saturating, ml_dtypes) or int8 (rint, clipped); caches as two
arrays and as views of one combined [num_blocks, 2, block_size, heads, dim] array; torch tensors; rejections."""

import numpy as np
import pytest

import baracuda
from baracuda import ops

ml_dtypes = pytest.importorskip("ml_dtypes")

T, H, D, N, B = 9, 2, 32, 4, 4
SLOTS = np.array([5, 14, -1, 0, 9, 16, 3, 12, 7], np.int64)  # 16 = N * B: past the caches, skipped
KINDS = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32}
CACHES = {"fp8e4m3": ml_dtypes.float8_e4m3fn, "s8": np.int8}


def data(dtype, seed):
    x = np.random.default_rng(seed).normal(0, 3, (T, H, D)).astype(np.float32)
    x[0, 0, :4] = [np.inf, -np.inf, 1e4, -0.0]
    return x.astype(dtype)


def quantize(x, scale, cache):
    """vLLM's scaled_convert on [H, D] rows: float32 division, then the cache kind (scale [H, 1])."""
    y = (x.astype(np.float32) / scale).astype(np.float32)
    if cache == "fp8e4m3":
        return np.clip(y, -448, 448).astype(ml_dtypes.float8_e4m3fn)
    return np.clip(np.rint(np.nan_to_num(y, nan=0.0)), -128, 127).astype(np.int8)


def reference(key, value, kc, vc, slots, cache=None, k_scale=None, v_scale=None):
    kc, vc = kc.copy(), vc.copy()
    for t, s in enumerate(slots):
        if s < 0 or s >= N * B:
            continue
        for src, dst, sc in ((key, kc, k_scale), (value, vc, v_scale)):
            dst[s // B, s % B] = src[t] if cache is None else quantize(src[t], sc.reshape(-1, 1), cache)
    return kc, vc


def bits(a):
    return a.view(np.uint8 if a.dtype.itemsize == 1 else np.uint16 if a.dtype.itemsize == 2 else np.uint32)


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("combined", [False, True])
def test_copy(kind, combined, device):
    dt = KINDS[kind]
    key, value = data(dt, 1), data(dt, 2)
    if combined:
        buf = np.full((N, 2, B, H, D), 7, np.float32).astype(dt)
        kc, vc = buf[:, 0], buf[:, 1]
    else:
        kc, vc = np.full((N, B, H, D), 7, np.float32).astype(dt), np.full((N, B, H, D), 5, np.float32).astype(dt)
    want_k, want_v = reference(key, value, kc, vc, SLOTS)
    out_k, out_v = ops.kv_cache_append(key, value, kc, vc, SLOTS.astype(np.int32), device=device)
    assert out_k is kc and out_v is vc
    np.testing.assert_array_equal(bits(kc), bits(want_k))
    np.testing.assert_array_equal(bits(vc), bits(want_v))


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("cache", list(CACHES))
@pytest.mark.parametrize("per_head", [False, True])
def test_quantized(kind, cache, per_head, device):
    dt, ct = KINDS[kind], CACHES[cache]
    key, value = data(dt, 3), data(dt, 4)
    k_scale = np.array([0.043, 0.9][:H if per_head else 1], np.float32)
    v_scale = np.array([0.25, 0.11][:H if per_head else 1], np.float32)
    kc = np.zeros((N, B, H, D), np.float32).astype(ct)
    vc = np.zeros((N, B, H, D), np.float32).astype(ct)
    want_k, want_v = reference(key, value, kc, vc, SLOTS, cache, k_scale, v_scale)
    ops.kv_cache_append(key, value, kc, vc, SLOTS, k_scale=k_scale, v_scale=v_scale, device=device)
    np.testing.assert_array_equal(bits(kc), bits(want_k))
    np.testing.assert_array_equal(bits(vc), bits(want_v))


def test_torch_int8_cache(device):
    torch = pytest.importorskip("torch")
    key = torch.from_numpy(data(np.float16, 5))
    value = torch.from_numpy(data(np.float16, 6))
    kc = torch.zeros((N, B, H, D), dtype=torch.int8)
    vc = torch.zeros((N, B, H, D), dtype=torch.int8)
    k_scale, v_scale = torch.tensor([0.05, 0.07]), torch.tensor([0.3, 0.2])
    ops.kv_cache_append(key, value, kc, vc, torch.from_numpy(SLOTS), k_scale=k_scale, v_scale=v_scale,
                        device=device)
    want_k, want_v = reference(key.numpy(), value.numpy(), np.zeros((N, B, H, D), np.int8),
                               np.zeros((N, B, H, D), np.int8), SLOTS, "s8", k_scale.numpy(), v_scale.numpy())
    np.testing.assert_array_equal(kc.numpy(), want_k)
    np.testing.assert_array_equal(vc.numpy(), want_v)


def test_rejections():
    key, value = data(np.float16, 7), data(np.float16, 8)
    kc = np.zeros((N, B, H, D), np.float16)
    with pytest.raises(baracuda.InvalidProblem, match="share memory"):
        ops.kv_cache_append(key, value, kc, kc, SLOTS)
    with pytest.raises(baracuda.InvalidProblem, match="k_scale"):
        ops.kv_cache_append(key, value, np.zeros((N, B, H, D), np.int8), np.zeros((N, B, H, D), np.int8), SLOTS)
    with pytest.raises(baracuda.InvalidProblem, match="slot_mapping"):
        ops.kv_cache_append(key, value, kc, np.zeros((N, B, H, D), np.float16), SLOTS[:4])
    with pytest.raises(baracuda.InvalidProblem, match="the cache must be"):
        ops.kv_cache_append(key, value, kc.astype(np.float32), np.zeros((N, B, H, D), np.float32), SLOTS)
