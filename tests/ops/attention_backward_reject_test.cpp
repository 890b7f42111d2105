// FlashAttentionBackwardPlan: every rejection of select (the forward's descriptor rules through the shared checks,
// the head dimensions without a backward kernel, backend preference, typed element), can_implement and run (missing
// lse and dO and every other operand, kinds, shapes, strides, cu_seqlens, alignment, outputs overlapping inputs or
// each other, a workspace too small or misaligned or overlapping an operand, a stream of another device). Each
// rejected run writes nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "baracuda/ops/attention_backward.hpp"
#include "support/expect_error.hpp"

namespace baracuda::test {
namespace {

constexpr ElementKind F16 = ElementKind::F16, Bf16 = ElementKind::Bf16, F32 = ElementKind::F32, S32 = ElementKind::S32;
constexpr std::string_view P = "FlashAttentionBackwardPlan";

void expect_code(const Status& s, ErrorCode code, const std::string& needle) {
  expect_error_naming(s, code, P, needle);
}
void expect_select(const FlashAttentionDescriptor& d, ErrorCode code, const std::string& needle) {
  expect_code(dynamic::FlashAttentionBackwardPlan::select(Stream::host(), d).status(), code, needle);
}

// B = 2, S_q = 3, S_k = 4, H = 4, H_kv = 2, d = 64, f16 (packed: T_q = 5, T_k = 7).
FlashAttentionDescriptor padded() { return FlashAttentionDescriptor{}.with_shape(2, 3, 4, 4, 2, 64).with_element(F16); }
FlashAttentionDescriptor packed() { return padded().with_varlen(5, 7, 3, 4); }

TEST(FlashAttentionBackwardReject, Select) {
  for (int64_t dim : {256, 32, 80, 65})
    expect_select(padded().with_shape(2, 3, 4, 4, 2, dim), ErrorCode::Unsupported, "has no");
  expect_select(padded().with_element(F32), ErrorCode::Unsupported, "must be f16 or bf16");
  expect_select(padded().with_shape(2, 3, 4, 4, 3, 64), ErrorCode::InvalidProblem, "must divide the query heads");
  expect_select(padded().with_causal().with_window(4, 2), ErrorCode::InvalidProblem, "causal is window_right = 0");
  expect_select(padded().with_scale(-1), ErrorCode::InvalidProblem, "softmax scale");
  expect_select(padded().with_shape(2, -3, 4, 4, 2, 64), ErrorCode::InvalidProblem, "seqlen_q and seqlen_k");
  for (ElementKind k : {F16, Bf16})
    for (int64_t dim : {64, 96, 128})
      for (const Stream& st : {Stream::host(), Stream::sim()})
        EXPECT_TRUE(
            dynamic::FlashAttentionBackwardPlan::select(st, padded().with_element(k).with_shape(2, 3, 4, 4, 2, dim)));
  // return_lse and the forward's tile do not matter; an out-of-range tile is rejected as by the forward.
  EXPECT_TRUE(dynamic::FlashAttentionBackwardPlan::select(Stream::host(), padded().with_lse()));
  EXPECT_TRUE(dynamic::FlashAttentionBackwardPlan::select(Stream::sim(),
                                                          padded().with_tile(FlashAttentionTile::Rows128)));
  FlashAttentionDescriptor bad = padded();
  bad.tile = static_cast<FlashAttentionTile>(7);
  expect_select(bad, ErrorCode::InvalidProblem, "tile must be Auto, Rows64 or Rows128; got 7");
  expect_other_backend_unsupported<dynamic::FlashAttentionBackwardPlan>(Stream::host(), padded(), BackendKind::CublasLt,
                                                                        P);
  expect_typed_plans_reject<FlashAttentionBackwardPlan<__nv_bfloat16>>(padded(), P);
  EXPECT_TRUE(FlashAttentionBackwardPlan<__half>::select(Stream::host(), padded()));
}

/// Host operands of padded() or packed(), each in its own 16-byte aligned buffer.
struct Operands {
  bool varlen = false;
  std::vector<uint64_t> qs = std::vector<uint64_t>(6 * 4 * 64 / 4), ks = std::vector<uint64_t>(8 * 2 * 64 / 4),
                        vs = std::vector<uint64_t>(8 * 2 * 64 / 4), os = std::vector<uint64_t>(6 * 4 * 64 / 4),
                        gs = std::vector<uint64_t>(6 * 4 * 64 / 4), ls = std::vector<uint64_t>(12),
                        dqs = std::vector<uint64_t>(6 * 4 * 64 / 4), dks = std::vector<uint64_t>(8 * 2 * 64 / 4),
                        dvs = std::vector<uint64_t>(8 * 2 * 64 / 4), ws = std::vector<uint64_t>(64);
  std::vector<int32_t> cq = {0, 2, 5, 0}, ck = {0, 4, 7, 0};
  int64_t tq() const { return varlen ? 5 : 6; }
  int64_t tk() const { return varlen ? 7 : 8; }
  dynamic::FlashAttentionBackwardArgs args() {
    dynamic::FlashAttentionBackwardArgs a;
    a.q = ConstDynTensor::dense(qs.data(), F16, Shape{tq(), 4, 64});
    a.k = ConstDynTensor::dense(ks.data(), F16, Shape{tk(), 2, 64});
    a.v = ConstDynTensor::dense(vs.data(), F16, Shape{tk(), 2, 64});
    a.o = ConstDynTensor::dense(os.data(), F16, Shape{tq(), 4, 64});
    a.d_o = ConstDynTensor::dense(gs.data(), F16, Shape{tq(), 4, 64});
    a.lse = varlen ? ConstDynTensor::dense(ls.data(), F32, Shape{4, 5})
                   : ConstDynTensor::dense(ls.data(), F32, Shape{2, 4, 3});
    if (varlen) {
      a.cu_seqlens_q = ConstDynTensor::dense(cq.data(), S32, Shape{3});
      a.cu_seqlens_k = ConstDynTensor::dense(ck.data(), S32, Shape{3});
    }
    a.dq = DynTensor::dense(dqs.data(), F16, Shape{tq(), 4, 64});
    a.dk = DynTensor::dense(dks.data(), F16, Shape{tk(), 2, 64});
    a.dv = DynTensor::dense(dvs.data(), F16, Shape{tk(), 2, 64});
    return a;
  }
  Workspace workspace() { return {ws.data(), ws.size() * 8}; }
  std::vector<std::span<uint8_t>> outputs() {
    return {{reinterpret_cast<uint8_t*>(dqs.data()), dqs.size() * 8},
            {reinterpret_cast<uint8_t*>(dks.data()), dks.size() * 8},
            {reinterpret_cast<uint8_t*>(dvs.data()), dvs.size() * 8}};
  }
};

void check_rejections(bool varlen) {
  const FlashAttentionDescriptor desc = varlen ? packed() : padded();
  auto plan = dynamic::FlashAttentionBackwardPlan::select(Stream::host(), desc);
  ASSERT_TRUE(plan);
  Operands o;
  o.varlen = varlen;
  ASSERT_EQ(plan->workspace_size(), static_cast<size_t>(4 * o.tq() * 4 + 15) / 16 * 16);
  ASSERT_TRUE(plan->can_implement(o.args()));
  ASSERT_TRUE(plan->run(Stream::host(), o.workspace(), o.args()));
  auto reject_run = [&](const dynamic::FlashAttentionBackwardArgs& a, Workspace ws, ErrorCode code,
                        const std::string& needle) {
    for (auto s : o.outputs()) std::fill(s.begin(), s.end(), uint8_t{0x5A});
    expect_code(plan->run(Stream::host(), ws, a), code, needle);
    for (auto s : o.outputs())
      EXPECT_TRUE(std::all_of(s.begin(), s.end(), [](uint8_t b) { return b == 0x5A; }))
          << "run wrote an output despite the rejection (" << needle << ")";
  };
  auto reject = [&](const dynamic::FlashAttentionBackwardArgs& a, ErrorCode code, const std::string& needle) {
    expect_code(plan->can_implement(a), code, needle);
    reject_run(a, o.workspace(), code, needle);
  };
  // Missing operands (lse and dO among them).
  const char* names[] = {"q", "k", "v", "o", "dO", "lse", "dq", "dk", "dv", "cu_seqlens_q", "cu_seqlens_k"};
  for (int which = 0; which < (varlen ? 11 : 9); ++which) {
    auto a = o.args();
    if (which == 0) a.q = {};
    if (which == 1) a.k = {};
    if (which == 2) a.v = {};
    if (which == 3) a.o = {};
    if (which == 4) a.d_o = {};
    if (which == 5) a.lse = {};
    if (which == 6) a.dq = {};
    if (which == 7) a.dk = {};
    if (which == 8) a.dv = {};
    if (which == 9) a.cu_seqlens_q = {};
    if (which == 10) a.cu_seqlens_k = {};
    reject(a, ErrorCode::InvalidProblem, ": " + std::string(names[which]) + " is missing");
  }
  if (!varlen) {
    auto a = o.args();
    a.cu_seqlens_k = ConstDynTensor::dense(o.ck.data(), S32, Shape{3});
    reject(a, ErrorCode::InvalidProblem, "cu_seqlens_k must be empty");
  }
  // Kinds.
  {
    auto a = o.args();
    a.d_o.kind = Bf16;
    reject(a, ErrorCode::InvalidProblem, ": dO ");
    a = o.args();
    a.o.kind = Bf16;
    reject(a, ErrorCode::InvalidProblem, ": o ");
    a = o.args();
    a.lse.kind = ElementKind::F16;
    reject(a, ErrorCode::InvalidProblem, ": lse ");
    a = o.args();
    a.dk.kind = Bf16;
    reject(a, ErrorCode::InvalidProblem, ": dk ");
    if (varlen) {
      a = o.args();
      a.cu_seqlens_q.kind = F32;
      reject(a, ErrorCode::InvalidProblem, ": cu_seqlens_q ");
    }
  }
  // Shapes and strides.
  {
    auto a = o.args();
    a.dq = DynTensor::dense(o.dqs.data(), F16, Shape{o.tq(), 2, 64});
    reject(a, ErrorCode::InvalidProblem, ": dq ");
    a = o.args();
    a.dv = DynTensor::dense(o.dvs.data(), F16, Shape{o.tk(), 4, 64});
    reject(a, ErrorCode::InvalidProblem, ": dv ");
    a = o.args();
    a.d_o = ConstDynTensor::dense(o.gs.data(), F16, Shape{o.tq() - 1, 4, 64});
    reject(a, ErrorCode::InvalidProblem, ": dO ");
    a = o.args();
    a.lse = ConstDynTensor::dense(o.ls.data(), F32, varlen ? Shape{4, 4} : Shape{2, 4, 2});
    reject(a, ErrorCode::InvalidProblem, ": lse ");
    a = o.args();
    a.dk.stride = {128, 1, 2};  // d not unit-stride
    reject(a, ErrorCode::InvalidProblem, "unit stride along d");
    a = o.args();
    a.dq.stride = {64, 64, 1};  // two heads on one row
    reject(a, ErrorCode::InvalidProblem, "dq's elements overlap");
    a = o.args();
    a.d_o.data = reinterpret_cast<const uint8_t*>(o.gs.data()) + 1;
    reject(a, ErrorCode::MisalignedOperand, "dO");
  }
  // Outputs overlapping inputs or each other.
  {
    auto a = o.args();
    a.dq.data = const_cast<void*>(a.q.data);
    reject(a, ErrorCode::InvalidProblem, "dq overlaps q");
    a = o.args();
    a.dq.data = const_cast<void*>(a.d_o.data);
    reject(a, ErrorCode::InvalidProblem, "dq overlaps dO");
    a = o.args();
    a.dk.data = const_cast<void*>(a.k.data);
    reject(a, ErrorCode::InvalidProblem, "dk overlaps k");
    a = o.args();
    a.dv.data = const_cast<void*>(a.v.data);
    reject(a, ErrorCode::InvalidProblem, "dv overlaps v");
    a = o.args();
    a.dv.data = o.dks.data();
    reject(a, ErrorCode::InvalidProblem, "dv overlaps dk");
    a = o.args();
    a.dk.data = o.dqs.data();
    reject(a, ErrorCode::InvalidProblem, "dk overlaps dq");
    a = o.args();
    a.dq.data = const_cast<void*>(a.lse.data);
    reject(a, ErrorCode::InvalidProblem, "dq overlaps lse");
    a = o.args();
    a.dq.data = const_cast<void*>(a.o.data);
    reject(a, ErrorCode::InvalidProblem, "dq overlaps o");
  }
  // The workspace: too small, misaligned, overlapping an operand.
  {
    Workspace small(o.ws.data(), plan->workspace_size() - 16);
    reject_run(o.args(), small, ErrorCode::WorkspaceTooSmall, "workspace too small");
    reject_run(o.args(), {}, ErrorCode::WorkspaceTooSmall, "workspace too small");
    Workspace odd(reinterpret_cast<uint8_t*>(o.ws.data()) + 8, plan->workspace_size());
    reject_run(o.args(), odd, ErrorCode::MisalignedOperand, "workspace");
    Workspace on_dq(o.dqs.data(), plan->workspace_size());
    reject_run(o.args(), on_dq, ErrorCode::InvalidProblem, "the workspace overlaps dq");
  }
  // A stream of another device.
  expect_code(plan->run(Stream::sim(), o.workspace(), o.args()), ErrorCode::InvalidProblem, "");
}

TEST(FlashAttentionBackwardReject, PaddedOperands) { check_rejections(false); }
TEST(FlashAttentionBackwardReject, PackedOperands) { check_rejections(true); }

TEST(FlashAttentionBackwardReject, PlanProperties) {
  auto h = dynamic::FlashAttentionBackwardPlan::select(Stream::host(), padded());
  auto s = dynamic::FlashAttentionBackwardPlan::select(Stream::sim(), padded().with_element(Bf16));
  ASSERT_TRUE(h && s);
  EXPECT_EQ(h->sku().op, "flash_attention_backward");
  EXPECT_NE(to_string(s->sku()).find("fa2_bwd_m16n8k16"), std::string::npos) << to_string(s->sku());
  EXPECT_TRUE(s->precision_guarantee().deterministic);
  // Empty problems need no D but the rule is uniform: H·T_q f32 rounded to 16 bytes.
  auto e = dynamic::FlashAttentionBackwardPlan::select(Stream::host(), padded().with_shape(0, 0, 0, 3, 1, 64));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->workspace_size(), 0u);
  auto v = dynamic::FlashAttentionBackwardPlan::select(Stream::host(), padded().with_shape(1, 5, 4, 3, 1, 64));
  ASSERT_TRUE(v);
  EXPECT_EQ(v->workspace_size(), 64u);  // 60 bytes of D, rounded up
}

}  // namespace
}  // namespace baracuda::test
