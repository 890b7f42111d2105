#!/usr/bin/python3
"""Generates tests/data/w4a16_golden.json: golden data for baracuda's 4-bit weight checkpoint formats (GPTQ, AWQ
GEMM, and vLLM's Marlin layout derived from either), written independently of baracuda's C++ in numpy.

    /usr/bin/python3 tests/data/gen_w4a16_golden.py     # numpy 1.24 (Debian); rewrites the file

The script is deterministic (fixed seeds); running it again rewrites the file byte for byte. It needs only numpy.
Every function below was written from reading the published sources named next to it (never copied); the
layout facts are restated here in prose so a reviewer can check them against those sources.

Notation: K = in_features, N = out_features. Weights are held as w[K, N], i.e. the transpose of nn.Linear's
weight, the way GPTQ and AWQ checkpoints hold them. G = group size along K (-1: one group over all of K).
q[k, n] is the stored unsigned 4-bit value (0..15); z[g, n] the raw zero point; s[g, n] the f16 scale;
dequantized w[k, n] = (q[k, n] - z[g(k), n]) * s[g(k), n], with z = 8 for symmetric (vLLM's uint4b8).

1. Quantizer (convention of vLLM's test quantizer, vllm-project/vllm
   vllm/model_executor/layers/quantization/utils/quant_utils.py quantize_weights(); type ranges from
   vllm/scalar_type.py: uint4b8 = uint4 with bias 8, value range [-8, 7]; uint4 range [0, 15]).
   baracuda's C++ quantizer must implement exactly this; the arithmetic is pinned as follows:
   * Input w is f16; every quantity below is computed in IEEE float32 from the f16 values (f32 division,
     never a reciprocal multiply); nearbyint = round half to even (torch.round / np.rint). The scale is rounded
     to f16 FIRST and the f16 scale (widened back to f32) is what q is computed from and what is stored.
   * Groups: rows k with g_idx[k] == g (g_idx[k] = k // G without act-order; see 4 with act-order).
     mx, mn = max and min of the group's w (f32, per output column n).
   * Symmetric (uint4b8):   s = f16( max(|mx / 7|, |mn / -8|) );  if s == 0 (all-zero group) then s = 1.0
                            q = clamp(nearbyint(w / s), -8, 7) + 8;  z = 8.
     (vLLM has no guard for an all-zero group -- it would divide 0 by 0 -- so s = 1 is ours, as DESIGN.md 7.)
   * Asymmetric (uint4):    r = max(mx - mn, 1e-5f);  s = f16(r / 15)
                            z = clamp(nearbyint(|mn / s|), 0, 15)
                            q = clamp(nearbyint(w / s) + z, 0, 15)      (z added after rounding, then clamped)
     The 1e-5 floor is vLLM's and AutoAWQ's (awq/quantize/quantizer.py); an all-zero group gets
     s = f16(1e-5f / 15) = 0x000b (an f16 subnormal), z = 0, q = 0. vLLM takes |mn / s|; AutoAWQ takes
     -round(mn / s) clamped to >= 0; they agree whenever mn <= 0, and the data here has mn <= 0 <= mx in every
     group (the script asserts it), so that difference is not exercised.
   * Dequantized reference: w_deq = float32(q - z) * float32(s), exact in f32 (a 5-bit integer times an 11-bit
     significand).
   * vLLM run on f16 tensors rounds every intermediate to f16 (w / s is rounded to f16 before torch.round, and
     for asym mx - mn is rounded to f16 before the / 15). The C++ side follows the f32 convention above; each
     case's comment line counts the elements where the all-f16 evaluation would give a different q or s
     (quotients within half an f16 ulp of a .5 tie).
   * Exact ties: some weights are replaced, after the scales are known, by w = (j + 0.5) * s (j in -4..3, only
     where that product is an exact f16 strictly inside the group's (mn, mx), so no scale or zero point
     changes); they pin round-half-to-even. Each case comment counts them.

2. GPTQ checkpoint format (AutoGPTQ/AutoGPTQ auto_gptq/nn_modules/qlinear/qlinear_cuda_old.py, QuantLinear.pack
   and the torch fallback in forward()):
   * qweight int32 [K/8, N], packed along K: word [r, n] holds q[8r + j, n] in bits 4j..4j+3 (j = 0..7,
     natural order, element 0 in the least significant nibble).
   * qzeros int32 [K/G, N/8], packed along N in natural order: word [g, c] holds (z[g, 8c + j] - 1) in bits 4j;
     every GPTQ kernel adds the 1 back. Symmetric 4-bit: z = 8 -> 7 -> 0x77777777.
     (With z = 0 AutoGPTQ's z - 1 = -1 spills into the other nibbles, so asymmetric cases carry no GPTQ tensors;
     vLLM's GPTQ-Marlin path is symmetric-only anyway.)
   * scales f16 [K/G, N]; g_idx int32 [K], the group of input channel k.
   * Act-order (desc_act): GPTQ processes input channels in the order perm = argsort of the Hessian diagonal,
     descending; the i-th processed channel belongs to group i // G, so g_idx[k] = invperm[k] // G
     (invperm = argsort(perm)); qweight rows stay in the ORIGINAL channel order k. (Read in GPTQModel's
     gptq.py / AutoGPTQ's quantization/gptq.py: g_idx = [i // G], then g_idx = g_idx[invperm].) Here the
     "Hessian diagonal" is a seeded random vector.

3. AWQ GEMM format (casper-hansen/AutoAWQ awq/modules/linear/gemm.py WQLinear_GEMM.from_linear,
   awq/utils/packing_utils.py unpack_awq / reverse_awq_order / dequantize_gemm):
   * qweight int32 [K, N/8], packed along N: nibble i (bits 4i..4i+3) of word [k, c] holds column
     8c + AWQ_ORDER[i], AWQ_ORDER = [0, 2, 4, 6, 1, 3, 5, 7] (inverse [0, 4, 1, 5, 2, 6, 3, 7]).
   * qzeros int32 [K/G, N/8], same packing and order, RAW zero points (no -1).
   * scales f16 [K/G, N]. No g_idx / act-order.

4. Marlin layout as vLLM produces it (vllm-project/vllm):
   csrc/quantization/gptq_marlin/gptq_marlin_repack.cu (from GPTQ qweight, optional perm),
   csrc/quantization/gptq_marlin/awq_marlin_repack.cu (from AWQ qweight), marlin.cuh (tile_k_size = 16,
   tile_n_size = 64), vllm/model_executor/layers/quantization/utils/marlin_utils.py (get_scale_perms,
   marlin_permute_scales, marlin_zero_points, awq_to_marlin_zero_points, marlin_sort_g_idx),
   marlin_utils_test.py (marlin_weights, get_weight_perm, marlin_quantize, awq_marlin_quantize) and
   kernels/mixed_precision/marlin.py (process_weights_after_loading: which of these a checkpoint goes through).
   * Weight: output int32 [K/16, 2N]. The weight is cut into tiles of 16 (k) x 64 (n); tile (kt, nt) occupies
     the 128 consecutive words starting at (kt * N/64 + nt) * 128, i.e. row kt of the output holds the N/64
     tiles of k-rows 16kt..16kt+15 one after another. Inside a tile, word lane * 4 + j (lane 0..31, j 0..3;
     j is the "warp" of the repack kernel and selects the 16-column sub-block 16j..16j+15) holds the eight
     values of lane's mma.m16n8k16 B fragments: with c = 16j + lane // 4 and r = 2 * (lane % 4), fragment
     element e (0..7) is q[16kt + r + [0, 1, 8, 9][e % 4], 64nt + c + 8 * (e // 4)] -- e = 0..3 for column c,
     e = 4..7 for column c + 8. Nibble i of the word holds element MARLIN_ORDER[i], MARLIN_ORDER =
     [0, 2, 4, 6, 1, 3, 5, 7] (the interleave of FasterTransformer's interleaved_numeric_conversion), so that
     (w & 0x000F000F) gives the half2 (e0, e1), (w & 0x00F000F0) the half2 (e2, e3), and after w >>= 8 the
     same masks give (e4, e5), (e6, e7) -- the dequant of csrc/quantization/gptq_marlin/dequant.h: OR with
     0x6400 makes the f16 1024 + v (low nibble) or 1024 + 16v (high nibble); 1024 + v - 1032 = v - 8 and
     (1024 + 16v) / 16 - 72 = v - 8 for uint4b8 (for uint4 the constants are 1024 and -64, giving v).
     The script checks this by decoding its Marlin words with exactly that f16 arithmetic.
   * With act-order the repack gathers rows: row position k of the Marlin weight is original input channel
     marlin_perm[k], marlin_perm = argsort(g_idx) (marlin_sort_g_idx). vLLM calls torch.argsort without
     stable=True, so the order INSIDE a group is unspecified (torch 1.13 CPU already differs from a stable sort
     on this data); any order is a valid Marlin weight as long as the activations are gathered with the same
     perm. The golden data pins a STABLE sort (ties in ascending k); the C++ packer must do the same to match.
     After the gather the rows of group g are contiguous (sorted g_idx = k // G), so the scales are NOT
     reordered by the act-order perm; they only get the column permutation below.
   * Scales: marlin_permute_scales(s [num_groups, N]): if G != -1 and G < K ("grouped"), each run of 64
     consecutive values of the row-major s is permuted with SCALE_PERM_64[p] = (p // 8) + 8 * (p % 8) (output
     position p takes input p' = SCALE_PERM_64[p]; an 8 x 8 transpose); otherwise (G = -1, or G = K) each run
     of 32 is permuted with SCALE_PERM_32 = [2i + o for i in 0..3 for o in (0, 1, 8, 9, 16, 17, 24, 25)].
     Shape stays [num_groups, N] f16.
   * Zero points (uint4 / AWQ only): marlin_zero_points(z [num_groups, N]): each run of 64 of the row-major
     raw z is permuted with SCALE_PERM_64 (ALWAYS the 64-entry perm, also for G = -1 or G = K -- unlike the
     scales), then each run of 8 is permuted with MARLIN_ORDER (position i takes element MARLIN_ORDER[i]), then
     packed along N in natural order (nibble i of word [g, c] = permuted value 8c + i). int32 [num_groups, N/8],
     raw values (no -1). awq_to_marlin_zero_points gets z from AWQ qzeros by undoing AWQ_ORDER first.
   * GPTQ route and AWQ route give the same Marlin words for the same q (checked here: both repack kernels are
     emulated, each from its own packed input, and compared with each other and with a vectorised gather).
   * vLLM (gptq_marlin.py / MarlinLinearKernel) treats desc_act with G = -1 as no act-order; the act-order case
     here has G < K.

File format: the golden format of docs/testing.md (tests/data/w4a16_golden.json), one case each with params
K, N, group, sym, act_order and these tensors (row-major; u16 = f16 bits, stored as kind f16; i32 = s32):
    w_f16 u16 [K,N]            the f16 input weight (in_features x out_features)
    q i32 [K,N]                stored 4-bit value 0..15 (uint4b8 for sym: value + 8)
    scales_f16 u16 [ng,N]      ng = K/G (1 for G = -1), group g = rows with g_idx == g
    zeros i32 [ng,N]           raw zero point (8 for sym)
    gptq_qweight i32 [K/8,N], gptq_qzeros i32 [ng,N/8], gptq_scales u16 [ng,N], gptq_g_idx i32 [K]     (sym only)
    awq_qweight i32 [K,N/8], awq_qzeros i32 [ng,N/8], awq_scales u16 [ng,N]          (no act-order; sym: z = 8)
    marlin_qweight i32 [K/16,2N], marlin_scales u16 [ng,N]
    marlin_zp i32 [ng,N/8]     (asym only)
    marlin_perm i32 [K]        (act-order only)
    w_deq_f32 f32 [K,N]        (q - z) * s in f32, original row order
"""

