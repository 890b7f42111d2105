// FillPlan tests: the catalog sweep (every kind × device × layout, against hand-computed bit patterns),
// special values (hand-computed conversions and rejections), and a negative test for every rejection.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "support/compare.hpp"
#include "support/devices.hpp"
#include "support/numeric.hpp"
#include "support/tensor.hpp"
#include "support/tolerance.hpp"

namespace baracuda::test {
namespace {

/// The bits of 1.5 in every kind, worked out by hand from the formats (sign | exponent | mantissa).
uint64_t one_and_a_half_bits(ElementKind k) {
  switch (k) {
    case ElementKind::F16:
      return 0x3E00;  // 0 01111 1000000000
    case ElementKind::Bf16:
      return 0x3FC0;  // 0 01111111 1000000
    case ElementKind::F32:
      return 0x3FC00000;
    case ElementKind::F64:
      return 0x3FF8000000000000;
    case ElementKind::Fp8E4M3:
      return 0x3C;  // 0 0111 100
    case ElementKind::Fp8E5M2:
      return 0x3E;  // 0 01111 10
    case ElementKind::S4:
    case ElementKind::U4:
      return 0x11;  // 1 in both nibbles
    default:
      return 1;  // integers truncate 1.5 to 1; bool: 1.5 != 0
  }
}

// ---------------------------------------------------------------------------------------------------
// The sweep, generated from the catalog
// ---------------------------------------------------------------------------------------------------

struct FillCase {
  std::string op;
  ElementKind kind;
  DeviceKind device;
  LayoutCase layout;
};

std::vector<LayoutCase> fill_layouts(bool packed) {
  std::vector<LayoutCase> v;
  for (const LayoutCase& l : unary_layouts(packed))
    if (l.name == "empty" || l.name == "one" || l.name == "257x259" || l.name == "strided" || l.name == "odd33x7")
      v.push_back(l);
  if (!packed) {  // transposed and reversed output
    LayoutCase c{"transposed_reversed", Shape{19, 23}, {}, {}, false};
    c.out.stride = {1, -19};
    c.out.offset = 19 * 22;
    v.push_back(c);
  }
  return v;
}

std::vector<FillCase> fill_cases() {
  std::vector<FillCase> v;
  auto add = [&](std::string_view op, auto types) {
    for_each_type(types, [&]<class T>() {
      for (DeviceKind d : kTestDevices)
        for (const LayoutCase& l : fill_layouts(is_packed(kind_of<T>)))
          v.push_back({std::string(op), kind_of<T>, d, l});
    });
  };
#define BARACUDA_FILL_OP(name, types, tol, doc) add(#name, types{});
#include "ops/fill/fill.def"
#undef BARACUDA_FILL_OP
  return v;
}

class FillSweep : public ::testing::TestWithParam<FillCase> {};

TEST_P(FillSweep, WritesTheValueAndNothingElse) {
  const FillCase& c = GetParam();
  BARACUDA_TEST_STREAM(stream, c.device);
  const FillDescriptor desc = FillDescriptor().with_element(c.kind).with_shape(c.layout.shape).with_value(1.5);
  auto plan = dynamic::FillPlan::select(stream, desc);
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, c.device);
  ASSERT_TRUE(plan) << plan.error().to_string();
  EXPECT_EQ(plan->sku().backend, backend_of(c.device));
  EXPECT_EQ(plan->sku().op, c.op);
  EXPECT_EQ(plan->workspace_size(), 0u);
  EXPECT_TRUE(plan->precision_guarantee().deterministic);

