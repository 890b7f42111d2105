/// \file
/// \brief `RopePlan`: rotary position embedding of q and k (one launch for
/// both), forward and backward (the inverse rotation), NeoX or GPT-J pairing,
/// partial rotary, cos/sin from a cache or computed on the device from θ with
/// the scalings models use.
///
/// - **Operands.** `q` `[num_tokens, num_heads, head_dim]` and, when
/// `num_kv_heads > 0`, `k`
///   `[num_tokens, num_kv_heads, head_dim]` (GQA/MQA: any head counts), both of
///   the descriptor's kind; `positions` `[num_tokens]`, s32 or s64
///   (`position_kind`), one position per token, any values (packed or
///   variable-length batches: the caller's position ids, not an arange);
///   `q_out` and `k_out` of q's and k's shapes, written. Every view takes any
///   strides (the last dimension too; 16-byte accesses where it is contiguous
///   and rows are aligned).
/// - **Rotation.** `rot_dim` (even, 2 ≤ rot_dim ≤ head_dim; 0 in the descriptor
/// means head_dim) dims of each
///   head rotate; dims `[rot_dim, head_dim)` pass through unchanged (copied
///   when out of place). With `half = rot_dim / 2`, pair j ∈ [0, half) of a
///   head is (a, b) = (j, j + half) for `NeoX` (rotate_half: HF Llama, vLLM
///   `is_neox`) and (2j, 2j + 1) for `GptJ` (interleaved: vLLM `is_neox=false`,
///   Meta's complex form). With c_j, s_j the pair's cosine and sine at the
///   token's position: `y_a = x_a·c − x_b·s`, `y_b = x_b·c + x_a·s`; with
///   `inverse`, `s` is negated: the transpose, i.e. the backward (dq, dk from
///   dq_out, dk_out), and the inverse of the forward (up to rounding) when c² +
///   s² = 1 (YaRN's attention factor m scales a forward-then-inverse by m², as
///   the gradient requires).
/// - **cos/sin from a cache** (`CosSinSource::Cache`): vLLM's `cos_sin_cache`
/// `[max_position, rot_dim]`, f32
///   or the activation kind (`cache_kind`), any strides: row p holds
///   c_0..c_{half−1} then s_0..s_{half−1}. A position outside [0, max_position)
///   is **clamped** to it (p < 0 reads row 0, p ≥ max_position row max_position
///   − 1): positions are device data that cannot be checked without a
///   synchronisation, and the clamp guarantees no access out of the cache's
///   bounds.
/// - **cos/sin computed** (`CosSinSource::Computed`, rot_dim ≤
/// `kRopeMaxComputedRotDim`): at select, on the
///   host, in long double from the formulas, each frequency rounded once to
///   f32: `inv_freq_j = θ^(−2j/rot_dim)` then the scaling (`RopeScaling`; L0 =
///   `original_max_position`, f = `factor`):
///   - `None`; `Linear`: inv/f;
///   - `NtkAware` (static NTK-aware): θ' = θ·f^(rot_dim/(rot_dim−2)) in place
///   of θ (HF's dynamic NTK at a
///     sequence length L > L0 is this with f' = f·L/L0 − (f − 1));
///   - `Llama3`: with λ = 2π/inv: λ < L0/`high_freq_factor` keeps inv, λ >
///   L0/`low_freq_factor` gives inv/f,
///     else s = (L0/λ − low)/(high − low) and (1 − s)·inv/f + s·inv (HF
///     `_compute_llama3_parameters`);
///   - `Yarn`: dim(r) = rot_dim·ln(L0/(2πr)) / (2 ln θ), low =
///   dim(`beta_fast`), high = dim(`beta_slow`)
///     (floor and ceil with `truncate`), clamped to [0, rot_dim − 1] (high +=
///     0.001 when equal); ramp_j = clamp((j − low)/(high − low), 0, 1), inv =
///     inv/f·ramp + inv·(1 − ramp); cos and sin are multiplied by the attention
///     factor m: `attention_factor` when > 0, else get_mscale(f,
///     mscale)/get_mscale(f, mscale_all_dim) when both are > 0, else
///     get_mscale(f, 1), with get_mscale(f, s) = 0.1·s·ln f + 1 (1 for f ≤ 1)
///     (HF `_compute_yarn_parameters`). m is rounded to f32.
///   The kernel then computes, in f32 as HF and vLLM do: the angle `θ_j =
///   f32(p)·inv_freq_j` (one f32 multiply; a position is exact in f32 up to
///   2^24), `c = cos(θ_j)·m`, `s = sin(θ_j)·m` (`sincosf`; m = 1 but for YaRN).
///   Frameworks compute inv_freq with several f32 roundings (a pow, a division,
///   the scaling's steps), so their frequencies may differ from these in the
///   last bit, which moves the angle at position p by up to p·2^−24·inv; a
///   caller who needs a framework's exact angles passes its cache. `inv_freq()`
///   and `attention_factor()` give the values select computed. Any position is
///   valid.
/// - **Math.** f16 and bf16 are read into f32; the rotation is `y_a = fma(x_a,
/// c, −f32(x_b·s))`,
///   `y_b = fma(x_b, c, f32(x_a·s))` in f32, rounded once to the kind. Cached
///   cos/sin are read exactly (f32, or a 16-bit cache widened). The host
///   reference evaluates cos, sin and the rotation in long double from the same
///   f32 angle and rounds once; the devices agree with it within a few f32 ulps
///   of the terms (sincosf is not correctly rounded) before the final rounding.
/// - **Dtypes:** q, k, q_out, k_out f16, bf16 or f32 (one kind); positions s32
/// or s64; the cache f32 or the
///   activation kind.
/// - **Aliasing:** in place is the normal use: `q_out` may be exactly `q` (same
/// data and strides) and `k_out`
///   exactly `k`; q and k may be views into one fused qkv buffer (their rows
///   interleave without sharing an element). Any other overlap of an output
///   with an operand, or of the two outputs, is rejected (row-exact when two
///   views have the same token stride, by byte spans otherwise).
/// - **Limits:** `(num_heads + num_kv_heads)·head_dim < 2^31`, `num_tokens <
/// 2^31`, rot_dim ≤
///   `kRopeMaxRotDim` (cos/sin of a token are staged in shared memory).
/// - **Workspace:** none. **Determinism:** every element is computed by one
/// thread from its pair alone:
///   the same bits on every run (and under CUDA-graph capture).
#pragma once

