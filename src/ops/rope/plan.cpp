// RopePlan: select (the descriptor's rules, the frequencies of computed
// cos/sin, the device's table), can_implement (operands, and no overlap but in
// place and disjoint rows of one fused buffer), run.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "baracuda/ops/rope.hpp"
#include "core/plan_core.hpp"
#include "core/validate.hpp"
#include "ops/rope/dispatch.hpp"

namespace baracuda {
namespace {

constexpr std::string_view kPlan = "RopePlan";
using LD = long double;
constexpr LD kPi = 3.141592653589793238462643383279502884L;

std::string s(std::string_view v) { return std::string(v); }
Error invalid(const std::string &why) {
  return Error::invalid(s(kPlan) + ": " + why);
}
bool finite_positive(double v) { return std::isfinite(v) && v > 0; }
std::string num(double v) { return std::to_string(v); }

Status check_computed(const RopeDescriptor &d, int64_t rot) {
  if (rot > kRopeMaxComputedRotDim)
    return invalid("computed cos/sin take rot_dim <= " +
                   std::to_string(kRopeMaxComputedRotDim) + ", got " +
                   std::to_string(rot) + " (pass a cos_sin_cache)");
  if (!std::isfinite(d.theta) || !(d.theta > 1))
    return invalid("theta must be finite and > 1, got " + num(d.theta));
  if (static_cast<uint8_t>(d.scaling) > static_cast<uint8_t>(RopeScaling::Yarn))
    return invalid("invalid RopeScaling");
  if (d.scaling == RopeScaling::None)
    return {};
  if (!finite_positive(d.factor))
    return invalid("the scaling factor must be finite and > 0, got " +
                   num(d.factor));
  if (d.scaling == RopeScaling::NtkAware && rot <= 2)
    return invalid("NTK-aware scaling needs rot_dim > 2");
  if ((d.scaling == RopeScaling::Llama3 || d.scaling == RopeScaling::Yarn) &&
      d.original_max_position < 1)
    return invalid("original_max_position must be >= 1, got " +
                   std::to_string(d.original_max_position));
  if (d.scaling == RopeScaling::Llama3 &&
      (!finite_positive(d.low_freq_factor) ||
       !std::isfinite(d.high_freq_factor) ||
       !(d.high_freq_factor > d.low_freq_factor)))
    return invalid(
        "llama3 needs finite 0 < low_freq_factor < high_freq_factor, got " +
        num(d.low_freq_factor) + ", " + num(d.high_freq_factor));
  if (d.scaling == RopeScaling::Yarn) {
    if (!finite_positive(d.beta_fast) || !finite_positive(d.beta_slow))
      return invalid("yarn's beta_fast and beta_slow must be finite and > 0");
    for (double v : {d.mscale, d.mscale_all_dim, d.attention_factor})
      if (!std::isfinite(v) || v < 0)
        return invalid(
            "yarn's mscale, mscale_all_dim and attention_factor must be "
            "finite and >= 0 (0: absent), got " +
            num(v));
  }
  return {};
}

Status check_descriptor(const RopeDescriptor &d) {
  if (static_cast<uint8_t>(d.style) > static_cast<uint8_t>(RopeStyle::GptJ))
    return invalid("invalid RopeStyle");
  if (static_cast<uint8_t>(d.source) >
      static_cast<uint8_t>(CosSinSource::Cache))
    return invalid("invalid CosSinSource");
  BARACUDA_TRY(
      detail::check_kinds(kPlan, {d.element, d.position_kind, d.cache_kind}));
  if (d.position_kind != ElementKind::S32 &&
      d.position_kind != ElementKind::S64)
    return invalid("positions must be s32 or s64, not " +
                   s(to_string(d.position_kind)));
  if (d.num_tokens < 0 || d.num_tokens > INT32_MAX)
    return invalid("num_tokens must be in [0, 2^31), got " +
                   std::to_string(d.num_tokens));
  if (d.num_heads < 1 || d.num_kv_heads < 0 || d.head_dim < 1)
    return invalid(
        "num_heads and head_dim must be >= 1 and num_kv_heads >= 0, got " +
        std::to_string(d.num_heads) + ", " + std::to_string(d.head_dim) + ", " +
        std::to_string(d.num_kv_heads));
  if (d.num_heads > INT32_MAX || d.num_kv_heads > INT32_MAX ||
      d.head_dim > INT32_MAX ||
      (d.num_heads + d.num_kv_heads) * d.head_dim > INT32_MAX)
    return invalid("(num_heads + num_kv_heads) * head_dim must be < 2^31");
  BARACUDA_TRY(detail::check_shape(
      kPlan, "q's shape", Shape{d.num_tokens, d.num_heads, d.head_dim}));
  const int64_t rot = d.rotary_dim();
  if (rot < 2 || rot > d.head_dim || rot % 2 != 0)
    return invalid("rot_dim must be even and in [2, head_dim " +
                   std::to_string(d.head_dim) + "], got " +
                   std::to_string(rot));
  if (rot > kRopeMaxRotDim)
    return invalid("rot_dim must be <= " + std::to_string(kRopeMaxRotDim));
  if (d.source == CosSinSource::Computed)
    return check_computed(d, rot);
  if (d.scaling != RopeScaling::None)
    return invalid("the scaling applies to computed cos/sin (a cos_sin_cache "
                   "holds its own)");
  if (d.cache_kind != ElementKind::F32 && d.cache_kind != d.element)
    return invalid("the cos_sin_cache must be f32 or " +
                   s(to_string(d.element)) + ", not " +
                   s(to_string(d.cache_kind)));
  if (d.max_position < 1)
    return invalid("max_position must be >= 1, got " +
                   std::to_string(d.max_position));
  return detail::check_shape(kPlan, "the cos_sin_cache's shape",
                             Shape{d.max_position, rot});
}

LD get_mscale(LD f, LD m) {
  return f <= 1 ? 1.0L : 0.1L * m * std::log(f) + 1.0L;
}

/// The frequencies and attention factor of computed cos/sin (rope.hpp), in long
/// double, rounded once.
detail::RopeFrequencies frequencies(const RopeDescriptor &d) {
  detail::RopeFrequencies r;
  const int64_t rot = d.rotary_dim(), half = rot / 2;
  const LD dim = static_cast<LD>(rot), f = d.factor;
  LD base = d.theta, m = 1;
  if (d.scaling == RopeScaling::NtkAware)
    base *= std::pow(f, dim / (dim - 2));
  LD low = 0, high = 0;
  if (d.scaling == RopeScaling::Yarn) {
    const LD l0 = static_cast<LD>(d.original_max_position);
    const auto correction_dim = [&](LD rotations) {
      return dim * std::log(l0 / (rotations * 2 * kPi)) /
             (2 * std::log(static_cast<LD>(d.theta)));
    };
    low = correction_dim(d.beta_fast), high = correction_dim(d.beta_slow);
    if (d.truncate)
      low = std::floor(low), high = std::ceil(high);
    low = std::max<LD>(low, 0), high = std::min<LD>(high, dim - 1);
    if (low == high)
      high += 0.001L;
    if (d.attention_factor > 0)
      m = d.attention_factor;
    else if (d.mscale > 0 && d.mscale_all_dim > 0)
      m = get_mscale(f, d.mscale) / get_mscale(f, d.mscale_all_dim);
    else
      m = get_mscale(f, 1);
  }
  for (int64_t j = 0; j < half; ++j) {
    const LD inv = std::pow(base, -static_cast<LD>(2 * j) / dim);
    LD v = inv;
    switch (d.scaling) {
    case RopeScaling::Linear:
      v = inv / f;
      break;
    case RopeScaling::Llama3: {
      const LD l0 = static_cast<LD>(d.original_max_position),
               wavelen = 2 * kPi / inv;
      if (wavelen > l0 / d.low_freq_factor) {
        v = inv / f;
      } else if (wavelen >= l0 / d.high_freq_factor) {
        const LD sm = (l0 / wavelen - d.low_freq_factor) /
                      (d.high_freq_factor - d.low_freq_factor);
        v = (1 - sm) * inv / f + sm * inv;
      }
      break;
    }
    case RopeScaling::Yarn: {
      const LD ramp =
          std::clamp((static_cast<LD>(j) - low) / (high - low), 0.0L, 1.0L);
      v = inv / f * ramp + inv * (1 - ramp);
      break;
    }
    default:
      break;
    }
    r.inv_freq[j] = static_cast<float>(v);
  }
  r.attention_factor = static_cast<float>(m);
  return r;
}

std::string_view op_name(const RopeDescriptor &d) {
  static constexpr std::string_view kNames[2][2] = {
      {"rope_neox", "rope_neox_inverse"}, {"rope_gptj", "rope_gptj_inverse"}};
  return kNames[d.style == RopeStyle::GptJ][d.inverse];
}

/// The lowest and one past the highest byte a view reaches (any stride signs);
/// {0, 0} when empty or null.
std::pair<uintptr_t, uintptr_t> byte_range(const ConstDynTensor &t) {
  if (t.data == nullptr || t.numel() == 0)
    return {0, 0};
  const auto esize =
      static_cast<int64_t>(std::max(element_bits(t.kind) / 8, 1));
  int64_t lo = 0, hi = 0;
  for (int d = 0; d < t.rank(); ++d)
    ((t.stride[d] < 0) ? lo : hi) += (t.shape.dims[d] - 1) * t.stride[d];
  const auto base = reinterpret_cast<uintptr_t>(t.data);
  return {base + static_cast<uintptr_t>(lo * esize),
          base + static_cast<uintptr_t>((hi + 1) * esize)};
}

/// Whether two [T, H, D] views of one kind may share an element. Row-exact when
/// their token strides are equal (the rows of q and k in one fused qkv buffer
/// interleave without touching): a row (t, h) covers the element offsets base +
/// t·S + h·Sh + [lo, hi] (its innermost extent, every element when Sd is ±1);
/// two rows of heads ha, hb meet iff some token distance m = t' − t, |m| < T,
/// puts them within reach. Byte spans otherwise (and beyond 2^16 head pairs).
bool may_overlap(const ConstDynTensor &a, const ConstDynTensor &b) {
  const auto [a0, a1] = byte_range(a);
  const auto [b0, b1] = byte_range(b);
  if (a0 == a1 || b0 == b1 || !(a0 < b1 && b0 < a1))
    return false;
  const auto esize = static_cast<int64_t>(element_bits(a.kind) / 8);
  const int64_t tokens = a.shape.dims[0];
  const auto diff = static_cast<int64_t>(reinterpret_cast<uintptr_t>(b.data) -
                                         reinterpret_cast<uintptr_t>(a.data));
  if (a.rank() != 3 || b.rank() != 3 || a.kind != b.kind ||
      a.stride[0] != b.stride[0] || tokens != b.shape.dims[0] ||
      diff % esize != 0 || a.shape.dims[1] * b.shape.dims[1] > (1 << 16))
    return true;
  const int64_t c0 = diff / esize, step = std::abs(a.stride[0]);
  const auto row = [](const ConstDynTensor &t, int64_t *lo, int64_t *hi) {
    const int64_t e = (t.shape.dims[2] - 1) * t.stride[2];
    *lo = std::min<int64_t>(e, 0), *hi = std::max<int64_t>(e, 0);
  };
  int64_t alo, ahi, blo, bhi;
  row(a, &alo, &ahi), row(b, &blo, &bhi);
  for (int64_t ha = 0; ha < a.shape.dims[1]; ++ha)
    for (int64_t hb = 0; hb < b.shape.dims[1]; ++hb) {
      const int64_t base = c0 + hb * b.stride[1] - ha * a.stride[1];
      // Rows meet iff m·S lies in [L, U] for some |m| < T.
      const int64_t lo = alo - bhi - base, hi = ahi - blo - base;
      if (step == 0 || tokens == 1) {
        if (lo <= 0 && 0 <= hi)
          return true;
        continue;
      }
      const int64_t mlo = std::max(
          -(tokens - 1), lo >= 0 ? (lo + step - 1) / step : -((-lo) / step));
      const int64_t mhi = std::min(
          tokens - 1, hi >= 0 ? hi / step : -((-hi + step - 1) / step));
      if (mlo <= mhi)
        return true;
    }
  return false;
}

} // namespace

std::string_view to_string(RopeStyle v) {
  return v == RopeStyle::NeoX ? "neox" : v == RopeStyle::GptJ ? "gptj" : "?";
}

std::string_view to_string(CosSinSource v) {
  return v == CosSinSource::Computed ? "computed"
         : v == CosSinSource::Cache  ? "cache"
                                     : "?";
}

std::string_view to_string(RopeScaling v) {
  switch (v) {
  case RopeScaling::None:
    return "none";
  case RopeScaling::Linear:
    return "linear";
  case RopeScaling::NtkAware:
    return "ntk_aware";
  case RopeScaling::Llama3:
    return "llama3";
  case RopeScaling::Yarn:
    return "yarn";
  }
  return "?";
}

namespace dynamic {

Result<RopePlan> RopePlan::select(const Stream &stream,
                                  const RopeDescriptor &desc,
                                  PlanPreference pref) {
  BARACUDA_TRY(check_descriptor(desc));
  auto dev = detail::select_device(kPlan, stream, pref,
                                   BARACUDA_DEVICE_TABLES(rope_table));
  if (!dev)
    return dev.error();
  const auto fn =
      detail::kind_entry(kPlan, op_name(desc), *dev->table, desc.element);
  if (!fn)
    return fn.error();
  const bool cached = desc.source == CosSinSource::Cache;
  RopePlan p(desc,
             dev->bind(OpCategory::Attention, op_name(desc), desc.element,
                       cached ? std::optional<ElementKind>(desc.cache_kind)
                              : std::nullopt,
                       MathPrecision::F32,
                       cached ? "token_block_cache" : "token_block_computed"),
             *fn);
  if (!cached)
    p.freq_ = frequencies(desc);
  return p;
}

std::span<const float> RopePlan::inv_freq() const {
  if (desc_.source == CosSinSource::Cache || !binding_.selected)
    return {};
  return {freq_.inv_freq, static_cast<size_t>(desc_.rotary_dim() / 2)};
}

Status RopePlan::can_implement(const Args &a) const {
  using detail::Access;
  const RopeDescriptor &d = desc_;
  const Shape qs{d.num_tokens, d.num_heads, d.head_dim},
      ks{d.num_tokens, d.num_kv_heads, d.head_dim};
  BARACUDA_TRY(detail::check_tensor(kPlan, "positions", a.positions,
                                    d.position_kind, Shape{d.num_tokens},
                                    Access::Read));
  if (d.source == CosSinSource::Cache)
    BARACUDA_TRY(detail::check_tensor(
        kPlan, "cos_sin_cache", a.cos_sin_cache, d.cache_kind,
        Shape{d.max_position, d.rotary_dim()}, Access::Read));
  else
    BARACUDA_TRY(detail::check_absent(kPlan, "cos_sin_cache", a.cos_sin_cache,
                                      "cos and sin are computed"));
  BARACUDA_TRY(
      detail::check_tensor(kPlan, "q", a.q, d.element, qs, Access::Read));
  const bool has_k = d.num_kv_heads > 0;
  if (has_k) {
    BARACUDA_TRY(
        detail::check_tensor(kPlan, "k", a.k, d.element, ks, Access::Read));
  } else {
    BARACUDA_TRY(detail::check_absent(kPlan, "k", a.k, "num_kv_heads is 0"));
  }
  BARACUDA_TRY(detail::check_tensor(kPlan, "q_out", a.q_out, d.element, qs,
                                    Access::Write));
  if (has_k)
    BARACUDA_TRY(detail::check_tensor(kPlan, "k_out", a.k_out, d.element, ks,
                                      Access::Write));
  else
    BARACUDA_TRY(
        detail::check_absent(kPlan, "k_out", a.k_out, "num_kv_heads is 0"));
  // q_out may be exactly q, k_out exactly k; nothing else may overlap an
  // output.
  const std::pair<const char *, ConstDynTensor> outs[] = {{"q_out", a.q_out},
                                                          {"k_out", a.k_out}};
  const std::pair<const char *, ConstDynTensor> ins[] = {
      {"q", a.q},
      {"k", a.k},
      {"positions", a.positions},
      {"cos_sin_cache", a.cos_sin_cache}};
  for (size_t o = 0; o < 2; ++o) {
    const auto &[name, out] = outs[o];
    for (size_t i = 0; i < 4; ++i) {
      const auto &[in_name, in] = ins[i];
      if (i == o && out.data != nullptr && out.data == in.data &&
          out.stride == in.stride)
        continue; // in place
      if (may_overlap(out, in))
        return invalid(s(name) + " overlaps " + in_name +
                       (i == o ? " other than exactly (in place, it may be " +
                                     s(in_name) +
                                     " itself: the same data and strides)"
                               : " (no aliasing is allowed)"));
    }
  }
  if (may_overlap(a.q_out, a.k_out))
    return invalid("q_out overlaps k_out (no aliasing is allowed)");
  return {};
}

Status RopePlan::run(const Stream &stream, Workspace, const Args &a) const {
  const RopeDescriptor &d = desc_;
  return detail::run_entry(
      kPlan, binding_, stream, [&] { return can_implement(a); },
      d.num_tokens == 0, fn_,
      [&] {
        detail::RopeLaunch l;
        l.style = d.style, l.inverse = d.inverse,
        l.cached = d.source == CosSinSource::Cache;
        l.tokens = d.num_tokens, l.heads = d.num_heads,
        l.kv_heads = d.num_kv_heads, l.head_dim = d.head_dim;
        l.rot_dim = d.rotary_dim(), l.max_position = d.max_position;
        l.positions = a.positions, l.cache = a.cos_sin_cache, l.q = a.q,
        l.k = a.k, l.q_out = a.q_out, l.k_out = a.k_out;
        l.freq = &freq_;
        return l;
      });
}

} // namespace dynamic
} // namespace baracuda
