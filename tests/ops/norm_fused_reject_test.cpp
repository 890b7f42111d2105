// NormPlan's fused variants: every rejection of select (the quantization the descriptor asks for, through the
// quantize plan it equals; the backward's refusal of the forward's fusions) and of can_implement (each fused
// operand missing, present where the descriptor has none, of the wrong kind or shape; overlaps, and the
// exact in-place aliases that are allowed).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "support/expect_error.hpp"

namespace baracuda::test {
namespace {

using K = ElementKind;

Status select_status(const NormDescriptor& d) { return dynamic::NormPlan::select(Stream::host(), d).status(); }

TEST(NormFusedRejects, Descriptor) {
  const NormDescriptor ok = NormDescriptor().with_shape(Shape{4, 8});
  expect_error(select_status(NormDescriptor(ok).with_quant(static_cast<NormQuant>(7))), ErrorCode::InvalidProblem,
               "NormQuant");
  // The quantize plans' own rules: Vllm models no f64, TransformerEngine only FP8, PyTorch's FP8 no Vllm.
  expect_error(select_status(NormDescriptor(ok)
                                 .with_element(K::F64)
                                 .with_quant(NormQuant::Dynamic)
                                 .with_convention(QuantConvention::Vllm)),
               ErrorCode::Unsupported, "the fused quantization");
  expect_error(
      select_status(
          NormDescriptor(ok).with_quant(NormQuant::Static).with_convention(QuantConvention::TransformerEngine)),
      ErrorCode::Unsupported, "the fused quantization");
  expect_error(select_status(NormDescriptor(ok).with_quant(NormQuant::Fp8).with_convention(QuantConvention::Vllm)),
               ErrorCode::Unsupported, "the fused quantization");
  expect_error(
      select_status(
          NormDescriptor(ok).with_quant(NormQuant::Dynamic).with_dynamic_mode(static_cast<DynamicRangeMode>(5))),
      ErrorCode::InvalidProblem, "the fused quantization");
  for (const NormDescriptor& d :
       {NormDescriptor(ok).with_residual(true), NormDescriptor(ok).with_quant(NormQuant::Static)})
    expect_error(dynamic::NormBackwardPlan::select(Stream::host(), d).status(), ErrorCode::InvalidProblem,
                 "the backward on h");
  for (NormQuant q : {NormQuant::None, NormQuant::Static, NormQuant::Dynamic, NormQuant::Fp8})
    EXPECT_TRUE(dynamic::NormPlan::select(Stream::host(), NormDescriptor(ok).with_quant(q).with_residual(true)));
}

/// Host tensors for a [4, 8] f32 problem.
struct Host {
  std::vector<float> x = std::vector<float>(32), r = std::vector<float>(32), y = std::vector<float>(32),
                     h = std::vector<float>(32), rows = std::vector<float>(4), one = std::vector<float>(1),
                     amax = std::vector<float>(1);
  std::vector<int8_t> q = std::vector<int8_t>(32);
  std::vector<int32_t> zp = std::vector<int32_t>(4), zp1 = std::vector<int32_t>(1);
  std::vector<uint8_t> q8 = std::vector<uint8_t>(32);
  DynTensor f32(std::vector<float>& v, const Shape& s) { return DynTensor::dense(v.data(), K::F32, s); }
};

TEST(NormFusedRejects, ResidualOperands) {
  auto plan = dynamic::NormPlan::select(
      Stream::host(), NormDescriptor().with_shape(Shape{4, 8}).with_residual(true).with_weight(false));
  ASSERT_TRUE(plan);
  Host m;
  const Shape s{4, 8};
  dynamic::NormArgs a;
  a.x = m.f32(m.x, s), a.y = m.f32(m.y, s), a.residual = m.f32(m.r, s), a.h = m.f32(m.h, s);
  EXPECT_TRUE(plan->can_implement(a));
  auto b = a;
  b.residual = {};
  expect_error(plan->can_implement(b), ErrorCode::InvalidProblem, "residual");
  b = a, b.h = {};
  expect_error(plan->can_implement(b), ErrorCode::InvalidProblem, "NormPlan: h ");
  b = a, b.residual = DynTensor::dense(m.r.data(), K::F32, Shape{4, 4});
  expect_error(plan->can_implement(b), ErrorCode::InvalidProblem, "residual");
  b = a, b.h = DynTensor::dense(m.h.data(), K::F64, Shape{2, 8});
  expect_error(plan->can_implement(b), ErrorCode::InvalidProblem, "NormPlan: h ");
  // In place: h exactly residual or x, y exactly x or residual; other overlaps are not.
  b = a, b.h = m.f32(m.r, s), b.y = m.f32(m.x, s);
  EXPECT_TRUE(plan->can_implement(b));
  b = a, b.h = m.f32(m.x, s), b.y = m.f32(m.r, s);
  EXPECT_TRUE(plan->can_implement(b));
  b = a, b.h = m.f32(m.y, s);
  expect_error(plan->can_implement(b), ErrorCode::InvalidProblem, "overlaps");  // h over y
  b = a, b.h = DynTensor::dense(m.r.data() + 1, K::F32, Shape{3, 8});
  b.h.shape = s;  // a shifted view of the residual: partial overlap
  b.h.stride = {8, 1};
  expect_error(plan->can_implement(b), ErrorCode::InvalidProblem, "other than exactly");
  // Without a residual in the descriptor, neither may be given.
  auto plain = dynamic::NormPlan::select(Stream::host(), NormDescriptor().with_shape(s).with_weight(false));
  ASSERT_TRUE(plain);
  b = a, b.h = {};
  expect_error(plain->can_implement(b), ErrorCode::InvalidProblem, "residual");
  b = a, b.residual = {};
  expect_error(plain->can_implement(b), ErrorCode::InvalidProblem, "NormPlan: h ");
}

TEST(NormFusedRejects, QuantizedOperands) {
  const Shape s{4, 8}, rows{4}, one{1};
  const NormDescriptor base = NormDescriptor().with_shape(s).with_weight(false);
  Host m;
  const DynTensor q = DynTensor::dense(m.q.data(), K::S8, s);
  const DynTensor scale = m.f32(m.one, one), amax = m.f32(m.amax, one);
  const DynTensor row_scale = m.f32(m.rows, rows), row_zp = DynTensor::dense(m.zp.data(), K::S32, rows);
  const DynTensor zp1 = DynTensor::dense(m.zp1.data(), K::S32, one);

  // None: y required; no quantized operand.
  auto none = dynamic::NormPlan::select(Stream::host(), base);
  ASSERT_TRUE(none);
  dynamic::NormArgs a;
  a.x = m.f32(m.x, s);
  expect_error(none->can_implement(a), ErrorCode::InvalidProblem, "NormPlan: y ");
  a.y = m.f32(m.y, s), a.q = q;
  expect_error(none->can_implement(a), ErrorCode::InvalidProblem, "NormPlan: q ");
  a.q = {}, a.amax = amax;
  expect_error(none->can_implement(a), ErrorCode::InvalidProblem, "amax");

  // Static: q s8, scale [1] of the statistics' kind, an optional s32 zero point; y optional.
  auto st = dynamic::NormPlan::select(Stream::host(), NormDescriptor(base).with_quant(NormQuant::Static));
  ASSERT_TRUE(st);
  EXPECT_EQ(st->quant_kind(), K::S8);
  dynamic::NormArgs b;
  b.x = m.f32(m.x, s), b.q = q, b.scale = scale;
  EXPECT_TRUE(st->can_implement(b));
  b.zero_point = zp1;
  EXPECT_TRUE(st->can_implement(b));
  auto c = b;
  c.q = {};
  expect_error(st->can_implement(c), ErrorCode::InvalidProblem, "NormPlan: q ");
  c = b, c.q = DynTensor::dense(m.q8.data(), K::U8, s);
  expect_error(st->can_implement(c), ErrorCode::InvalidProblem, "NormPlan: q ");
  c = b, c.scale = {};
  expect_error(st->can_implement(c), ErrorCode::InvalidProblem, "scale");
  c = b, c.scale = m.f32(m.rows, rows);
  expect_error(st->can_implement(c), ErrorCode::InvalidProblem, "scale");
  c = b, c.zero_point = m.f32(m.one, one);
  expect_error(st->can_implement(c), ErrorCode::InvalidProblem, "zero_point");
  c = b, c.q_scale = row_scale;
  expect_error(st->can_implement(c), ErrorCode::InvalidProblem, "q_scale");
  c = b, c.q = DynTensor::dense(m.x.data(), K::S8, s);  // q over x
  expect_error(st->can_implement(c), ErrorCode::InvalidProblem, "overlaps");

  // Dynamic: q s8, q_scale [rows] written; the zero point required when asymmetric.
  auto dyn = dynamic::NormPlan::select(Stream::host(), NormDescriptor(base).with_quant(NormQuant::Dynamic));
  auto asym = dynamic::NormPlan::select(
      Stream::host(),
      NormDescriptor(base).with_quant(NormQuant::Dynamic).with_dynamic_mode(DynamicRangeMode::Asymmetric));
  ASSERT_TRUE(dyn && asym);
  dynamic::NormArgs d;
  d.x = m.f32(m.x, s), d.q = q, d.q_scale = row_scale;
  EXPECT_TRUE(dyn->can_implement(d));
  expect_error(asym->can_implement(d), ErrorCode::InvalidProblem, "q_zero_point");
  d.q_zero_point = row_zp;
  EXPECT_TRUE(dyn->can_implement(d));
  EXPECT_TRUE(asym->can_implement(d));
  auto e = d;
  e.q_scale = {};
  expect_error(dyn->can_implement(e), ErrorCode::InvalidProblem, "q_scale");
  e = d, e.q_scale = m.f32(m.one, one);
  expect_error(dyn->can_implement(e), ErrorCode::InvalidProblem, "q_scale");
  e = d, e.q_zero_point = DynTensor::dense(m.rows.data(), K::F32, rows);
  expect_error(dyn->can_implement(e), ErrorCode::InvalidProblem, "q_zero_point");
  e = d, e.scale = scale;
  expect_error(dyn->can_implement(e), ErrorCode::InvalidProblem, "scale");
  e = d, e.zero_point = zp1;
  expect_error(dyn->can_implement(e), ErrorCode::InvalidProblem, "zero_point");
  e = d, e.q_zero_point = DynTensor::dense(m.rows.data(), K::S32, rows);  // over q_scale
  expect_error(dyn->can_implement(e), ErrorCode::InvalidProblem, "overlaps");

  // Fp8: q E4M3, scale f32 [1], amax f32 [1] written.
  auto fp8 = dynamic::NormPlan::select(Stream::host(), NormDescriptor(base).with_quant(NormQuant::Fp8));
  ASSERT_TRUE(fp8);
  EXPECT_EQ(fp8->quant_kind(), K::Fp8E4M3);
  dynamic::NormArgs f;
  f.x = m.f32(m.x, s), f.q = DynTensor::dense(m.q8.data(), K::Fp8E4M3, s), f.scale = scale, f.amax = amax;
  EXPECT_TRUE(fp8->can_implement(f));
  auto g = f;
  g.amax = {};
  expect_error(fp8->can_implement(g), ErrorCode::InvalidProblem, "amax");
  g = f, g.q = q;
  expect_error(fp8->can_implement(g), ErrorCode::InvalidProblem, "NormPlan: q ");
  g = f, g.zero_point = zp1;
  expect_error(fp8->can_implement(g), ErrorCode::InvalidProblem, "zero_point");
  g = f, g.amax = scale;  // amax over scale
  expect_error(fp8->can_implement(g), ErrorCode::InvalidProblem, "overlaps");
  // A workspace too small for the composed path's y and the quantize plan's.
  auto big = dynamic::NormPlan::select(Stream::host(), NormDescriptor(base).with_quant(NormQuant::Static));
  ASSERT_TRUE(big && big->workspace_size() > 0);
  expect_error(big->run(Stream::host(), Workspace(m.h.data(), 4), b), ErrorCode::WorkspaceTooSmall, "NormPlan");
}

}  // namespace
}  // namespace baracuda::test