#include <cstdint>
#include <span>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/hash.hpp"
#include "baracuda/core/plan.hpp"
#include "baracuda/core/sku.hpp"
#include "baracuda/core/stream.hpp"
#include "baracuda/core/workspace.hpp"

namespace baracuda {

/// Which dims pair up (file comment).
enum class RopeStyle : uint8_t {
  NeoX = 0, ///< (j, j + rot_dim/2): rotate_half
  GptJ = 1, ///< (2j, 2j + 1): interleaved
};
/// "neox", "gptj".
std::string_view to_string(RopeStyle s);

/// Where cos and sin come from.
enum class CosSinSource : uint8_t {
  Computed = 0, ///< from θ and the scaling, on the device
  Cache = 1,    ///< from the caller's cos_sin_cache
};
/// "computed", "cache".
std::string_view to_string(CosSinSource s);

/// The frequency scaling of `CosSinSource::Computed` (file comment).
enum class RopeScaling : uint8_t {
  None = 0,
  Linear = 1,
  NtkAware = 2,
  Llama3 = 3,
  Yarn = 4,
};
/// "none", "linear", "ntk_aware", "llama3", "yarn".
std::string_view to_string(RopeScaling s);

/// Largest rot_dim (cos and sin of a token are staged in shared memory, 8 bytes
/// a pair).
inline constexpr int64_t kRopeMaxRotDim = 8192;
/// Largest rot_dim with computed cos/sin (the frequencies travel in the
/// launch's parameters).
inline constexpr int64_t kRopeMaxComputedRotDim = 512;

/// The problem. A hashable value.
struct RopeDescriptor {
  RopeStyle style = RopeStyle::NeoX;
  ElementKind element = ElementKind::F16;       ///< q, k: f16, bf16, f32
  ElementKind position_kind = ElementKind::S64; ///< s32 or s64
  int64_t num_tokens = 0;
  int64_t num_heads = 1;    ///< q's heads (≥ 1)
  int64_t num_kv_heads = 0; ///< k's heads; 0: no k
  int64_t head_dim = 128;
  int64_t rot_dim = 0;  ///< rotated dims (even, ≤ head_dim); 0: head_dim
  bool inverse = false; ///< rotate by −θ (the backward)
  CosSinSource source = CosSinSource::Computed;
  // Cache:
  ElementKind cache_kind = ElementKind::F32; ///< f32 or `element`
  int64_t max_position = 0;                  ///< the cache's rows (≥ 1)
  // Computed:
  double theta = 10000.0; ///< the base (> 1)
  RopeScaling scaling = RopeScaling::None;
  double factor = 1.0;           ///< Linear, NtkAware, Llama3, Yarn (> 0)
  double low_freq_factor = 1.0;  ///< Llama3
  double high_freq_factor = 4.0; ///< Llama3 (> low_freq_factor)
  int64_t original_max_position = 8192; ///< L0: Llama3, Yarn (≥ 1)
  double beta_fast = 32.0;              ///< Yarn (> 0)
  double beta_slow = 1.0;               ///< Yarn (> 0)
  double mscale = 0.0;                  ///< Yarn: DeepSeek's mscale (0: absent)
  double mscale_all_dim = 0.0; ///< Yarn: DeepSeek's mscale_all_dim (0: absent)
  double attention_factor =
      0.0; ///< Yarn: the attention factor itself (0: derived from factor)
  bool truncate =
      true; ///< Yarn: floor/ceil the correction range (HF's default)

