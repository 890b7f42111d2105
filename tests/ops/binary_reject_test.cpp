// BinaryPlan / ComparePlan / BinaryBackwardPlan rejections: every select, can_implement and run error.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "binary_test_support.hpp"
#include "support/expect_error.hpp"

namespace baracuda::test {
namespace {

// ---------------------------------------------------------------------------------------------------
// Every rejection of select, can_implement and run
// ---------------------------------------------------------------------------------------------------

TEST(BinaryReject, UnsupportedOpKindPairs) {
  using K = ElementKind;
  for (DeviceKind d : {DeviceKind::Host, DeviceKind::Sim}) {
    const Stream s = *Stream::for_device(d);
    // Integer kinds for float-only ops, and kinds no op supports.
    for (BinaryOp op : {BinaryOp::Atan2, BinaryOp::Div, BinaryOp::Pow, BinaryOp::Copysign, BinaryOp::Hypot})
      expect_error(dynamic::BinaryPlan::select(s, f32_desc(op).with_element(K::S32)).status(), ErrorCode::Unsupported,
                   "BinaryPlan");
    for (K k : {K::Bool, K::Fp8E4M3, K::U32, K::S4})
      expect_error(dynamic::BinaryPlan::select(s, f32_desc().with_element(k)).status(), ErrorCode::Unsupported,
                   "BinaryPlan");
    expect_error(dynamic::ComparePlan::select(s, CompareDescriptor().with_element(K::Bool).with_shape(Shape{3})).status(),
                 ErrorCode::Unsupported, "ComparePlan");
    // No gradient for integer kinds.
    expect_error(dynamic::BinaryBackwardPlan::select(s, f32_desc().with_element(K::S32)).status(),
                 ErrorCode::Unsupported, "BinaryBackwardPlan");
    expect_error(dynamic::BinaryBackwardPlan::select(s, f32_desc(BinaryOp::Maximum).with_element(K::U8)).status(),
                 ErrorCode::Unsupported, "BinaryBackwardPlan");
  }
  auto r = dynamic::BinaryPlan::select(Stream::host(), f32_desc(BinaryOp::Atan2).with_element(K::S32));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("f16, bf16, f32, f64"), std::string::npos) << r.error().message;
}

TEST(BinaryReject, NonBroadcastableShapes) {
  for (auto [a, b] : {std::pair{Shape{4, 3}, Shape{4}}, {Shape{2, 3}, Shape{3, 2}}, {Shape{5, 1, 3}, Shape{2, 2}},
                      {Shape{0}, Shape{2}}}) {
    const BinaryDescriptor d = f32_desc().with_shapes(a, b);
    expect_error(dynamic::BinaryPlan::select(Stream::host(), d).status(), ErrorCode::InvalidProblem, "BinaryPlan");
    expect_error(dynamic::BinaryBackwardPlan::select(Stream::sim(), d).status(), ErrorCode::InvalidProblem,
                 "BinaryBackwardPlan");
    expect_error(
        dynamic::ComparePlan::select(Stream::host(), CompareDescriptor().with_shapes(a, b)).status(),
        ErrorCode::InvalidProblem, "ComparePlan");
  }
}

/// Each shape is valid, but they broadcast to 2^60 elements: more than sizes and offsets address.
TEST(BinaryReject, BroadcastTooLarge) {
  const int64_t big = int64_t{1} << 30;
  const BinaryDescriptor d = f32_desc().with_shapes(Shape{big, 1}, Shape{1, big});
  expect_error(dynamic::BinaryPlan::select(Stream::host(), d).status(), ErrorCode::InvalidProblem, "broadcast output");
  expect_error(dynamic::BinaryBackwardPlan::select(Stream::sim(), d).status(), ErrorCode::InvalidProblem,
               "broadcast output");
  const CompareDescriptor c = CompareDescriptor().with_shapes(Shape{big, 1}, Shape{1, big});
  expect_error(dynamic::ComparePlan::select(Stream::host(), c).status(), ErrorCode::InvalidProblem,
               "broadcast output");
}

TEST(BinaryReject, BadDescriptor) {
  const Shape rank9{1, 1, 1, 1, 1, 1, 1, 1, 1};
  expect_error(dynamic::BinaryPlan::select(Stream::host(), f32_desc().with_shapes(rank9, Shape{1})).status(),
               ErrorCode::InvalidProblem, "BinaryPlan");
  expect_error(dynamic::BinaryPlan::select(Stream::host(), f32_desc().with_shapes(Shape{3}, Shape{-3})).status(),
               ErrorCode::InvalidProblem, "BinaryPlan");
  expect_error(
      dynamic::BinaryPlan::select(Stream::host(), f32_desc().with_element(static_cast<ElementKind>(14))).status(),
      ErrorCode::InvalidProblem, "BinaryPlan");
  expect_error(dynamic::BinaryPlan::select(Stream::host(), f32_desc(static_cast<BinaryOp>(kNumBinaryOps))).status(),
               ErrorCode::InvalidProblem, "BinaryPlan");
  expect_error(
      dynamic::BinaryBackwardPlan::select(Stream::host(), f32_desc(static_cast<BinaryOp>(200))).status(),
      ErrorCode::InvalidProblem, "BinaryBackwardPlan");
  expect_error(dynamic::ComparePlan::select(Stream::host(), CompareDescriptor()
                                                                .with_op(static_cast<CompareOp>(kNumCompareOps))
                                                                .with_shape(Shape{2}))
                   .status(),
               ErrorCode::InvalidProblem, "ComparePlan");
}

TEST(BinaryReject, TypedPlanWrongTypeOrRank) {
  expect_error(BinaryPlan<double, 2>::select(Stream::host(), f32_desc()).status(), ErrorCode::InvalidProblem,
               "BinaryPlan");
  // a has rank 2, b rank 1: the typed plan needs both of rank N.
  expect_error(BinaryPlan<float, 2>::select(Stream::host(), f32_desc()).status(), ErrorCode::InvalidProblem,
               "BinaryPlan");
  expect_error(ComparePlan<float, 1>::select(Stream::host(), CompareDescriptor().with_shape(Shape{2, 2})).status(),
               ErrorCode::InvalidProblem, "ComparePlan");
  expect_error(BinaryBackwardPlan<__half, 2>::select(Stream::host(), f32_desc().with_shape(Shape{2, 2})).status(),
               ErrorCode::InvalidProblem, "BinaryBackwardPlan");
}

TEST(BinaryReject, ForcedBackendThatCannotServe) {
  const PlanPreference bespoke = PlanPreference().with_backend(BackendKind::Bespoke);
  expect_error(dynamic::BinaryPlan::select(Stream::host(), f32_desc(), bespoke).status(), ErrorCode::Unsupported,
               "BinaryPlan");
  expect_error(dynamic::ComparePlan::select(Stream::sim(), CompareDescriptor().with_shape(Shape{2}),
                                            PlanPreference().with_backend(BackendKind::CublasLt))
                   .status(),
               ErrorCode::Unsupported, "ComparePlan");
  expect_error(dynamic::BinaryBackwardPlan::select(Stream::sim(), f32_desc(), PlanPreference().with_backend(BackendKind::Host))
                   .status(),
               ErrorCode::Unsupported, "BinaryBackwardPlan");
}

TEST(BinaryReject, RunOnAnotherDeviceOrUnselectedPlan) {
  alignas(16) float buf[12] = {};
  const DynTensor a = DynTensor::dense(buf, ElementKind::F32, Shape{4, 3});
  const ConstDynTensor b = ConstDynTensor::dense(buf, ElementKind::F32, Shape{3});
  auto p = dynamic::BinaryPlan::select(Stream::host(), f32_desc());
  ASSERT_TRUE(p);
  expect_error(p->run(Stream::sim(), {}, {a, b, a}), ErrorCode::InvalidProblem, "BinaryPlan");
  auto bw = dynamic::BinaryBackwardPlan::select(Stream::sim(), f32_desc());
  ASSERT_TRUE(bw);
  expect_error(bw->run(Stream::host(), {}, {a, a, b, a, DynTensor{}}), ErrorCode::InvalidProblem,
               "BinaryBackwardPlan");
  auto c = dynamic::ComparePlan::select(Stream::sim(), CompareDescriptor().with_shape(Shape{4, 3}));
  ASSERT_TRUE(c);
  bool flags[12];
  expect_error(c->run(Stream::host(), {}, {a, a, DynTensor::dense(flags, ElementKind::Bool, Shape{4, 3})}),
               ErrorCode::InvalidProblem, "ComparePlan");
  expect_error(dynamic::BinaryPlan{}.run(Stream::host(), {}, {a, b, a}), ErrorCode::InvalidProblem, "BinaryPlan");
  expect_error(dynamic::ComparePlan{}.run(Stream::host(), {}, {a, b, a}), ErrorCode::InvalidProblem, "ComparePlan");
  expect_error(dynamic::BinaryBackwardPlan{}.run(Stream::host(), {}, {a, a, b, a, DynTensor{}}),
               ErrorCode::InvalidProblem, "BinaryBackwardPlan");
}

/// can_implement and run of BinaryPlan / ComparePlan over host buffers: a [4, 3], b [3], out [4, 3].
class BinaryCanImplement : public ::testing::Test {
 protected:
  void SetUp() override {
    plan_ = std::make_unique<dynamic::BinaryPlan>(*dynamic::BinaryPlan::select(Stream::host(), f32_desc()));
    cmp_ = std::make_unique<dynamic::ComparePlan>(*dynamic::ComparePlan::select(
        Stream::host(), CompareDescriptor().with_op(CompareOp::Lt).with_shapes(Shape{4, 3}, Shape{3})));
  }
  ConstDynTensor a() { return ConstDynTensor::dense(a_, ElementKind::F32, Shape{4, 3}); }
  ConstDynTensor b() { return ConstDynTensor::dense(b_, ElementKind::F32, Shape{3}); }
  DynTensor out() { return DynTensor::dense(out_, ElementKind::F32, Shape{4, 3}); }
  DynTensor flags() { return DynTensor::dense(flags_, ElementKind::Bool, Shape{4, 3}); }
  void expect(const ConstDynTensor& x, const ConstDynTensor& y, const DynTensor& o, ErrorCode code) {
    expect_rejected(*plan_, {x, y, o}, code, "BinaryPlan", {out_});
  }
  std::unique_ptr<dynamic::BinaryPlan> plan_;
  std::unique_ptr<dynamic::ComparePlan> cmp_;
  alignas(16) float a_[32] = {};
  alignas(16) float b_[32] = {};
  alignas(16) float out_[32] = {};
  alignas(16) bool flags_[32] = {};
};

TEST_F(BinaryCanImplement, AcceptsTheDescribedTensorsAndInPlace) {
  EXPECT_TRUE(plan_->can_implement({a(), b(), out()}));
  EXPECT_TRUE(plan_->can_implement({out(), b(), out()})) << "out may be a (same view)";
  EXPECT_TRUE(cmp_->can_implement({a(), b(), flags()}));
  EXPECT_EQ(plan_->output_shape(), (Shape{4, 3}));
}

TEST_F(BinaryCanImplement, ShapeMismatch) {
  expect(ConstDynTensor::dense(a_, ElementKind::F32, Shape{4, 4}), b(), out(), ErrorCode::InvalidProblem);
  expect(a(), ConstDynTensor::dense(b_, ElementKind::F32, Shape{1, 3}), out(), ErrorCode::InvalidProblem);
  expect(a(), b(), DynTensor::dense(out_, ElementKind::F32, Shape{12}), ErrorCode::InvalidProblem);
}

TEST_F(BinaryCanImplement, KindMismatch) {
  expect(ConstDynTensor::dense(a_, ElementKind::S32, Shape{4, 3}), b(), out(), ErrorCode::InvalidProblem);
  expect(a(), b(), DynTensor::dense(out_, ElementKind::F64, Shape{4, 3}), ErrorCode::InvalidProblem);
  expect_error(cmp_->can_implement({a(), b(), DynTensor::dense(flags_, ElementKind::U8, Shape{4, 3})}),
               ErrorCode::InvalidProblem, "ComparePlan");
  expect_error(cmp_->can_implement({a(), b(), out()}), ErrorCode::InvalidProblem, "ComparePlan");
}

TEST_F(BinaryCanImplement, NullData) {
  ConstDynTensor x = b();
  x.data = nullptr;
  expect(a(), x, out(), ErrorCode::InvalidProblem);
}

TEST_F(BinaryCanImplement, MisalignedPointer) {
  ConstDynTensor x = a();
  x.data = reinterpret_cast<const char*>(a_) + 2;
  expect(x, b(), out(), ErrorCode::MisalignedOperand);
}

TEST_F(BinaryCanImplement, StrideZeroOutput) {
  DynTensor o = out();
  o.stride[0] = 0;
  expect(a(), b(), o, ErrorCode::InvalidProblem);
}

TEST_F(BinaryCanImplement, BadAlias) {
  ConstDynTensor x = out();
  x.stride = {1, 4};  // the output's memory read transposed
  expect(x, b(), out(), ErrorCode::InvalidProblem);
  // out may not be a broadcast input: b [3] read for every row while the rows are written.
  const DynTensor small_out = DynTensor::dense(b_, ElementKind::F32, Shape{4, 3});
  expect_error(plan_->can_implement({a(), b(), small_out}), ErrorCode::InvalidProblem, "BinaryPlan");
}

TEST_F(BinaryCanImplement, EmptyProblemTouchesNothing) {
  auto p = dynamic::BinaryPlan::select(Stream::sim(), f32_desc().with_shapes(Shape{0, 3}, Shape{3}));
  ASSERT_TRUE(p);
  DynTensor x = DynTensor::dense(nullptr, ElementKind::F32, Shape{0, 3});
  EXPECT_TRUE(p->run(Stream::sim(), {}, {x, b(), x}));
}

/// can_implement and run of BinaryBackwardPlan: dy/da/db [4, 3], a [4, 3], b [3].
class BackwardCanImplement : public ::testing::Test {
 protected:
  void SetUp() override {
    plan_ = std::make_unique<dynamic::BinaryBackwardPlan>(
        *dynamic::BinaryBackwardPlan::select(Stream::host(), f32_desc(BinaryOp::Mul)));
  }
  DynTensor t(float* p, Shape s = Shape{4, 3}) { return DynTensor::dense(p, ElementKind::F32, s); }
  void expect(const ConstDynTensor& dy, const ConstDynTensor& x, const ConstDynTensor& y, const DynTensor& da,
              const DynTensor& db, ErrorCode code) {
    expect_rejected(*plan_, {dy, x, y, da, db}, code, "BinaryBackwardPlan", {da_, db_});
  }
  std::unique_ptr<dynamic::BinaryBackwardPlan> plan_;
  alignas(16) float dy_[32] = {};
  alignas(16) float a_[32] = {};
  alignas(16) float b_[32] = {};
  alignas(16) float da_[32] = {};
  alignas(16) float db_[32] = {};
};

TEST_F(BackwardCanImplement, AcceptsTheDescribedTensorsOneOutputAndInPlace) {
  EXPECT_TRUE(plan_->can_implement({t(dy_), t(a_), t(b_, Shape{3}), t(da_), t(db_)}));
  EXPECT_TRUE(plan_->can_implement({t(dy_), t(a_), t(b_, Shape{3}), t(da_), DynTensor{}}));
  EXPECT_TRUE(plan_->can_implement({t(dy_), t(a_), t(b_, Shape{3}), DynTensor{}, t(db_)}));
  EXPECT_TRUE(plan_->can_implement({t(dy_), t(a_), t(b_, Shape{3}), t(dy_), t(a_)})) << "da = dy, db = a in place";
}

TEST_F(BackwardCanImplement, NeitherOutput) {
  expect(t(dy_), t(a_), t(b_, Shape{3}), DynTensor{}, DynTensor{}, ErrorCode::InvalidProblem);
}

TEST_F(BackwardCanImplement, SameMemoryForBothOutputs) {
  expect(t(dy_), t(a_), t(b_, Shape{3}), t(da_), t(da_), ErrorCode::InvalidProblem);
}

TEST_F(BackwardCanImplement, ShapeKindAlignmentStride) {
  expect(t(dy_, Shape{3}), t(a_), t(b_, Shape{3}), t(da_), t(db_), ErrorCode::InvalidProblem);       // dy shape
  expect(t(dy_), t(a_, Shape{3}), t(b_, Shape{3}), t(da_), t(db_), ErrorCode::InvalidProblem);       // a shape
  expect(t(dy_), t(a_), t(b_, Shape{3}), t(da_), t(db_, Shape{4}), ErrorCode::InvalidProblem);  // neither shape
  // db at b's own shape is summed there (through the workspace): accepted.
  EXPECT_TRUE(plan_->can_implement({t(dy_), t(a_), t(b_, Shape{3}), t(da_), t(db_, Shape{3})}));
  DynTensor wrong_kind = t(db_);
  wrong_kind.kind = ElementKind::F64;
  expect(t(dy_), t(a_), t(b_, Shape{3}), t(da_), wrong_kind, ErrorCode::InvalidProblem);
  DynTensor misaligned = t(da_);
  misaligned.data = reinterpret_cast<char*>(da_) + 1;
  expect(t(dy_), t(a_), t(b_, Shape{3}), misaligned, t(db_), ErrorCode::MisalignedOperand);
  DynTensor stride0 = t(db_);
  stride0.stride[0] = 0;
  expect(t(dy_), t(a_), t(b_, Shape{3}), t(da_), stride0, ErrorCode::InvalidProblem);
  DynTensor transposed = t(da_);
  transposed.stride = {1, 4};
  expect(t(da_), t(a_), t(b_, Shape{3}), transposed, t(db_), ErrorCode::InvalidProblem);  // da aliases dy, other strides
}

}  // namespace
}  // namespace baracuda::test
