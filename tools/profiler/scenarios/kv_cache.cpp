// The kv_cache family (KvCacheAppendPlan): new tokens' K and V [tokens, kv_heads, head_dim] written into a
// paged cache of 16-token pages, copied or quantized (fp8e4m3, s8) with f32 dequant scales.
//   kv_cache_append_decode   one token per sequence: each token to its own page (pages in reverse order, a
//                            token offset of 7t mod 16), the cache one page larger, the last token padding (-1)
//   kv_cache_append_prefill  a prompt's tokens filling whole pages, the pages in reverse order; per-head scales
//
// Shapes: [tokens, kv_heads, head_dim] (--shape TxHxD; shorter ones take 8 heads of 128). The slot mapping (s64)
// and the scales (0.05 and, per head, 0.05 + h/64) are uploaded once, when the case is prepared: valid distinct
// slots, not operands the profiler fills with random values (two tokens on one slot race). The conformance
// suite therefore mutates key, value and the caches; the slots' and scales' rejections are
// tests/ops/kv_cache_reject_test.cpp's. Defaults: on cuda a decode step of 256 tokens and a prefill of 16384
// (8 kv heads of 128); on host/sim two small problems. Kinds: bf16, f16, f32 copies; bf16 and f16 into fp8e4m3
// and s8. Traffic: key and value read, the written cache rows, the slots.
#include <baracuda/ops/kv_cache.hpp>
#include <memory>
#include <vector>

#include "common.hpp"
#include "scenarios.hpp"

namespace baracuda::profiler {
namespace {

constexpr int64_t kPage = 16;

struct Dims {
  int64_t tokens, heads, dim, blocks;
};

Dims dims(const Problem& p) {
  const Shape& s = p.shape;
  Dims d{s.rank > 0 ? s.dims[0] : 1, s.rank > 1 ? s.dims[1] : 8, s.rank > 2 ? s.dims[2] : 128, 1};
  d.blocks = p.variant == 0 ? d.tokens + 1 : (d.tokens + kPage - 1) / kPage;
  if (d.blocks < 1) d.blocks = 1;
  return d;
}

KvCacheAppendDescriptor descriptor(const Problem& p) {
  const Dims d = dims(p);
  return KvCacheAppendDescriptor()
      .with_kinds(p.dtype, p.out_dtype, ElementKind::S64)
      .with_scale_layout(p.variant == 1 ? KvScaleLayout::PerHead : KvScaleLayout::PerTensor)
      .with_tokens(d.tokens, d.heads, d.dim)
      .with_pages(d.blocks, kPage);
}

/// The variant's slots (file comment): distinct, every one inside the cache but the decode step's padding.
std::vector<int64_t> slots_of(const Problem& p) {
  const Dims d = dims(p);
  std::vector<int64_t> s(static_cast<size_t>(d.tokens));
  for (int64_t t = 0; t < d.tokens; ++t)
    s[static_cast<size_t>(t)] =
        p.variant == 0 ? (d.blocks - 1 - t) * kPage + (7 * t) % kPage : (d.blocks - 1 - t / kPage) * kPage + t % kPage;
  if (p.variant == 0 && d.tokens > 1) s.back() = -1;
  return s;
}

Result<dynamic::KvCacheAppendPlan> select_plan(const Stream& s, const Problem& p) {
  return dynamic::KvCacheAppendPlan::select(s, descriptor(p));
}

/// The plan with its slots and scales bound (PlanInstance's operands are key, value, key_cache, value_cache).
struct BoundPlan {
  dynamic::KvCacheAppendPlan plan;
  std::shared_ptr<Buffer> slots, scales;
  ConstDynTensor slot_view, k_scale, v_scale;