  const Shape& shape = c.layout.shape;
  const int64_t storage = storage_elements(shape, c.layout.out);
  const std::vector<uint8_t> init = sentinel_storage(c.kind, storage);
  std::vector<uint8_t> expected = init;
  const uint64_t bits = one_and_a_half_bits(c.kind);
  if (is_packed(c.kind)) {
    const int64_t n = shape.numel();
    for (int64_t i = 0; i < n / 2; ++i) expected[static_cast<size_t>(i)] = static_cast<uint8_t>(bits);
    if (n % 2) expected[static_cast<size_t>(n / 2)] = static_cast<uint8_t>(bits & 0x0F);  // high nibble 0
  } else {
    scatter(c.kind, filled(c.kind, shape.numel(), bits), &expected, shape, c.layout.out);
  }
  const int64_t compared = is_packed(c.kind) ? storage_bytes(c.kind, storage) : storage;

  std::vector<uint8_t> first;
  for (int repeat = 0; repeat < (c.device == DeviceKind::Host ? 1 : 2); ++repeat) {
    auto out = make_device_tensor(stream, c.kind, shape, c.layout.out, init);
    ASSERT_TRUE(out) << out.error().to_string();
    ASSERT_TRUE(plan->can_implement({out->view})) << plan->can_implement({out->view}).to_string();
    const Status s = plan->run(stream, Workspace::none(), {out->view});
    ASSERT_TRUE(s) << s.to_string();
    const std::vector<uint8_t> got = download(*out);
    EXPECT_TRUE(same_elements(c.kind, got, expected, compared));
    if (repeat == 0)
      first = got;
    else
      EXPECT_EQ(got, first) << "two runs gave different bits";
  }
}

std::string fill_case_name(const ::testing::TestParamInfo<FillCase>& info) {
  const FillCase& c = info.param;
  return c.op + "_" + std::string(to_string(c.kind)) + "_" + c.layout.name + "_" + std::string(to_string(c.device));
}

INSTANTIATE_TEST_SUITE_P(Catalog, FillSweep, ::testing::ValuesIn(fill_cases()), fill_case_name);

// ---------------------------------------------------------------------------------------------------
// Special values: conversions and rejections worked out by hand
// ---------------------------------------------------------------------------------------------------

struct ValueCase {
  ElementKind kind;
  Scalar value;
  bool accepted;
  uint64_t bits;  // expected storage bits when accepted (S4/U4: the whole byte)
};

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<ValueCase> value_cases() {
  using K = ElementKind;
  return {
      {K::F16, 65504.0, true, 0x7BFF},  // max finite
      {K::F16, 65519.0, true, 0x7BFF},  // below the midpoint to 65536: rounds to max
      {K::F16, 65520.0, false, 0},      // rounds to inf: overflow
      {K::F16, -kInf, true, 0xFC00},
      {K::F16, kNaN, true, 0x7E00},
      {K::F16, 2.5, true, 0x4100},
      {K::F16, 1e-8, true, 0x0000},                   // underflows to +0 (allowed)
      {K::F16, 5.960464477539063e-08, true, 0x0001},  // 2^-24, smallest subnormal
      {K::F16, int64_t{70000}, false, 0},
      {K::F16, true, true, 0x3C00},
      {K::Bf16, 1.0 + 1.0 / 256, true, 0x3F80},                                       // tie to even
      {K::Bf16, int64_t{(int64_t{1} << 40) + (int64_t{1} << 32) + 1}, true, 0x5381},  // one rounding from s64
      {K::F32, int64_t{(int64_t{1} << 53) + 1}, true, 0x5A000000},
      {K::F32, 1e39, false, 0},
      {K::F32, -0.0, true, 0x80000000},
      {K::F64, int64_t{(int64_t{1} << 53) + 1}, true, 0x4340000000000000},  // 2^53 (tie to even)
      {K::Fp8E4M3, 448.0, true, 0x7E},
      {K::Fp8E4M3, 464.0, true, 0x7E},  // the midpoint to 480 rounds to even: 448
      {K::Fp8E4M3, 465.0, false, 0},    // would be NaN: overflow
      {K::Fp8E4M3, kInf, false, 0},     // no infinity in E4M3
      {K::Fp8E4M3, kNaN, true, 0x7F},
      {K::Fp8E4M3, -2.0, true, 0xC0},
      {K::Fp8E5M2, 57344.0, true, 0x7B},
      {K::Fp8E5M2, 61439.0, true, 0x7B},
      {K::Fp8E5M2, 61440.0, false, 0},
      {K::Fp8E5M2, kInf, true, 0x7C},
      {K::S8, int64_t{127}, true, 0x7F},
      {K::S8, int64_t{-128}, true, 0x80},
      {K::S8, int64_t{128}, false, 0},
      {K::S8, int64_t{-129}, false, 0},
      {K::S8, 127.9, true, 0x7F},  // truncates
      {K::S8, 128.0, false, 0},
      {K::S8, -128.9, true, 0x80},
      {K::S8, kNaN, false, 0},
      {K::U8, int64_t{-1}, false, 0},
      {K::U8, -0.5, true, 0x00},  // truncates to 0
      {K::U8, 255.0, true, 0xFF},
      {K::S32, kInf, false, 0},
      {K::S32, -2.5, true, 0xFFFFFFFE},
      {K::S64, 9.3e18, false, 0},
      {K::S64, -9223372036854775808.0, true, 0x8000000000000000},
      {K::S64, int64_t{std::numeric_limits<int64_t>::min()}, true, 0x8000000000000000},
      {K::U32, int64_t{4294967295}, true, 0xFFFFFFFF},
      {K::U32, int64_t{4294967296}, false, 0},
      {K::Bool, int64_t{2}, true, 1},
      {K::Bool, kNaN, true, 1},
      {K::Bool, -0.0, true, 0},
      {K::S4, int64_t{7}, true, 0x77},
      {K::S4, int64_t{-8}, true, 0x88},
      {K::S4, int64_t{8}, false, 0},
      {K::S4, -3.7, true, 0xDD},  // -3 = 0b1101
      {K::U4, int64_t{15}, true, 0xFF},
      {K::U4, int64_t{16}, false, 0},
      {K::U4, kInf, false, 0},
  };
}

class FillValues : public ::testing::TestWithParam<DeviceKind> {};

TEST_P(FillValues, ConvertOrReject) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  for (const ValueCase& v : value_cases()) {
    SCOPED_TRACE(std::string(to_string(v.kind)) + " <- " + v.value.to_string());
    const Shape shape{3};
    auto plan =
        dynamic::FillPlan::select(stream, FillDescriptor().with_element(v.kind).with_shape(shape).with_value(v.value));
    BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, GetParam());
    if (!v.accepted) {
      ASSERT_FALSE(plan);
      EXPECT_EQ(plan.error().code, ErrorCode::InvalidProblem) << plan.error().to_string();
      continue;
    }
    ASSERT_TRUE(plan) << plan.error().to_string();
    auto out = make_device_tensor(stream, v.kind, shape, dense_layout(shape), sentinel_storage(v.kind, 3));
    ASSERT_TRUE(out);
    ASSERT_TRUE(plan->run(stream, {}, {out->view}));
    const std::vector<uint8_t> got = download(*out);
    if (is_packed(v.kind)) {
      EXPECT_EQ(got[0], v.bits);
      EXPECT_EQ(got[1], v.bits & 0x0F);  // 3 elements: the last byte's high nibble is 0
    } else {
      const std::vector<uint8_t> want = filled(v.kind, 3, v.bits);
      EXPECT_TRUE(same_elements(v.kind, got, want, 3));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, FillValues, ::testing::ValuesIn(kTestDevices),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// ---------------------------------------------------------------------------------------------------
// Every rejection of select, can_implement and run
// ---------------------------------------------------------------------------------------------------

FillDescriptor f32_desc(Shape s = Shape{4, 3}) {
  return FillDescriptor().with_element(ElementKind::F32).with_shape(s).with_value(2.0);
}

TEST(FillReject, TypedPlanWrongElementType) {
  auto p = FillPlan<__half, 2>::select(Stream::host(), f32_desc());
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, ErrorCode::InvalidProblem);
}

TEST(FillReject, TypedPlanWrongRank) {
  auto p = FillPlan<float, 3>::select(Stream::host(), f32_desc());
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, ErrorCode::InvalidProblem);
}