  RopeDescriptor &with_style(RopeStyle s) {
    style = s;
    return *this;
  }
  RopeDescriptor &with_element(ElementKind k) {
    element = k;
    return *this;
  }
  RopeDescriptor &with_position_kind(ElementKind k) {
    position_kind = k;
    return *this;
  }
  /// Tokens, q heads, kv heads (0: no k) and head dim.
  RopeDescriptor &with_shape(int64_t tokens, int64_t heads, int64_t kv_heads,
                             int64_t dim) {
    num_tokens = tokens, num_heads = heads, num_kv_heads = kv_heads,
    head_dim = dim;
    return *this;
  }
  RopeDescriptor &with_rot_dim(int64_t r) {
    rot_dim = r;
    return *this;
  }
  RopeDescriptor &with_inverse(bool i) {
    inverse = i;
    return *this;
  }
  /// cos/sin from a `[max_position, rot_dim]` cache of `kind`.
  RopeDescriptor &with_cache(ElementKind kind, int64_t rows) {
    source = CosSinSource::Cache, cache_kind = kind, max_position = rows;
    return *this;
  }
  /// cos/sin computed from the base θ with `s` and its factor.
  RopeDescriptor &with_theta(double base, RopeScaling s = RopeScaling::None,
                             double f = 1.0) {
    source = CosSinSource::Computed, theta = base, scaling = s, factor = f;
    return *this;
  }
  /// Llama 3's scaling: factor, low and high frequency factors, original
  /// context.
  RopeDescriptor &with_llama3(double f, double low, double high,
                              int64_t original) {
    scaling = RopeScaling::Llama3, factor = f, low_freq_factor = low,
    high_freq_factor = high;
    original_max_position = original;
    return *this;
  }
  /// YaRN: factor, original context, β_fast, β_slow.
  RopeDescriptor &with_yarn(double f, int64_t original, double fast = 32.0,
                            double slow = 1.0) {
    scaling = RopeScaling::Yarn, factor = f, original_max_position = original,
    beta_fast = fast, beta_slow = slow;
    return *this;
  }
  RopeDescriptor &with_mscale(double m, double m_all_dim) {
    mscale = m, mscale_all_dim = m_all_dim;
    return *this;
  }
  RopeDescriptor &with_attention_factor(double a) {
    attention_factor = a;
    return *this;
  }
  RopeDescriptor &with_truncate(bool t) {
    truncate = t;
    return *this;
  }

  /// rot_dim as the plan uses it (head_dim when 0).
  int64_t rotary_dim() const { return rot_dim == 0 ? head_dim : rot_dim; }
  friend bool operator==(const RopeDescriptor &,
                         const RopeDescriptor &) = default;
  size_t hash() const {
    return detail::hash_fields(
        style, element, position_kind, num_tokens, num_heads, num_kv_heads,
        head_dim, rot_dim, inverse, source, cache_kind, max_position, theta,
        scaling, factor, low_freq_factor, high_freq_factor,
        original_max_position, beta_fast, beta_slow, mscale, mscale_all_dim,
        attention_factor, truncate);
  }
};

namespace detail {
struct RopeLaunch;
using RopeFn = Status (*)(const ExecContext &, const RopeLaunch &);
/// The computed frequencies (file comment), fixed at select.
struct RopeFrequencies {
  float inv_freq[kRopeMaxComputedRotDim / 2] = {};
  float attention_factor = 1.0f;
};
} // namespace detail

namespace dynamic {

/// The operands of a RopePlan.
struct RopeArgs {
  ConstDynTensor positions;     ///< read: `[num_tokens]`, `position_kind`
  ConstDynTensor cos_sin_cache; ///< read (`Cache`): `[max_position, rot_dim]`,
                                ///< `cache_kind`; else empty
  ConstDynTensor q;             ///< read: `[num_tokens, num_heads, head_dim]`
  ConstDynTensor k; ///< read (num_kv_heads > 0): `[num_tokens, num_kv_heads,
                    ///< head_dim]`; else empty
  DynTensor q_out;  ///< written: q's shape (may be exactly q)
  DynTensor k_out;  ///< written (num_kv_heads > 0): k's shape (may be exactly
                    ///< k); else empty
};

/// The dtype-erased RopePlan.
class RopePlan : public detail::BoundFnPlan<RopeDescriptor, detail::RopeFn> {
  using BoundFnPlan::BoundFnPlan;

public:
  using Args = RopeArgs;
  RopePlan() = default;
  static Result<RopePlan> select(const Stream &stream,
                                 const RopeDescriptor &desc,
                                 PlanPreference pref = {});
  /// Kinds, shapes, alignment, non-null data, the cache's presence, and the
  /// aliasing rule.
  Status can_implement(const Args &args) const;
  size_t workspace_size() const { return 0; }
  PrecisionGuarantee precision_guarantee() const {
    return binding_.uniform_guarantee();
  }
  /// Re-validates, then launches (nothing for an empty problem).
  Status run(const Stream &stream, Workspace workspace, const Args &args) const;
  /// The computed frequencies, rot_dim/2 of them (empty with a cache).
  std::span<const float> inv_freq() const;
  /// The factor cos and sin are multiplied by (YaRN's; 1 otherwise and with a
  /// cache).
  float attention_factor() const { return freq_.attention_factor; }

private:
  detail::RopeFrequencies freq_;
};

} // namespace dynamic
} // namespace baracuda
