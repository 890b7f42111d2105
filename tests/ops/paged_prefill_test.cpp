// PagedPrefillPlan on every device (host, sim, cuda when a GPU is usable) against the f64 evaluation of
// paged_prefill_test_support.hpp: the host reference within one rounding, the kernels within attention.hpp's bound.
// One table of cases: chunks of 1, 17, 129 and 150 tokens (not tile multiples) at the end of contexts of 40 to 300
// through shuffled pages of 8, 16 and 32; GQA ratios 1, 2, 4 and 8; head dims 64, 96, 128 and 256; f16 and bf16;
// FP8 E4M3 and s8 caches with per-tensor and per-head scales (strided scale views, a negative stride among them);
// causal and not, left windows; chunks longer than their context (rows that see no key: o = 0, lse = +inf); invalid
// page ids, negative and over-long context lengths, invalid cu_seqlens_q; chunks longer than max_seqlen_q (rows not
// written); padded, unaligned, head-major and reversed layouts, strided block tables, context lengths and lse; empty
// problems. Every byte of o and lse that no chunk row covers keeps its sentinel. Then: bit-identical reruns, the
// same bits with the 128-row query tile on half the cases (d ≤ 128), the same bits as FlashAttentionPlan on K/V
// gathered from the pages (unquantized caches), the typed plans.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "paged_prefill_test_support.hpp"
#include "support/devices.hpp"