TEST(FillReject, RankAboveEight) {
  auto p = dynamic::FillPlan::select(Stream::host(), f32_desc(Shape{1, 1, 1, 1, 1, 1, 1, 1, 1}));
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, ErrorCode::InvalidProblem);
}

TEST(FillReject, NegativeExtent) {
  auto p = dynamic::FillPlan::select(Stream::host(), f32_desc(Shape{4, -1}));
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, ErrorCode::InvalidProblem);
}

TEST(FillReject, InvalidElementKindValue) {
  auto p = dynamic::FillPlan::select(Stream::host(), f32_desc().with_element(static_cast<ElementKind>(200)));
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, ErrorCode::InvalidProblem);
}

TEST(FillReject, ForcedBackendThatCannotServe) {
  for (BackendKind b : {BackendKind::Sim, BackendKind::Bespoke, BackendKind::CublasLt}) {
    auto p = dynamic::FillPlan::select(Stream::host(), f32_desc(), PlanPreference().with_backend(b));
    ASSERT_FALSE(p);
    EXPECT_EQ(p.error().code, ErrorCode::Unsupported);
  }
  EXPECT_TRUE(dynamic::FillPlan::select(Stream::sim(), f32_desc(), PlanPreference().with_backend(BackendKind::Sim)));
}

