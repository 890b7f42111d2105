// The paged_decode family (PagedDecodePlan): decode attention, one query token per sequence, over a paged KV cache
// of 16-token pages (vLLM's flash layout [num_blocks, 16, H_kv, d]).
//   paged_decode     q [B, H, d] against B sequences of `context` keys each; o [B, H, d]; no lse; the plan's splits
//                    and kernel (Auto: the tensor cores from 16 sequences over a 16-bit cache at d = 128)
//   paged_decode_tc  the same on the tensor-core kernel (PagedDecodeKernel::TensorCores) whatever the shape
//   paged_decode_simt  the same on the CUDA-core kernel (PagedDecodeKernel::CudaCores) whatever the shape
//   paged_decode_tc_hnd, paged_decode_simt_hnd  the two kernels over caches stored head-major, [num_blocks, H_kv,
//                    16, d] in memory (FlashInfer's HND), seen through the same [num_blocks, 16, H_kv, d] view by
//                    strides: a page holds each head's 16 rows contiguous (4 KiB at d = 128, f16) where the flash
//                    layout interleaves the heads' 256-byte rows. The kernels do the same work over either layout;
//                    the time tells how much of their rate is the DRAM's locality.
//
// Shapes (--shape): [B, context, H, H_kv, d]; [B, context] takes 32 query heads on 8 kv heads of 128 (Llama-3-8B);
// [context] one sequence. Kinds: `--dtype` is q's and o's kind (f16, bf16), `--out-dtype` the cache's (the same
// kind, fp8e4m3 or s8). The block tables (sequence b's pages b·P .. b·P + P − 1 in reverse order, P = ⌈context / 16⌉,
// the cache exactly B·P pages), the context lengths and the scales (k 0.5, v 0.25 per tensor) are uploaded once,
// when the case is prepared: valid tables, not operands the profiler fills with random values (its page ids would
// mostly be masked). The conformance suite therefore mutates q, the caches and o; the tables' and scales'
// rejections are tests/ops/paged_decode_reject_test.cpp's.
//
// Defaults: on cuda B × context ∈ {1, 8} × {1k, 4k, 16k, 32k}, 64 × {1k, 4k}, 256 × 1k: at most 256k cached tokens
// (1 GiB of f16 K and V, which the profiler fills from the host) per case, to keep the suite near a minute; larger
// batches (64 × 16k, 256 × 4k) are left to the command line. 32 heads on 8, d = 128, f16 and bf16 caches and an
// fp8e4m3 cache under bf16; on host/sim two small ragged problems. Values: q and K in [-2, 2], V in [1, 2] (o, a
// convex combination of V's rows, stays positive: a relative tolerance holds).
//
// Traffic: the K and V rows read (B·context·H_kv·d each, in the cache's kind), q and o, the block tables and the
// lengths; flops 4·B·context·H·d (the two products per key). Cases above --verify-limit flops are timed only:
// tests/ops/paged_decode_test.cpp checks the kernels.
#include <algorithm>
#include <baracuda/ops/paged_attention.hpp>
#include <memory>
#include <utility>
#include <vector>

#include "common.hpp"
#include "paged_metadata.hpp"
#include "scenarios.hpp"

namespace baracuda::profiler {
namespace {

constexpr int64_t kPage = 16;

struct Dims {
  int64_t b = 1, ctx = 1, h = 32, h_kv = 8, d = 128;
  int64_t pages() const { return std::max<int64_t>((ctx + kPage - 1) / kPage, 1); }
};

Dims dims(const Problem& p) {
  const Shape& s = p.shape;
  Dims r;
  if (s.rank == 1) r.ctx = s[0];
  if (s.rank >= 2) r.b = s[0], r.ctx = s[1];
  if (s.rank >= 5) r.h = s[2], r.h_kv = s[3], r.d = s[4];
  return r;
}

/// The op's variant: kernel + 3·head_major (kernel 0 Auto, 1 TensorCores, 2 CudaCores).
int kernel_of(const Problem& p) { return static_cast<int>(p.variant % 3); }
bool head_major(const Problem& p) { return p.variant >= 3; }

PagedDecodeDescriptor descriptor(const Problem& p) {
  const Dims d = dims(p);
  return PagedDecodeDescriptor{}
      .with_kinds(p.dtype, p.out_dtype)
      .with_shape(d.b, 1, d.h, d.h_kv, d.d)
      .with_pages(std::max<int64_t>(d.b * d.pages(), 1), kPage, d.pages())
      .with_kernel(kernel_of(p) == 1   ? PagedDecodeKernel::TensorCores
                   : kernel_of(p) == 2 ? PagedDecodeKernel::CudaCores
                                       : PagedDecodeKernel::Auto);
}

Result<dynamic::PagedDecodePlan> select_plan(const Stream& s, const Problem& p) {
  return dynamic::PagedDecodePlan::select(s, descriptor(p));
}

/// The plan with its tables, lengths and scales bound (PlanInstance's operands: q, key_cache, value_cache, o).
struct BoundPlan {
  dynamic::PagedDecodePlan plan;
  PagedMetadata meta;

