// AffinePlan tests:
// - AffineSweep: every kind of the catalog × device × layout (including in place), against α·x + β computed
//   in double here with the catalog's tolerance; sim/cuda also bit-exact against the host reference, and
//   run twice (determinism).
// - AffineValues: hand-computed results (the single rounding of fma, α rounded to f32 for 16-bit kinds,
//   NaN/inf propagation, overflow).
// - AffineReject / AffineCanImplement: a negative test for every rejection.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "support/compare.hpp"
#include "support/devices.hpp"
#include "support/in_out_fixture.hpp"
#include "support/in_out_sweep.hpp"
#include "support/numeric.hpp"
#include "support/random.hpp"
#include "support/tensor.hpp"
#include "support/tolerance.hpp"

namespace baracuda::test {
namespace {

constexpr double kAlpha = 1.75;
constexpr double kBeta = -0.375;

// ---------------------------------------------------------------------------------------------------
// The sweep, generated from the catalog
// ---------------------------------------------------------------------------------------------------

std::vector<InOutCase> affine_cases() {
  std::vector<InOutCase> v;
  auto add = [&](std::string_view op, auto types, Tolerance tol) {
    for_each_type(types, [&]<class T>() {
      for (DeviceKind d : kTestDevices)
        for (const LayoutCase& l : unary_layouts())
          v.push_back({kind_of<T>, kind_of<T>, d, l, std::string(op), resolve(tol, kind_of<T>)});
    });
  };
#define BARACUDA_AFFINE_OP(name, types, tol, doc) add(#name, types{}, ::baracuda::test::tolerances::tol);
#include "ops/affine/affine.def"
#undef BARACUDA_AFFINE_OP
  return v;
}

class AffineSweep : public ::testing::TestWithParam<InOutCase> {};

TEST_P(AffineSweep, MatchesDoublePrecision) {
  const InOutCase& c = GetParam();
  const AffineDescriptor desc =
      AffineDescriptor().with_element(c.in).with_shape(c.layout.shape).with_alpha(kAlpha).with_beta(kBeta);
  check_in_out_case<dynamic::AffinePlan>(
      c, desc,
      [&](int64_t elements) {
        std::vector<double> unused;
        return random_floats(c.in, elements, -4.0, 4.0, 77 + elements, &unused);
      },
      [](double x) { return kAlpha * x + kBeta; });  // exact in double
}

INSTANTIATE_TEST_SUITE_P(Catalog, AffineSweep, ::testing::ValuesIn(affine_cases()),
                         [](const ::testing::TestParamInfo<InOutCase>& info) {
                           const InOutCase& c = info.param;
                           return c.op + "_" + std::string(to_string(c.in)) + "_" + c.layout.name + "_" +
                                  std::string(to_string(c.device));
                         });

// ---------------------------------------------------------------------------------------------------
// Values worked out by hand
// ---------------------------------------------------------------------------------------------------

constexpr uint64_t kAnyNaN = ~uint64_t{0};

struct ValueCase {
  ElementKind kind;
  double alpha;
  double beta;
  uint64_t x_bits;
  uint64_t y_bits;  // kAnyNaN: any NaN
};


std::vector<ValueCase> value_cases() {
  using K = ElementKind;
  const double inf = std::numeric_limits<double>::infinity();
  return {
      // fma rounds once: (1+2^-12)^2 - (1+2^-11) = 2^-24 exactly; a rounded product would give 0.
      {K::F32, 1 + 0x1p-12, -(1 + 0x1p-11), f32_bits(1 + 0x1p-12f), f32_bits(0x1p-24f)},
      {K::F64, 1 + 0x1p-27, -(1 + 0x1p-26), f64_bits(1 + 0x1p-27), f64_bits(0x1p-54)},
      // f16/bf16: α rounded to f32 (0.1f), fmaf(0.1f, 3, 0) = 0.3f rounded to f16 = 0x34CD
      {K::F16, 0.1, 0.0, 0x4200, 0x34CD},
      {K::Bf16, 2.0, 1.0, 0x3FC0, 0x4080},         // 2·1.5 + 1 = 4
      {K::F16, 2.0, 0.0, 0x7BFF, 0x7C00},          // 2·65504 overflows to inf
      {K::F32, 1.0, 0.0, f32_bits(-0.0f), 0x00000000},  // -0 + +0 = +0
      {K::F32, 2.0, 1.0, f32_bits(std::numeric_limits<float>::infinity()), f32_bits(std::numeric_limits<float>::infinity())},
      {K::F32, 0.0, 1.0, f32_bits(std::numeric_limits<float>::infinity()), kAnyNaN},  // 0·inf
      {K::F64, 1.0, -inf, f64_bits(inf), kAnyNaN},                                    // inf - inf
      {K::Bf16, 1.0, 0.0, 0x7FC1, kAnyNaN},                                      // NaN propagates
  };
}

class AffineValues : public ::testing::TestWithParam<DeviceKind> {};

TEST_P(AffineValues, HandComputed) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  for (const ValueCase& v : value_cases()) {
    SCOPED_TRACE(std::string(to_string(v.kind)) + " alpha=" + std::to_string(v.alpha) +
                 " beta=" + std::to_string(v.beta));
    const Shape shape{5};
    auto plan = dynamic::AffinePlan::select(
        stream, AffineDescriptor().with_element(v.kind).with_shape(shape).with_alpha(v.alpha).with_beta(v.beta));
    BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, GetParam());
    ASSERT_TRUE(plan) << plan.error().to_string();
    auto in = make_device_tensor(stream, v.kind, shape, dense_layout(shape), filled(v.kind, 5, v.x_bits));
    auto out = make_device_tensor(stream, v.kind, shape, dense_layout(shape), sentinel_storage(v.kind, 5));
    ASSERT_TRUE(in && out);
    ASSERT_TRUE(plan->run(stream, {}, {in->view, out->view}));
    const std::vector<uint8_t> got = download(*out);
    for (int i = 0; i < 5; ++i) {
      const uint8_t* p = got.data() + i * element_bytes(v.kind);
      if (v.y_bits == kAnyNaN)
        EXPECT_TRUE(is_nan(v.kind, p)) << describe(v.kind, p);
      else
        EXPECT_EQ(load_bits(v.kind, p), v.y_bits) << describe(v.kind, p);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, AffineValues, ::testing::ValuesIn(kTestDevices),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// ---------------------------------------------------------------------------------------------------
// Every rejection of select, can_implement and run
// ---------------------------------------------------------------------------------------------------

AffineDescriptor f32_desc(Shape s = Shape{4, 3}) {
  return AffineDescriptor().with_element(ElementKind::F32).with_shape(s).with_alpha(2.0).with_beta(1.0);
}

void expect_error(const Status& s, ErrorCode code) {
  ASSERT_FALSE(s);
  EXPECT_EQ(s.code(), code) << s.to_string();
  EXPECT_NE(s.error().message.find("AffinePlan"), std::string::npos) << "the message names the plan";
}

TEST(AffineReject, TypedPlanWrongTypeOrRank) {
  expect_error(AffinePlan<double, 2>::select(Stream::host(), f32_desc()).status(), ErrorCode::InvalidProblem);
  expect_error(AffinePlan<float, 1>::select(Stream::host(), f32_desc()).status(), ErrorCode::InvalidProblem);
}

TEST(AffineReject, UnsupportedKinds) {
  for (ElementKind k : {ElementKind::S32, ElementKind::U8, ElementKind::Bool, ElementKind::Fp8E4M3, ElementKind::S4})
    for (DeviceKind d : {DeviceKind::Host, DeviceKind::Sim})
      expect_error(dynamic::AffinePlan::select(*Stream::for_device(d), f32_desc().with_element(k)).status(),
                   ErrorCode::Unsupported);
}

TEST(AffineReject, BadDescriptor) {
  expect_error(dynamic::AffinePlan::select(Stream::host(), f32_desc(Shape{1, 1, 1, 1, 1, 1, 1, 1, 1})).status(),
               ErrorCode::InvalidProblem);
  expect_error(dynamic::AffinePlan::select(Stream::host(), f32_desc(Shape{3, -3})).status(), ErrorCode::InvalidProblem);
  expect_error(
      dynamic::AffinePlan::select(Stream::host(), f32_desc().with_element(static_cast<ElementKind>(14))).status(),
      ErrorCode::InvalidProblem);
}

TEST(AffineReject, ForcedBackendThatCannotServe) {
  expect_error(
      dynamic::AffinePlan::select(Stream::host(), f32_desc(), PlanPreference().with_backend(BackendKind::Sim)).status(),
      ErrorCode::Unsupported);
}

TEST(AffineReject, RunOnAnotherDevice) {
  auto p = dynamic::AffinePlan::select(Stream::host(), f32_desc());
  ASSERT_TRUE(p);
  float buf[12] = {};
  const DynTensor t = DynTensor::dense(buf, ElementKind::F32, Shape{4, 3});
  expect_error(p->run(Stream::sim(), {}, {t, t}), ErrorCode::InvalidProblem);
}

class AffineCanImplement : public test::InOutCanImplement<dynamic::AffinePlan> {
 protected:
  void SetUp() override { select(f32_desc(), ElementKind::F32, ElementKind::F32); }
};

TEST_F(AffineCanImplement, AcceptsTheDescribedTensorsAndInPlace) { expect_described_and_in_place_accepted(); }

TEST_F(AffineCanImplement, ShapeMismatch) {
  expect(in(), DynTensor::dense(out_, ElementKind::F32, Shape{4, 4}), ErrorCode::InvalidProblem);
}

TEST_F(AffineCanImplement, KindMismatch) {
  expect(ConstDynTensor::dense(in_, ElementKind::S32, Shape{4, 3}), out(), ErrorCode::InvalidProblem);
}

TEST_F(AffineCanImplement, NullData) { expect_null_input_rejected(); }

TEST_F(AffineCanImplement, MisalignedPointer) { expect_misaligned_input_rejected(3); }

TEST_F(AffineCanImplement, StrideZeroOutput) { expect_stride_zero_output_rejected(0); }

TEST_F(AffineCanImplement, InPlaceWithOtherStrides) { expect_in_place_with_other_strides_rejected(); }

TEST(AffinePlanApi, SkuPrecisionAndHash) {
  auto p = dynamic::AffinePlan::select(Stream::host(), f32_desc());
  ASSERT_TRUE(p);
  EXPECT_EQ(to_string(p->sku()), "affine/f32/host/f32/elementwise");
  EXPECT_EQ(p->precision_guarantee().math_precision, MathPrecision::F32);
  auto d = dynamic::AffinePlan::select(Stream::sim(), f32_desc().with_element(ElementKind::F64));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->precision_guarantee().math_precision, MathPrecision::F64);
  EXPECT_TRUE(d->precision_guarantee().deterministic);
  EXPECT_NE(f32_desc().hash(), f32_desc().with_beta(2.0).hash());
}

TEST(AffinePlanApi, TypedWrapperInPlace) {
  alignas(16) double buf[6] = {0, 1, 2, 3, 4, 5};
  auto p = AffinePlan<double, 1>::select(
      Stream::sim(),
      AffineDescriptor().with_element(ElementKind::F64).with_shape(Shape{6}).with_alpha(-2).with_beta(0.5));
  ASSERT_TRUE(p) << p.error().to_string();
  auto view = TensorMut<double, 1>::dense(buf, {6});
  ASSERT_TRUE(p->run(Stream::sim(), {}, AffineArgs<double, 1>{view, view}));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(buf[i], -2.0 * i + 0.5);
}

}  // namespace
}  // namespace baracuda::test
