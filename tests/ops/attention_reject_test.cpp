// FlashAttentionPlan: every rejection of select (kinds, head dim, heads and GQA divisibility, batch and lengths,
// varlen totals, windows, causal with a right window, scale, tile, backend preference, typed element), can_implement
// and run (missing and superfluous operands, kinds, shapes, strides, cu_seqlens shape/kind/contiguity, alignment, null
// data, overlapping outputs, a stream of another device). Each rejected run writes nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "baracuda/ops/attention.hpp"
#include "support/expect_error.hpp"

namespace baracuda::test {
namespace {

constexpr ElementKind F16 = ElementKind::F16, Bf16 = ElementKind::Bf16, F32 = ElementKind::F32, S32 = ElementKind::S32;
constexpr std::string_view P = "FlashAttentionPlan";

void expect_code(const Status& s, ErrorCode code, const std::string& needle) {
  expect_error_naming(s, code, P, needle);
}
void expect_select(const FlashAttentionDescriptor& d, ErrorCode code, const std::string& needle,
                   PlanPreference pref = {}) {
  expect_code(dynamic::FlashAttentionPlan::select(Stream::host(), d, pref).status(), code, needle);
}

// B = 2, S_q = 3, S_k = 4, H = 4, H_kv = 2, d = 64, f16, with lse.
FlashAttentionDescriptor padded() {
  return FlashAttentionDescriptor{}.with_shape(2, 3, 4, 4, 2, 64).with_element(F16).with_lse();
}
// The same heads, packed: T_q = 5, T_k = 7, longest 3 and 4.
FlashAttentionDescriptor packed() { return padded().with_varlen(5, 7, 3, 4); }

TEST(FlashAttentionReject, SelectKindsAndHeadDims) {
  for (ElementKind k : {F32, ElementKind::F64, ElementKind::S8, ElementKind::Fp8E4M3})
    expect_select(padded().with_element(k), ErrorCode::Unsupported, "must be f16 or bf16");
  FlashAttentionDescriptor bad = padded();
  bad.element = static_cast<ElementKind>(200);
  expect_select(bad, ErrorCode::InvalidProblem, "");
  for (int64_t dim : {32, 80, 112, 192, 512, 65})
    expect_select(padded().with_shape(2, 3, 4, 4, 2, dim), ErrorCode::Unsupported, "has no kernel");
  for (int64_t dim : {0, -64})
    expect_select(padded().with_shape(2, 3, 4, 4, 2, dim), ErrorCode::InvalidProblem, "head dimension must be >= 1");
  for (ElementKind k : {F16, Bf16})
    for (int64_t dim : {64, 96, 128, 256})
      for (const Stream& st : {Stream::host(), Stream::sim()})
        EXPECT_TRUE(dynamic::FlashAttentionPlan::select(st, padded().with_element(k).with_shape(2, 3, 4, 4, 2, dim)));
}

TEST(FlashAttentionReject, SelectTile) {
  FlashAttentionDescriptor bad = padded();
  bad.tile = static_cast<FlashAttentionTile>(3);
  expect_select(bad, ErrorCode::InvalidProblem, "tile must be Auto, Rows64 or Rows128; got 3");
  // No 128-row kernel at d = 256 (sim; cuda alike); the host device runs its reference whatever the tile.
  const FlashAttentionDescriptor d256 = padded().with_shape(2, 3, 4, 4, 2, 256).with_tile(FlashAttentionTile::Rows128);
  expect_code(dynamic::FlashAttentionPlan::select(Stream::sim(), d256).status(), ErrorCode::Unsupported,
              "has no 128-row kernel on the sim device");
  EXPECT_TRUE(dynamic::FlashAttentionPlan::select(Stream::host(), d256));
  for (FlashAttentionTile t : {FlashAttentionTile::Auto, FlashAttentionTile::Rows64, FlashAttentionTile::Rows128})
    for (int64_t dim : {64, 96, 128}) {
      const FlashAttentionDescriptor d = padded().with_shape(2, 3, 4, 4, 2, dim).with_tile(t);
      auto plan = dynamic::FlashAttentionPlan::select(Stream::sim(), d);
      ASSERT_TRUE(plan) << plan.status().to_string();
      EXPECT_EQ(plan->sku().variant, t == FlashAttentionTile::Rows128 ? "fa2_m16n8k16_m128" : "fa2_m16n8k16");
    }
  EXPECT_EQ(to_string(FlashAttentionTile::Rows128), "rows128");
  EXPECT_NE(padded().hash(), padded().with_tile(FlashAttentionTile::Rows128).hash());
}

// Auto's tile (attention.hpp's **Query tiles**): 128 rows from 128 query rows a sequence on average, and 512 keys
// under a causal or window mask, at d ≤ 128; each bound met exactly and missed by one.
TEST(FlashAttentionReject, AutoTile) {
  const auto variant = [](const FlashAttentionDescriptor& d) {
    return selected_variant<dynamic::FlashAttentionPlan>(Stream::sim(), d);
  };
  const std::string narrow = "fa2_m16n8k16", wide = "fa2_m16n8k16_m128";
  EXPECT_EQ(variant(padded().with_shape(2, 127, 4096, 4, 2, 128)), narrow);
  EXPECT_EQ(variant(padded().with_shape(2, 128, 64, 4, 2, 128)), wide);  // unmasked: any number of keys
  EXPECT_EQ(variant(padded().with_shape(2, 128, 511, 4, 2, 64).with_causal()), narrow);
  EXPECT_EQ(variant(padded().with_shape(2, 128, 512, 4, 2, 96).with_causal()), wide);
  EXPECT_EQ(variant(padded().with_shape(2, 512, 511, 4, 2, 128).with_window(100, -1)), narrow);
  EXPECT_EQ(variant(padded().with_shape(2, 512, 512, 4, 2, 128).with_window(-1, 0)), wide);
  EXPECT_EQ(variant(padded().with_shape(2, 4096, 4096, 4, 2, 256)), narrow);  // no 128-row kernel at d = 256
  // Packed batches: the mean lengths T / B (3 sequences: 383 / 3 = 127 rows, 384 / 3 = 128).
  EXPECT_EQ(variant(padded().with_shape(3, 1, 1, 4, 2, 128).with_varlen(383, 600, 300, 300)), narrow);
  EXPECT_EQ(variant(padded().with_shape(3, 1, 1, 4, 2, 128).with_varlen(384, 600, 300, 300)), wide);
  EXPECT_EQ(variant(padded().with_shape(3, 1, 1, 4, 2, 128).with_varlen(384, 1535, 300, 600).with_causal()), narrow);
  EXPECT_EQ(variant(padded().with_shape(3, 1, 1, 4, 2, 128).with_varlen(384, 1536, 300, 600).with_causal()), wide);
  // An explicit tile is kept whatever the shape.
  EXPECT_EQ(variant(padded().with_shape(2, 4096, 4096, 4, 2, 128).with_tile(FlashAttentionTile::Rows64)), narrow);
  EXPECT_EQ(variant(padded().with_tile(FlashAttentionTile::Rows128)), wide);
}

TEST(FlashAttentionReject, SelectHeadsAndLengths) {
  expect_select(padded().with_shape(2, 3, 4, 4, 3, 64), ErrorCode::InvalidProblem, "must divide the query heads");
  expect_select(padded().with_shape(2, 3, 4, 2, 4, 64), ErrorCode::InvalidProblem, "must divide the query heads");
  expect_select(padded().with_shape(2, 3, 4, 0, 1, 64), ErrorCode::InvalidProblem, "heads and kv_heads must be >= 1");
  expect_select(padded().with_shape(2, 3, 4, 4, 0, 64), ErrorCode::InvalidProblem, "heads and kv_heads must be >= 1");
  expect_select(padded().with_shape(2, 3, 4, 65536, 1, 64), ErrorCode::Unsupported, "at most 65535 heads");
  expect_select(padded().with_shape(-1, 3, 4, 4, 2, 64), ErrorCode::InvalidProblem, "batch must be >= 0");
  expect_select(padded().with_shape(65536, 3, 4, 4, 2, 64), ErrorCode::Unsupported, "at most 65535 batches");
  expect_select(padded().with_shape(2, -3, 4, 4, 2, 64), ErrorCode::InvalidProblem, "seqlen_q and seqlen_k");
  expect_select(padded().with_shape(2, 3, -4, 4, 2, 64), ErrorCode::InvalidProblem, "seqlen_q and seqlen_k");
  expect_select(padded().with_shape(2, int64_t{1} << 30, 4, 4, 2, 64), ErrorCode::InvalidProblem, "[0, 2^30)");
  expect_select(padded().with_shape(4, int64_t{1} << 28, 4, 4, 2, 64), ErrorCode::InvalidProblem,
                "B * seqlen_q and B * seqlen_k");
  FlashAttentionDescriptor t = padded();
  t.total_q = 6;
  expect_select(t, ErrorCode::InvalidProblem, "total_q and total_k are for packed batches");
  expect_select(packed().with_varlen(-1, 7, 3, 4), ErrorCode::InvalidProblem, "total_q and total_k");
  expect_select(packed().with_varlen(5, int64_t{1} << 30, 3, 4), ErrorCode::InvalidProblem, "total_q and total_k");
  EXPECT_TRUE(dynamic::FlashAttentionPlan::select(Stream::host(), packed()));
  EXPECT_TRUE(dynamic::FlashAttentionPlan::select(Stream::host(), padded().with_shape(0, 0, 0, 1, 1, 128)));
}

TEST(FlashAttentionReject, SelectMasksAndScale) {
  expect_select(padded().with_window(-2, 0), ErrorCode::InvalidProblem, "window bounds must be >= -1");
  expect_select(padded().with_window(3, -7), ErrorCode::InvalidProblem, "window bounds must be >= -1");
  expect_select(padded().with_causal().with_window(4, 2), ErrorCode::InvalidProblem, "causal is window_right = 0");
  EXPECT_TRUE(dynamic::FlashAttentionPlan::select(Stream::host(), padded().with_causal().with_window(4, 0)));
  EXPECT_TRUE(dynamic::FlashAttentionPlan::select(Stream::host(), padded().with_causal().with_window(4, -1)));
  EXPECT_TRUE(dynamic::FlashAttentionPlan::select(Stream::host(), padded().with_window(int64_t{1} << 40, 0)));
  for (double s : {-0.125, std::nan(""), std::numeric_limits<double>::infinity(), 1e39, 1e-50})
    expect_select(padded().with_scale(s), ErrorCode::InvalidProblem, "softmax scale");
  EXPECT_TRUE(dynamic::FlashAttentionPlan::select(Stream::host(), padded().with_scale(0.5)));
}

TEST(FlashAttentionReject, SelectBackend) {
  expect_other_backend_unsupported<dynamic::FlashAttentionPlan>(Stream::host(), padded(), BackendKind::CublasLt, P);
  expect_other_backend_unsupported<dynamic::FlashAttentionPlan>(Stream::sim(), padded(), BackendKind::Host, P);
  expect_typed_plans_reject<FlashAttentionPlan<__nv_bfloat16>>(padded(), P);
  EXPECT_TRUE(FlashAttentionPlan<__half>::select(Stream::host(), padded()));
}

/// Host operands of padded() or packed(), each in its own 16-byte aligned buffer.
struct Operands {
  bool varlen = false;
  std::vector<uint64_t> qs = std::vector<uint64_t>(6 * 4 * 64 / 4), ks = std::vector<uint64_t>(8 * 2 * 64 / 4),
                        vs = std::vector<uint64_t>(8 * 2 * 64 / 4), os = std::vector<uint64_t>(6 * 4 * 64 / 4),
                        ls = std::vector<uint64_t>(12);
  std::vector<int32_t> cq = {0, 2, 5, 0}, ck = {0, 4, 7, 0};
  int64_t tq() const { return varlen ? 5 : 6; }
  int64_t tk() const { return varlen ? 7 : 8; }
  dynamic::FlashAttentionArgs args() {
    dynamic::FlashAttentionArgs a;
    a.q = ConstDynTensor::dense(qs.data(), F16, Shape{tq(), 4, 64});
    a.k = ConstDynTensor::dense(ks.data(), F16, Shape{tk(), 2, 64});
    a.v = ConstDynTensor::dense(vs.data(), F16, Shape{tk(), 2, 64});
    if (varlen) {
      a.cu_seqlens_q = ConstDynTensor::dense(cq.data(), S32, Shape{3});
      a.cu_seqlens_k = ConstDynTensor::dense(ck.data(), S32, Shape{3});
    }
    a.o = DynTensor::dense(os.data(), F16, Shape{tq(), 4, 64});
    a.lse = varlen ? DynTensor::dense(ls.data(), F32, Shape{4, 5}) : DynTensor::dense(ls.data(), F32, Shape{2, 4, 3});
    return a;
  }
  std::span<uint8_t> o() { return {reinterpret_cast<uint8_t*>(os.data()), os.size() * 8}; }
  std::span<uint8_t> lse() { return {reinterpret_cast<uint8_t*>(ls.data()), ls.size() * 8}; }
};

void check_rejections(bool varlen) {
  const FlashAttentionDescriptor desc = varlen ? packed() : padded();
  auto plan = dynamic::FlashAttentionPlan::select(Stream::host(), desc);
  ASSERT_TRUE(plan);
  Operands o;
  o.varlen = varlen;
  ASSERT_TRUE(plan->can_implement(o.args()));
  ASSERT_TRUE(plan->run(Stream::host(), {}, o.args()));
  auto reject = [&](const dynamic::FlashAttentionArgs& a, ErrorCode code, const std::string& needle) {
    expect_code(plan->can_implement(a), code, needle);
    std::fill(o.o().begin(), o.o().end(), uint8_t{0x5A});
    std::fill(o.lse().begin(), o.lse().end(), uint8_t{0x5A});
    expect_code(plan->run(Stream::host(), {}, a), code, needle);
    EXPECT_TRUE(std::all_of(o.o().begin(), o.o().end(), [](uint8_t b) { return b == 0x5A; }))
        << "run wrote o despite the rejection (" << needle << ")";
    EXPECT_TRUE(std::all_of(o.lse().begin(), o.lse().end(), [](uint8_t b) { return b == 0x5A; }))
        << "run wrote lse despite the rejection (" << needle << ")";
  };
  // Missing operands: the message says "missing" and names the operand.
  const char* names[] = {"q", "k", "v", "o", "lse", "cu_seqlens_q", "cu_seqlens_k"};
  for (int which = 0; which < (varlen ? 7 : 5); ++which) {
    auto a = o.args();
    if (which == 0) a.q = {};
    if (which == 1) a.k = {};
    if (which == 2) a.v = {};
    if (which == 3) a.o = {};
    if (which == 4) a.lse = {};
    if (which == 5) a.cu_seqlens_q = {};
    if (which == 6) a.cu_seqlens_k = {};
    reject(a, ErrorCode::InvalidProblem, ": " + std::string(names[which]) + " is missing");
  }
  // Operands the descriptor does not take: lse without with_lse; cu_seqlens with padded batches.
  {
    FlashAttentionDescriptor no_lse = desc;
    no_lse.return_lse = false;
    auto p2 = dynamic::FlashAttentionPlan::select(Stream::host(), no_lse);
    ASSERT_TRUE(p2);
    expect_code(p2->can_implement(o.args()), ErrorCode::InvalidProblem, "lse must be empty");
    if (!varlen) {
      auto a = o.args();
      a.cu_seqlens_q = ConstDynTensor::dense(o.cq.data(), S32, Shape{3});
      reject(a, ErrorCode::InvalidProblem, "cu_seqlens_q must be empty");
    }
  }
  // Kinds.
  {
    auto a = o.args();
    a.q.kind = Bf16;
    reject(a, ErrorCode::InvalidProblem, ": q ");
    a = o.args();
    a.k.kind = Bf16;
    reject(a, ErrorCode::InvalidProblem, ": k ");
    a = o.args();
    a.v.kind = Bf16;
    reject(a, ErrorCode::InvalidProblem, ": v ");
    a = o.args();
    a.o.kind = Bf16;
    reject(a, ErrorCode::InvalidProblem, ": o ");
    a = o.args();
    a.lse.kind = S32;
    reject(a, ErrorCode::InvalidProblem, ": lse ");
    if (varlen) {
      a = o.args();
      a.cu_seqlens_q.kind = F32;
      reject(a, ErrorCode::InvalidProblem, ": cu_seqlens_q ");
      a = o.args();
      a.cu_seqlens_k = ConstDynTensor::dense(o.cq.data(), ElementKind::S64, Shape{3});
      reject(a, ErrorCode::InvalidProblem, ": cu_seqlens_k ");
    }
  }
  // Shapes.
  {
    auto a = o.args();
    a.q = ConstDynTensor::dense(o.qs.data(), F16, Shape{o.tq(), 2, 64});
    reject(a, ErrorCode::InvalidProblem, ": q ");
    a = o.args();
    a.q = ConstDynTensor::dense(o.qs.data(), F16, Shape{o.tq() * 4, 64});
    reject(a, ErrorCode::InvalidProblem, ": q ");
    a = o.args();
    a.k = ConstDynTensor::dense(o.ks.data(), F16, Shape{o.tk(), 4, 32});
    reject(a, ErrorCode::InvalidProblem, ": k ");
    a = o.args();
    a.v = ConstDynTensor::dense(o.vs.data(), F16, Shape{o.tk() - 1, 2, 64});
    reject(a, ErrorCode::InvalidProblem, ": v ");
    a = o.args();
    a.o = DynTensor::dense(o.os.data(), F16, Shape{o.tq(), 4, 63});
    reject(a, ErrorCode::InvalidProblem, ": o ");
    a = o.args();
    a.lse =
        varlen ? DynTensor::dense(o.ls.data(), F32, Shape{2, 4, 3}) : DynTensor::dense(o.ls.data(), F32, Shape{4, 6});
    reject(a, ErrorCode::InvalidProblem, ": lse ");
    if (varlen) {
      a = o.args();
      a.cu_seqlens_q = ConstDynTensor::dense(o.cq.data(), S32, Shape{4});
      reject(a, ErrorCode::InvalidProblem, ": cu_seqlens_q ");
      a = o.args();
      a.cu_seqlens_k = ConstDynTensor::dense(o.ck.data(), S32, Shape{1, 3});
      reject(a, ErrorCode::InvalidProblem, ": cu_seqlens_k ");
    }
  }
  // Strides: unit along d, non-negative elsewhere, contiguous cu_seqlens, outputs that do not overlap themselves.
  {
    auto a = o.args();
    a.k.stride[2] = 2;
    a.k.stride[1] = 0, a.k.stride[0] = 128;
    reject(a, ErrorCode::InvalidProblem, "k must have unit stride along d");
    a = o.args();
    a.v.stride[0] = -128;
    a.v.data = o.vs.data() + (o.tk() - 1) * 32;
    reject(a, ErrorCode::InvalidProblem, "v's strides");
    a = o.args();
    a.q.stride[1] = -64, a.q.data = o.qs.data() + 3 * 16;
    reject(a, ErrorCode::InvalidProblem, "q's strides");
    a = o.args();
    a.o.stride[1] = 32;  // heads overlap along d
    reject(a, ErrorCode::InvalidProblem, "o's elements overlap");
    a = o.args();
    a.o.stride[0] = 64, a.o.stride[1] = 64;
    reject(a, ErrorCode::InvalidProblem, "o's elements overlap");
    a = o.args();
    a.o.stride[0] = 0;
    reject(a, ErrorCode::InvalidProblem, ": o ");
    a = o.args();
    a.lse.stride[0] = 1, a.lse.stride[1] = 1;
    reject(a, ErrorCode::InvalidProblem, "lse's elements overlap");
    if (varlen) {
      a = o.args();
      a.cu_seqlens_q.stride[0] = 0;
      reject(a, ErrorCode::InvalidProblem, "cu_seqlens_q must be contiguous");
      a = o.args();
      a.cu_seqlens_k.stride[0] = -1, a.cu_seqlens_k.data = o.ck.data() + 2;
      reject(a, ErrorCode::InvalidProblem, "cu_seqlens_k must be contiguous");
    }
  }
  // Alignment: a pointer not aligned to its element.
  {
    auto a = o.args();
    a.q.data = reinterpret_cast<const uint8_t*>(o.qs.data()) + 1;
    reject(a, ErrorCode::MisalignedOperand, ": q is not aligned");
    a = o.args();
    a.lse.data = reinterpret_cast<uint8_t*>(o.ls.data()) + 2;
    reject(a, ErrorCode::MisalignedOperand, ": lse is not aligned");
    if (varlen) {
      a = o.args();
      a.cu_seqlens_k.data = reinterpret_cast<const uint8_t*>(o.ck.data()) + 2;
      reject(a, ErrorCode::MisalignedOperand, ": cu_seqlens_k is not aligned");
    }
  }
  // Null data with elements.
  {
    auto a = o.args();
    a.v.data = nullptr;
    reject(a, ErrorCode::InvalidProblem, ": v ");
  }
  // Overlap: o and lse over each input and each other.
  {
    auto a = o.args();
    a.q = ConstDynTensor::dense(o.os.data(), F16, Shape{o.tq(), 4, 64});
    expect_code(plan->can_implement(a), ErrorCode::InvalidProblem, "overlap");
    a = o.args();
    a.v = ConstDynTensor::dense(o.os.data() + 16, F16, Shape{o.tk(), 2, 64});
    expect_code(plan->can_implement(a), ErrorCode::InvalidProblem, "overlap");
    a = o.args();
    a.k = ConstDynTensor::dense(o.ls.data(), F16, o.args().k.shape);  // k over lse (read-only here)
    expect_code(plan->can_implement(a), ErrorCode::InvalidProblem, "overlap");
    a = o.args();
    a.lse =
        varlen ? DynTensor::dense(o.os.data(), F32, Shape{4, 5}) : DynTensor::dense(o.os.data(), F32, Shape{2, 4, 3});
    expect_code(plan->can_implement(a), ErrorCode::InvalidProblem, "overlap");
    if (varlen) {
      a = o.args();
      a.cu_seqlens_q = ConstDynTensor::dense(o.os.data(), S32, Shape{3});
      expect_code(plan->can_implement(a), ErrorCode::InvalidProblem, "overlap");
    }
  }
  // A stream of another device.
  expect_code(plan->run(Stream::sim(), {}, o.args()), ErrorCode::InvalidProblem, "");
}

TEST(FlashAttentionReject, CanImplementAndRunPadded) { check_rejections(false); }
TEST(FlashAttentionReject, CanImplementAndRunPacked) { check_rejections(true); }

}  // namespace
}  // namespace baracuda::test