  dynamic::KvCacheAppendArgs args(const DynTensor& k, const DynTensor& v, const DynTensor& kc,
                                  const DynTensor& vc) const {
    return {k, v, slot_view, k_scale, v_scale, kc, vc};
  }
  Status can_implement(const DynTensor& k, const DynTensor& v, const DynTensor& kc, const DynTensor& vc) const {
    return plan.can_implement(args(k, v, kc, vc));
  }
  Status run(const Stream& s, Workspace ws, const DynTensor& k, const DynTensor& v, const DynTensor& kc,
             const DynTensor& vc) const {
    return plan.run(s, ws, args(k, v, kc, vc));
  }
  size_t workspace_size() const { return 0; }
  KernelSku sku() const { return plan.sku(); }
};

Result<std::unique_ptr<Instance>> prepare(const Stream& s, const Problem& p) {
  auto plan = select_plan(s, p);
  if (!plan) return plan.error();
  const KvCacheAppendDescriptor d = descriptor(p);
  const std::vector<int64_t> slots = slots_of(p);
  auto sb = Buffer::from_host(s, std::span<const int64_t>(slots));
  if (!sb) return sb.error();
  const int64_t ns = d.scale_shape().numel();
  std::vector<float> scales(static_cast<size_t>(2 * ns));
  for (int64_t h = 0; h < ns; ++h)
    scales[static_cast<size_t>(h)] = scales[static_cast<size_t>(ns + h)] = 0.05f + static_cast<float>(h) / 64;
  auto scb = Buffer::from_host(s, std::span<const float>(scales));
  if (!scb) return scb.error();
  BoundPlan bound{std::move(plan).value(), std::make_shared<Buffer>(std::move(sb).value()),
                  std::make_shared<Buffer>(std::move(scb).value()), {}, {}, {}};
  bound.slot_view = ConstDynTensor::dense(bound.slots->data(), ElementKind::S64, Shape{d.num_tokens});
  if (d.quantized()) {
    const auto* sc = static_cast<const float*>(bound.scales->data());
    bound.k_scale = ConstDynTensor::dense(sc, ElementKind::F32, d.scale_shape());
    bound.v_scale = ConstDynTensor::dense(sc + ns, ElementKind::F32, d.scale_shape());
  }
  const OperandSpec k{p.dtype, d.token_shape(), ValueRange{-4, 4, false}},
      v{p.dtype, d.token_shape(), ValueRange{-4, 4, false}};
  const OperandSpec kc{p.out_dtype, d.cache_shape(), {}}, vc{p.out_dtype, d.cache_shape(), {}};
  return PlanInstance<BoundPlan, 2, 2>::make(s, std::move(bound), p, {k, v}, {kc, vc});
}

Traffic traffic(const Problem& p) {
  const KvCacheAppendDescriptor d = descriptor(p);
  const std::vector<int64_t> slots = slots_of(p);
  int64_t written = 0;
  for (int64_t s : slots) written += s >= 0 ? 1 : 0;
  const int64_t row = d.num_kv_heads * d.head_dim;
  const double in = static_cast<double>(storage_bytes(p.dtype, 2 * d.num_tokens * row));
  const double out = static_cast<double>(storage_bytes(p.out_dtype, 2 * written * row));
  return Traffic{in + out + 8.0 * static_cast<double>(d.num_tokens), 0};
}

std::vector<Problem> kinds(uint32_t v) {
  using K = ElementKind;
  return kind_pairs({{K::Bf16, K::Bf16},
                     {K::F16, K::F16},
                     {K::F32, K::F32},
                     {K::Bf16, K::Fp8E4M3},
                     {K::F16, K::Fp8E4M3},
                     {K::Bf16, K::S8},
                     {K::F16, K::S8}},
                    v);
}

std::vector<Shape> default_shapes(DeviceKind device) {
  if (device == DeviceKind::Cuda) return {Shape{256, 8, 128}, Shape{16384, 8, 128}};
  return {Shape{37, 2, 64}, Shape{5, 3, 40}};
}

constexpr ScenarioFamily kKvCache{"kv_cache",     select_with<select_plan>, prepare,          traffic, kinds,
                                  default_shapes, OutputKind::Chosen,       Comparison::Exact};

}  // namespace

void add_kv_cache_scenarios(std::vector<Scenario>& out) {
  out.push_back(kKvCache.op("kv_cache_append_decode",
                            "paged KV cache append, one token per page (decode), per-tensor scales when quantized", 0));
  out.push_back(kKvCache.op("kv_cache_append_prefill",
                            "paged KV cache append of whole 16-token pages (prefill), per-head scales when quantized",
                            1));
}

}  // namespace baracuda::profiler