import os
import sys

import numpy as np

import golden_json

F16 = np.float16
F32 = np.float32
U32 = np.uint32

AWQ_ORDER = np.array([0, 2, 4, 6, 1, 3, 5, 7])         # AWQ: nibble i holds column AWQ_ORDER[i]
MARLIN_ORDER = np.array([0, 2, 4, 6, 1, 3, 5, 7])      # Marlin: nibble i holds fragment element MARLIN_ORDER[i]
FRAG_ROW = np.array([0, 1, 8, 9])                      # fragment element e % 4 -> k offset from 2*(lane%4)
SCALE_PERM_64 = np.array([(p // 8) + 8 * (p % 8) for p in range(64)])
SCALE_PERM_32 = np.array([2 * i + o for i in range(4) for o in (0, 1, 8, 9, 16, 17, 24, 25)])


# ----------------------------------------------------------------------------------------------- quantizer

def group_index(K, G, act_order, rng):
    """g_idx [K] and (for act-order) the GPTQ processing order perm. G = -1 -> one group."""
    Ge = K if G == -1 else G
    if not act_order:
        return (np.arange(K) // Ge).astype(np.int32), None
    hdiag = rng.random(K)                               # stand-in for diag(H)
    perm = np.argsort(-hdiag, kind="stable")            # descending importance
    invperm = np.argsort(perm, kind="stable")
    return (invperm // Ge).astype(np.int32), perm


def group_minmax(w32, g_idx, ng):
    mx = np.stack([w32[g_idx == g].max(axis=0) for g in range(ng)])
    mn = np.stack([w32[g_idx == g].min(axis=0) for g in range(ng)])
    return mx, mn


def quantize(w16, g_idx, ng, sym):
    """The f32 convention of the header (1). Returns q [K,N] int32 (stored, 0..15), s16 [ng,N], z [ng,N]."""
    w32 = w16.astype(F32)
    mx, mn = group_minmax(w32, g_idx, ng)
    if sym:
        s32 = np.maximum(np.abs(mx / F32(7)), np.abs(mn / F32(-8))).astype(F32)
        s16 = s32.astype(F16)
        s16[s16 == 0] = F16(1.0)
        z = np.full(s16.shape, 8, np.int32)
        sr = s16.astype(F32)[g_idx]
        q = np.clip(np.rint(w32 / sr), -8, 7).astype(np.int32) + 8
    else:
        r = np.maximum((mx - mn).astype(F32), F32(1e-5))
        s16 = (r / F32(15)).astype(F32).astype(F16)
        s32 = s16.astype(F32)
        z = np.clip(np.rint(np.abs(mn / s32)), 0, 15).astype(np.int32)
        q = np.clip(np.rint(w32 / s32[g_idx]).astype(np.int32) + z[g_idx], 0, 15).astype(np.int32)
    return q, s16, z


def quantize_all_f16(w16, g_idx, ng, sym):
    """vLLM's quantize_weights evaluated on f16 tensors: every op's result rounded to f16 (for the comment)."""
    mx = np.stack([w16[g_idx == g].max(axis=0) for g in range(ng)])
    mn = np.stack([w16[g_idx == g].min(axis=0) for g in range(ng)])
    if sym:
        s = np.maximum(np.abs(mx / F16(7)), np.abs(mn / F16(-8))).astype(F16)
        s[s == 0] = F16(1.0)
        z = np.full(s.shape, 8, np.int32)
        q = np.clip(np.rint((w16 / s[g_idx]).astype(F16)), -8, 7).astype(np.int32) + 8
    else:
        r = np.maximum((mx - mn).astype(F16), F16(1e-5))
        s = (r / F16(15)).astype(F16)
        z = np.clip(np.rint(np.abs((mn / s).astype(F16))), 0, 15).astype(np.int32)
        q = np.clip(np.rint((w16 / s[g_idx]).astype(F16)).astype(np.int32) + z[g_idx], 0, 15).astype(np.int32)
    return q, s, z


def dequant(q, s16, z, g_idx):
    return (q - z[g_idx]).astype(F32) * s16.astype(F32)[g_idx]


# ----------------------------------------------------------------------------------------------- weights

def make_weights(K, N, seed, zero_col, shift_col, row_outlier, g_idx, ng):
    """Non-uniform f16 weights: normal, per-column magnitude over a decade, a few large outliers, one input
    channel scaled up, one all-zero output column, one column with a positive mean. Every group of every
    non-zero column has min < 0 < max."""
    rng = np.random.default_rng(seed)
    col_mag = 10.0 ** rng.uniform(-2.0, -1.0, N)
    w = rng.standard_normal((K, N)) * col_mag
    w[:, shift_col] += 1.2 * col_mag[shift_col]
    w[row_outlier, :] *= 4.0
    for _ in range(6):
        k, n = rng.integers(K), rng.integers(N)
        w[k, n] = rng.choice([-1.0, 1.0]) * rng.uniform(8.0, 15.0) * col_mag[n]
    w[:, zero_col] = 0.0
    w16 = w.astype(F16)
    for g in range(ng):
        rows = np.nonzero(g_idx == g)[0]
        for n in range(N):
            if n == zero_col:
                continue
            col = w16[rows, n]
            if col.min() >= 0:
                i = rows[np.argmin(col)]
                w16[i, n] = -w16[i, n] if w16[i, n] != 0 else F16(-col_mag[n])
            col = w16[rows, n]
            if col.max() <= 0:
                i = rows[np.argmax(col)]
                w16[i, n] = -w16[i, n] if w16[i, n] != 0 else F16(col_mag[n])
    return w16, rng


def inject_ties(w16, g_idx, ng, sym, rng, zero_col):
    """Replace some weights by exact ties w = (j + 0.5) * s; keeps every group's min/max (so s, z) unchanged."""
    q, s16, z = quantize(w16, g_idx, ng, sym)
    w = w16.copy()
    w32 = w16.astype(F32)
    mx, mn = group_minmax(w32, g_idx, ng)
    K, N = w.shape
    for g in range(ng):
        rows = np.nonzero(g_idx == g)[0]
        for n in range(N):
            if n == zero_col or rng.random() >= 0.3:
                continue
            k = rows[rng.integers(len(rows))]
            if w32[k, n] in (mx[g, n], mn[g, n]):
                continue
            j = int(rng.integers(-4, 4))
            t = (j + 0.5) * float(s16[g, n])
            if F16(t).astype(np.float64) != t:          # not an exact f16
                continue
            if not (mn[g, n] < t < mx[g, n]):
                continue
            w[k, n] = F16(t)
    q2, s2, z2 = quantize(w, g_idx, ng, sym)
    assert np.array_equal(s2.view(np.uint16), s16.view(np.uint16)) and np.array_equal(z2, z)
    quot = w.astype(F32) / s2.astype(F32)[g_idx]
    ties = int(np.count_nonzero(np.abs(quot - np.floor(quot)) == 0.5))
    return w, ties


# ----------------------------------------------------------------------------------------------- GPTQ / AWQ

def nib(words, i):
    return (words.astype(U32) >> U32(4 * i)) & U32(0xF)


def gptq_pack_qweight(q):
    K, N = q.shape
    out = np.zeros((K // 8, N), U32)
    for j in range(8):
        out |= (q[j::8, :].astype(U32) & U32(0xF)) << U32(4 * j)
    return out


def gptq_unpack_qweight(qw):
    K8, N = qw.shape
    q = np.zeros((K8 * 8, N), np.int32)
    for j in range(8):
        q[j::8, :] = nib(qw, j)
    return q


def gptq_pack_qzeros(z):
    ng, N = z.shape
    zm1 = z - 1
    assert zm1.min() >= 0, "GPTQ stores z - 1; z = 0 is not representable by AutoGPTQ's packer"
    out = np.zeros((ng, N // 8), U32)
    for j in range(8):
        out |= zm1[:, j::8].astype(U32) << U32(4 * j)
    return out


def gptq_unpack_qzeros(qz):
    ng, N8 = qz.shape
    z = np.zeros((ng, N8 * 8), np.int32)
    for j in range(8):
        z[:, j::8] = nib(qz, j).astype(np.int32) + 1
    return z


def awq_pack(v):
    """v [R, N] -> int32 [R, N/8]; nibble i of word [r, c] = v[r, 8c + AWQ_ORDER[i]]."""
    R, N = v.shape
    out = np.zeros((R, N // 8), U32)
    for i in range(8):
        out |= (v[:, AWQ_ORDER[i]::8].astype(U32) & U32(0xF)) << U32(4 * i)
    return out


def awq_unpack(words):
    R, N8 = words.shape
    v = np.zeros((R, N8 * 8), np.int32)
    for i in range(8):
        v[:, AWQ_ORDER[i]::8] = nib(words, i)
    return v


# ----------------------------------------------------------------------------------------------- Marlin

def marlin_repack_from_gptq(qweight, K, N, perm=None):
    """Emulates gptq_marlin_repack_kernel thread by thread (warp = 16-column block, lane = fragment owner)."""
    n_tiles = N // 64
    out = np.zeros((K // 16) * n_tiles * 128, U32)
    for kt in range(K // 16):
        for nt in range(n_tiles):
            for warp in range(4):
                for lane in range(32):
                    col = nt * 64 + warp * 16 + lane // 4
                    vals = []
                    for cofs in (0, 8):
                        for ro in FRAG_ROW:
                            kpos = kt * 16 + 2 * (lane % 4) + ro
                            src = kpos if perm is None else int(perm[kpos])
                            vals.append((int(qweight[src // 8, col + cofs]) >> (4 * (src % 8))) & 0xF)
                    word = 0
                    for i in range(8):
                        word |= vals[MARLIN_ORDER[i]] << (4 * i)
                    out[(kt * n_tiles + nt) * 128 + lane * 4 + warp] = word
    return out.reshape(K // 16, 2 * N)


def marlin_repack_from_awq(awq_qweight, K, N):
    """Emulates awq_marlin_repack_kernel: reads the AWQ word of column c and undoes AWQ_ORDER per nibble."""
    undo = np.argsort(AWQ_ORDER)                         # column position -> nibble index
    n_tiles = N // 64
    out = np.zeros((K // 16) * n_tiles * 128, U32)
    for kt in range(K // 16):
        for nt in range(n_tiles):
            for warp in range(4):
                for lane in range(32):
                    col = nt * 64 + warp * 16 + lane // 4
                    vals = []
                    for cofs in (0, 8):
                        c = col + cofs
                        for ro in FRAG_ROW:
                            k = kt * 16 + 2 * (lane % 4) + ro
                            vals.append((int(awq_qweight[k, c // 8]) >> (4 * int(undo[c % 8]))) & 0xF)
                    word = 0
                    for i in range(8):
                        word |= vals[MARLIN_ORDER[i]] << (4 * i)
                    out[(kt * n_tiles + nt) * 128 + lane * 4 + warp] = word
    return out.reshape(K // 16, 2 * N)


def marlin_gather(q_rows, K, N):
    """Vectorised: for every output word and nibble, the (k, n) it holds, gathered from unpacked q."""
    n_tiles = N // 64
    kt, nt, lane, j, i = np.meshgrid(np.arange(K // 16), np.arange(n_tiles), np.arange(32), np.arange(4),
                                     np.arange(8), indexing="ij")
    e = MARLIN_ORDER[i]
    k = kt * 16 + 2 * (lane % 4) + FRAG_ROW[e % 4]
    n = nt * 64 + 16 * j + lane // 4 + 8 * (e // 4)
    v = q_rows[k, n].astype(U32) << (U32(4) * i.astype(U32))
    words = np.bitwise_or.reduce(v, axis=-1)             # [kt, nt, lane, j]
    return words.reshape(K // 16, 2 * N)


def marlin_decode_f16(mq, K, N, sym):
    """Decodes Marlin words the way dequant.h does (f16 magic 0x6400) into the mma B fragments and places
    each fragment element at its (k, n); returns v - 8 (sym, uint4b8) or v (uint4) per position."""
    n_tiles = N // 64
    out = np.full((K, N), 99, np.int32)
    sub = F16(1032.0) if sym else F16(1024.0)
    add = F16(-72.0) if sym else F16(-64.0)
    words = mq.reshape(K // 16, n_tiles, 32, 4)
    for half_shift, cofs in ((0, 0), (8, 8)):
        w = words >> U32(half_shift)
        lo = ((w & U32(0x000F000F)) | U32(0x64006400))
        hi = ((w & U32(0x00F000F0)) | U32(0x64006400))
        lo_h = lo.astype("<u4").view("<u2").reshape(*lo.shape, 2).view(F16)    # [.., 2] = (low16, high16)
        hi_h = hi.astype("<u4").view("<u2").reshape(*hi.shape, 2).view(F16)
        f0 = (lo_h - sub).astype(F16)                                          # elements (e0, e1) / (e4, e5)
        f1 = (hi_h * F16(0.0625) + add).astype(F16)                            # (e2, e3) / (e6, e7)
        for kt in range(K // 16):
            for nt in range(n_tiles):
                for lane in range(32):
                    for j in range(4):
                        n = nt * 64 + 16 * j + lane // 4 + cofs
                        k0 = kt * 16 + 2 * (lane % 4)
                        out[k0 + 0, n] = int(f0[kt, nt, lane, j, 0])
                        out[k0 + 1, n] = int(f0[kt, nt, lane, j, 1])
                        out[k0 + 8, n] = int(f1[kt, nt, lane, j, 0])
                        out[k0 + 9, n] = int(f1[kt, nt, lane, j, 1])
    return out


def marlin_permute_scales(s16, K, N, G):
    grouped = G != -1 and G < K
    perm = SCALE_PERM_64 if grouped else SCALE_PERM_32
    return s16.reshape(-1, len(perm))[:, perm].reshape(-1, N)


def marlin_zero_points(z, N):
    zp = z.reshape(-1, 64)[:, SCALE_PERM_64]
    zp = zp.reshape(-1, 8)[:, MARLIN_ORDER].reshape(-1, N)
    out = np.zeros((zp.shape[0], N // 8), U32)
    for i in range(8):
        out |= zp[:, i::8].astype(U32) << U32(4 * i)
    return out


def awq_to_marlin_zero_points(awq_qzeros, ng, N):
    raw = np.zeros((ng, N), np.int32)
    for i in range(8):                                   # natural unpack: nibble i -> position 8c + i
        raw[:, i::8] = nib(awq_qzeros, i)
    z = raw.reshape(-1, 8)[:, np.argsort(AWQ_ORDER)].reshape(ng, N)
    return marlin_zero_points(z, N)


# ----------------------------------------------------------------------------------------------- cases

CASES = [
    # name, K, N, G, sym, act_order, seed
    ("gptq_sym_g128_k256_n64", 256, 64, 128, 1, 0, 101),
    ("gptq_sym_gm1_k128_n64", 128, 64, -1, 1, 0, 102),
    ("gptq_sym_g32_act_k128_n64", 128, 64, 32, 1, 1, 103),
    ("awq_asym_g64_k128_n128", 128, 128, 64, 0, 0, 104),
    ("awq_asym_g128eqk_k128_n64", 128, 64, 128, 0, 0, 105),
]


def golden_tensor(kind, a):
    """The golden tensor (docs/testing.md) of array a: u16 = f16 bits, f32, i32 = s32 values (words as int32)."""
    a = np.asarray(a)
    if kind == "u16":
        bits = a.view(np.uint16) if a.dtype == F16 else a.astype(np.uint16)
        return golden_json.tensor("f16", bits.reshape(-1), a.shape)
    if kind == "f32":
        return golden_json.tensor("f32", a.astype(F32).view(np.uint32).reshape(-1), a.shape)
    return golden_json.tensor("s32", (a.astype(np.int64) & 0xFFFFFFFF).astype(np.uint32).view(np.int32).reshape(-1),
                              a.shape)


def build_case(name, K, N, G, sym, act, seed):
    assert K % 128 == 0 and N % 64 == 0 and (G == -1 or K % G == 0)
    ng = 1 if G == -1 else K // G
    grng = np.random.default_rng(seed + 1000)
    g_idx, gptq_perm = group_index(K, G, act, grng)
    zero_col = (seed * 7) % N
    shift_col = (zero_col + N // 2 + 3) % N
    row_outlier = (seed * 13) % K
    w16, rng = make_weights(K, N, seed, zero_col, shift_col, row_outlier, g_idx, ng)
    w16, ties = inject_ties(w16, g_idx, ng, sym, rng, zero_col)

    w32 = w16.astype(F32)
    mx, mn = group_minmax(w32, g_idx, ng)
    nz = np.ones(N, bool)
    nz[zero_col] = False
    assert (mn[:, nz] < 0).all() and (mx[:, nz] > 0).all()

    q, s16, z = quantize(w16, g_idx, ng, sym)
    assert q.min() >= 0 and q.max() <= 15
    wdq = dequant(q, s16, z, g_idx)
    # all-zero column: sym s = 1, q = 8; asym s = f16(1e-5/15), z = 0, q = 0
    if sym:
        assert (s16[:, zero_col] == F16(1.0)).all() and (q[:, zero_col] == 8).all()
    else:
        assert (s16[:, zero_col].view(np.uint16) == F16(F32(1e-5) / F32(15)).view(np.uint16)).all()
        assert (z[:, zero_col] == 0).all() and (q[:, zero_col] == 0).all()
    # error bound: |w - w_deq| <= s/2 except where clamped
    err = np.abs(w32 - wdq) / s16.astype(F32)[g_idx]
    clamped = int(np.count_nonzero(err > 0.5 + 1e-6))

    qa, sa, za = quantize_all_f16(w16, g_idx, ng, sym)
    diff_q = int(np.count_nonzero(qa != q))
    diff_s = int(np.count_nonzero(sa.view(np.uint16) != s16.view(np.uint16)))
    diff_z = int(np.count_nonzero(za != z))

    tensors = [("w_f16", "u16", w16), ("q", "i32", q), ("scales_f16", "u16", s16), ("zeros", "i32", z)]

    # ---- GPTQ (sym only)
    gptq_qw = gptq_pack_qweight(q)
    assert np.array_equal(gptq_unpack_qweight(gptq_qw), q)
    if sym:
        gptq_qz = gptq_pack_qzeros(z)
        assert np.array_equal(gptq_unpack_qzeros(gptq_qz), z) and (gptq_qz == U32(0x77777777)).all()
        # dequant through the GPTQ tensors only (g_idx indexes scales / zeros)
        gd = (gptq_unpack_qweight(gptq_qw) - gptq_unpack_qzeros(gptq_qz)[g_idx]).astype(F32) * \
            s16.astype(F32)[g_idx]
        assert np.array_equal(gd.view(U32), wdq.view(U32))
        tensors += [("gptq_qweight", "i32", gptq_qw), ("gptq_qzeros", "i32", gptq_qz),
                    ("gptq_scales", "u16", s16), ("gptq_g_idx", "i32", g_idx)]

    # ---- AWQ (no act-order)
    if not act:
        awq_qw = awq_pack(q)
        awq_qz = awq_pack(z)
        assert np.array_equal(awq_unpack(awq_qw), q) and np.array_equal(awq_unpack(awq_qz), z)
        # AWQ order spot check: nibble 1 of word (k, 0) is column 2, nibble 4 is column 1
        assert int(nib(awq_qw[0:1, 0:1], 1)[0, 0]) == q[0, 2] and int(nib(awq_qw[0:1, 0:1], 4)[0, 0]) == q[0, 1]
        ad = (awq_unpack(awq_qw) - np.repeat(awq_unpack(awq_qz), K // ng, axis=0)).astype(F32) * \
            np.repeat(s16.astype(F32), K // ng, axis=0)
        assert np.array_equal(ad.view(U32), wdq.view(U32))
        tensors += [("awq_qweight", "i32", awq_qw), ("awq_qzeros", "i32", awq_qz), ("awq_scales", "u16", s16)]

    # ---- Marlin
    if act:
        marlin_perm = np.argsort(g_idx, kind="stable").astype(np.int32)
        assert np.array_equal(g_idx[marlin_perm], np.arange(K) // G)
        q_rows = q[marlin_perm]
        mq = marlin_repack_from_gptq(gptq_qw, K, N, marlin_perm)
    else:
        marlin_perm = None
        q_rows = q
        mq = marlin_repack_from_gptq(gptq_qw, K, N)
        mq_awq = marlin_repack_from_awq(awq_pack(q), K, N)
        assert np.array_equal(mq, mq_awq), "GPTQ and AWQ routes to Marlin disagree"
    assert np.array_equal(mq, marlin_gather(q_rows, K, N)), "repack emulation and gather disagree"
    dec = marlin_decode_f16(mq, K, N, sym)
    assert np.array_equal(dec, q_rows - (8 if sym else 0)), "f16 dequant decode of Marlin words failed"
    ms = marlin_permute_scales(s16, K, N, G)
    chunk = 64 if (G != -1 and G < K) else 32
    assert np.array_equal(np.sort(ms.reshape(-1, chunk), axis=1), np.sort(s16.reshape(-1, chunk), axis=1))
    tensors += [("marlin_qweight", "i32", mq), ("marlin_scales", "u16", ms)]
    if not sym:
        mz = marlin_zero_points(z, N)
        assert np.array_equal(mz, awq_to_marlin_zero_points(awq_pack(z), ng, N))
        tensors += [("marlin_zp", "i32", mz)]
    if act:
        tensors += [("marlin_perm", "i32", marlin_perm)]
    tensors += [("w_deq_f32", "f32", wdq)]

    note = ("%s: seed %d; zero column n=%d, positive-mean column n=%d, input channel k=%d scaled x4, 6 outliers; "
            "%d exact ties (w/s = j + 0.5); %d elements clamped (|w - w_deq| > s/2); all-f16 evaluation of the "
            "quantizer would differ in %d q, %d s, %d z" % (name, seed, zero_col, shift_col, row_outlier, ties, clamped,
                                                           diff_q, diff_s, diff_z))
    if act:
        note += "; act-order: g_idx = invperm // G of a seeded GPTQ channel order; marlin_perm = stable argsort(g_idx)"
    params = {"K": K, "N": N, "group": G, "sym": bool(sym), "act_order": bool(act)}
    return note, golden_json.case(name, params, {t[0]: golden_tensor(t[1], t[2]) for t in tensors})


def self_checks():
    # scale perms are permutations; AWQ inverse order as published
    assert sorted(SCALE_PERM_64.tolist()) == list(range(64)) and sorted(SCALE_PERM_32.tolist()) == list(range(32))
    assert SCALE_PERM_64[:9].tolist() == [0, 8, 16, 24, 32, 40, 48, 56, 1]
    assert SCALE_PERM_32[:9].tolist() == [0, 1, 8, 9, 16, 17, 24, 25, 2]
    assert np.argsort(AWQ_ORDER).tolist() == [0, 4, 1, 5, 2, 6, 3, 7]
    # the f16 magic of dequant.h gives v - 8 (uint4b8) and v (uint4) for every nibble
    for v in range(16):
        lo = F16(np.uint16(0x6400 | v).view(F16))
        hi = F16(np.uint16(0x6400 | (v << 4)).view(F16))
        assert float(lo - F16(1032)) == v - 8 and float(hi * F16(0.0625) + F16(-72)) == v - 8
        assert float(lo - F16(1024)) == v and float(hi * F16(0.0625) + F16(-64)) == v


def main():
    self_checks()
    here = os.path.dirname(os.path.abspath(__file__))
    notes = [
        "Golden data for baracuda's 4-bit weight formats: GPTQ (AutoGPTQ), AWQ GEMM (AutoAWQ) and vLLM's Marlin "
        "layout (numpy, independent of baracuda's C++); the generator's docstring states the quantizer convention "
        "and every layout fact, with the source files they follow.",
    ]
    cases = []
    for c in CASES:
        note, case = build_case(*c)
        notes.append(note)
        cases.append(case)
    path = os.path.join(here, "w4a16_golden.json")
    golden_json.write(path, "tests/data/gen_w4a16_golden.py", {"numpy": np.__version__}, notes, cases)
    print("wrote %s (%d bytes)" % (path, os.path.getsize(path)), file=sys.stderr)


if __name__ == "__main__":
    main()
