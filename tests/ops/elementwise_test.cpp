// The elementwise engine's host-side pieces: dimension coalescing and the 32/64-bit index decision, and the
// 64-bit strided path end to end (through CastPlan) on a view whose offsets exceed int32.
#include <gtest/gtest.h>

#include <cstring>
#include <new>

#include "baracuda/baracuda.hpp"
#include "device/elementwise_geometry.hpp"
#include "support/devices.hpp"

namespace baracuda::test {
namespace {

using detail::coalesce;

std::array<int64_t, kMaxRank> strides(std::initializer_list<int64_t> s) {
  std::array<int64_t, kMaxRank> a{};
  size_t i = 0;
  for (int64_t v : s) a[i++] = v;
  return a;
}

/// The geometry of an output and one input over `shape`, with those strides.
auto coalesce_out_in(const Shape& shape, std::initializer_list<int64_t> out_strides,
                     std::initializer_list<int64_t> in_strides) {
  const auto out = strides(out_strides), in = strides(in_strides);
  return coalesce<2>(shape, {out.data(), in.data()});
}

TEST(ElementwiseGeometry, DenseTensorsBecomeOneDimension) {
  const Shape shape{4, 5, 6};
  const auto out = strides({30, 6, 1});
  const auto g = coalesce<2>(shape, {out.data(), out.data()});
  EXPECT_EQ(g.rank, 1);
  EXPECT_EQ(g.sizes[0], 120);
  EXPECT_TRUE(g.row_vectorizable(4));  // one row
  EXPECT_TRUE(g.fits_int32());
}

TEST(ElementwiseGeometry, ExtentOneDimensionsAreDroppedWhateverTheirStride) {
  const Shape shape{1, 7, 1, 3};
  const auto out = strides({999, 3, -5, 1});
  const auto g = coalesce<1>(shape, {out.data()});
  EXPECT_EQ(g.rank, 1);
  EXPECT_EQ(g.sizes[0], 21);
  EXPECT_TRUE(g.row_vectorizable(4));  // one row
}

TEST(ElementwiseGeometry, PaddedRowsStayTwoDimensions) {
  const auto g = coalesce_out_in(Shape{37, 41}, {48, 1}, {41, 1});
  ASSERT_EQ(g.rank, 2);
  EXPECT_EQ(g.sizes[0], 41);  // innermost first
  EXPECT_EQ(g.sizes[1], 37);
  EXPECT_EQ(g.strides[0][1], 48);
  EXPECT_EQ(g.strides[1][1], 41);
  EXPECT_FALSE(g.row_vectorizable(4));  // the input's row stride 41 breaks 16-byte alignment
}

TEST(ElementwiseGeometry, PaddedRowsOfWholeVectorsAreRowVectorizable) {
  const auto g = coalesce_out_in(Shape{37, 41}, {48, 1}, {44, 1});
  ASSERT_EQ(g.rank, 2);
  EXPECT_TRUE(g.row_vectorizable(4));   // rows of 10 vectors and a 1-element tail
  EXPECT_FALSE(g.row_vectorizable(8));  // 44 is not a multiple of 8
  EXPECT_FALSE(g.row_vectorizable(64)); // rows narrower than a vector go to the strided path
}

TEST(ElementwiseGeometry, GatedHalvesOfTheLastDimensionAreRowVectorizable) {
  const Shape shape{16, 4096};  // [T, H] halves of a [T, 2H] input
  const auto out = strides({4096, 1});
  const auto half = strides({8192, 1});
  const auto g = coalesce<3>(shape, {out.data(), half.data(), half.data()});
  ASSERT_EQ(g.rank, 2);
  EXPECT_TRUE(g.row_vectorizable(8));
}

TEST(ElementwiseGeometry, BroadcastInputsAreRowVectorizableButBroadcastOutputsAreNot) {
  const Shape shape{33, 64};
  const auto out = strides({64, 1});
  const auto row = strides({0, 1});          // a bias: the same row for every row
  const auto per_row = strides({1, 0});      // a per-token scale: one value per row
  const auto scalar = strides({0, 0});
  EXPECT_TRUE((coalesce<2>(shape, {out.data(), row.data()}).row_vectorizable(4)));
  EXPECT_TRUE((coalesce<2>(shape, {out.data(), per_row.data()}).row_vectorizable(4)));
  EXPECT_TRUE((coalesce<2>(shape, {out.data(), scalar.data()}).row_vectorizable(4)));
  EXPECT_FALSE((coalesce<2>(shape, {per_row.data(), out.data()}).row_vectorizable(4)));  // operand 0 is the output
  EXPECT_TRUE((coalesce<2>(shape, {per_row.data(), out.data()}).row_vectorizable(4, 0)));
}

TEST(ElementwiseGeometry, BroadcastInputKeepsItsDimension) {
  const auto g = coalesce_out_in(Shape{33, 65}, {65, 1}, {0, 1});
  ASSERT_EQ(g.rank, 2);
  EXPECT_EQ(g.strides[1][1], 0);
}

TEST(ElementwiseGeometry, TransposedOutputIsWalkedInMemoryOrder) {
  const auto g = coalesce_out_in(Shape{19, 23}, {1, 19}, {1, 19});  // column-major output
  EXPECT_EQ(g.rank, 1);  // sorted by the output's strides, the two dimensions merge
  EXPECT_TRUE(g.row_vectorizable(4));  // one row
}

TEST(ElementwiseGeometry, LargeOffsetsNeedSixtyFourBitIndexing) {
  const Shape shape{2, 3};
  const auto out = strides({3, 1});
  const auto far = strides({int64_t{1} << 31, 1});
  EXPECT_FALSE((coalesce<2>(shape, {out.data(), far.data()}).fits_int32()));
  const auto near = strides({(int64_t{1} << 31) - 3, 1});
  EXPECT_TRUE((coalesce<2>(shape, {out.data(), near.data()}).fits_int32()));
  const auto negative = strides({-(int64_t{1} << 31), 1});
  EXPECT_FALSE((coalesce<2>(shape, {out.data(), negative.data()}).fits_int32()));
  const Shape big{int64_t{1} << 31};
  const auto unit = strides({1});
  EXPECT_FALSE((coalesce<1>(big, {unit.data()}).fits_int32()));
}

// Found by plan_fuzz: after two dimensions merged, the next was compared with the stride of a dimension that
// no longer existed, so (3, 243) merged into (3, 103) and the launch wrote up to element 937 of a view that
// reaches 916 (heap overflow on sim, a wrong write on cuda).
TEST(ElementwiseGeometry, MergesCompareWithTheMergedDimensionsStride) {
  const Shape shape{3, 3, 3, 3, 3, 3};
  const auto out = strides({243, 81, 27, 103, 3, 1});
  const auto g = coalesce<1>(shape, {out.data()});
  int64_t reach = 0, count = 1;
  for (int d = 0; d < g.rank; ++d) {
    reach += (g.sizes[d] - 1) * g.strides[0][d];
    count *= g.sizes[d];
  }
  EXPECT_EQ(count, 729);
  EXPECT_EQ(reach, 2 * (243 + 81 + 27 + 103 + 3 + 1));  // the view's own last element
  // Innermost first by stride: 1 and 3 merge into (9, 1), 27 and 81 into (9, 27); 103 and 243 stay apart.
  ASSERT_EQ(g.rank, 4);
  EXPECT_EQ(g.sizes, (std::array<int64_t, kMaxRank>{9, 9, 3, 3}));
  EXPECT_EQ(g.strides[0], (std::array<int64_t, kMaxRank>{1, 27, 103, 243}));
}

TEST(ElementwiseGeometry, EmptyProblems) {
  const Shape shape{5, 0, 3};
  const auto s = strides({0, 3, 1});
  EXPECT_EQ((coalesce<1>(shape, {s.data()}).numel), 0);
}

// The 64-bit strided path: an input row stride of 2^31 bytes (u8), so offsets do not fit int32. The host
// allocation is 2 GiB of which only two pages are touched (the kernel reads 6 bytes).
TEST(ElementwiseSixtyFourBit, CastReadsOffsetsBeyondInt32) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "a 2 GiB allocation is too costly under AddressSanitizer";
#else
  constexpr int64_t kRow = int64_t{1} << 31;
  for (DeviceKind d : {DeviceKind::Host, DeviceKind::Sim}) {
    SCOPED_TRACE(std::string(to_string(d)));
    const Stream s = *Stream::for_device(d);
    auto in = Buffer::allocate(s, static_cast<size_t>(kRow + 3));
    ASSERT_TRUE(in) << in.error().to_string();
    const uint8_t row0[3] = {1, 2, 3}, row1[3] = {250, 251, 252};
    ASSERT_TRUE(in->copy_from_host(row0, 3, 0));
    ASSERT_TRUE(in->copy_from_host(row1, 3, static_cast<size_t>(kRow)));
    ConstDynTensor src = ConstDynTensor::dense(in->data(), ElementKind::U8, Shape{2, 3});
    src.stride = {kRow, 1};
    alignas(16) int32_t out[6] = {};
    auto plan = dynamic::CastPlan::select(
        s, CastDescriptor().with_input(ElementKind::U8).with_output(ElementKind::S32).with_shape(Shape{2, 3}));
    ASSERT_TRUE(plan);
    ASSERT_TRUE(plan->run(s, {}, {src, DynTensor::dense(out, ElementKind::S32, Shape{2, 3})}));
    const int32_t want[6] = {1, 2, 3, 250, 251, 252};
    for (int i = 0; i < 6; ++i) EXPECT_EQ(out[i], want[i]) << i;
  }
#endif
}

}  // namespace
}  // namespace baracuda::test