TEST(FillReject, ValuesTheKindCannotHold) {
  struct Bad {
    ElementKind k;
    Scalar v;
  };
  for (const Bad& b : {Bad{ElementKind::F16, 1e6}, Bad{ElementKind::S8, 300.0}, Bad{ElementKind::S32, kNaN},
                       Bad{ElementKind::U8, int64_t{256}}, Bad{ElementKind::Fp8E4M3, -kInf},
                       Bad{ElementKind::Fp8E4M3, 1000.0}, Bad{ElementKind::S4, 8.0}}) {
    auto p = dynamic::FillPlan::select(Stream::host(),
                                       FillDescriptor().with_element(b.k).with_shape(Shape{2}).with_value(b.v));
    ASSERT_FALSE(p) << to_string(b.k) << " <- " << b.v.to_string();
    EXPECT_EQ(p.error().code, ErrorCode::InvalidProblem);
  }
}

class FillCanImplement : public ::testing::Test {
 protected:
  void SetUp() override {
    plan_ = std::make_unique<dynamic::FillPlan>(*dynamic::FillPlan::select(Stream::host(), f32_desc()));
  }
  DynTensor good() { return DynTensor::dense(storage_, ElementKind::F32, Shape{4, 3}); }
  void expect(const DynTensor& t, ErrorCode code) {
    const Status s = plan_->can_implement({t});
    ASSERT_FALSE(s);
    EXPECT_EQ(s.code(), code) << s.to_string();
    // run re-validates and writes nothing.
    std::memset(storage_, 0, sizeof storage_);
    const Status r = plan_->run(Stream::host(), {}, {t});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.code(), code);
    for (float f : storage_) EXPECT_EQ(f, 0.0f);
  }
  std::unique_ptr<dynamic::FillPlan> plan_;
  alignas(16) float storage_[32] = {};
};

TEST_F(FillCanImplement, AcceptsTheDescribedTensor) { EXPECT_TRUE(plan_->can_implement({good()})); }

TEST_F(FillCanImplement, ShapeMismatch) {
  DynTensor t = DynTensor::dense(storage_, ElementKind::F32, Shape{3, 4});
  expect(t, ErrorCode::InvalidProblem);
}

TEST_F(FillCanImplement, KindMismatch) {
  DynTensor t = good();
  t.kind = ElementKind::S32;
  expect(t, ErrorCode::InvalidProblem);
}

