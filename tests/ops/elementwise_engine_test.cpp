// The elementwise engine's multi-output path (two outputs per element: what binary and gated backward
// passes use) on the sim device against a host loop, over contiguous, unaligned, strided, broadcast and
// in-place operands, padded rows; and the mapping of a failed launch to `DeviceError`.
#include <gtest/gtest.h>

#include <vector>

#include "baracuda/baracuda.hpp"
#include "elementwise_engine_kernels.hpp"
#include "support/sim_context.hpp"

namespace baracuda::test {
namespace {

DynTensor view(float* p, std::initializer_list<int64_t> shape, std::initializer_list<int64_t> stride) {
  DynTensor t;
  t.data = p;
  t.kind = ElementKind::F32;
  t.shape = Shape(shape);
  int i = 0;
  for (int64_t s : stride) t.stride[i++] = s;
  return t;
}

/// The contiguous 1-D view of `n` floats at `p`.
DynTensor line(float* p, int64_t n) { return view(p, {n}, {1}); }

/// s[i] = a[i] + b[i] and d[i] = a[i] − b[i] for i in [first, last).
void expect_sums_and_differences(const std::vector<float>& s, const std::vector<float>& d, const std::vector<float>& a,
                                 const std::vector<float>& b, int64_t first, int64_t last) {
  for (int64_t i = first; i < last; ++i) {
    ASSERT_EQ(s[i], a[i] + b[i]) << i;
    ASSERT_EQ(d[i], a[i] - b[i]) << i;
  }
}

// Small integers: sums and differences are exact in f32, so the comparison is exact.
std::vector<float> iota_values(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>((i * 37) % 101) - 50.0f;
  return v;
}

TEST(ElementwiseEngineSim, TwoOutputsContiguousVectorizedAndTail) {
  const int64_t n = 1000 + 3;  // a vector body and a scalar tail
  auto a = iota_values(n, 1.0f), b = iota_values(n, 0.5f);
  std::vector<float> s(n, -1.0f), d(n, -1.0f);
  ASSERT_TRUE(
      sum_difference(sim_context(), line(s.data(), n), line(d.data(), n), line(a.data(), n), line(b.data(), n))
          .is_ok());
  expect_sums_and_differences(s, d, a, b, 0, n);
}

TEST(ElementwiseEngineSim, TwoOutputsUnalignedTakeTheScalarLoop) {
  const int64_t n = 257;
  auto a = iota_values(n + 1, 1.0f), b = iota_values(n + 1, 2.0f);
  std::vector<float> s(n + 1, 0.0f), d(n + 1, 0.0f);
  ASSERT_TRUE(sum_difference(sim_context(), line(s.data() + 1, n), line(d.data() + 1, n), line(a.data() + 1, n),
                             line(b.data() + 1, n))
                  .is_ok());
  EXPECT_EQ(s[0], 0.0f);  // untouched
  expect_sums_and_differences(s, d, a, b, 1, n + 1);
}

TEST(ElementwiseEngineSim, TwoOutputsStridedWithBroadcastInput) {
  const int64_t rows = 17, cols = 33;
  auto a = iota_values(rows * cols, 1.0f);
  auto row = iota_values(cols, 3.0f);                       // broadcast over rows (stride 0)
  std::vector<float> s(rows * cols), d(cols * rows * 2, 7.0f);  // d transposed, every other slot
  ASSERT_TRUE(sum_difference(sim_context(), view(s.data(), {rows, cols}, {cols, 1}),
                             view(d.data(), {rows, cols}, {2, 2 * rows}), view(a.data(), {rows, cols}, {cols, 1}),
                             view(row.data(), {rows, cols}, {0, 1})).is_ok());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      ASSERT_EQ(s[r * cols + c], a[r * cols + c] + row[c]);
      ASSERT_EQ(d[2 * r + 2 * rows * c], a[r * cols + c] - row[c]);
      ASSERT_EQ(d[2 * r + 2 * rows * c + 1], 7.0f);  // gaps untouched
    }
}

TEST(ElementwiseEngineSim, TwoOutputsInPlaceOverBothInputs) {
  const int64_t n = 515;
  auto a = iota_values(n, 1.0f), b = iota_values(n, 0.25f);
  const auto a0 = a, b0 = b;
  ASSERT_TRUE(
      sum_difference(sim_context(), line(a.data(), n), line(b.data(), n), line(a.data(), n), line(b.data(), n))
          .is_ok());
  expect_sums_and_differences(a, b, a0, b0, 0, n);
}

// Rows of 9 vectors + a 1-element tail in padded buffers, b broadcast over rows: the row-vector path.
TEST(ElementwiseEngineSim, TwoOutputsPaddedRowsWithTailsAndRowBroadcast) {
  const int64_t rows = 9, cols = 37, ls = 40, la = 44;  // row strides: multiples of 4 floats
  auto a = iota_values(rows * la, 1.0f), b = iota_values(cols, 2.0f);
  std::vector<float> s(rows * ls, 5.0f), d(rows * ls, 6.0f);
  ASSERT_TRUE(sum_difference(sim_context(), view(s.data(), {rows, cols}, {ls, 1}),
                             view(d.data(), {rows, cols}, {ls, 1}), view(a.data(), {rows, cols}, {la, 1}),
                             view(b.data(), {rows, cols}, {0, 1})).is_ok());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      ASSERT_EQ(s[r * ls + c], a[r * la + c] + b[c]) << r << "," << c;
      ASSERT_EQ(d[r * ls + c], a[r * la + c] - b[c]) << r << "," << c;
    }
    for (int64_t c = cols; c < ls; ++c) {  // padding untouched
      ASSERT_EQ(s[r * ls + c], 5.0f);
      ASSERT_EQ(d[r * ls + c], 6.0f);
    }
  }
}

