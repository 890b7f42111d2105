#!/usr/bin/python3
"""Generates tests/data/rope_golden.json: golden values for RopePlan, computed with PyTorch as Hugging Face
transformers and vLLM apply rotary embeddings, independent of baracuda's C++.

    /usr/bin/python3 tests/data/gen_rope_golden.py     # Debian's python3-torch (1.13); rewrites the file

What is computed (PyTorch 1.13 has no rotary op; the formulas are written here from HF's
modeling_rope_utils.py and modeling_llama.py and from vLLM's rotary_embedding.py):
  inv_freq     the frequencies of rot_dim = d dims, as HF computes them in float32 tensors:
               default 1 / base ** (arange(0, d, 2).float() / d); linear inv / factor; NTK-aware (static) the
               default with base * factor ** (d / (d - 2)); llama3 _compute_llama3_parameters; YaRN
               _compute_yarn_parameters (find_correction_range with truncate, linear_ramp_factor, the
               interpolation/extrapolation blend, the attention factor from get_mscale)
  inv_freq_f64 the same formulas evaluated in float64 (what RopePlan's frequencies, computed in long double and
               rounded once to float32, should equal within an ulp)
  cos_sin_cache vLLM's cache for the cache cases: freqs = positions ⊗ inv_freq (float32), cat(cos·m, sin·m)
  q_out, k_out float32: freqs = position.float() ⊗ inv_freq, cos = freqs.cos() · m, sin = freqs.sin() · m, then
               NeoX: x·cat(cos, cos) + rotate_half(x)·cat(sin, sin) (HF apply_rotary_pos_emb);
               GPT-J: x·cos.repeat_interleave(2) + rotate_every_two(x)·sin.repeat_interleave(2) (GPT-J's
               apply_rotary_pos_emb); only the first rot_dim dims rotate, the rest pass through. Cache cases
               read cos and sin from the cache rows at the positions (vLLM).
q and k hold multiples of 2^-6 in [-4, 4] (exact in bf16, f16 and f32), so one case serves every kind.

Format: the golden format of docs/testing.md; params style (neox, gptj), source (computed, cache), scaling
(none, linear, ntk_aware, llama3, yarn), theta, factor, low_freq_factor, high_freq_factor,
original_max_position, beta_fast, beta_slow, mscale, mscale_all_dim, truncate, attention_factor (the factor
HF derives, f64), head_dim, rot_dim, max_position (cache cases); tensors positions (s64 [T]), q [T, H, D],
k [T, Hk, D], inv_freq and inv_freq_f64 (f32, f64 [d/2]), cos_sin_cache (cache cases, f32 [P, d]), q_out,
k_out (f32).
"""

import math
import os
import struct

import torch

import golden_json

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "rope_golden.json")
SEED = 20261127


def f32_bits(t):
    return [struct.unpack("<I", struct.pack("<f", float(v)))[0] for v in t.contiguous().reshape(-1).tolist()]


def f64_bits(t):
    return [struct.unpack("<Q", struct.pack("<d", float(v)))[0] for v in t.contiguous().reshape(-1).tolist()]


def default_inv_freq(base, dim, dtype):
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(dtype) / dim))


def llama3_inv_freq(p, dim, dtype):
    inv_freq = default_inv_freq(p["theta"], dim, dtype)
    factor, low_freq_factor, high_freq_factor = p["factor"], p["low_freq_factor"], p["high_freq_factor"]
    old_context_len = p["original_max_position"]
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth_factor = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    smoothed_inv_freq = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
    is_medium_freq = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    return torch.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)


def get_mscale(scale, mscale=1):
    if scale <= 1:
        return 1.0
    return 0.1 * mscale * math.log(scale) + 1.0


def yarn_attention_factor(p):
    if p["mscale"] and p["mscale_all_dim"]:
        return float(get_mscale(p["factor"], p["mscale"]) / get_mscale(p["factor"], p["mscale_all_dim"]))
    return get_mscale(p["factor"])