  dynamic::PagedDecodeArgs args(const DynTensor& q, const DynTensor& kc, const DynTensor& vc,
                                const DynTensor& o) const {
    return {q, kc, vc, meta.table, meta.context_lens, meta.k_scale, meta.v_scale, o, {}};
  }
  Status can_implement(const DynTensor& q, const DynTensor& kc, const DynTensor& vc, const DynTensor& o) const {
    return plan.can_implement(args(q, kc, vc, o));
  }
  Status run(const Stream& s, Workspace ws, const DynTensor& q, const DynTensor& kc, const DynTensor& vc,
             const DynTensor& o) const {
    return plan.run(s, ws, args(q, kc, vc, o));
  }
  size_t workspace_size() const { return plan.workspace_size(); }
  KernelSku sku() const { return plan.sku(); }
};

Result<std::unique_ptr<Instance>> prepare(const Stream& s, const Problem& p) {
  auto plan = select_plan(s, p);
  if (!plan) return plan.error();
  const Dims d = dims(p);
  const PagedDecodeDescriptor desc = descriptor(p);
  std::vector<int32_t> table(static_cast<size_t>(std::max<int64_t>(d.b * d.pages(), 1)), 0);
  for (int64_t b = 0; b < d.b; ++b)
    for (int64_t i = 0; i < d.pages(); ++i)
      table[static_cast<size_t>(b * d.pages() + i)] = static_cast<int32_t>(b * d.pages() + d.pages() - 1 - i);
  auto meta =
      upload_paged_metadata(s, d.b, desc.max_blocks_per_seq, table, static_cast<int32_t>(d.ctx), {}, desc.quantized());
  if (!meta) return meta.error();
  BoundPlan bound{std::move(plan).value(), std::move(meta).value()};
  const OperandSpec q{p.dtype, desc.q_shape(), ValueRange{-2, 2, false}};
  const std::vector<int> storage = head_major(p) ? std::vector<int>{0, 2, 1, 3} : std::vector<int>{};
  const OperandSpec kc{p.out_dtype, desc.cache_shape(), ValueRange{-2, 2, false}, storage};
  const OperandSpec vc{p.out_dtype, desc.cache_shape(), ValueRange{1, 2, false}, storage};
  const OperandSpec o{p.dtype, desc.q_shape(), {}};
  return PlanInstance<BoundPlan, 3, 1>::make(s, std::move(bound), p, {q, kc, vc}, {o});
}

Traffic traffic(const Problem& p) {
  const Dims d = dims(p);
  const double keys = static_cast<double>(d.b) * static_cast<double>(d.ctx);
  const double kv = 2.0 * keys * static_cast<double>(d.h_kv * d.d) * static_cast<double>(storage_bytes(p.out_dtype, 1));
  const double qo = 2.0 * static_cast<double>(d.b * d.h * d.d) * static_cast<double>(storage_bytes(p.dtype, 1));
  const double meta = 4.0 * static_cast<double>(d.b * d.pages() + d.b);
  return Traffic{kv + qo + meta, 4.0 * keys * static_cast<double>(d.h * d.d)};
}

std::vector<Problem> kinds(uint32_t v) {
  using K = ElementKind;
  return kind_pairs({{K::F16, K::F16}, {K::Bf16, K::Bf16}, {K::Bf16, K::Fp8E4M3}}, v);
}

std::vector<Shape> default_shapes(DeviceKind device) {
  if (device != DeviceKind::Cuda) return {Shape{2, 37, 4, 2, 64}, Shape{3, 20, 2, 1, 128}};
  std::vector<Shape> r;
  for (int64_t b : {1, 8, 64, 256})
    for (int64_t ctx : {1024, 4096, 16384, 32768})
      if (b * ctx <= 256 * 1024) r.push_back(Shape{b, ctx, 32, 8, 128});
  return r;
}

constexpr ScenarioFamily kPagedDecode{
    "paged_decode",     select_with<select_plan>, prepare, traffic, kinds, default_shapes,
    OutputKind::Chosen, Comparison::Tolerance};

}  // namespace

void add_paged_decode_scenarios(std::vector<Scenario>& out) {
  out.push_back(kPagedDecode.op("paged_decode",
                                "decode attention over a paged KV cache (q [B, H, d], caches [pages, 16, H_kv, d] "
                                "of --out-dtype, fp8e4m3/s8 dequantized), split-KV",
                                0));
  out.push_back(kPagedDecode.op("paged_decode_tc",
                                "paged_decode on the tensor-core kernel (PagedDecodeKernel::TensorCores: 16 query "
                                "rows per warp on mma.sync), whatever the shape",
                                1));
  out.push_back(kPagedDecode.op("paged_decode_simt",
                                "paged_decode on the CUDA-core kernel (PagedDecodeKernel::CudaCores: 8 query rows per "
                                "block, f32 dot products), whatever the shape",
                                2));
  out.push_back(kPagedDecode.op("paged_decode_tc_hnd",
                                "paged_decode_tc over caches stored head-major ([pages, H_kv, 16, d] in memory, "
                                "the same view by strides)",
                                1 + 3));
  out.push_back(kPagedDecode.op("paged_decode_simt_hnd",
                                "paged_decode_simt over caches stored head-major ([pages, H_kv, 16, d] in memory, "
                                "the same view by strides)",
                                2 + 3));
}

}  // namespace baracuda::profiler
