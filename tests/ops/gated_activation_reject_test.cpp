// GatedActivationPlan / GatedActivationBackwardPlan rejections: every select, can_implement and run error.
#include <gtest/gtest.h>

#include "gated_activation_test_support.hpp"
#include "support/expect_error.hpp"

namespace baracuda::test {
namespace {

// ---------------------------------------------------------------------------------------------------
// Every rejection of select, can_implement and run
// ---------------------------------------------------------------------------------------------------

/// select of both plans fails with `code`.
void expect_select_error(const Stream& stream, const GatedActivationDescriptor& d, ErrorCode code,
                         PlanPreference pref = {}) {
  expect_error(dynamic::GatedActivationPlan::select(stream, d, pref).status(), code, "GatedActivationPlan");
  expect_error(dynamic::GatedActivationBackwardPlan::select(stream, d, pref).status(), code,
               "GatedActivationBackwardPlan");
}

TEST(GatedReject, TypedPlanWrongTypeOrRank) {
  expect_error(GatedActivationPlan<double, 2>::select(Stream::host(), f32_desc()).status(), ErrorCode::InvalidProblem,
               "GatedActivationPlan");
  expect_error(GatedActivationPlan<float, 3>::select(Stream::host(), f32_desc()).status(), ErrorCode::InvalidProblem,
               "GatedActivationPlan");
  expect_error(GatedActivationBackwardPlan<__half, 2>::select(Stream::host(), f32_desc()).status(),
               ErrorCode::InvalidProblem, "GatedActivationBackwardPlan");
  expect_error(GatedActivationBackwardPlan<float, 1>::select(Stream::host(), f32_desc()).status(),
               ErrorCode::InvalidProblem, "GatedActivationBackwardPlan");
}

TEST(GatedReject, UnsupportedElementKinds) {
  for (ElementKind k : {ElementKind::S32, ElementKind::U8, ElementKind::Bool, ElementKind::Fp8E4M3, ElementKind::S4})
    for (DeviceKind d : {DeviceKind::Host, DeviceKind::Sim})
      expect_select_error(*Stream::for_device(d), f32_desc().with_element(k), ErrorCode::Unsupported);
}

TEST(GatedReject, SplitDim) {
  expect_select_error(Stream::host(), f32_desc().with_split_dim(2), ErrorCode::InvalidProblem);
  expect_select_error(Stream::host(), f32_desc().with_split_dim(-3), ErrorCode::InvalidProblem);
  expect_select_error(Stream::host(), f32_desc(Shape{4, 7}), ErrorCode::InvalidProblem);  // odd extent
  expect_select_error(Stream::host(), f32_desc(Shape{5, 6}).with_split_dim(0), ErrorCode::InvalidProblem);
  expect_select_error(Stream::host(), f32_desc(Shape{}), ErrorCode::InvalidProblem);  // rank 0: nothing to split
}

TEST(GatedReject, BadDescriptor) {
  expect_select_error(Stream::host(), f32_desc(Shape{1, 1, 1, 1, 1, 1, 1, 1, 2}), ErrorCode::InvalidProblem);
  expect_select_error(Stream::host(), f32_desc(Shape{-2, 6}), ErrorCode::InvalidProblem);
  expect_select_error(Stream::host(), f32_desc().with_element(static_cast<ElementKind>(14)), ErrorCode::InvalidProblem);
  expect_select_error(Stream::host(), f32_desc().with_kind(static_cast<GatedActivationKind>(6)),
                      ErrorCode::InvalidProblem);
  expect_select_error(Stream::host(), f32_desc().with_layout(static_cast<GateLayout>(3)), ErrorCode::InvalidProblem);
}

TEST(GatedReject, AlphaAndLimit) {
  for (GatedActivationKind k : {GatedActivationKind::SwiGluClamped, GatedActivationKind::Glu}) {
    const GatedActivationDescriptor d = f32_desc().with_kind(k);
    for (double limit : {0.0, -1.0, -kInf, kNaN})
      expect_select_error(Stream::host(), GatedActivationDescriptor(d).with_limit(limit), ErrorCode::InvalidProblem);
    for (double alpha : {0.0, -1.702, kInf, -kInf, kNaN})
      expect_select_error(Stream::host(), GatedActivationDescriptor(d).with_alpha(alpha), ErrorCode::InvalidProblem);
  }
  // +inf disables the clamps: accepted.
  EXPECT_TRUE(dynamic::GatedActivationPlan::select(
      Stream::host(), f32_desc().with_kind(GatedActivationKind::SwiGluClamped).with_limit(kInf)));
}

TEST(GatedReject, ForcedBackendThatCannotServe) {
  expect_select_error(Stream::host(), f32_desc(), ErrorCode::Unsupported, PlanPreference().with_backend(BackendKind::Sim));
  expect_select_error(Stream::sim(), f32_desc(), ErrorCode::Unsupported,
                      PlanPreference().with_backend(BackendKind::CublasLt));
}

TEST(GatedReject, CudaWithoutKernels) {
  auto s = Stream::cuda(0, nullptr);
  if (!s) GTEST_SKIP() << "no usable CUDA device: " << s.error().to_string();
  auto p = dynamic::GatedActivationPlan::select(*s, f32_desc());
  if (p) GTEST_SKIP() << "built with CUDA kernels";
  EXPECT_EQ(p.error().code, ErrorCode::Unsupported);
}

TEST(GatedReject, RunOnAnotherDevice) {
  alignas(16) float x[24] = {}, y[12] = {}, dx[24] = {};
  const ConstDynTensor xt = ConstDynTensor::dense(x, ElementKind::F32, Shape{4, 6});
  const DynTensor yt = DynTensor::dense(y, ElementKind::F32, Shape{4, 3});
  const DynTensor dxt = DynTensor::dense(dx, ElementKind::F32, Shape{4, 6});
  auto f = dynamic::GatedActivationPlan::select(Stream::host(), f32_desc());
  ASSERT_TRUE(f);
  expect_error(f->run(Stream::sim(), {}, {xt, yt}), ErrorCode::InvalidProblem, "GatedActivationPlan");
  auto b = dynamic::GatedActivationBackwardPlan::select(Stream::host(), f32_desc());
  ASSERT_TRUE(b);
  expect_error(b->run(Stream::sim(), {}, {yt, xt, dxt}), ErrorCode::InvalidProblem, "GatedActivationBackwardPlan");
}

class GatedCanImplement : public ::testing::Test {
 protected:
  void SetUp() override {
    fwd_ = std::make_unique<dynamic::GatedActivationPlan>(*dynamic::GatedActivationPlan::select(Stream::host(), f32_desc()));
    bwd_ = std::make_unique<dynamic::GatedActivationBackwardPlan>(
        *dynamic::GatedActivationBackwardPlan::select(Stream::host(), f32_desc()));
  }
  DynTensor x() { return DynTensor::dense(x_, ElementKind::F32, Shape{4, 6}); }
  DynTensor y() { return DynTensor::dense(y_, ElementKind::F32, Shape{4, 3}); }
  ConstDynTensor dy() { return ConstDynTensor::dense(dy_, ElementKind::F32, Shape{4, 3}); }
  DynTensor dx() { return DynTensor::dense(dx_, ElementKind::F32, Shape{4, 6}); }
  void expect_fwd(const ConstDynTensor& a, const DynTensor& b, ErrorCode code) {
    expect_rejected(*fwd_, {a, b}, code, "GatedActivationPlan", {y_});
  }
  void expect_bwd(const ConstDynTensor& a, const ConstDynTensor& b, const DynTensor& c, ErrorCode code) {
    expect_rejected(*bwd_, {a, b, c}, code, "GatedActivationBackwardPlan", {dx_, x_});
  }
  std::unique_ptr<dynamic::GatedActivationPlan> fwd_;
  std::unique_ptr<dynamic::GatedActivationBackwardPlan> bwd_;
  alignas(16) float x_[64] = {};
  alignas(16) float y_[64] = {};
  alignas(16) float dy_[64] = {};
  alignas(16) float dx_[64] = {};
};

TEST_F(GatedCanImplement, AcceptsTheDescribedTensorsAndInPlace) {
  EXPECT_TRUE(fwd_->can_implement({x(), y()}));
  EXPECT_TRUE(bwd_->can_implement({dy(), x(), dx()}));
  EXPECT_TRUE(bwd_->can_implement({dy(), x(), x()}));  // in place
  ConstDynTensor bx = x();
  bx.stride[0] = 0;  // inputs may broadcast
  EXPECT_TRUE(fwd_->can_implement({bx, y()}));
}

TEST_F(GatedCanImplement, OutputShapeNotHalved) {
  expect_fwd(x(), DynTensor::dense(y_, ElementKind::F32, Shape{4, 6}), ErrorCode::InvalidProblem);
  expect_fwd(x(), DynTensor::dense(y_, ElementKind::F32, Shape{2, 6}), ErrorCode::InvalidProblem);
}

TEST_F(GatedCanImplement, RankOrShapeMismatch) {
  expect_fwd(ConstDynTensor::dense(x_, ElementKind::F32, Shape{24}), y(), ErrorCode::InvalidProblem);
  expect_fwd(ConstDynTensor::dense(x_, ElementKind::F32, Shape{4, 6, 1}), y(), ErrorCode::InvalidProblem);
  expect_bwd(ConstDynTensor::dense(dy_, ElementKind::F32, Shape{4, 6}), x(), dx(), ErrorCode::InvalidProblem);  // dy
  expect_bwd(dy(), ConstDynTensor::dense(x_, ElementKind::F32, Shape{4, 3}), dx(), ErrorCode::InvalidProblem);  // x
  expect_bwd(dy(), x(), DynTensor::dense(dx_, ElementKind::F32, Shape{4, 3}), ErrorCode::InvalidProblem);  // dx
  expect_bwd(dy(), x(), DynTensor::dense(dx_, ElementKind::F32, Shape{8, 3}), ErrorCode::InvalidProblem);
}

TEST_F(GatedCanImplement, KindMismatch) {
  expect_fwd(ConstDynTensor::dense(x_, ElementKind::S32, Shape{4, 6}), y(), ErrorCode::InvalidProblem);
  expect_fwd(x(), DynTensor::dense(y_, ElementKind::F64, Shape{4, 3}), ErrorCode::InvalidProblem);
  expect_bwd(ConstDynTensor::dense(dy_, ElementKind::F16, Shape{4, 3}), x(), dx(), ErrorCode::InvalidProblem);
}

TEST_F(GatedCanImplement, NullOrMisaligned) {
  ConstDynTensor a = x();
  a.data = nullptr;
  expect_fwd(a, y(), ErrorCode::InvalidProblem);
  DynTensor b = dx();
  b.data = reinterpret_cast<char*>(dx_) + 2;
  expect_bwd(dy(), x(), b, ErrorCode::MisalignedOperand);
}

TEST_F(GatedCanImplement, StrideZeroOutput) {
  DynTensor b = y();
  b.stride[0] = 0;
  expect_fwd(x(), b, ErrorCode::InvalidProblem);
  DynTensor c = dx();
  c.stride[1] = 0;
  expect_bwd(dy(), x(), c, ErrorCode::InvalidProblem);
}

TEST_F(GatedCanImplement, InPlaceWithOtherStrides) {
  ConstDynTensor a = x();
  a.stride = {1, 4};  // the same memory read transposed
  EXPECT_TRUE(bwd_->can_implement({dy(), a, dx()})) << "x may be any view when dx is elsewhere";
  expect_bwd(dy(), a, x(), ErrorCode::InvalidProblem);  // dx over x with other strides
}

TEST_F(GatedCanImplement, DyAliasesDx) {
  ConstDynTensor d = dy();
  d.data = dx_;
  expect_bwd(d, x(), dx(), ErrorCode::InvalidProblem);
}

}  // namespace
}  // namespace baracuda::test