TEST_F(FillCanImplement, NullData) {
  DynTensor t = good();
  t.data = nullptr;
  expect(t, ErrorCode::InvalidProblem);
}

TEST_F(FillCanImplement, MisalignedPointer) {
  DynTensor t = good();
  t.data = reinterpret_cast<char*>(storage_) + 2;
  expect(t, ErrorCode::MisalignedOperand);
}

TEST_F(FillCanImplement, StrideZeroOutput) {
  DynTensor t = good();
  t.stride[0] = 0;
  expect(t, ErrorCode::InvalidProblem);
}

TEST(FillReject, PackedOutputNotContiguous) {
  auto p = dynamic::FillPlan::select(
      Stream::host(), FillDescriptor().with_element(ElementKind::S4).with_shape(Shape{4, 4}).with_value(int64_t{1}));
  ASSERT_TRUE(p);
  uint8_t bytes[16] = {};
  DynTensor t = DynTensor::dense(bytes, ElementKind::S4, Shape{4, 4});
  t.stride = {8, 1};  // padded rows
  const Status s = p->can_implement({t});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.code(), ErrorCode::Unsupported);
}

TEST(FillReject, RunOnAnotherDevice) {
  auto p = dynamic::FillPlan::select(Stream::host(), f32_desc());
  ASSERT_TRUE(p);
  float storage[12] = {};
  const Status s = p->run(Stream::sim(), {}, {DynTensor::dense(storage, ElementKind::F32, Shape{4, 3})});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.code(), ErrorCode::InvalidProblem);
}

TEST(FillReject, RunWithoutSelect) {
  dynamic::FillPlan p;
  float storage[12] = {};
  const Status s = p.run(Stream::host(), {}, {DynTensor::dense(storage, ElementKind::F32, Shape{4, 3})});
  EXPECT_FALSE(s);
}

TEST(FillPlanApi, EmptyTensorTouchesNothing) {
  for (DeviceKind d : {DeviceKind::Host, DeviceKind::Sim}) {
    auto s = *Stream::for_device(d);
    auto p = dynamic::FillPlan::select(s, f32_desc(Shape{0, 3}));
    ASSERT_TRUE(p);
    EXPECT_TRUE(p->run(s, {}, {DynTensor::dense(nullptr, ElementKind::F32, Shape{0, 3})}));
  }
}

TEST(FillPlanApi, RankZeroIsOneElement) {
  for (DeviceKind d : {DeviceKind::Host, DeviceKind::Sim}) {
    const Stream s = *Stream::for_device(d);
    auto p = dynamic::FillPlan::select(
        s, FillDescriptor().with_element(ElementKind::S64).with_shape(Shape{}).with_value(int64_t{-7}));
    ASSERT_TRUE(p) << p.error().to_string();
    alignas(16) int64_t v[2] = {0, 0};
    ASSERT_TRUE(p->run(s, {}, {DynTensor::dense(v, ElementKind::S64, Shape{})}));
    EXPECT_EQ(v[0], -7);
    EXPECT_EQ(v[1], 0);
  }
}

TEST(FillPlanApi, TypedWrapperAndSku) {
  alignas(16) float storage[6] = {};
  auto p = FillPlan<float, 2>::select(Stream::sim(), f32_desc(Shape{2, 3}));
  ASSERT_TRUE(p) << p.error().to_string();
  EXPECT_EQ(to_string(p->sku()), "fill/f32/sim/exact/elementwise");
  ASSERT_TRUE(p->run(Stream::sim(), {}, FillArgs<float, 2>{TensorMut<float, 2>::dense(storage, {2, 3})}));
  for (float f : storage) EXPECT_EQ(f, 2.0f);
  EXPECT_EQ(f32_desc().hash(), f32_desc().hash());
  EXPECT_NE(f32_desc().hash(), f32_desc().with_value(3.0).hash());
}

}  // namespace
}  // namespace baracuda::test
