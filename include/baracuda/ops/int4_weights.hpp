/// \file
/// \brief Host-side 4-bit weight preparation for W4A16 GEMMs: the int4 quantizer (vLLM's `quantize_weights`),
/// the Marlin tile layout (weight packing, scale and zero-point permutations, and their exact inverses), and
/// the GPTQ and AWQ checkpoint formats with their converters to Marlin. Everything here runs on the host,
/// offline (at model-load time); nothing launches a kernel. See docs/ops/int4_weights.md for the layouts with
/// their source references.
///
/// **Conventions (every function).**
/// - A weight is logically `[K, N]`, row-major: K = in_features (the reduction dimension), N = out_features —
///   the orientation GPTQ and AWQ checkpoints hold (the transpose of `nn.Linear.weight`).
/// - `q` holds one unsigned 4-bit value (0..15) per `uint8_t`, `[K, N]` row-major.
/// - Groups run along K: `group` rows share one scale (and zero point) per column. `group` is −1 (one group
///   of K rows, "per channel"), 32, 64 or 128, and K % group == 0. G = K / group (1 for −1); scales and zero
///   points are `[G, N]` row-major. With act-order (GPTQ `desc_act`) row k belongs to group `g_idx[k]`.
/// - Scales are IEEE binary16 (`__half`), as every one of these formats stores them; packed words are
///   `int32_t` holding 8 nibbles, nibble i at bits 4i..4i+3 (the bit pattern is what matters; values with the
///   top nibble ≥ 8 are negative int32, as in the checkpoints).
/// - Errors: every violated rule is `InvalidProblem` with a message naming the function and the rule; nothing
///   throws. Empty problems (K = 0 or N = 0) succeed with empty outputs.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "baracuda/core/element.hpp"
#include "baracuda/core/status.hpp"

namespace baracuda {

/// How 4-bit values encode a weight: one enumerator per `BARACUDA_INT4_SCHEME` line of the catalog
/// `baracuda/ops/int4_formats.def` — `Symmetric`, vLLM's `uint4b8` (GPTQ `sym=True`, Marlin without zero
/// points): stored q ∈ [0, 15], `w ≈ (q − 8) · s`, no zero points stored; `Asymmetric`, vLLM's `uint4` with
/// runtime zero points (AWQ, GPTQ `sym=False`): `w ≈ (q − z) · s`, z ∈ [0, 15] per group and column.
enum class Int4Scheme : uint8_t {
#define BARACUDA_INT4_SCHEME(name, Enum, zero_points, doc) Enum,
#include "baracuda/ops/int4_formats.def"
#undef BARACUDA_INT4_SCHEME
};
/// The number of schemes (valid values are 0 .. kNumInt4Schemes − 1).
inline constexpr size_t kNumInt4Schemes = 0
#define BARACUDA_INT4_SCHEME(name, Enum, zero_points, doc) +1
#include "baracuda/ops/int4_formats.def"
#undef BARACUDA_INT4_SCHEME
    ;
/// "symmetric", "asymmetric"; "?" outside the catalog.
std::string_view to_string(Int4Scheme s);
/// Whether `s` is one of the catalog's schemes.
constexpr bool is_int4_scheme(Int4Scheme s) { return static_cast<size_t>(s) < kNumInt4Schemes; }

/// The group sizes (K rows per scale group; −1: one group over all of K) every packer, converter and plan
/// accepts: the catalog's `BARACUDA_INT4_GROUP` lines.
inline constexpr int64_t kInt4Groups[] = {
#define BARACUDA_INT4_GROUP(rows, doc) rows,
#include "baracuda/ops/int4_formats.def"
#undef BARACUDA_INT4_GROUP
};
constexpr bool is_int4_group(int64_t g) {
  for (int64_t a : kInt4Groups)
    if (a == g) return true;
  return false;
}

/// The shape of a grouped int4 weight. `group` is the number of K rows per scale group: −1 (= K, one group),
/// 32, 64 or 128.
struct Int4Shape {
  int64_t k = 0;       ///< K, in_features (rows of the logical weight)
  int64_t n = 0;       ///< N, out_features (columns of the logical weight)
  int64_t group = -1;  ///< −1, 32, 64 or 128