namespace baracuda::test::prefill {
namespace {

constexpr ElementKind F16 = ElementKind::F16, Bf16 = ElementKind::Bf16, Fp8 = ElementKind::Fp8E4M3,
                      S8 = ElementKind::S8;

/// A value case: Problem::make's arguments, then `edit` (masks, layouts, invalid ids, ...) before the data is drawn.
struct Case {
  const char* name;
  std::vector<int32_t> chunks, lens;
  int64_t h, h_kv, dim, block_size;
  ElementKind e;
  void (*edit)(Problem&) = nullptr;
  Problem problem() const {
    Problem p = Problem::make(chunks, lens, h, h_kv, dim, e, block_size);
    if (edit != nullptr) edit(p);
    return p;
  }
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

// The cases' edits: masks, layouts and invalid values, set after Problem::make.
void lse_only(Problem& p) { p.d.with_lse(); }
void scale_03(Problem& p) { p.d.with_scale(0.3); }
void noncausal_window20(Problem& p) { p.d.with_causal(false).with_window(20).with_lse(); }
void window3(Problem& p) { p.d.with_window(3).with_lse(); }
void noncausal(Problem& p) { p.d.with_causal(false).with_lse(); }
// Page ids outside [0, num_blocks) are masked and never dereferenced (the pool has no such page); lengths are
// clamped to the table's reach, negative ones are 0.
void invalid_pages_and_lengths(Problem& p) {
  const int64_t w = p.d.max_blocks_per_seq;  // 3
  const auto n = static_cast<int32_t>(p.d.num_blocks);
  p.table[0 * w + 1] = -7, p.table[1 * w + 0] = n, p.table[1 * w + 1] = 1 << 30;
  p.ctx[2] = 1 << 30, p.table[2 * w + 2] = 2 * n;  // clamped to 48 (chunk at 31..47), its last page invalid
  p.ctx[3] = -5;                                   // no key
  p.d.with_lse();
}
// Window 0: each row sees its own key only; the rows of an invalid page see none.
void window0_invalid_page(Problem& p) {
  p.table[1] = -1;
  p.d.with_window(0).with_lse();
}
void max_q_30(Problem& p) { p.d.with_shape(2, 80, 30, 2, 1, 64).with_lse(); }
// Effective offsets {5, 40, 40, 80, 80}: sequence 0 has 35 rows over 30 keys, sequence 2 40 rows.
void invalid_cu(Problem& p) {
  p.cu = {5, 40, 20, 90, 200};
  p.d.with_shape(4, 80, 40, 2, 1, 64).with_lse();
}
void padded(Problem& p) {
  p.qo = LayoutKind2::Padded, p.cache = CacheLayout::Padded, p.strided_meta = true;
  p.d.with_lse();
}
void unaligned(Problem& p) {
  p.qo = LayoutKind2::Unaligned, p.cache = CacheLayout::Unaligned;
  p.d.with_lse();
}
void head_major(Problem& p) {
  p.qo = LayoutKind2::HeadMajor, p.cache = CacheLayout::HeadMajor;
  p.d.with_lse();
}
void reversed(Problem& p) {
  p.cache = CacheLayout::Reversed, p.strided_meta = true;
  p.d.with_lse();
}
// Scores spread over tens: the running maximum moves between KV tiles.
void sharp(Problem& p) {
  p.value_scale = 3.0;
  p.d.with_scale(0.5).with_lse();
}
void max_q_zero(Problem& p) { p.d.with_shape(2, 8, 0, 4, 2, 64).with_lse(); }
// Quantized caches (x = code·scale). FP8 per tensor, padded (the 8-byte row loads with gaps between rows).
void fp8_per_tensor_padded(Problem& p) {
  padded(p);
  p.quantize(Fp8, KvScaleLayout::PerTensor);
}
// s8 per head, the scales strided views: k_scale stride 3, v_scale stride −2 (the last head's first in memory).
void s8_per_head_strided_scales(Problem& p) {
  p.quantize(S8, KvScaleLayout::PerHead).d.with_lse();
  p.k_scale_stride = 3, p.v_scale_stride = -2;
}
// FP8 per head, non-causal with a window, odd strides and offsets (the element path, byte-aligned rows).
void fp8_noncausal_unaligned(Problem& p) {
  noncausal_window20(p);
  p.quantize(Fp8, KvScaleLayout::PerHead);
  p.qo = LayoutKind2::Unaligned, p.cache = CacheLayout::Unaligned;
}
void s8_invalid_pages(Problem& p) {
  invalid_pages_and_lengths(p);
  p.quantize(S8, KvScaleLayout::PerTensor);
}

const Case kCases[] = {
    {"f16_d64_gqa4_chunks_1_17_129", {1, 17, 129}, {40, 150, 300}, 4, 1, 64, 16, F16, lse_only},
    {"bf16_d128_gqa8_varlen", {150, 1, 64, 9}, {150, 77, 64, 200}, 8, 1, 128, 32, Bf16, lse_only},
    {"f16_d128_mha_pages8_scale", {17, 33}, {17, 100}, 2, 2, 128, 8, F16, scale_03},
    {"bf16_d64_gqa2_noncausal_window", {40, 5}, {100, 60}, 4, 2, 64, 8, Bf16, noncausal_window20},
    {"f16_d96", {20, 3}, {45, 3}, 2, 2, 96, 16, F16, lse_only},
    {"bf16_d256", {9}, {33}, 2, 1, 256, 32, Bf16, lse_only},
    {"f16_causal_window3", {40, 7}, {60, 7}, 2, 1, 64, 16, F16, window3},
    // L < s_q: causal, the first s_q − L rows see nothing; non-causal, every row sees the L keys.
    {"f16_chunk_longer_than_context", {20, 10, 4}, {8, 0, 30}, 2, 1, 64, 16, F16, lse_only},
    {"bf16_chunk_longer_than_context_noncausal", {20, 10, 4}, {8, 0, 30}, 2, 1, 64, 16, Bf16, noncausal},
    {"f16_invalid_pages_and_lengths", {5, 20, 17, 3}, {40, 20, 30, 16}, 4, 2, 64, 16, F16, invalid_pages_and_lengths},
    {"bf16_window0_invalid_page", {48}, {48}, 2, 2, 64, 16, Bf16, window0_invalid_page},
    {"f16_max_seqlen_q_below_chunk", {70, 10}, {80, 10}, 2, 1, 64, 16, F16, max_q_30},
    {"f16_invalid_cu_seqlens", {20, 20, 20, 20}, {30, 20, 40, 20}, 2, 1, 64, 16, F16, invalid_cu},
    {"f16_padded_layouts", {17, 40}, {30, 70}, 4, 2, 64, 16, F16, padded},
    {"bf16_unaligned_layouts", {17, 40}, {30, 70}, 4, 2, 128, 16, Bf16, unaligned},
    {"f16_head_major_layouts", {17, 40}, {30, 70}, 2, 1, 64, 8, F16, head_major},
    {"bf16_reversed_pages", {33}, {50}, 2, 1, 64, 32, Bf16, reversed},
    {"f16_sharp_softmax", {65}, {200}, 2, 2, 64, 16, F16, sharp},
    {"empty_batch", {}, {}, 4, 2, 64, 16, F16, lse_only},
    {"empty_chunks", {0, 0}, {10, 3}, 4, 2, 64, 16, Bf16, lse_only},
    {"max_seqlen_q_zero", {5, 3}, {10, 3}, 4, 2, 64, 16, F16, max_q_zero},
    {"bf16_fp8_per_tensor_padded", {17, 40}, {30, 70}, 4, 2, 128, 16, Bf16, fp8_per_tensor_padded},
    {"f16_s8_per_head_strided_scales", {20, 9}, {45, 9}, 4, 2, 64, 8, F16, s8_per_head_strided_scales},
    {"bf16_fp8_per_head_noncausal_window_unaligned", {40, 5}, {100, 60}, 4, 2, 64, 8, Bf16, fp8_noncausal_unaligned},
    {"f16_s8_invalid_pages_and_lengths", {5, 20, 17, 3}, {40, 20, 30, 16}, 4, 2, 64, 16, F16, s8_invalid_pages},
};

const Case& named(std::string_view name) {
  for (const Case& c : kCases)
    if (c.name == name) return c;
  return kCases[0];
}

class PagedPrefill : public ::testing::TestWithParam<std::tuple<DeviceKind, Case>> {};

TEST_P(PagedPrefill, MatchesTheF64Evaluation) {
  const auto& [device, c] = GetParam();
  BARACUDA_TEST_STREAM(st, device);
  const Data x(c.problem(), 11);
  Outputs got;
  KernelSku sku;
  const Status s = run_on(st, x, got, &sku);
  ASSERT_TRUE(s.is_ok()) << c.name << ": " << s.to_string();
  EXPECT_EQ(sku.op, "paged_prefill");
  EXPECT_EQ(sku.backend, backend_of(device));
  EXPECT_EQ(sku.variant, device == DeviceKind::Host ? "reference" : "fa2_m16n8k16_paged");
  EXPECT_EQ(check(x, got, device == DeviceKind::Host ? Bound::Rounding : Bound::Kernel, c.name), 0);
}

std::string case_name(const ::testing::TestParamInfo<std::tuple<DeviceKind, Case>>& i) {
  return std::string(to_string(std::get<0>(i.param))) + "_" + std::get<1>(i.param).name;
}
INSTANTIATE_TEST_SUITE_P(Devices, PagedPrefill,
                         ::testing::Combine(::testing::ValuesIn(kTestDevices), ::testing::ValuesIn(kCases)), case_name);

class PagedPrefillDevice : public ::testing::TestWithParam<DeviceKind> {};

TEST_P(PagedPrefillDevice, BitIdenticalReruns) {
  BARACUDA_TEST_STREAM(st, GetParam());
  Problem p = named("f16_invalid_pages_and_lengths").problem();
  p.d.with_window(25);
  const Data x(p, 13);
  Outputs a, b;
  ASSERT_TRUE(run_on(st, x, a).is_ok());
  ASSERT_TRUE(run_on(st, x, b).is_ok());
  EXPECT_TRUE(a.o == b.o && a.lse == b.lse) << "a second run gave other bits";
}

// The 128-row query tile (FlashAttentionTile::Rows128) gives the 64-row tile's bits, whose results
// MatchesTheF64Evaluation checks, on the table's cases that reach its second m-tiles or its loaders' special paths:
// chunks past 64 rows, d = 96 and 128, windows, invalid pages and lengths, a chunk past max_seqlen_q, FP8 and s8
// caches, a sharp softmax, unaligned layouts (half the table: the whole of it doubled this test's sim time).
TEST_P(PagedPrefillDevice, TilesGiveTheSameBits) {
  const DeviceKind device = GetParam();
  if (device == DeviceKind::Host) GTEST_SKIP() << "the host device has one reference, whatever the tile";
  BARACUDA_TEST_STREAM(st, device);
  int compared = 0;
  for (std::string_view name :
       {"f16_d64_gqa4_chunks_1_17_129", "bf16_d128_gqa8_varlen", "f16_d96", "f16_causal_window3",
        "f16_invalid_pages_and_lengths", "f16_max_seqlen_q_below_chunk", "bf16_fp8_per_head_noncausal_window_unaligned",
        "f16_s8_per_head_strided_scales", "f16_sharp_softmax", "bf16_unaligned_layouts"}) {
    const Case& c = named(name);
    ASSERT_EQ(c.name, name);
    Problem p = c.problem();
    p.d.with_tile(FlashAttentionTile::Rows64);
    const Data narrow_in(p, 11);
    Data wide_in = narrow_in;
    wide_in.p.d.with_tile(FlashAttentionTile::Rows128);
    Outputs narrow, wide;
    KernelSku sku;
    ASSERT_TRUE(run_on(st, narrow_in, narrow).is_ok()) << c.name;
    const Status s = run_on(st, wide_in, wide, &sku);
    ASSERT_TRUE(s.is_ok()) << c.name << ": " << s.to_string();
    EXPECT_EQ(sku.variant, "fa2_m16n8k16_paged_m128");
    EXPECT_TRUE(narrow.o == wide.o && narrow.lse == wide.lse) << c.name << ": the 128-row tile gave other bits";
    ++compared;
  }
  EXPECT_EQ(compared, 10);
}

// FlashAttentionPlan on K/V the test gathers from the pages (contiguous [T_k, H_kv, d], varlen) runs the same
// arithmetic: the same bits, with pages in order or shuffled.
TEST_P(PagedPrefillDevice, SameBitsAsFlashAttentionOnGatheredKv) {
  BARACUDA_TEST_STREAM(st, GetParam());
  struct Cross {
    bool shuffle, causal;
    int64_t window, block_size;
    ElementKind e;
  };
  for (const Cross& cr :
       {Cross{false, true, -1, 16, F16}, Cross{true, true, -1, 8, Bf16}, Cross{true, false, 20, 32, F16}}) {
    const std::vector<int32_t> chunks = {17, 1, 60}, lens = {50, 9, 100};
    Problem p = Problem::make(chunks, lens, 4, 2, 64, cr.e, cr.block_size, cr.shuffle, 3);
    p.d.with_causal(cr.causal).with_window(cr.window).with_lse();
    const std::string what = std::string(cr.shuffle ? "shuffled" : "ordered") + " pages of " +
                             std::to_string(cr.block_size) + (cr.causal ? ", causal" : ", window 20");
    const Data x(p, 17);
    Outputs paged;
    ASSERT_TRUE(run_on(st, x, paged).is_ok()) << what;
    attention::Problem ap = attention::Problem::packed(chunks, lens, 4, 2, 64, cr.e);
    ap.d.with_causal(cr.causal).with_window(cr.window, -1).with_lse();
    attention::Data ax(ap, 1);
    ax.q = x.q;
    const int64_t row = 2 * 64;  // one token's K (V) row: H_kv · d elements
    for (size_t b = 0, t = 0; b < lens.size(); ++b)
      for (int64_t j = 0; j < lens[b]; ++j, ++t) {
        const int32_t page = p.table[b * p.d.max_blocks_per_seq + j / cr.block_size];
        const int64_t from = x.cache_at(page, j % cr.block_size, 0, 0) * 2;
        std::copy_n(x.k.begin() + from, row * 2, ax.k.begin() + static_cast<int64_t>(t) * row * 2);
        std::copy_n(x.v.begin() + from, row * 2, ax.v.begin() + static_cast<int64_t>(t) * row * 2);
      }
    attention::Data flat = ax;
    ASSERT_TRUE(attention::run_on(st, ax, flat).is_ok()) << what;
    EXPECT_TRUE(paged.o == flat.o) << what << ": o differs from FlashAttentionPlan's";
    EXPECT_TRUE(paged.lse == flat.lse) << what << ": lse differs from FlashAttentionPlan's";
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, PagedPrefillDevice, ::testing::ValuesIn(kTestDevices),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// PagedPrefillPlan<T, C>'s arguments map onto the erased plan's: the same bits on the host. The problem's layouts
// dense (its scales' strides any).
template <class T, class C>
void expect_typed_matches_erased(Problem p) {
  const PagedPrefillDescriptor& d = p.d;
  const Data x(p, 19);
  Outputs erased;
  ASSERT_TRUE(run_on(Stream::host(), x, erased).is_ok());
  auto plan = PagedPrefillPlan<T, C>::select(Stream::host(), d);
  ASSERT_TRUE(plan) << plan.status().to_string();
  EXPECT_EQ(plan->workspace_size(), 0u);
  std::vector<uint8_t> o = x.o, l = x.lse;
  PagedPrefillArgs<T, C> a;
  const std::array<int64_t, 4> cs = {d.num_blocks, d.block_size, d.kv_heads, d.head_dim};
  const std::array<int64_t, 3> qs = {d.total_q, d.heads, d.head_dim};
  a.q = TensorRef<T, 3>::dense(reinterpret_cast<const T*>(x.q.data()), qs);
  a.key_cache = TensorRef<C, 4>::dense(reinterpret_cast<const C*>(x.k.data()), cs);
  a.value_cache = TensorRef<C, 4>::dense(reinterpret_cast<const C*>(x.v.data()), cs);
  a.block_tables = TensorRef<int32_t, 2>::dense(x.table.data(), {d.batch, d.max_blocks_per_seq});
  a.context_lens = TensorRef<int32_t, 1>::dense(x.ctx.data(), {d.batch});
  a.cu_seqlens_q = TensorRef<int32_t, 1>::dense(p.cu.data(), {d.batch + 1});
  if (d.quantized()) {
    a.k_scale = TensorRef<float, 1>(x.k_scale.s.data() + x.k_scale.lead, {d.scale_shape()[0]}, {x.k_scale.stride});
    a.v_scale = TensorRef<float, 1>(x.v_scale.s.data() + x.v_scale.lead, {d.scale_shape()[0]}, {x.v_scale.stride});
  }
  a.o = TensorMut<T, 3>::dense(reinterpret_cast<T*>(o.data()), qs);
  a.lse = TensorMut<float, 2>::dense(reinterpret_cast<float*>(l.data()), {d.heads, d.total_q});
  ASSERT_TRUE(plan->can_implement(a).is_ok()) << plan->can_implement(a).to_string();
  ASSERT_TRUE(plan->run(Stream::host(), {}, a).is_ok());
  EXPECT_TRUE(o == erased.o && l == erased.lse);
  EXPECT_EQ(check(x, Outputs{o, l}, Bound::Rounding, "typed"), 0);
}

TEST(PagedPrefillTyped, MatchesTheErasedPlan) {
  Problem p = Problem::make({3, 9}, {20, 9}, 2, 1, 64, F16, 8);
  p.d.with_lse();
  expect_typed_matches_erased<__half, __half>(p);
  Problem q = Problem::make({3, 9}, {20, 9}, 4, 2, 64, Bf16, 8);
  q.quantize(Fp8, KvScaleLayout::PerHead).d.with_lse();
  q.k_scale_stride = 2;
  expect_typed_matches_erased<__nv_bfloat16, __nv_fp8_e4m3>(q);
  q.quantize(S8, KvScaleLayout::PerHead);
  expect_typed_matches_erased<__nv_bfloat16, int8_t>(q);
}

}  // namespace
}  // namespace baracuda::test::prefill
