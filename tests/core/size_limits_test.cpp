// Sizes computed from user input never overflow: Buffer allocation sizes, element counts of shapes, and the
// reach of strided views are checked and rejected with a clear error (kMaxElements, kMaxAllocationBytes),
// instead of wrapping into a small allocation or an "empty" problem. Each case failed before the checks:
// Buffer::allocate of SIZE_MAX − k returned 24 usable bytes, allocate_for<double>(2^58 + 1) 8 bytes, and a
// [2^32, 2^32] quantize problem passed select, can_implement and run as an empty one.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"

namespace baracuda::test {
namespace {

constexpr int64_t k2(int e) { return int64_t{1} << e; }

bool mentions(const Error& e, const std::string& what) { return e.message.find(what) != std::string::npos; }

TEST(BufferLimits, AllocationsNearSizeMaxAreRejected) {
  for (const Stream stream : {Stream::host(), Stream::sim()}) {
    for (size_t k = 0; k <= 300; ++k) {
      const size_t bytes = std::numeric_limits<size_t>::max() - k;
      auto b = Buffer::allocate(stream, bytes);
      ASSERT_FALSE(b) << bytes << " bytes: allocated " << b->size();
      EXPECT_EQ(b.error().code, ErrorCode::InvalidProblem);
      EXPECT_TRUE(mentions(b.error(), "more than any allocation")) << b.error().message;
    }
    EXPECT_FALSE(Buffer::allocate(stream, kMaxAllocationBytes + 1));
    EXPECT_FALSE(Buffer::allocate(stream, static_cast<size_t>(PTRDIFF_MAX)));
    // A normal allocation still works, and copying past its end is refused.
    auto small = Buffer::allocate(stream, 24);
    ASSERT_TRUE(small);
    std::vector<char> page(4096, 1);
    EXPECT_FALSE(small->copy_from_host(page.data(), page.size()));
  }
}

TEST(BufferLimits, ElementCountsWhoseBytesOverflowAreRejected) {
  const Stream stream = Stream::host();
  for (const int64_t n : {k2(58) + 1, k2(62), std::numeric_limits<int64_t>::max(), kMaxElements + 1}) {
    auto b = Buffer::allocate_for<double>(stream, n);
    ASSERT_FALSE(b) << n << " doubles: allocated " << b->size() << " bytes";
    EXPECT_EQ(b.error().code, ErrorCode::InvalidProblem);
  }
  EXPECT_FALSE(Buffer::allocate_for<int4x2_t>(stream, std::numeric_limits<int64_t>::max()));
  EXPECT_FALSE(Buffer::allocate_for<float>(stream, -1));
  auto ok = Buffer::allocate_for<double>(stream, 5);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->size(), 40u);
}

TEST(ShapeLimits, CountsBeyondTheLimitAreInvalid) {
  EXPECT_TRUE((Shape{kMaxElements}.valid()));
  EXPECT_TRUE((Shape{k2(28), k2(28)}.valid()));
  EXPECT_FALSE((Shape{kMaxElements + 1}.valid()));
  EXPECT_FALSE((Shape{k2(33), k2(32)}.valid()));  // 2^65: numel used to wrap to 0
  EXPECT_FALSE((Shape{k2(32), k2(32)}.valid()));  // 2^64: likewise
  EXPECT_FALSE((Shape{3, k2(62), 5}.valid()));
  // An empty shape is still checked: its row-major strides are products of the other extents.
  EXPECT_FALSE((Shape{0, k2(40), k2(40)}.valid()));
  EXPECT_TRUE((Shape{0, k2(40)}.valid()));
  // numel never wraps: an overflowing product saturates (callers check valid() first).
  EXPECT_EQ((Shape{k2(33), k2(32)}.numel()), std::numeric_limits<int64_t>::max());
  EXPECT_EQ((Shape{k2(20), k2(20)}.numel()), k2(40));
}

// Each family's select rejects a shape whose element count overflows, with the same wording.
template <class Plan>
void expect_too_many(const Result<Plan>& p) {
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, ErrorCode::InvalidProblem) << p.error().message;
  EXPECT_TRUE(mentions(p.error(), "more elements than 64-bit sizes")) << p.error().message;
}

class SelectLimits : public ::testing::TestWithParam<DeviceKind> {
 protected:
  Stream stream() const { return GetParam() == DeviceKind::Host ? Stream::host() : Stream::sim(); }
};

TEST_P(SelectLimits, OverflowingShapesAreRejected) {
  const Shape huge{k2(32), k2(32)};
  const Shape huge_gated{k2(33), k2(32)};
  expect_too_many(dynamic::QuantizePlan::select(stream(), QuantizeDescriptor().with_shape(huge)));
  expect_too_many(
      dynamic::GatedActivationPlan::select(stream(), GatedActivationDescriptor().with_input_shape(huge_gated)));
  expect_too_many(dynamic::CastPlan::select(stream(), CastDescriptor().with_shape(huge)));
  expect_too_many(dynamic::UnaryPlan::select(stream(), UnaryDescriptor().with_shape(huge)));
  expect_too_many(
      dynamic::DynamicRangeQuantizePlan::select(stream(), DynamicRangeQuantizeDescriptor().with_shape(huge)));
  expect_too_many(dynamic::Fp8QuantizePlan::select(stream(), Fp8QuantizeDescriptor().with_shape(huge)));
}

// A view whose strides reach past kMaxElements is rejected by can_implement (and so by run), before any
// offset is computed from it.
TEST_P(SelectLimits, StridesBeyondReachAreRejected) {
  auto plan = dynamic::CastPlan::select(stream(), CastDescriptor().with_shape(Shape{4, 2}));
  ASSERT_TRUE(plan) << plan.error().message;
  alignas(16) float src[8] = {};
  alignas(16) float dst[8] = {};
  ConstDynTensor in = ConstDynTensor::dense(src, ElementKind::F32, Shape{4, 2});
  const DynTensor out = DynTensor::dense(dst, ElementKind::F32, Shape{4, 2});
  ASSERT_TRUE(plan->can_implement({in, out}));
  for (const int64_t stride : {k2(62), -k2(62), std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(),
                               kMaxElements / 3 + 1}) {
    in.stride[0] = stride;
    const Status s = plan->can_implement({in, out});
    ASSERT_FALSE(s) << "stride " << stride;
    EXPECT_EQ(s.error().code, ErrorCode::InvalidProblem);
    EXPECT_TRUE(mentions(s.error(), "strides reach farther")) << s.error().message;
    EXPECT_FALSE(plan->run(stream(), Workspace{}, {in, out}));
  }
  in.stride[0] = kMaxElements / 3 - 1;  // 3·stride + 1 < kMaxElements: within reach (not run)
  EXPECT_TRUE(plan->can_implement({in, out}));
}

INSTANTIATE_TEST_SUITE_P(Devices, SelectLimits, ::testing::Values(DeviceKind::Host, DeviceKind::Sim),
                         [](const auto& i) { return std::string(i.param == DeviceKind::Host ? "host" : "sim"); });

}  // namespace
}  // namespace baracuda::test
