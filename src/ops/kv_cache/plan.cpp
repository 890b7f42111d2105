// KvCacheAppendPlan: select (the descriptor's rules, the device's table), can_implement (operands, unit last
// strides, caches whose elements are distinct and overlap no input, K and V caches page-disjoint), run.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>

#include "baracuda/ops/kv_cache.hpp"
#include "core/plan_core.hpp"
#include "core/validate.hpp"
#include "ops/kv_cache/dispatch.hpp"

namespace baracuda {
namespace {

constexpr std::string_view kPlan = "KvCacheAppendPlan";
constexpr std::string_view kOpName = "kv_cache_append";

std::string s(std::string_view v) { return std::string(v); }
std::string n(int64_t v) { return std::to_string(v); }
Error invalid(const std::string& why) { return Error::invalid(s(kPlan) + ": " + why); }

Status check_descriptor(const KvCacheAppendDescriptor& d) {
  BARACUDA_TRY(detail::check_kinds(kPlan, {d.element, d.cache_kind, d.slot_kind}));
  if (static_cast<uint8_t>(d.scale_layout) > static_cast<uint8_t>(KvScaleLayout::PerHead))
    return invalid("invalid KvScaleLayout");
  if (d.slot_kind != ElementKind::S32 && d.slot_kind != ElementKind::S64)
    return invalid("slot_mapping must be s32 or s64, not " + s(to_string(d.slot_kind)));
  if (d.cache_kind != d.element && d.cache_kind != ElementKind::Fp8E4M3 && d.cache_kind != ElementKind::S8)
    return invalid("the cache must be key's kind " + s(to_string(d.element)) +
                   " (a copy), fp8e4m3 or s8 (quantized), not " + s(to_string(d.cache_kind)));
  if (d.num_tokens < 0 || d.num_tokens > INT32_MAX)
    return invalid("num_tokens must be in [0, 2^31), got " + n(d.num_tokens));
  if (d.num_kv_heads < 1 || d.head_dim < 1)
    return invalid("num_kv_heads and head_dim must be >= 1, got " + n(d.num_kv_heads) + ", " + n(d.head_dim));
  if (d.num_kv_heads > INT32_MAX / 2 || d.head_dim > INT32_MAX / 2 || 2 * d.num_kv_heads * d.head_dim > INT32_MAX)
    return invalid("2 * num_kv_heads * head_dim must be < 2^31");
  if (d.num_blocks < 1 || d.block_size < 1)
    return invalid("num_blocks and block_size must be >= 1, got " + n(d.num_blocks) + ", " + n(d.block_size));
  if (d.block_size > (int64_t{1} << 62) / d.num_blocks) return invalid("num_blocks * block_size must be < 2^62");
  BARACUDA_TRY(detail::check_shape(kPlan, "the caches' shape", d.cache_shape()));
  return detail::check_shape(kPlan, "key's shape", d.token_shape());
}

/// The lowest and one past the highest byte a view reaches (any stride signs); {0, 0} when empty or null.
std::pair<uintptr_t, uintptr_t> byte_range(const ConstDynTensor& t) {
  if (t.data == nullptr || t.numel() == 0) return {0, 0};
  const auto esize = static_cast<int64_t>(std::max(element_bits(t.kind) / 8, 1));
  int64_t lo = 0, hi = 0;
  for (int d = 0; d < t.rank(); ++d) ((t.stride[d] < 0) ? lo : hi) += (t.shape.dims[d] - 1) * t.stride[d];
  const auto base = reinterpret_cast<uintptr_t>(t.data);
  return {base + static_cast<uintptr_t>(lo * esize), base + static_cast<uintptr_t>((hi + 1) * esize)};
}

bool spans_meet(const ConstDynTensor& a, const ConstDynTensor& b) {
  const auto [a0, a1] = byte_range(a);
  const auto [b0, b1] = byte_range(b);
  return a0 != a1 && b0 != b1 && a0 < b1 && b0 < a1;
}

/// No two elements of the view share memory: ordered by |stride|, each dimension of extent > 1 steps past
/// everything the smaller ones reach (a sufficient condition, which every packed or padded view meets).
bool distinct_elements(const ConstDynTensor& t) {
  std::pair<int64_t, int64_t> dims[kMaxRank];
  int r = 0;
  for (int d = 0; d < t.rank(); ++d)
    if (t.shape.dims[d] > 1) dims[r++] = {std::abs(t.stride[d]), t.shape.dims[d]};
  std::sort(dims, dims + r);
  int64_t reach = 0;
  for (int i = 0; i < r; ++i) {
    if (dims[i].first <= reach) return false;
    reach += (dims[i].second - 1) * dims[i].first;
  }
  return true;
}

int64_t floor_div(__int128 a, int64_t b) {  // b > 0
  __int128 q = a / b;
  if (a % b != 0 && a < 0) --q;
  return static_cast<int64_t>(std::clamp<__int128>(q, INT64_MIN, INT64_MAX));
}

/// Whether the key and value caches may share an element. Page-exact when both have the same strides (the
/// combined [num_blocks, 2, block_size, H, D] buffer): page p of K covers offsets p·S + [lo, hi] of its base
/// and page p' of V diff + p'·S + [lo, hi]; they meet iff |diff + m·S| ≤ hi − lo for some |m| < num_blocks.
/// Byte spans otherwise.
bool caches_may_overlap(const ConstDynTensor& k, const ConstDynTensor& v) {
  if (!spans_meet(k, v)) return false;
  const auto esize = static_cast<int64_t>(element_bits(k.kind) / 8);
  const auto diff_bytes =
      static_cast<int64_t>(reinterpret_cast<uintptr_t>(v.data) - reinterpret_cast<uintptr_t>(k.data));
  if (k.stride != v.stride || diff_bytes % esize != 0) return true;
  int64_t lo = 0, hi = 0;
  for (int d = 1; d < 4; ++d) ((k.stride[d] < 0) ? lo : hi) += (k.shape.dims[d] - 1) * k.stride[d];
  const __int128 w = hi - lo, diff = diff_bytes / esize;
  const int64_t pages = k.shape.dims[0], step = std::abs(k.stride[0]);
  if (pages == 1 || step == 0) return diff <= w && -diff <= w;
  // m·step ∈ [−w − diff, w − diff] (the sign of the page stride folded into m's range, symmetric).
  const int64_t mlo = std::max<int64_t>(-(pages - 1), -floor_div(w + diff, step));
  const int64_t mhi = std::min<int64_t>(pages - 1, floor_div(w - diff, step));
  return mlo <= mhi;
}

Status check_cache(const char* name, const DynTensor& c, const KvCacheAppendDescriptor& d) {
  BARACUDA_TRY(detail::check_tensor(kPlan, name, c, d.cache_kind, d.cache_shape(), detail::Access::Write));
  if (d.head_dim > 1 && c.stride[3] != 1)
    return invalid(s(name) + "'s last stride must be 1 (the paged layout), got " + n(c.stride[3]));
  if (!distinct_elements(c)) return invalid(s(name) + "'s strides make two of its elements share memory");
  return {};
}

}  // namespace

std::string_view to_string(KvScaleLayout l) {
  return l == KvScaleLayout::PerTensor ? "per_tensor" : l == KvScaleLayout::PerHead ? "per_head" : "?";
}

namespace dynamic {

Result<KvCacheAppendPlan> KvCacheAppendPlan::select(const Stream& stream, const KvCacheAppendDescriptor& desc,
                                                    PlanPreference pref) {
  BARACUDA_TRY(check_descriptor(desc));
  auto dev = detail::select_device(kPlan, stream, pref, BARACUDA_DEVICE_TABLES(kv_cache_append_table));
  if (!dev) return dev.error();
  const auto fn = detail::pair_entry(kPlan, *dev->table, desc.element, desc.cache_kind,
                                     "key and value f16, bf16 or f32 into a cache of their kind, fp8e4m3 or s8");
  if (!fn) return fn.error();
  return KvCacheAppendPlan(desc,
                           dev->bind(OpCategory::Attention, kOpName, desc.element, desc.cache_kind,
                                     desc.quantized() ? MathPrecision::F32 : MathPrecision::Exact, "token_block"),
                           *fn);
}

Status KvCacheAppendPlan::can_implement(const Args& a) const {
  using detail::Access;
  const KvCacheAppendDescriptor& d = desc_;
  for (const auto& [name, t] : {std::pair<const char*, ConstDynTensor>{"key", a.key}, {"value", a.value}}) {
    BARACUDA_TRY(detail::check_tensor(kPlan, name, t, d.element, d.token_shape(), Access::Read));
    if (d.head_dim > 1 && t.stride[2] != 1) return invalid(s(name) + "'s last stride must be 1, got " + n(t.stride[2]));
  }
  BARACUDA_TRY(
      detail::check_tensor(kPlan, "slot_mapping", a.slot_mapping, d.slot_kind, Shape{d.num_tokens}, Access::Read));
  for (const auto& [name, t] : {std::pair<const char*, ConstDynTensor>{"k_scale", a.k_scale}, {"v_scale", a.v_scale}}) {
    if (d.quantized())
      BARACUDA_TRY(detail::check_tensor(kPlan, name, t, ElementKind::F32, d.scale_shape(), Access::Read));
    else
      BARACUDA_TRY(detail::check_absent(kPlan, name, t, "the cache holds key's kind (a copy)"));
  }
  BARACUDA_TRY(check_cache("key_cache", a.key_cache, d));
  BARACUDA_TRY(check_cache("value_cache", a.value_cache, d));
  const std::pair<const char*, ConstDynTensor> ins[] = {{"key", a.key},
                                                        {"value", a.value},
                                                        {"slot_mapping", a.slot_mapping},
                                                        {"k_scale", a.k_scale},
                                                        {"v_scale", a.v_scale}};
  for (const auto& [name, cache] :
       {std::pair<const char*, ConstDynTensor>{"key_cache", a.key_cache}, {"value_cache", a.value_cache}})
    for (const auto& [in_name, in] : ins)
      if (spans_meet(cache, in)) return invalid(s(name) + " overlaps " + in_name + " (no aliasing is allowed)");
  if (caches_may_overlap(a.key_cache, a.value_cache))
    return invalid(
        "key_cache and value_cache share memory (they may be views of one buffer whose pages interleave, "
        "[num_blocks, 2, block_size, H, D], or lie apart)");
  return {};
}

Status KvCacheAppendPlan::run(const Stream& stream, Workspace, const Args& a) const {
  const KvCacheAppendDescriptor& d = desc_;
  return detail::run_entry(
      kPlan, binding_, stream, [&] { return can_implement(a); }, d.num_tokens == 0, fn_,
      [&] {
        detail::KvCacheAppendLaunch l;
        l.tokens = d.num_tokens, l.heads = d.num_kv_heads, l.head_dim = d.head_dim;
        l.num_blocks = d.num_blocks, l.block_size = d.block_size;
        l.per_head = d.scale_layout == KvScaleLayout::PerHead;
        l.key = a.key, l.value = a.value, l.slot_mapping = a.slot_mapping, l.k_scale = a.k_scale, l.v_scale = a.v_scale;
        l.key_cache = a.key_cache, l.value_cache = a.value_cache;
        return l;
      });
}

}  // namespace dynamic
}  // namespace baracuda