def yarn_inv_freq(p, dim, dtype):
    base, factor = p["theta"], p["factor"]

    def find_correction_dim(num_rotations):
        return (dim * math.log(p["original_max_position"] / (num_rotations * 2 * math.pi))) / (2 * math.log(base))

    low = find_correction_dim(p["beta_fast"])
    high = find_correction_dim(p["beta_slow"])
    if p["truncate"]:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    ramp = torch.clamp((torch.arange(dim // 2, dtype=dtype) - low) / (high - low), 0, 1)
    pos_freqs = base ** (torch.arange(0, dim, 2).to(dtype) / dim)
    inv_freq_extrapolation = 1.0 / pos_freqs
    inv_freq_interpolation = 1.0 / (factor * pos_freqs)
    extrapolation_factor = 1 - ramp
    return inv_freq_interpolation * (1 - extrapolation_factor) + inv_freq_extrapolation * extrapolation_factor


def inv_freq_of(p, dtype):
    d = p["rot_dim"]
    s = p["scaling"]
    if s == "none":
        return default_inv_freq(p["theta"], d, dtype)
    if s == "linear":
        return default_inv_freq(p["theta"], d, dtype) / p["factor"]
    if s == "ntk_aware":
        return default_inv_freq(p["theta"] * p["factor"] ** (d / (d - 2)), d, dtype)
    if s == "llama3":
        return llama3_inv_freq(p, d, dtype)
    return yarn_inv_freq(p, d, dtype)


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def rotate_every_two(x):
    x1, x2 = x[..., ::2], x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


def apply(x, cos, sin, style, rot):
    """x [T, H, D]; cos, sin [T, rot/2] (float32)."""
    x_rot, x_pass = x[..., :rot], x[..., rot:]
    if style == "neox":
        c, s = torch.cat((cos, cos), dim=-1), torch.cat((sin, sin), dim=-1)
        y = x_rot * c[:, None, :] + rotate_half(x_rot) * s[:, None, :]
    else:
        c, s = cos.repeat_interleave(2, dim=-1), sin.repeat_interleave(2, dim=-1)
        y = x_rot * c[:, None, :] + rotate_every_two(x_rot) * s[:, None, :]
    return torch.cat((y, x_pass), dim=-1)


def make_case(gen, name, **kw):
    p = dict(style="neox", source="computed", scaling="none", theta=10000.0, factor=1.0, low_freq_factor=1.0,
             high_freq_factor=4.0, original_max_position=8192, beta_fast=32.0, beta_slow=1.0, mscale=0.0,
             mscale_all_dim=0.0, truncate=True, head_dim=64, rot_dim=64, max_position=0, tokens=5, heads=2,
             kv_heads=1, max_pos_value=4096)
    p.update(kw)
    t, h, hk, d, rot = p["tokens"], p["heads"], p["kv_heads"], p["head_dim"], p["rot_dim"]
    positions = torch.randint(0, p.pop("max_pos_value"), (t,), generator=gen, dtype=torch.int64)
    if p.pop("negative", False):
        positions[1] = -3
    q = torch.randint(-256, 257, (t, h, d), generator=gen).float() / 64
    k = torch.randint(-256, 257, (t, hk, d), generator=gen).float() / 64
    m = yarn_attention_factor(p) if p["scaling"] == "yarn" else 1.0
    inv = inv_freq_of(p, torch.float32)
    inv64 = inv_freq_of(p, torch.float64)
    tensors = {"positions": golden_json.tensor("s64", positions.tolist()),
               "q": golden_json.tensor("f32", f32_bits(q), list(q.shape)),
               "k": golden_json.tensor("f32", f32_bits(k), list(k.shape)),
               "inv_freq": golden_json.tensor("f32", f32_bits(inv)),
               "inv_freq_f64": golden_json.tensor("f64", f64_bits(inv64))}
    if p["source"] == "cache":
        rows = torch.arange(p["max_position"], dtype=torch.float32)
        freqs = torch.einsum("i,j -> ij", rows, inv)
        cache = torch.cat((freqs.cos() * m, freqs.sin() * m), dim=-1)
        cos, sin = cache[positions, : rot // 2], cache[positions, rot // 2 :]
        tensors["cos_sin_cache"] = golden_json.tensor("f32", f32_bits(cache), list(cache.shape))
    else:
        freqs = positions.float()[:, None] * inv[None, :]
        cos, sin = freqs.cos() * m, freqs.sin() * m
    q_out = apply(q, cos, sin, p["style"], rot)
    k_out = apply(k, cos, sin, p["style"], rot)
    assert q_out.dtype == torch.float32 and torch.equal(q_out[..., rot:], q[..., rot:])
    # The f64 evaluation agrees with the f32 one to f32 rounding at these positions (a check of the script).
    f64 = apply(q.double(), (positions.double()[:, None] * inv.double()[None, :]).cos() * m,
                (positions.double()[:, None] * inv.double()[None, :]).sin() * m, p["style"], rot)
    if p["source"] == "computed":
        assert (f64 - q_out.double()).abs().max().item() < 1e-2, name
    tensors["q_out"] = golden_json.tensor("f32", f32_bits(q_out), list(q_out.shape))
    tensors["k_out"] = golden_json.tensor("f32", f32_bits(k_out), list(k_out.shape))
    params = {key: p[key] for key in ("style", "source", "scaling", "truncate", "head_dim", "rot_dim",
                                      "original_max_position", "max_position")}
    for key in ("theta", "factor", "low_freq_factor", "high_freq_factor", "beta_fast", "beta_slow", "mscale",
                "mscale_all_dim"):
        params[key] = golden_json.f64(p[key])
    params["attention_factor"] = golden_json.f64(m)
    return golden_json.case(name, params, tensors)


def main():
    gen = torch.Generator().manual_seed(SEED)
    cases = [
        make_case(gen, "neox default", negative=True),
        make_case(gen, "gptj default", style="gptj"),
        make_case(gen, "neox partial 32 of 80", head_dim=80, rot_dim=32),
        make_case(gen, "gptj partial 16 of 48", style="gptj", head_dim=48, rot_dim=16, kv_heads=3),
        make_case(gen, "neox linear 4", scaling="linear", factor=4.0),
        make_case(gen, "neox ntk_aware 2", scaling="ntk_aware", factor=2.0, head_dim=128, rot_dim=128),
        make_case(gen, "neox llama3.1", scaling="llama3", theta=500000.0, factor=8.0, head_dim=128, rot_dim=128,
                  max_pos_value=32768),
        make_case(gen, "gptj llama3.2", style="gptj", scaling="llama3", theta=500000.0, factor=32.0, head_dim=64,
                  rot_dim=64, max_pos_value=16384),
        make_case(gen, "neox yarn 4", scaling="yarn", factor=4.0, original_max_position=4096, max_pos_value=16384),
        make_case(gen, "gptj yarn deepseek", style="gptj", scaling="yarn", factor=40.0, original_max_position=4096,
                  mscale=1.0, mscale_all_dim=1.0, head_dim=64, rot_dim=64, max_pos_value=65536),
        make_case(gen, "neox yarn mscale 0.707", scaling="yarn", factor=40.0, original_max_position=4096,
                  mscale=0.707, mscale_all_dim=1.0),
        make_case(gen, "neox yarn no truncate", scaling="yarn", theta=150000.0, factor=32.0,
                  original_max_position=4096, truncate=False, max_pos_value=65536),
        make_case(gen, "neox cache", source="cache", max_position=40, max_pos_value=40),
        make_case(gen, "gptj cache partial", style="gptj", source="cache", head_dim=96, rot_dim=64,
                  max_position=24, max_pos_value=24),
        make_case(gen, "neox cache yarn", source="cache", scaling="yarn", factor=4.0, original_max_position=4096,
                  max_position=100, max_pos_value=100, tokens=3,
                  head_dim=16, rot_dim=16),
    ]
    notes = ["q_out and k_out are float32 results of HF's formulas in PyTorch (two rounded products and a rounded "
             "sum per element); inv_freq is HF's float32 computation, inv_freq_f64 the same formulas in float64",
             "cache cases: a cache case with a scaling holds vLLM's cos/sin of that scaling (times YaRN's "
             "attention factor); the plan reads it as a plain cache"]
    golden_json.write(OUT, "tests/data/gen_rope_golden.py", {"torch": torch.__version__}, notes, cases)


if __name__ == "__main__":
    main()
