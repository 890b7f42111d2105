// PagedPrefillPlan: every rejection of select (kinds, cache kind, scale layout, head dim, page size, heads and GQA
// divisibility, batch, token counts, pages, block table width, the caches' size, window, scale, tile, backend
// preference, typed element and cache types), can_implement and run (missing and superfluous operands, the scales
// among them, kinds, shapes, strides, cu_seqlens_q's contiguity, alignment, null data, overlapping outputs, a stream
// of another device), with the codes of the sibling plans (attention.hpp, paged_attention.hpp); and the layouts the header
// accepts (any strides for the caches, the scales, the block table and the context lengths). Each rejected run
// writes nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "baracuda/ops/paged_prefill.hpp"
#include "support/expect_error.hpp"

namespace baracuda::test {
namespace {

constexpr ElementKind F16 = ElementKind::F16, Bf16 = ElementKind::Bf16, F32 = ElementKind::F32, S32 = ElementKind::S32,
                      Fp8 = ElementKind::Fp8E4M3, S8 = ElementKind::S8;
constexpr std::string_view P = "PagedPrefillPlan";
constexpr int64_t k30 = int64_t{1} << 30;

void expect_code(const Status& s, ErrorCode code, const std::string& needle) {
  expect_error_naming(s, code, P, needle);
}
// The select rules' messages are the implementation's: only the code and the plan's name are asserted.
void expect_select(const PagedPrefillDescriptor& d, ErrorCode code) {
  expect_error(dynamic::PagedPrefillPlan::select(Stream::host(), d).status(), code, P);
}
bool selects(const PagedPrefillDescriptor& d, const Stream& st = Stream::host()) {
  auto p = dynamic::PagedPrefillPlan::select(st, d);
  EXPECT_TRUE(p) << p.status().to_string();
  return static_cast<bool>(p);
}

// B = 2 (chunks of 2 and 3: T_q = 5, the longest 3), H = 4, H_kv = 2, d = 64, 6 pages of 16, 3 per sequence, f16,
// with lse.
PagedPrefillDescriptor base() {
  return PagedPrefillDescriptor{}.with_element(F16).with_shape(2, 5, 3, 4, 2, 64).with_pages(6, 16, 3).with_lse();
}

TEST(PagedPrefillReject, SelectKinds) {
  for (ElementKind k : {F32, ElementKind::F64, ElementKind::S8, ElementKind::Fp8E4M3, ElementKind::Fp8E5M2})
    expect_select(base().with_element(k), ErrorCode::Unsupported);
  // The caches: q's kind, FP8 E4M3 or s8; q and o f16 or bf16 whatever the caches hold.
  for (ElementKind c : {F32, Bf16, ElementKind::F64, ElementKind::U8, ElementKind::Fp8E5M2})
    expect_select(base().with_kinds(F16, c), ErrorCode::Unsupported);
  expect_select(base().with_kinds(Bf16, F16), ErrorCode::Unsupported);
  for (ElementKind e : {F32, S8, Fp8, ElementKind::U8}) {
    expect_select(base().with_kinds(e, Fp8), ErrorCode::Unsupported);
    expect_select(base().with_kinds(e, S8), ErrorCode::Unsupported);
  }
  PagedPrefillDescriptor bad = base();
  bad.element = static_cast<ElementKind>(200);
  expect_select(bad, ErrorCode::InvalidProblem);
  bad = base();
  bad.cache_kind = static_cast<ElementKind>(200);
  expect_select(bad, ErrorCode::InvalidProblem);
  for (uint8_t layout : {2, 7, 255})
    for (ElementKind c : {F16, Fp8, S8}) {  // PagedDecodePlan's rule: rejected whatever the cache kind
      bad = base().with_kinds(F16, c);
      bad.scale_layout = static_cast<KvScaleLayout>(layout);
      expect_select(bad, ErrorCode::InvalidProblem);
    }
  for (ElementKind e : {F16, Bf16})
    for (ElementKind c : {e, Fp8, S8})
      for (KvScaleLayout l : {KvScaleLayout::PerTensor, KvScaleLayout::PerHead})
        for (int64_t dim : {64, 96, 128, 256})
          for (int64_t bs : {8, 16, 32})
            for (const Stream& st : {Stream::host(), Stream::sim()})
              selects(base().with_kinds(e, c).with_scale_layout(l).with_shape(2, 5, 3, 4, 2, dim).with_pages(6, bs, 3),
                      st);
}

TEST(PagedPrefillReject, SelectShapes) {
  for (int64_t dim : {32, 80, 112, 192, 512, 65})
    expect_select(base().with_shape(2, 5, 3, 4, 2, dim), ErrorCode::Unsupported);
  for (int64_t dim : {0, -64}) expect_select(base().with_shape(2, 5, 3, 4, 2, dim), ErrorCode::InvalidProblem);
  for (int64_t bs : {1, 4, 12, 64}) expect_select(base().with_pages(6, bs, 3), ErrorCode::Unsupported);
  for (int64_t bs : {0, -16}) expect_select(base().with_pages(6, bs, 3), ErrorCode::InvalidProblem);
  // Heads: H_kv divides H, both in [1, 65535].
  expect_select(base().with_shape(2, 5, 3, 4, 3, 64), ErrorCode::InvalidProblem);
  expect_select(base().with_shape(2, 5, 3, 2, 4, 64), ErrorCode::InvalidProblem);
  expect_select(base().with_shape(2, 5, 3, 0, 1, 64), ErrorCode::InvalidProblem);
  expect_select(base().with_shape(2, 5, 3, 4, 0, 64), ErrorCode::InvalidProblem);
  expect_select(base().with_shape(2, 5, 3, -4, -2, 64), ErrorCode::InvalidProblem);
  expect_select(base().with_shape(2, 5, 3, 70000, 1, 64), ErrorCode::Unsupported);
  expect_select(base().with_shape(2, 5, 3, 65536, 65536, 64), ErrorCode::Unsupported);
  selects(base().with_shape(2, 5, 3, 65535, 65535, 64));
  // Batch in [0, 65535]; T_q and max_seqlen_q in [0, 2^30).
  expect_select(base().with_shape(-1, 5, 3, 4, 2, 64), ErrorCode::InvalidProblem);
  expect_select(base().with_shape(65536, 5, 3, 4, 2, 64), ErrorCode::Unsupported);
  selects(base().with_shape(65535, 5, 3, 4, 2, 64));
  for (const auto& [t_q, max_q] : {std::pair{-1, 3}, {5, -1}, {k30, 3}, {5, k30}, {k30, k30}})
    expect_select(base().with_shape(2, t_q, max_q, 4, 2, 64), ErrorCode::InvalidProblem);
  selects(base().with_shape(2, k30 - 1, k30 - 1, 4, 2, 64));
  selects(base().with_shape(0, 0, 0, 4, 2, 64));  // empty problems are valid
  selects(base().with_shape(2, 0, 0, 4, 2, 64));
  // Pages: at least one; the block table's reach max_blocks_per_seq · block_size below 2^30.
  for (int64_t n : {0, -1}) expect_select(base().with_pages(n, 16, 3), ErrorCode::InvalidProblem);
  for (int64_t w : {0, -3}) expect_select(base().with_pages(6, 16, w), ErrorCode::InvalidProblem);
  expect_select(base().with_pages(6, 16, (k30 / 16) + 1), ErrorCode::InvalidProblem);
  expect_select(base().with_pages(6, 32, (k30 / 32) + 1), ErrorCode::InvalidProblem);
  expect_select(base().with_pages(6, 8, int64_t{1} << 40), ErrorCode::InvalidProblem);
  selects(base().with_pages(6, 16, (k30 / 16) - 1));
  // A cache of more than 2^56 elements (each field within its own limit).
  expect_select(base().with_shape(1, 1, 1, 65535, 65535, 256).with_pages(INT32_MAX, 32, 1), ErrorCode::InvalidProblem);
}

TEST(PagedPrefillReject, SelectTile) {
  PagedPrefillDescriptor bad = base();
  bad.tile = static_cast<FlashAttentionTile>(3);
  expect_code(dynamic::PagedPrefillPlan::select(Stream::host(), bad).status(), ErrorCode::InvalidProblem,
              "tile must be Auto, Rows64 or Rows128; got 3");
  // No 128-row kernel at d = 256 (sim; cuda alike); the host device runs its reference whatever the tile.
  const PagedPrefillDescriptor d256 = base().with_shape(2, 5, 3, 4, 2, 256).with_tile(FlashAttentionTile::Rows128);
  expect_code(dynamic::PagedPrefillPlan::select(Stream::sim(), d256).status(), ErrorCode::Unsupported,
              "has no 128-row kernel on the sim device");
  selects(d256);
  for (ElementKind cache : {F16, Fp8, S8})
    for (FlashAttentionTile t : {FlashAttentionTile::Auto, FlashAttentionTile::Rows64, FlashAttentionTile::Rows128}) {
      auto plan = dynamic::PagedPrefillPlan::select(Stream::sim(), base().with_kinds(F16, cache).with_tile(t));
      ASSERT_TRUE(plan) << plan.status().to_string();
      EXPECT_EQ(plan->sku().variant,
                t == FlashAttentionTile::Rows128 ? "fa2_m16n8k16_paged_m128" : "fa2_m16n8k16_paged");
    }
  EXPECT_NE(base().hash(), base().with_tile(FlashAttentionTile::Rows128).hash());
}

// Auto's tile (attention.hpp's **Query tiles**, as FlashAttentionPlan's): 128 rows from 128 query tokens a sequence
// on average (T_q / B) and, under the causal or a window mask, 512 addressable keys (max_blocks_per_seq · block_size),
// at d ≤ 128; an explicit tile is kept.
TEST(PagedPrefillReject, AutoTile) {
  const auto variant = [](const PagedPrefillDescriptor& d) {
    return selected_variant<dynamic::PagedPrefillPlan>(Stream::sim(), d);
  };
  const std::string narrow = "fa2_m16n8k16_paged", wide = "fa2_m16n8k16_paged_m128";
  const PagedPrefillDescriptor chunks = base().with_shape(4, 512, 200, 32, 8, 128).with_pages(1024, 16, 32);
  EXPECT_EQ(variant(chunks), wide);  // causal, 128 rows a sequence, 512 keys
  EXPECT_EQ(variant(PagedPrefillDescriptor(chunks).with_shape(4, 511, 200, 32, 8, 128)), narrow);
  EXPECT_EQ(variant(PagedPrefillDescriptor(chunks).with_pages(1024, 16, 31)), narrow);
  EXPECT_EQ(variant(PagedPrefillDescriptor(chunks).with_pages(1024, 16, 31).with_causal(false)), wide);
  EXPECT_EQ(variant(PagedPrefillDescriptor(chunks).with_pages(1024, 16, 31).with_causal(false).with_window(8)), narrow);
  EXPECT_EQ(variant(PagedPrefillDescriptor(chunks).with_shape(4, 512, 200, 32, 8, 96)), wide);
  EXPECT_EQ(variant(PagedPrefillDescriptor(chunks).with_shape(4, 512, 200, 32, 8, 256)), narrow);
  EXPECT_EQ(variant(PagedPrefillDescriptor(chunks).with_tile(FlashAttentionTile::Rows64)), narrow);
  EXPECT_EQ(variant(base().with_tile(FlashAttentionTile::Rows128)), wide);
}

TEST(PagedPrefillReject, SelectWindowScaleBackend) {
  for (int64_t w : {-2, -100}) expect_select(base().with_window(w), ErrorCode::InvalidProblem);
  selects(base().with_window(0));
  selects(base().with_window(int64_t{1} << 40));
  selects(base().with_causal(false).with_window(7));
  for (double s : {-1.0, -0.0625, std::nan(""), std::numeric_limits<double>::infinity(),
                   -std::numeric_limits<double>::infinity(), 1e300, 1e-50})
    expect_select(base().with_scale(s), ErrorCode::InvalidProblem);
  selects(base().with_scale(0.5));
  expect_other_backend_unsupported<dynamic::PagedPrefillPlan>(Stream::sim(), base(), BackendKind::Host, P);
  expect_other_backend_unsupported<dynamic::PagedPrefillPlan>(Stream::host(), base(), BackendKind::Sim, P);
  expect_other_backend_unsupported<dynamic::PagedPrefillPlan>(Stream::host(), base(), BackendKind::CublasLt, P);
  // The typed plan's T is the descriptor's element, C its cache kind.
  expect_typed_plans_reject<PagedPrefillPlan<__nv_bfloat16>>(base(), P);
  expect_typed_plans_reject<PagedPrefillPlan<__half>>(base().with_element(Bf16), P);
  expect_code(PagedPrefillPlan<__half, int8_t>::select(Stream::host(), base()).status(), ErrorCode::InvalidProblem,
              "the caches");
  expect_code(PagedPrefillPlan<__half>::select(Stream::host(), base().with_kinds(F16, Fp8)).status(),
              ErrorCode::InvalidProblem, "the caches");
  expect_typed_plans_reject<PagedPrefillPlan<__half, __nv_fp8_e4m3>, PagedPrefillPlan<__nv_bfloat16, int8_t>>(
      base().with_kinds(F16, S8), P);
  auto typed = PagedPrefillPlan<__nv_bfloat16>::select(Stream::sim(), base().with_element(Bf16));
  ASSERT_TRUE(typed) << typed.status().to_string();
  EXPECT_EQ(typed->workspace_size(), 0u);
  EXPECT_TRUE(typed->precision_guarantee().deterministic);
  auto quantized = PagedPrefillPlan<__nv_bfloat16, __nv_fp8_e4m3>::select(Stream::sim(), base().with_kinds(Bf16, Fp8));
  ASSERT_TRUE(quantized) << quantized.status().to_string();
  EXPECT_EQ(quantized->workspace_size(), 0u);
}

/// Host operands of base() (or a descriptor of its shape with other cache kinds), each in its own 8-byte aligned
/// buffer (f16 data in u64 storage; the caches' with 128 bytes to spare, a one-byte cache's half unused); the
/// scales dense when quantized.
struct Operands {
  PagedPrefillDescriptor d = base();
  std::vector<uint64_t> qs = std::vector<uint64_t>(5 * 4 * 64 / 4), os = qs;
  std::vector<uint64_t> kc = std::vector<uint64_t>(6 * 16 * 2 * 64 / 4 + 16), vc = kc;
  std::vector<uint64_t> ls = std::vector<uint64_t>(4 * 5 / 2);
  std::vector<int32_t> bt = {0, 1, 2, 3, 4, 5}, cl = {40, 3}, cu = {0, 2, 5};
  std::vector<float> ks = {0.5f, 0.25f, 2.0f, 1.0f}, vs = ks;
  dynamic::PagedPrefillArgs args() {
    dynamic::PagedPrefillArgs a;
    a.q = ConstDynTensor::dense(qs.data(), F16, Shape{5, 4, 64});
    a.key_cache = ConstDynTensor::dense(kc.data(), d.cache_kind, Shape{6, 16, 2, 64});
    a.value_cache = ConstDynTensor::dense(vc.data(), d.cache_kind, Shape{6, 16, 2, 64});
    a.block_tables = ConstDynTensor::dense(bt.data(), S32, Shape{2, 3});
    a.context_lens = ConstDynTensor::dense(cl.data(), S32, Shape{2});
    a.cu_seqlens_q = ConstDynTensor::dense(cu.data(), S32, Shape{3});
    if (d.quantized()) {
      a.k_scale = ConstDynTensor::dense(ks.data(), F32, d.scale_shape());
      a.v_scale = ConstDynTensor::dense(vs.data(), F32, d.scale_shape());
    }
    a.o = DynTensor::dense(os.data(), F16, Shape{5, 4, 64});
    a.lse = DynTensor::dense(ls.data(), F32, Shape{4, 5});
    return a;
  }
  std::span<uint8_t> o() { return {reinterpret_cast<uint8_t*>(os.data()), os.size() * 8}; }
  std::span<uint8_t> lse() { return {reinterpret_cast<uint8_t*>(ls.data()), ls.size() * 8}; }
};

class PagedPrefillOperands : public ::testing::Test {
 protected:
  void SetUp() override { init(base()); }
  /// The plan of `d` (base()'s shape) and its operands, which it accepts and runs.
  void init(const PagedPrefillDescriptor& d) {
    o_.d = d;
    auto p = dynamic::PagedPrefillPlan::select(Stream::host(), d);
    ASSERT_TRUE(p) << p.status().to_string();
    plan_ = std::move(p).value();
    const Status ok = plan_.can_implement(o_.args());
    ASSERT_TRUE(ok.is_ok()) << ok.to_string();
    ASSERT_TRUE(plan_.run(Stream::host(), {}, o_.args()).is_ok());
  }
  /// can_implement and a run on the host reject `a` alike, and the run writes neither o nor lse.
  void reject(const dynamic::PagedPrefillArgs& a, ErrorCode code, const std::string& needle) {
    expect_code(plan_.can_implement(a), code, needle);
    std::fill(o_.o().begin(), o_.o().end(), uint8_t{0x5A});
    std::fill(o_.lse().begin(), o_.lse().end(), uint8_t{0x5A});
    expect_code(plan_.run(Stream::host(), {}, a), code, needle);
    EXPECT_TRUE(std::all_of(o_.o().begin(), o_.o().end(), [](uint8_t b) { return b == 0x5A; }))
        << "run wrote o despite the rejection (" << needle << ")";
    EXPECT_TRUE(std::all_of(o_.lse().begin(), o_.lse().end(), [](uint8_t b) { return b == 0x5A; }))
        << "run wrote lse despite the rejection (" << needle << ")";
  }
  dynamic::PagedPrefillPlan plan_;
  Operands o_;
};

/// The operands in order; `on_operand(a, i, f)` calls f on the i-th (a ConstDynTensor or, for o and lse, a
/// DynTensor).
constexpr const char* kOperands[] = {"q", "key_cache", "value_cache", "block_tables", "context_lens", "cu_seqlens_q",
                                     "o", "lse"};
template <class F>
void on_operand(dynamic::PagedPrefillArgs& a, int which, F f) {
  switch (which) {
    case 0: f(a.q); break;
    case 1: f(a.key_cache); break;
    case 2: f(a.value_cache); break;
    case 3: f(a.block_tables); break;
    case 4: f(a.context_lens); break;
    case 5: f(a.cu_seqlens_q); break;
    case 6: f(a.o); break;
    default: f(a.lse); break;
  }
}

TEST_F(PagedPrefillOperands, MissingAndSuperfluous) {
  for (int which = 0; which < 8; ++which) {
    auto a = o_.args();
    on_operand(a, which, [](auto& t) { t = {}; });
    reject(a, ErrorCode::InvalidProblem, ": " + std::string(kOperands[which]));
  }
  // lse without with_lse.
  PagedPrefillDescriptor no_lse = base();
  no_lse.return_lse = false;
  auto p2 = dynamic::PagedPrefillPlan::select(Stream::host(), no_lse);
  ASSERT_TRUE(p2);
  expect_code(p2->can_implement(o_.args()), ErrorCode::InvalidProblem, "lse");
  auto a = o_.args();
  a.lse = {};
  EXPECT_TRUE(p2->can_implement(a).is_ok()) << p2->can_implement(a).to_string();
  // Scales with a cache of q's kind.
  a = o_.args();
  a.k_scale = ConstDynTensor::dense(o_.ks.data(), F32, Shape{1});
  reject(a, ErrorCode::InvalidProblem, "k_scale");
  a = o_.args();
  a.v_scale = ConstDynTensor::dense(o_.vs.data(), F32, Shape{1});
  reject(a, ErrorCode::InvalidProblem, "v_scale");
}

TEST_F(PagedPrefillOperands, Kinds) {
  const ElementKind wrong[] = {Bf16, Bf16, F32, ElementKind::S64, F32, ElementKind::U32, Bf16, F16};
  for (int which = 0; which < 8; ++which) {
    auto a = o_.args();
    on_operand(a, which, [&](auto& t) { t.kind = wrong[which]; });
    reject(a, ErrorCode::InvalidProblem, ": " + std::string(kOperands[which]));
  }
}

TEST_F(PagedPrefillOperands, Shapes) {
  auto a = o_.args();
  a.q = ConstDynTensor::dense(o_.qs.data(), F16, Shape{5, 2, 64});
  reject(a, ErrorCode::InvalidProblem, ": q");
  a = o_.args();
  a.q = ConstDynTensor::dense(o_.qs.data(), F16, Shape{20, 64});
  reject(a, ErrorCode::InvalidProblem, ": q");
  a = o_.args();
  a.key_cache = ConstDynTensor::dense(o_.kc.data(), F16, Shape{6, 16, 1, 128});
  reject(a, ErrorCode::InvalidProblem, ": key_cache");
  a = o_.args();
  a.key_cache = ConstDynTensor::dense(o_.kc.data(), F16, Shape{6, 8, 2, 64});  // another page size
  reject(a, ErrorCode::InvalidProblem, ": key_cache");
  a = o_.args();
  a.value_cache = ConstDynTensor::dense(o_.vc.data(), F16, Shape{5, 16, 2, 64});
  reject(a, ErrorCode::InvalidProblem, ": value_cache");
  for (const Shape& s : {Shape{2, 2}, Shape{3, 3}, Shape{6}}) {
    a = o_.args();
    a.block_tables = ConstDynTensor::dense(o_.bt.data(), S32, s);
    reject(a, ErrorCode::InvalidProblem, ": block_tables");
  }
  a = o_.args();
  a.context_lens = ConstDynTensor::dense(o_.cl.data(), S32, Shape{1});
  reject(a, ErrorCode::InvalidProblem, ": context_lens");
  for (const Shape& s : {Shape{2}, Shape{4}, Shape{1, 3}}) {
    a = o_.args();
    a.cu_seqlens_q = ConstDynTensor::dense(o_.cu.data(), S32, s);
    reject(a, ErrorCode::InvalidProblem, ": cu_seqlens_q");
  }
  a = o_.args();
  a.o = DynTensor::dense(o_.os.data(), F16, Shape{5, 4, 63});
  reject(a, ErrorCode::InvalidProblem, ": o");
  for (const Shape& s : {Shape{5, 4}, Shape{4, 5, 1}, Shape{20}}) {  // lse is [H, T_q]
    a = o_.args();
    a.lse = DynTensor::dense(o_.ls.data(), F32, s);
    reject(a, ErrorCode::InvalidProblem, ": lse");
  }
}

TEST_F(PagedPrefillOperands, Strides) {
  // Unit stride along d for q, o and both caches.
  auto a = o_.args();
  a.q.stride[2] = 2, a.q.stride[1] = 128, a.q.stride[0] = 0;
  reject(a, ErrorCode::InvalidProblem, ": q");
  a = o_.args();
  a.key_cache.stride[3] = 2;
  reject(a, ErrorCode::InvalidProblem, ": key_cache");
  a = o_.args();
  a.value_cache.stride[3] = -1, a.value_cache.data = o_.vc.data() + 16;
  reject(a, ErrorCode::InvalidProblem, ": value_cache");
  a = o_.args();
  a.o.stride[2] = 2, a.o.stride[1] = 128, a.o.stride[0] = 512;
  reject(a, ErrorCode::InvalidProblem, ": o");
  // Non-negative strides for q, o and lse.
  a = o_.args();
  a.q.stride[1] = -64, a.q.data = o_.qs.data() + 3 * 16;
  reject(a, ErrorCode::InvalidProblem, ": q");
  a = o_.args();
  a.o.stride[0] = -256, a.o.data = o_.os.data() + 4 * 64;
  reject(a, ErrorCode::InvalidProblem, ": o");
  a = o_.args();
  a.lse.stride[1] = -1, a.lse.data = reinterpret_cast<float*>(o_.ls.data()) + 4;
  reject(a, ErrorCode::InvalidProblem, ": lse");
  // Distinct output elements.
  a = o_.args();
  a.o.stride[1] = 32;
  reject(a, ErrorCode::InvalidProblem, ": o");
  a = o_.args();
  a.o.stride[0] = 0;
  reject(a, ErrorCode::InvalidProblem, ": o");
  a = o_.args();
  a.lse.stride[0] = 1, a.lse.stride[1] = 1;
  reject(a, ErrorCode::InvalidProblem, ": lse");
  // cu_seqlens_q contiguous.
  for (int64_t stride : {0, 2, -1}) {
    a = o_.args();
    a.cu_seqlens_q.stride[0] = stride;
    if (stride == -1) a.cu_seqlens_q.data = o_.cu.data() + 2;
    reject(a, ErrorCode::InvalidProblem, ": cu_seqlens_q");
  }
}

TEST_F(PagedPrefillOperands, AlignmentAndNullData) {
  for (int which = 0; which < 8; ++which) {
    auto a = o_.args();
    const int by = which == 3 || which == 5 || which == 7 ? 2 : 1;  // half an s32 / f32, or of an f16
    on_operand(a, which,
               [&](auto& t) { t.data = reinterpret_cast<decltype(t.data)>(reinterpret_cast<uintptr_t>(t.data) + by); });
    reject(a, ErrorCode::MisalignedOperand, ": " + std::string(kOperands[which]));
  }
  auto a = o_.args();
  a.key_cache.data = nullptr;
  reject(a, ErrorCode::InvalidProblem, ": key_cache");
  a = o_.args();
  a.cu_seqlens_q.data = nullptr;
  reject(a, ErrorCode::InvalidProblem, ": cu_seqlens_q");
}

TEST_F(PagedPrefillOperands, Overlap) {
  // o (in the inputs' storage) over each input; lse over o and over inputs.
  auto a = o_.args();
  a.q = ConstDynTensor::dense(o_.os.data(), F16, Shape{5, 4, 64});
  reject(a, ErrorCode::InvalidProblem, "overlap");
  a = o_.args();
  a.o = DynTensor::dense(o_.kc.data() + 100, F16, Shape{5, 4, 64});
  expect_code(plan_.can_implement(a), ErrorCode::InvalidProblem, "overlap");
  a = o_.args();
  a.o = DynTensor::dense(o_.vc.data(), F16, Shape{5, 4, 64});
  expect_code(plan_.can_implement(a), ErrorCode::InvalidProblem, "overlap");
  a = o_.args();
  a.block_tables = ConstDynTensor::dense(o_.os.data() + 8, S32, Shape{2, 3});
  reject(a, ErrorCode::InvalidProblem, "overlap");
  a = o_.args();
  a.context_lens = ConstDynTensor::dense(o_.ls.data(), S32, Shape{2});
  reject(a, ErrorCode::InvalidProblem, "overlap");
  a = o_.args();
  a.cu_seqlens_q = ConstDynTensor::dense(o_.os.data() + 1, S32, Shape{3});
  reject(a, ErrorCode::InvalidProblem, "overlap");
  a = o_.args();
  a.lse = DynTensor::dense(o_.os.data() + 2, F32, Shape{4, 5});
  expect_code(plan_.can_implement(a), ErrorCode::InvalidProblem, "overlap");
  a = o_.args();
  a.lse = DynTensor::dense(o_.kc.data(), F32, Shape{4, 5});
  expect_code(plan_.can_implement(a), ErrorCode::InvalidProblem, "overlap");
}

// What the header accepts: any strides for the block table and the context lengths, permuted caches; the empty
// problem's operands; no workspace. And a stream of another device is rejected.
TEST_F(PagedPrefillOperands, AcceptedLayoutsAndDevice) {
  auto a = o_.args();
  a.key_cache.stride = {2 * 16 * 64, 64, 16 * 64, 1};  // [num_blocks, H_kv, block_size, d] in memory
  a.block_tables.stride = {1, 2};
  a.context_lens.stride[0] = 0;
  EXPECT_TRUE(plan_.can_implement(a).is_ok()) << plan_.can_implement(a).to_string();
  a.block_tables.stride = {-3, -1}, a.block_tables.data = o_.bt.data() + 5;
  a.context_lens.stride[0] = -1, a.context_lens.data = o_.cl.data() + 1;
  EXPECT_TRUE(plan_.can_implement(a).is_ok()) << plan_.can_implement(a).to_string();
  EXPECT_TRUE(plan_.run(Stream::host(), {}, a).is_ok());
  EXPECT_EQ(plan_.workspace_size(), 0u);
  expect_code(plan_.run(Stream::sim(), {}, o_.args()), ErrorCode::InvalidProblem, "");
  auto empty = dynamic::PagedPrefillPlan::select(Stream::host(), base().with_shape(0, 0, 0, 4, 2, 64));
  ASSERT_TRUE(empty);
  dynamic::PagedPrefillArgs e = o_.args();
  e.q = ConstDynTensor::dense(o_.qs.data(), F16, Shape{0, 4, 64});
  e.o = DynTensor::dense(o_.os.data(), F16, Shape{0, 4, 64});
  e.lse = DynTensor::dense(o_.ls.data(), F32, Shape{4, 0});
  e.block_tables = ConstDynTensor::dense(o_.bt.data(), S32, Shape{0, 3});
  e.context_lens = ConstDynTensor::dense(o_.cl.data(), S32, Shape{0});
  e.cu_seqlens_q = ConstDynTensor::dense(o_.cu.data(), S32, Shape{1});
  EXPECT_TRUE(empty->can_implement(e).is_ok()) << empty->can_implement(e).to_string();
  EXPECT_TRUE(empty->run(Stream::host(), {}, e).is_ok());
}

// The caches take any strides with a unit last one (paged_prefill.hpp), negative ones included: the last page first.
TEST_F(PagedPrefillOperands, NegativeCacheStrides) {
  auto a = o_.args();
  a.key_cache.stride[0] = -a.key_cache.stride[0], a.key_cache.data = o_.kc.data() + 5 * 16 * 2 * 64 / 4;
  a.value_cache.stride[2] = -64, a.value_cache.data = o_.vc.data() + 64 / 4;  // kv head 1 before head 0
  EXPECT_TRUE(plan_.can_implement(a).is_ok()) << plan_.can_implement(a).to_string();
  EXPECT_TRUE(plan_.run(Stream::host(), {}, a).is_ok());
}

// An FP8 E4M3 cache with per-head scales ([H_kv] = [2]).
class PagedPrefillQuantized : public PagedPrefillOperands {
 protected:
  void SetUp() override { init(base().with_kinds(F16, Fp8).with_scale_layout(KvScaleLayout::PerHead)); }
};

TEST_F(PagedPrefillQuantized, Scales) {
  // Missing, of another kind or shape, misaligned or null.
  for (const char* name : {"k_scale", "v_scale"}) {
    const bool k = name[0] == 'k';
    auto with = [&](auto edit) {
      auto a = o_.args();
      edit(k ? a.k_scale : a.v_scale);
      return a;
    };
    const std::string needle = ": " + std::string(name);
    reject(with([](ConstDynTensor& t) { t = {}; }), ErrorCode::InvalidProblem, needle);
    for (ElementKind kind : {F16, ElementKind::F64, S32})
      reject(with([&](ConstDynTensor& t) { t.kind = kind; }), ErrorCode::InvalidProblem, needle);
    for (const Shape& shape : {Shape{1}, Shape{3}, Shape{2, 1}, Shape{1, 2}})  // per head: [2]
      reject(with([&](ConstDynTensor& t) { t.shape = shape; }), ErrorCode::InvalidProblem, needle);
    reject(with([](ConstDynTensor& t) { t.data = static_cast<const uint8_t*>(t.data) + 2; }),
           ErrorCode::MisalignedOperand, needle);
    reject(with([](ConstDynTensor& t) { t.data = nullptr; }), ErrorCode::InvalidProblem, needle);
  }
  // The caches' kind is the descriptor's cache_kind (not q's, not the other code).
  auto a = o_.args();
  a.key_cache.kind = S8;
  reject(a, ErrorCode::InvalidProblem, ": key_cache");
  a = o_.args();
  a.value_cache.kind = F16;
  reject(a, ErrorCode::InvalidProblem, ": value_cache");
  // Per tensor: [1], not [H_kv].
  Operands per_tensor;
  per_tensor.d = base().with_kinds(F16, S8);
  auto pt = dynamic::PagedPrefillPlan::select(Stream::host(), per_tensor.d);
  ASSERT_TRUE(pt) << pt.status().to_string();
  a = per_tensor.args();
  EXPECT_TRUE(pt->can_implement(a).is_ok()) << pt->can_implement(a).to_string();
  a.v_scale.shape = Shape{2};
  expect_code(pt->can_implement(a), ErrorCode::InvalidProblem, ": v_scale");
}

TEST_F(PagedPrefillQuantized, OutputsOverlappingAScale) {
  auto a = o_.args();
  a.k_scale = ConstDynTensor::dense(o_.os.data() + 3, F32, Shape{2});
  reject(a, ErrorCode::InvalidProblem, "overlap");
  a = o_.args();
  a.v_scale = ConstDynTensor::dense(reinterpret_cast<float*>(o_.ls.data()) + 5, F32, Shape{2});
  reject(a, ErrorCode::InvalidProblem, "overlap");
}

// The scales take any stride (zero and negative too); a one-byte cache any byte offset.
TEST_F(PagedPrefillQuantized, AcceptedLayouts) {
  auto a = o_.args();
  a.k_scale.stride[0] = 3;
  a.v_scale.stride[0] = -1, a.v_scale.data = o_.vs.data() + 1;
  EXPECT_TRUE(plan_.can_implement(a).is_ok()) << plan_.can_implement(a).to_string();
  EXPECT_TRUE(plan_.run(Stream::host(), {}, a).is_ok());
  a.k_scale.stride[0] = 0;
  a.key_cache.data = reinterpret_cast<const uint8_t*>(o_.kc.data()) + 1;
  a.value_cache.data = reinterpret_cast<const uint8_t*>(o_.vc.data()) + 3;
  a.value_cache.stride = {16 * 129 + 1, 129, 64, 1};  // odd: no row 8-byte aligned
  EXPECT_TRUE(plan_.can_implement(a).is_ok()) << plan_.can_implement(a).to_string();
  EXPECT_TRUE(plan_.run(Stream::host(), {}, a).is_ok());
}

}  // namespace
}  // namespace baracuda::test
