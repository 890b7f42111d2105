// UnaryPlan / UnaryBackwardPlan rejections: every select, can_implement and run error, the parameter rules
// generated from the catalog's parameter strings.
#include <gtest/gtest.h>

#include "support/expect_error.hpp"
#include "support/in_out_fixture.hpp"
#include "unary_test_support.hpp"

namespace baracuda::test {
namespace {

// ---------------------------------------------------------------------------------------------------
// Every rejection of select, can_implement and run
// ---------------------------------------------------------------------------------------------------

// support's expect_error, of UnaryPlan unless said otherwise.
void expect_error(const Status& s, ErrorCode code, std::string_view plan = "UnaryPlan") {
  test::expect_error(s, code, plan);
}

template <class Plan>
Status select_status(const Stream& stream, const UnaryDescriptor& d, PlanPreference pref = {}) {
  return Plan::select(stream, d, pref).status();
}

void expect_both_reject(const Stream& stream, const UnaryDescriptor& d, ErrorCode code, PlanPreference pref = {}) {
  expect_error(select_status<dynamic::UnaryPlan>(stream, d, pref), code, "UnaryPlan");
  expect_error(select_status<dynamic::UnaryBackwardPlan>(stream, d, pref), code, "UnaryBackwardPlan");
}

TEST(UnaryReject, TypedPlanWrongTypeOrRank) {
  expect_error(UnaryPlan<double, 2>::select(Stream::host(), f32_desc()).status(), ErrorCode::InvalidProblem);
  expect_error(UnaryPlan<float, 1>::select(Stream::host(), f32_desc()).status(), ErrorCode::InvalidProblem);
  expect_error(UnaryBackwardPlan<__half, 2>::select(Stream::host(), f32_desc()).status(), ErrorCode::InvalidProblem,
               "UnaryBackwardPlan");
  expect_error(UnaryBackwardPlan<float, 3>::select(Stream::host(), f32_desc()).status(), ErrorCode::InvalidProblem,
               "UnaryBackwardPlan");
}

TEST(UnaryReject, UnsupportedKinds) {
  for (ElementKind k : {ElementKind::S32, ElementKind::U8, ElementKind::Bool, ElementKind::Fp8E4M3, ElementKind::S4,
                        ElementKind::S64})
    for (DeviceKind d : {DeviceKind::Host, DeviceKind::Sim})
      for (UnaryKind op : {UnaryKind::Exp, UnaryKind::Relu, UnaryKind::Floor})
        expect_both_reject(*Stream::for_device(d), f32_desc(op).with_element(k), ErrorCode::Unsupported);
}

TEST(UnaryReject, BadDescriptor) {
  expect_both_reject(Stream::host(), f32_desc(UnaryKind::Exp, Shape{1, 1, 1, 1, 1, 1, 1, 1, 1}),
                     ErrorCode::InvalidProblem);
  expect_both_reject(Stream::host(), f32_desc(UnaryKind::Exp, Shape{3, -3}), ErrorCode::InvalidProblem);
  expect_both_reject(Stream::host(), f32_desc().with_element(static_cast<ElementKind>(14)), ErrorCode::InvalidProblem);
  expect_both_reject(Stream::host(), f32_desc().with_kind(static_cast<UnaryKind>(kNumUnaryKinds)),
                     ErrorCode::InvalidProblem);
}

/// A value that breaks `rule` of a parameter (given the other parameters' defaults).
double violating_value(const detail::ParamSpec& spec, const detail::ParamRule& r) {
  const double bound =
      r.bound_is_param ? spec.rules[static_cast<size_t>(r.bound_param)].default_value : r.bound_value;
  switch (r.compare) {
    case detail::ParamCompare::Ge:
    case detail::ParamCompare::Gt: return bound - 1;
    case detail::ParamCompare::Le:
    case detail::ParamCompare::Lt: return bound + 1;
    case detail::ParamCompare::Ne: return bound;
    case detail::ParamCompare::None: break;
  }
  return 0;
}

TEST(UnaryReject, ParametersAgainstTheCatalog) {
  int rules = 0, required = 0;
  for (const CatalogOp& op : catalog()) {
    const detail::ParamSpec& spec = spec_of(op.kind);
    UnaryDescriptor base = f32_desc(op.kind);
    for (size_t i = 0; i < kNumUnaryParams; ++i)
      if (spec.rules[i].required) base.with_parameter(static_cast<UnaryParam>(i), test_value(static_cast<UnaryParam>(i)));
    ASSERT_TRUE(select_status<dynamic::UnaryPlan>(Stream::host(), base)) << op.name;
    for (size_t i = 0; i < kNumUnaryParams; ++i) {
      const auto p = static_cast<UnaryParam>(i);
      const detail::ParamRule& r = spec.rules[i];
      SCOPED_TRACE(op.name + " " + std::string(to_string(p)));
      if (!r.applies) {  // a parameter the op does not take
        expect_both_reject(Stream::host(), UnaryDescriptor(base).with_parameter(p, 1.0), ErrorCode::InvalidProblem);
        continue;
      }
      for (double bad : {kNaN, kInf, -kInf})
        expect_both_reject(Stream::host(), UnaryDescriptor(base).with_parameter(p, bad), ErrorCode::InvalidProblem);
      if (r.required) {
        ++required;
        UnaryDescriptor d = base;
        d.params[i].reset();
        expect_both_reject(Stream::host(), d, ErrorCode::InvalidProblem);
      }
      if (r.compare != detail::ParamCompare::None) {
        ++rules;
        expect_both_reject(Stream::host(), UnaryDescriptor(base).with_parameter(p, violating_value(spec, r)),
                           ErrorCode::InvalidProblem);
      }
    }
  }
  EXPECT_EQ(rules, 6);     // celu alpha, softplus beta, logit eps, hardtanh max_val, both shrinks' lambd
  EXPECT_EQ(required, 2);  // threshold's threshold and value
}

TEST(UnaryReject, ParameterRulesByHand) {
  const Stream h = Stream::host();
  expect_both_reject(h, f32_desc(UnaryKind::Hardtanh).with_min_val(2).with_max_val(1), ErrorCode::InvalidProblem);
  EXPECT_TRUE(select_status<dynamic::UnaryPlan>(h, f32_desc(UnaryKind::Hardtanh).with_min_val(1).with_max_val(1)));
  expect_both_reject(h, f32_desc(UnaryKind::Hardtanh).with_min_val(2), ErrorCode::InvalidProblem);  // > default max 1
  expect_both_reject(h, f32_desc(UnaryKind::Softplus).with_beta(0), ErrorCode::InvalidProblem);
  EXPECT_TRUE(select_status<dynamic::UnaryPlan>(h, f32_desc(UnaryKind::Softplus).with_beta(-1)));
  expect_both_reject(h, f32_desc(UnaryKind::Celu).with_alpha(0), ErrorCode::InvalidProblem);
  EXPECT_TRUE(select_status<dynamic::UnaryPlan>(h, f32_desc(UnaryKind::Elu).with_alpha(0)));
  expect_both_reject(h, f32_desc(UnaryKind::Logit).with_eps(0.6), ErrorCode::InvalidProblem);
  EXPECT_TRUE(select_status<dynamic::UnaryPlan>(h, f32_desc(UnaryKind::Logit).with_eps(0.5)));
  EXPECT_TRUE(select_status<dynamic::UnaryPlan>(h, f32_desc(UnaryKind::Logit).with_eps(-3)));
  expect_both_reject(h, f32_desc(UnaryKind::Softshrink).with_lambd(-0.5), ErrorCode::InvalidProblem);
  expect_both_reject(h, f32_desc(UnaryKind::Hardshrink).with_lambd(-0.5), ErrorCode::InvalidProblem);
  expect_both_reject(h, f32_desc(UnaryKind::Threshold).with_threshold(1), ErrorCode::InvalidProblem);  // no value
  expect_both_reject(h, f32_desc(UnaryKind::Relu).with_alpha(1), ErrorCode::InvalidProblem);
  const Status s = select_status<dynamic::UnaryPlan>(h, f32_desc(UnaryKind::Hardtanh).with_min_val(2).with_max_val(1));
  EXPECT_NE(s.error().message.find("max_val = 1 must be >= min_val = 2"), std::string::npos) << s.to_string();
}

TEST(UnaryReject, ForcedBackendThatCannotServe) {
  for (BackendKind b : {BackendKind::Sim, BackendKind::Bespoke, BackendKind::Cudnn})
    expect_both_reject(Stream::host(), f32_desc(), ErrorCode::Unsupported, PlanPreference().with_backend(b));
  EXPECT_TRUE(select_status<dynamic::UnaryPlan>(Stream::sim(), f32_desc(), PlanPreference().with_backend(BackendKind::Sim)));
}

TEST(UnaryReject, RunOnAnotherDevice) {
  float buf[12] = {};
  const DynTensor t = DynTensor::dense(buf, ElementKind::F32, Shape{4, 3});
  auto f = dynamic::UnaryPlan::select(Stream::host(), f32_desc());
  auto b = dynamic::UnaryBackwardPlan::select(Stream::host(), f32_desc());
  ASSERT_TRUE(f && b);
  expect_error(f->run(Stream::sim(), {}, {t, t}), ErrorCode::InvalidProblem);
  expect_error(b->run(Stream::sim(), {}, {t, t, t}), ErrorCode::InvalidProblem, "UnaryBackwardPlan");
}

TEST(UnaryReject, RunOnAPlanSelectDidNotMake) {
  float buf[12] = {};
  const DynTensor t = DynTensor::dense(buf, ElementKind::F32, Shape{4, 3});
  expect_error(dynamic::UnaryPlan().run(Stream::host(), {}, {t, t}), ErrorCode::InvalidProblem);
  expect_error(dynamic::UnaryBackwardPlan().run(Stream::host(), {}, {t, t, t}), ErrorCode::InvalidProblem,
               "UnaryBackwardPlan");
}

TEST(UnaryReject, EveryOpHasABackwardOnEveryDeviceAndType) {
  // The decision documented in unary.hpp: every op has a backward (zeros for sign and the rounding ops,
  // as PyTorch), so "no backward" is never the answer for a catalog op.
  for (const CatalogOp& op : catalog())
    for (ElementKind k : op.kinds)
      for (DeviceKind d : {DeviceKind::Host, DeviceKind::Sim})
        EXPECT_TRUE(select_status<dynamic::UnaryBackwardPlan>(*Stream::for_device(d), test_desc(op.kind, k, Shape{2})))
            << op.name << " " << to_string(k) << " " << to_string(d);
}

class UnaryCanImplement : public test::InOutCanImplement<dynamic::UnaryPlan> {
 protected:
  void SetUp() override { select(f32_desc(), ElementKind::F32, ElementKind::F32); }
};

TEST_F(UnaryCanImplement, AcceptsTheDescribedTensorsInPlaceAndBroadcast) {
  expect_described_and_in_place_accepted();
  ConstDynTensor b = in();
  b.stride[0] = 0;
  EXPECT_TRUE(plan_->can_implement({b, out()}));
}
TEST_F(UnaryCanImplement, ShapeMismatch) { expect(in(), DynTensor::dense(out_, ElementKind::F32, Shape{4, 4}), ErrorCode::InvalidProblem); }
TEST_F(UnaryCanImplement, KindMismatch) { expect(ConstDynTensor::dense(in_, ElementKind::F64, Shape{4, 3}), out(), ErrorCode::InvalidProblem); }
TEST_F(UnaryCanImplement, NullData) { expect_null_input_rejected(); }
TEST_F(UnaryCanImplement, MisalignedPointer) { expect_misaligned_input_rejected(2); }
TEST_F(UnaryCanImplement, StrideZeroOutput) { expect_stride_zero_output_rejected(0); }
TEST_F(UnaryCanImplement, InPlaceWithOtherStrides) { expect_in_place_with_other_strides_rejected(); }

class UnaryBackwardCanImplement : public ::testing::Test {
 protected:
  void SetUp() override {
    plan_ = std::make_unique<dynamic::UnaryBackwardPlan>(
        *dynamic::UnaryBackwardPlan::select(Stream::host(), f32_desc(UnaryKind::Sigmoid)));
    ASSERT_EQ(plan_->saved_operand(), UnarySaved::Output);
  }
  DynTensor t(float* p, Shape s = Shape{4, 3}, ElementKind k = ElementKind::F32) { return DynTensor::dense(p, k, s); }
  void expect(const ConstDynTensor& dy, const ConstDynTensor& saved, const DynTensor& dx, ErrorCode code) {
    expect_rejected(*plan_, {dy, saved, dx}, code, "UnaryBackwardPlan", {dx_});
  }
  std::unique_ptr<dynamic::UnaryBackwardPlan> plan_;
  alignas(16) float dy_[32] = {};
  alignas(16) float saved_[32] = {};
  alignas(16) float dx_[32] = {};
};

TEST_F(UnaryBackwardCanImplement, AcceptsTheDescribedTensorsAndBothInPlaceForms) {
  EXPECT_TRUE(plan_->can_implement({t(dy_), t(saved_), t(dx_)}));
  EXPECT_TRUE(plan_->can_implement({t(dx_), t(saved_), t(dx_)}));
  EXPECT_TRUE(plan_->can_implement({t(dy_), t(dx_), t(dx_)}));
}
TEST_F(UnaryBackwardCanImplement, WrongSavedShape) { expect(t(dy_), t(saved_, Shape{3, 4}), t(dx_), ErrorCode::InvalidProblem); }
TEST_F(UnaryBackwardCanImplement, MissingSaved) { expect(t(dy_), ConstDynTensor{}, t(dx_), ErrorCode::InvalidProblem); }
TEST_F(UnaryBackwardCanImplement, SavedKindMismatch) {
  expect(t(dy_), t(saved_, Shape{4, 3}, ElementKind::F16), t(dx_), ErrorCode::InvalidProblem);
}
TEST_F(UnaryBackwardCanImplement, WrongDyShape) { expect(t(dy_, Shape{12}), t(saved_), t(dx_), ErrorCode::InvalidProblem); }
TEST_F(UnaryBackwardCanImplement, WrongDxShape) { expect(t(dy_), t(saved_), t(dx_, Shape{4, 2}), ErrorCode::InvalidProblem); }
TEST_F(UnaryBackwardCanImplement, StrideZeroDx) {
  DynTensor dx = t(dx_);
  dx.stride[1] = 0;
  expect(t(dy_), t(saved_), dx, ErrorCode::InvalidProblem);
}
TEST_F(UnaryBackwardCanImplement, DxOverDyWithOtherStrides) {
  ConstDynTensor dy = t(dx_);
  dy.stride = {1, 4};
  expect(dy, t(saved_), t(dx_), ErrorCode::InvalidProblem);
}
TEST_F(UnaryBackwardCanImplement, DxOverSavedWithOtherStrides) {
  ConstDynTensor saved = t(dx_);
  saved.stride = {1, 4};
  expect(t(dy_), saved, t(dx_), ErrorCode::InvalidProblem);
}
TEST_F(UnaryBackwardCanImplement, MisalignedSaved) {
  ConstDynTensor saved = t(saved_);
  saved.data = reinterpret_cast<char*>(saved_) + 1;
  expect(t(dy_), saved, t(dx_), ErrorCode::MisalignedOperand);
}
TEST(UnaryBackwardCanImplementNone, SavedIsNotReadNorChecked) {
  auto p = dynamic::UnaryBackwardPlan::select(Stream::host(), f32_desc(UnaryKind::Neg));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->saved_operand(), UnarySaved::None);
  alignas(16) float dy[12], dx[12];
  for (int i = 0; i < 12; ++i) dy[i] = static_cast<float>(i);
  const Shape s{4, 3};
  ASSERT_TRUE(p->run(Stream::host(), {}, {ConstDynTensor::dense(dy, ElementKind::F32, s), ConstDynTensor{},
                                          DynTensor::dense(dx, ElementKind::F32, s)}));
  for (int i = 0; i < 12; ++i) EXPECT_EQ(dx[i], -static_cast<float>(i));
}

}  // namespace
}  // namespace baracuda::test
