// The paged_prefill family (PagedPrefillPlan): chunked prefill, each sequence's chunk of new query tokens against
// its whole context in a paged KV cache of 16-token pages (vLLM's flash layout [num_blocks, 16, H_kv, d]).
//   paged_prefill   packed q [B·S, H, d], B chunks of S tokens through cu_seqlens_q, each the last S of its
//                   sequence's `context` keys; bottom-right causal; o [B·S, H, d] and lse [H, B·S]
//   paged_prefill_m128  the same on the 128-row query tile (FlashAttentionTile::Rows128; d ≤ 128) whatever the
//                       shape; paged_prefill runs Auto's choice (paged_prefill.hpp)
//   paged_prefill_m64   the same on the 64-row query tile (FlashAttentionTile::Rows64) whatever the shape
//
// Shapes (--shape): attention_prefill's forms (attention_dims.hpp) with S_k read as the context length, the chunk
// included: [B, S, context, H, H_kv, d]; [B, S, context, d] and [B, S, context] 32 query heads on 8 kv heads
// (Llama-3-8B; d = 128 unless given); [B, S] a first chunk (context = S); [S] one sequence. Every sequence has the
// same chunk and context, so the numbers read as B × S over `context` (tests/ops/paged_prefill_test.cpp covers
// ragged batches). Kinds: `--dtype` is q's and o's kind (f16, bf16), `--out-dtype` the caches' (the same kind,
// fp8e4m3 or s8), as paged_decode. The block tables (sequence b's page i is (P − 1 − i)·B + b, P = ⌈context / 16⌉:
// the sequences' pages interleaved and in reverse order, the cache exactly B·P pages), the context lengths, the
// offsets and a quantized cache's scales (k 0.5, v 0.25 per tensor) are uploaded once, when the case is prepared:
// valid metadata, not operands the profiler fills with random values (its page ids would mostly be masked). The
// conformance suite therefore mutates q, the caches, o and lse; the metadata's and the scales' rejections are
// tests/ops/paged_prefill_reject_test.cpp's.
//
// Defaults: f16, bf16 and bf16 q over an fp8e4m3 cache; on cuda 8 × 512 over 2048 (a batch of chunked-prefill
// steps) and 1 × 2048 over 16384 (a long prompt's late chunk), and one token over 4096 for B ∈ {1, 8, 64} (the
// tensor-core kernel at paged_decode's shapes: a reading of what a tensor-core decode would gain over the decode's
// CUDA-core kernel, docs/perf/2026-11-27-h100/README.md), 32 heads on 8, d = 128; on host/sim one small
// problem, 2 × 19 over 53 (chunks across page boundaries, a partial last page), 4 heads on 2, d = 64 (the
// conformance suite runs it through many layouts). Values: q and K in [-2, 2], V in [1, 2] (a quantized cache's
// codes; o, a convex combination of V's rows, stays positive: a relative tolerance holds; attention.cpp says why).
//
// Traffic: q and o, the K and V rows of every context (B·context·H_kv·d each, in the caches' kind), lse, the
// tables, lengths and offsets, each once; flops 4·H·d·Σ_b pairs_b with pairs_b = (L² − max(L − S, 0)²) / 2, the
// chunk's rows of an L × L causal prefill counted as attention_prefill_causal counts the whole (FlashAttention's
// L²/2): a first chunk (L = S) is L²/2, a late one (S ≪ L) nearly S·L. The two prefill defaults on cuda are over
// --verify-limit and so `timed`; the one-token rows are checked. No baseline, as attention_prefill
// (docs/profiler.md).
#include <algorithm>
#include <baracuda/ops/paged_prefill.hpp>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "attention_dims.hpp"
#include "common.hpp"
#include "paged_metadata.hpp"
#include "scenarios.hpp"

namespace baracuda::profiler {
namespace {

constexpr int64_t kPage = 16;

using attention_shape::Dims;
using attention_shape::dims;

/// Pages per sequence: the block table's width (at least 1, so that an empty context still has a table).
int64_t pages(const Dims& d) { return std::max<int64_t>((d.s_k + kPage - 1) / kPage, 1); }

PagedPrefillDescriptor descriptor(const Problem& p) {
  const Dims d = dims(p);
  return PagedPrefillDescriptor{}
      .with_kinds(p.dtype, p.out_dtype)
      .with_shape(d.b, d.b * d.s_q, d.s_q, d.h, d.h_kv, d.d)
      .with_pages(std::max<int64_t>(d.b * pages(d), 1), kPage, pages(d))
      .with_lse()
      .with_tile(p.variant == 1   ? FlashAttentionTile::Rows128
                 : p.variant == 2 ? FlashAttentionTile::Rows64
                                  : FlashAttentionTile::Auto);
}

Result<dynamic::PagedPrefillPlan> select_plan(const Stream& s, const Problem& p) {
  return dynamic::PagedPrefillPlan::select(s, descriptor(p));
}

/// The plan with its tables, lengths, offsets and scales bound (PlanInstance's operands: q, key_cache,
/// value_cache, o, lse).
struct BoundPlan {
  dynamic::PagedPrefillPlan plan;
  PagedMetadata meta;