  /// Rows per group: K for −1, else `group`.
  int64_t group_rows() const { return group == -1 ? k : group; }
  /// G = K / group_rows() (1 for group −1 with K > 0; 0 when K = 0).
  int64_t num_groups() const { return group_rows() > 0 ? k / group_rows() : 0; }
  /// Whether Marlin treats the scales as grouped (G > 1, the 64-entry permutation) rather than per channel
  /// (one group, the 32-entry permutation) — vLLM's `group_size < size_k and group_size != -1`.
  bool marlin_grouped() const { return group != -1 && group < k; }
};

/// A quantized weight in logical (unpacked) form: what the quantizer produces, what every packer consumes
/// and every unpacker returns.
struct Int4Weights {
  Int4Shape shape;
  Int4Scheme scheme = Int4Scheme::Symmetric;
  std::vector<uint8_t> q;       ///< [K, N] row-major, each 0..15
  std::vector<__half> scales;   ///< [G, N] row-major
  std::vector<uint8_t> zeros;   ///< [G, N] row-major, each 0..15, for Asymmetric; empty for Symmetric
  /// [K]: the group of each row (GPTQ act-order); empty means the plain grouping `k / group_rows()`.
  std::vector<int32_t> g_idx;
};

// ------------------------------------------------------------------------------------------------------
// Quantize / dequantize
// ------------------------------------------------------------------------------------------------------

/// Quantizes a float weight `w` (`[K, N]` f32, finite) to int4 with per-group f16 scales, using the formulas
/// of vLLM's `quantize_weights` (vllm/model_executor/layers/quantization/utils/quant_utils.py). Per group g
/// and column n, with `mx`/`mn` the largest/smallest w of the group's rows in that column (not widened to 0):
/// - Symmetric (uint4b8): `s = max(|mx / 7|, |mn / −8|)`;
///   `q = clamp(nearbyint(w / s), −8, 7) + 8`.
/// - Asymmetric (uint4): `s = max(mx − mn, 1e-5) / 15`; `z = clamp(nearbyint(|mn / s|), 0, 15)`;
///   `q = clamp(nearbyint(w / s) + z, 0, 15)`. (For mn > 0 vLLM's |mn / s| differs from AWQ's
///   `−round(mn / s)` clamped to 0; vLLM's is kept.)
///
/// Arithmetic: every operation is one f32 operation rounding to nearest even; `nearbyint` rounds half to
/// even (torch.round). The scale is computed in f32 and rounded once to f16 (RNE) — the scale the formats
/// store — and that f16 scale is the `s` used for z and q, so dequantize() reproduces exactly what a kernel
/// computes from the stored tensors. A symmetric scale that is 0 in f16 (an all-zero group, or one so small
/// it underflows) is stored as 1.0 (every q = 8, w ≈ 0); vLLM would divide by 0 there.
///
/// `g_idx` (optional, `[K]`, values in [0, G), every group non-empty) assigns rows to groups (act-order);
/// empty means `k / group_rows()`. It is copied into the result.
///
/// Rejects: a bad shape (negative, group not in {−1, 32, 64, 128}, K % group), an unknown scheme,
/// `w.size() != K·N`, a non-finite w, a g_idx of the wrong size, out of range or leaving a group empty, a
/// scale that overflows f16.
Result<Int4Weights> quantize_int4(std::span<const float> w, const Int4Shape& shape, Int4Scheme scheme,
                                  std::span<const int32_t> g_idx = {});

/// Dequantizes logical int4 weights: `w[k, n] = (q[k, n] − z) · s` with `s = scales[g, n]`,
/// `g = g_idx[k]` (or `k / group_rows()`), `z = zeros[g, n]` (Asymmetric) or 8 (Symmetric). Returns `[K, N]`
/// f32; every value is exact (|q − z| ≤ 15 times an f16 fits in f32's significand).
/// Rejects what `validate_int4_weights` rejects.
Result<std::vector<float>> dequantize_int4(const Int4Weights& w);

/// Checks the internal consistency of `w`: a valid shape, `q.size() == K·N`, `scales.size() == G·N`,
/// `zeros.size() == G·N` (Asymmetric) or 0 (Symmetric), every q and z ≤ 15, `g_idx` empty or `[K]` with values
/// in [0, G). `who` prefixes the message.
Status validate_int4_weights(const Int4Weights& w, std::string_view who = "validate_int4_weights");

// ------------------------------------------------------------------------------------------------------
// The Marlin layout
// ------------------------------------------------------------------------------------------------------

/// Packs `q` (`[K, N]`, 0..15) into Marlin's tile layout, as vLLM's `gptq_marlin_repack` /
/// `marlin_weights` produce it: int32 `[K/16, 2N]`. Requires K % 16 == 0 and N % 64 == 0.
///
/// Word `(kt, nb·128 + 4t + j)` (k-tile kt, 64-column block nb, lane t ∈ [0, 32), 16-column sub-tile
/// j ∈ [0, 4)) holds, in nibble p, the element at row `16kt + 2(t % 4) + {0, 1, 8, 9}[e % 4]` and column
/// `64nb + 16j + t/4 + 8·(e / 4)` with `e = {0, 2, 4, 6, 1, 3, 5, 7}[p]`: lane t's mma.m16n8k16 B fragment
/// for two adjacent n8 blocks, nibble-interleaved for the 0x6400 (1024.0 f16) dequantization trick.
Result<std::vector<int32_t>> marlin_pack(std::span<const uint8_t> q, int64_t k, int64_t n);

/// The exact inverse of `marlin_pack`: `[K/16, 2N]` int32 → q `[K, N]`. Same shape rules.
Result<std::vector<uint8_t>> marlin_unpack(std::span<const int32_t> packed, int64_t k, int64_t n);

/// Permutes f16 scales `[G, N]` into Marlin's order (vLLM's `marlin_permute_scales`): each run of 64 columns
/// of a row is permuted by `out[i] = in[i/8 + 8·(i%8)]` (an 8×8 transpose) when `shape.marlin_grouped()`,
/// else each run of 32 by `out[8a + b] = in[2a + {0, 1, 8, 9, 16, 17, 24, 25}[b]]`. Same shape; requires a
/// Marlin shape (K % 16, N % 64, a valid group).
Result<std::vector<__half>> marlin_permute_scales(std::span<const __half> scales, const Int4Shape& shape);

/// The exact inverse of `marlin_permute_scales`.
Result<std::vector<__half>> marlin_unpermute_scales(std::span<const __half> scales, const Int4Shape& shape);

/// Packs zero points `[G, N]` (0..15) for Marlin (vLLM's `marlin_zero_points`): each run of 64 columns is
/// permuted by the 64-entry (grouped) scale permutation whatever G is (zero points are applied on every mma),
/// then each run of 8 is reordered `{0, 2, 4, 6, 1, 3, 5, 7}`, then packed along N, 8 per word, position i
/// of a run in nibble i: int32 `[G, N/8]`. Requires a Marlin shape.
Result<std::vector<int32_t>> marlin_pack_zeros(std::span<const uint8_t> zeros, const Int4Shape& shape);

/// The exact inverse of `marlin_pack_zeros`: `[G, N/8]` → `[G, N]`.
Result<std::vector<uint8_t>> marlin_unpack_zeros(std::span<const int32_t> packed, const Int4Shape& shape);

/// Int4 weights in Marlin's layout: what a Marlin-style W4A16 GEMM consumes.
///
/// With act-order the rows are stored sorted by group: Marlin row i is input channel `perm[i]`, so the GEMM
/// computes `y = x[:, perm] · W_marlin` (it gathers the activation's columns by `perm`).
struct MarlinInt4Weights {
  Int4Shape shape;
  Int4Scheme scheme = Int4Scheme::Symmetric;
  std::vector<int32_t> qweight;  ///< [K/16, 2N] (marlin_pack of the row-sorted q)
  std::vector<__half> scales;    ///< [G, N] (marlin_permute_scales)
  std::vector<int32_t> zeros;    ///< [G, N/8] (marlin_pack_zeros) for Asymmetric; empty for Symmetric
  std::vector<int32_t> perm;     ///< [K] act-order row permutation (argsort of g_idx, stable); empty without
  std::vector<int32_t> g_idx;    ///< [K] the sorted g_idx (g_idx[perm[i]]) with act-order; empty without
};

/// GPTQ act-order's row order for Marlin (vLLM's `marlin_sort_g_idx`, made stable): the stable argsort of
/// `g_idx` (`[K]`, values in [0, G)), so that Marlin row i is input channel `perm[i]` and rows of equal group
/// keep their order. The `perm` that `Int4MarlinRepackPlan` and `Int4MarlinGemmPlan` take. Rejects a bad
/// shape, a g_idx of the wrong size or with a value out of range, and groups of unequal size (the Marlin GEMM
/// gives sorted row i the scales of group i / group_rows, so each group must hold exactly group_rows rows, as
/// GPTQ's desc_act groups do).
Result<std::vector<int32_t>> marlin_act_order_perm(std::span<const int32_t> g_idx, const Int4Shape& shape);

/// Converts logical int4 weights to Marlin. With `act_order` and G > 1 the rows are sorted by `w.g_idx`
/// (stable: equal groups keep their order; vLLM's `marlin_sort_g_idx` uses torch.argsort) and `perm` /
/// `g_idx` are returned; with a single group act-order is ignored, as vLLM ignores `desc_act` with
/// group −1. Without `act_order`, `w.g_idx` must be empty or the plain grouping. Requires a Marlin shape.
Result<MarlinInt4Weights> marlin_from_int4(const Int4Weights& w, bool act_order);

/// A view of Marlin tensors (e.g. loaded from disk); field meanings as in `MarlinInt4Weights`.
struct MarlinInt4View {
  std::span<const int32_t> qweight;
  std::span<const __half> scales;
  std::span<const int32_t> zeros;  ///< empty for Symmetric
  std::span<const int32_t> perm;   ///< empty without act-order
  std::span<const int32_t> g_idx;  ///< the sorted g_idx with act-order; empty without
};

/// The exact inverse of `marlin_from_int4`: logical weights in the original row order. With `perm`, row
/// `perm[i]` of the result is Marlin row i and `g_idx[perm[i]] = m.g_idx[i]` (both must then be given, `perm`
/// a permutation of [0, K)); without, the rows are as stored and `g_idx` is empty. Rejects sizes that do not
/// match `shape`, and what `validate_int4_weights` rejects.
Result<Int4Weights> int4_from_marlin(const MarlinInt4View& m, const Int4Shape& shape, Int4Scheme scheme);

// ------------------------------------------------------------------------------------------------------
// Checkpoint formats
// ------------------------------------------------------------------------------------------------------

/// A GPTQ checkpoint's tensors (AutoGPTQ `qlinear_cuda_old` / exllama, 4-bit), owned.
/// - qweight: int32 `[K/8, N]`, packed along K: nibble i of word (r, n) is q[8r + i, n].
/// - qzeros:  int32 `[G, N/8]`, packed along N: nibble i of word (g, c) is `(z[g, 8c + i] − 1) & 15`
///   (GPTQ stores zero − 1; every kernel adds 1 back). Symmetric weights store z = 8, i.e. 0x77777777.
/// - scales:  f16 `[G, N]`.
/// - g_idx:   int32 `[K]`: the group of each input channel (`k / group_rows()` without act-order).
struct GptqCheckpoint {
  Int4Shape shape;
  std::vector<int32_t> qweight;
  std::vector<int32_t> qzeros;
  std::vector<__half> scales;
  std::vector<int32_t> g_idx;
};

/// A view of GPTQ tensors (e.g. loaded from a safetensors file). `g_idx` may be empty (plain grouping).
struct GptqCheckpointView {
  std::span<const int32_t> qweight;
  std::span<const int32_t> qzeros;
  std::span<const __half> scales;
  std::span<const int32_t> g_idx;
};

/// An AWQ GEMM-format checkpoint's tensors (AutoAWQ `WQLinear_GEMM`, what vLLM's `awq` / `awq_marlin` load).
/// - qweight: int32 `[K, N/8]`, packed along N in AWQ's order: nibble i of word (k, c) is
///   `q[k, 8c + {0, 2, 4, 6, 1, 3, 5, 7}[i]]`.
/// - qzeros:  int32 `[G, N/8]`, the same packing of the raw zero points (no −1).
/// - scales:  f16 `[G, N]`.
struct AwqCheckpoint {
  Int4Shape shape;
  std::vector<int32_t> qweight;
  std::vector<int32_t> qzeros;
  std::vector<__half> scales;
};

/// A view of AWQ tensors.
struct AwqCheckpointView {
  std::span<const int32_t> qweight;
  std::span<const int32_t> qzeros;
  std::span<const __half> scales;
};

/// Packs logical weights into GPTQ's format. Symmetric weights store z = 8 (qzeros 0x77777777); Asymmetric
/// zero points must be 1..15 (z = 0 cannot be stored as z − 1 in a nibble; AutoGPTQ's own packer would
/// corrupt the word). `g_idx` is `w.g_idx` or the plain grouping. Requires K % 8 == 0, N % 8 == 0.
Result<GptqCheckpoint> gptq_pack(const Int4Weights& w);

/// Unpacks a GPTQ checkpoint into logical weights of `scheme`. Symmetric: the values of qzeros are not read
/// (vLLM's gptq_marlin ignores them too: GPTQ v1 stores 7s, GPTQ v2 8s; qzeros may be empty, else it must be
/// `[G, N/8]`), `zeros` stays empty. Asymmetric: z = nibble + 1, which must be ≤ 15. `g_idx` is copied when
/// given (checked: [K], values in [0, G)). Requires K % 8 == 0, N % 8 == 0.
Result<Int4Weights> gptq_unpack(const GptqCheckpointView& ckpt, const Int4Shape& shape, Int4Scheme scheme);

/// Packs logical weights into AWQ's GEMM format. Symmetric weights are stored with z = 8 (the same
/// dequantized values). `w.g_idx` must be empty or the plain grouping (AWQ has no act-order). Requires
/// N % 8 == 0.
Result<AwqCheckpoint> awq_pack(const Int4Weights& w);

/// Unpacks an AWQ GEMM checkpoint into Asymmetric logical weights (zeros as stored).
Result<Int4Weights> awq_unpack(const AwqCheckpointView& ckpt, const Int4Shape& shape);

/// GPTQ → Marlin (vLLM's gptq_marlin path: `gptq_marlin_repack` with the g_idx sort permutation,
/// `marlin_permute_scales`; for Asymmetric also the zero points, z = qzeros nibble + 1, through
/// `marlin_pack_zeros` — vLLM's GPTQ path only takes Symmetric). `act_order` as in `marlin_from_int4`.
Result<MarlinInt4Weights> gptq_to_marlin(const GptqCheckpointView& ckpt, const Int4Shape& shape,
                                         Int4Scheme scheme, bool act_order);

/// AWQ → Marlin (vLLM's awq_marlin path: `awq_marlin_repack`, `marlin_permute_scales`,
/// `awq_to_marlin_zero_points`). The result is Asymmetric.
Result<MarlinInt4Weights> awq_to_marlin(const AwqCheckpointView& ckpt, const Int4Shape& shape);

}  // namespace baracuda