// Rows indexed over two outer dimensions (a row's offset needs one division): [3, 5, 8] in [3, 6, 12].
TEST(ElementwiseEngineSim, TwoOutputsRowsOverTwoOuterDimensions) {
  const int64_t n0 = 3, n1 = 5, n2 = 8, s1 = 12, s0 = 6 * 12;
  auto a = iota_values(n0 * s0, 1.0f), b = iota_values(n0 * s0, 0.5f);
  std::vector<float> s(n0 * s0, 9.0f), d(n0 * s0, 9.0f);
  auto v = [&](float* p) { return view(p, {n0, n1, n2}, {s0, s1, 1}); };
  ASSERT_TRUE(sum_difference(sim_context(), v(s.data()), v(d.data()), v(a.data()), v(b.data())).is_ok());
  for (int64_t i = 0; i < n0 * s0; ++i) {
    const bool inside = (i % s0) / s1 < n1 && (i % s1) < n2;
    ASSERT_EQ(s[i], inside ? a[i] + b[i] : 9.0f) << i;
    ASSERT_EQ(d[i], inside ? a[i] - b[i] : 9.0f) << i;
  }
}

// An input constant along each row (a per-row scale, stride 0 innermost) at an unaligned address, with a
// 1-element tail per row: the row-vector path splats it.
TEST(ElementwiseEngineSim, TwoOutputsPerRowBroadcastInput) {
  const int64_t rows = 7, cols = 37;
  auto a = iota_values(rows * cols + 1, 1.0f), scale = iota_values(rows + 1, 2.0f);
  std::vector<float> s(rows * cols + 1, 5.0f), d(rows * cols + 1, 6.0f);
  ASSERT_TRUE(sum_difference(sim_context(), view(s.data(), {rows, cols}, {cols, 1}),
                             view(d.data(), {rows, cols}, {cols, 1}), view(a.data(), {rows, cols}, {cols, 1}),
                             view(scale.data() + 1, {rows, cols}, {1, 0})).is_ok());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      ASSERT_EQ(s[r * cols + c], a[r * cols + c] + scale[r + 1]) << r << "," << c;
      ASSERT_EQ(d[r * cols + c], a[r * cols + c] - scale[r + 1]) << r << "," << c;
    }
}

TEST(ElementwiseEngineSim, FailedLaunchIsADeviceError) {
  const Status s = launch_oversized_block(sim_context());
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), ErrorCode::DeviceError);
  EXPECT_NE(s.error().message.find("OversizedBlock"), std::string::npos) << s.to_string();
  // The emulator keeps working after the failed launch.
  EXPECT_TRUE(launch_oversized_block(sim_context()).code() == ErrorCode::DeviceError);
  std::vector<float> x(8, 1.0f), y(8), z(8);
  EXPECT_TRUE(sum_difference(sim_context(), view(y.data(), {8}, {1}), view(z.data(), {8}, {1}),
                             view(x.data(), {8}, {1}), view(x.data(), {8}, {1})).is_ok());
  EXPECT_EQ(y[3], 2.0f);
}

}  // namespace
}  // namespace baracuda::test