  dynamic::PagedPrefillArgs args(const DynTensor& q, const DynTensor& kc, const DynTensor& vc, const DynTensor& o,
                                 const DynTensor& lse) const {
    return {q, kc, vc, meta.table, meta.context_lens, meta.cu_seqlens, meta.k_scale, meta.v_scale, o, lse};
  }
  Status can_implement(const DynTensor& q, const DynTensor& kc, const DynTensor& vc, const DynTensor& o,
                       const DynTensor& lse) const {
    return plan.can_implement(args(q, kc, vc, o, lse));
  }
  Status run(const Stream& s, Workspace ws, const DynTensor& q, const DynTensor& kc, const DynTensor& vc,
             const DynTensor& o, const DynTensor& lse) const {
    return plan.run(s, ws, args(q, kc, vc, o, lse));
  }
  size_t workspace_size() const { return plan.workspace_size(); }
  KernelSku sku() const { return plan.sku(); }
};

Result<std::unique_ptr<Instance>> prepare(const Stream& s, const Problem& p) {
  auto plan = select_plan(s, p);
  if (!plan) return plan.error();
  const Dims d = dims(p);
  const PagedPrefillDescriptor desc = descriptor(p);
  const int64_t width = pages(d);
  std::vector<int32_t> table(static_cast<size_t>(std::max<int64_t>(d.b * width, 1)), 0);
  for (int64_t b = 0; b < d.b; ++b)
    for (int64_t i = 0; i < width; ++i)
      table[static_cast<size_t>(b * width + i)] = static_cast<int32_t>((width - 1 - i) * d.b + b);
  std::vector<int32_t> cu(static_cast<size_t>(d.b + 1));
  for (int64_t b = 0; b <= d.b; ++b) cu[static_cast<size_t>(b)] = static_cast<int32_t>(b * d.s_q);
  auto meta = upload_paged_metadata(s, d.b, width, table, static_cast<int32_t>(std::min<int64_t>(d.s_k, INT32_MAX)), cu,
                                    desc.quantized());
  if (!meta) return meta.error();
  BoundPlan bound{std::move(plan).value(), std::move(meta).value()};
  const OperandSpec q{p.dtype, desc.q_shape(), ValueRange{-2, 2, false}};
  const OperandSpec kc{p.out_dtype, desc.cache_shape(), ValueRange{-2, 2, false}};
  const OperandSpec vc{p.out_dtype, desc.cache_shape(), ValueRange{1, 2, false}};
  const OperandSpec o{p.dtype, desc.q_shape(), {}};
  const OperandSpec lse{ElementKind::F32, Shape{d.h, desc.total_q}, {}};
  return PlanInstance<BoundPlan, 3, 2>::make(s, std::move(bound), p, {q, kc, vc}, {o, lse});
}

Traffic traffic(const Problem& p) {
  const Dims d = dims(p);
  const double b = static_cast<double>(d.b), t_q = b * static_cast<double>(d.s_q), ctx = static_cast<double>(d.s_k);
  const double hd = static_cast<double>(d.h) * static_cast<double>(d.d);
  const double hkvd = static_cast<double>(d.h_kv) * static_cast<double>(d.d);
  const double elem = static_cast<double>(storage_bytes(p.dtype, 1));
  const double cache_elem = static_cast<double>(storage_bytes(p.out_dtype, 1));
  const double meta = 4.0 * (b * static_cast<double>(pages(d)) + 2 * b + 1);
  const double bytes =
      elem * 2 * t_q * hd + cache_elem * 2 * b * ctx * hkvd + 4.0 * static_cast<double>(d.h) * t_q + meta;
  const double prefix = std::max(ctx - static_cast<double>(d.s_q), 0.0);  // the keys before the chunk
  return Traffic{bytes, 4.0 * hd * b * (ctx * ctx - prefix * prefix) / 2};
}

std::vector<Problem> kinds(uint32_t v) {
  using K = ElementKind;
  return kind_pairs({{K::F16, K::F16}, {K::Bf16, K::Bf16}, {K::Bf16, K::Fp8E4M3}}, v);
}

std::vector<Shape> default_shapes(DeviceKind device) {
  if (device == DeviceKind::Cuda)
    return {Shape{8, 512, 2048, 32, 8, 128}, Shape{1, 2048, 16384, 32, 8, 128}, Shape{1, 1, 4096, 32, 8, 128},
            Shape{8, 1, 4096, 32, 8, 128}, Shape{64, 1, 4096, 32, 8, 128}};
  return {Shape{2, 19, 53, 4, 2, 64}};
}

constexpr ScenarioFamily kPagedPrefill{
    "paged_prefill",    select_with<select_plan>, prepare, traffic, kinds, default_shapes,
    OutputKind::Chosen, Comparison::Tolerance};

}  // namespace

void add_paged_prefill_scenarios(std::vector<Scenario>& out) {
  out.push_back(kPagedPrefill.op("paged_prefill",
                                 "chunked prefill over a paged KV cache (q [B*S, H, d] packed through cu_seqlens_q, "
                                 "caches [pages, 16, H_kv, d] of --out-dtype, fp8e4m3/s8 dequantized), causal, "
                                 "lse [H, B*S]",
                                 0));
  out.push_back(
      kPagedPrefill.op("paged_prefill_m128",
                       "paged_prefill on the 128-row query tile (FlashAttentionTile::Rows128), whatever the shape", 1));
  out.push_back(
      kPagedPrefill.op("paged_prefill_m64",
                       "paged_prefill on the 64-row query tile (FlashAttentionTile::Rows64), whatever the shape", 2));
}

}  // namespace baracuda::profiler
