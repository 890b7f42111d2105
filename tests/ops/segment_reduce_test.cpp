// The segmented-reduction engine (src/device/segment_reduce.cuh) on the sim device against a host loop:
// double sums, min/max pairs and a two-input dot product over every kept mask of a rank-3 shape, per-token
// rows on the warp and block paths, strided / transposed / broadcast inputs, empty kept and reduced
// extents, the two-pass (multi-chunk) schedule, determinism, and the workspace check.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "device/host_loop.hpp"
#include "device/segment_reduce_geometry.hpp"
#include "segment_reduce_kernels.hpp"
#include "support/sim_context.hpp"

namespace baracuda::test {
namespace {

ConstDynTensor view(const float* p, const Shape& shape, const std::array<int64_t, kMaxRank>& stride) {
  ConstDynTensor t;
  t.data = p;
  t.kind = ElementKind::F32;
  t.shape = shape;
  t.stride = stride;
  return t;
}

std::array<int64_t, kMaxRank> dense_strides(const Shape& s) {
  std::array<int64_t, kMaxRank> st{};
  int64_t n = 1;
  for (int d = s.rank - 1; d >= 0; --d) {
    st[d] = n;
    n *= s.dims[d];
  }
  return st;
}

// Small integers (exact in f32, and every sum of them exact in double), so comparisons are exact.
std::vector<float> small_integers(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(-50, 50);
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(dist(rng));
  return v;
}

int64_t segment_count(const Shape& s, uint32_t mask) {
  int64_t n = 1;
  for (int d = 0; d < s.rank; ++d)
    if ((mask >> d) & 1u) n *= s.dims[d];
  return n;
}

// Calls f(segment, offsets) for every element, the segment numbered row-major over the kept dimensions.
template <size_t N, class F>
void for_each_element(const Shape& s, uint32_t mask, const std::array<const int64_t*, N>& strides, F&& f) {
  std::array<int64_t, kMaxRank> unit{};
  for (int d = 0; d < s.rank; ++d) unit[d] = 1;
  // Segment "strides": row-major over the kept dimensions, 0 along reduced ones.
  std::array<int64_t, kMaxRank> seg_stride{};
  int64_t n = 1;
  for (int d = s.rank - 1; d >= 0; --d)
    if ((mask >> d) & 1u) {
      seg_stride[d] = n;
      n *= s.dims[d];
    }
  std::array<const int64_t*, N + 1> all{};
  all[0] = seg_stride.data();
  for (size_t k = 0; k < N; ++k) all[k + 1] = strides[k];
  detail::for_each_strided<N + 1>(s, all, [&](const std::array<int64_t, N + 1>& off) {
    std::array<int64_t, N> o{};
    for (size_t k = 0; k < N; ++k) o[k] = off[k + 1];
    f(off[0], o);
  });
}

struct Workspace_ {
  std::vector<double> storage;
  Workspace ws;
  explicit Workspace_(size_t bytes) : storage(bytes / sizeof(double) + 1) {
    ws = bytes == 0 ? Workspace{} : Workspace(storage.data(), bytes);
  }
};

// Runs sum and min/max over `x` viewed with `stride`, and checks them against the host loop.
void check_sum_min_max(const Shape& shape, uint32_t mask, const std::vector<float>& storage,
                       const std::array<int64_t, kMaxRank>& stride) {
  SCOPED_TRACE(::testing::Message() << "mask " << mask);
  const auto ctx = sim_context();
  const int64_t segs = segment_count(shape, mask);
  std::vector<double> want_sum(segs, 0.0);
  std::vector<float> want_lo(segs, std::numeric_limits<float>::infinity());
  std::vector<float> want_hi(segs, -std::numeric_limits<float>::infinity());
  for_each_element<1>(shape, mask, {stride.data()}, [&](int64_t seg, const std::array<int64_t, 1>& off) {
    const float v = storage[off[0]];
    want_sum[seg] += v;
    want_lo[seg] = std::min(want_lo[seg], v);
    want_hi[seg] = std::max(want_hi[seg], v);
  });

  Workspace_ w(detail::segment_reduce_workspace_bytes(ctx, shape, mask, sizeof(double)));
  std::vector<double> sum(segs, -1234.5);
  ASSERT_TRUE(segment_sum(ctx, shape, mask, w.ws, view(storage.data(), shape, stride), sum.data()).is_ok());
  Workspace_ w2(detail::segment_reduce_workspace_bytes(ctx, shape, mask, 2 * sizeof(float)));
  std::vector<float> lo(segs, 7.0f), hi(segs, 7.0f);
  std::vector<int> calls(segs, 0);
  ASSERT_TRUE(segment_min_max(ctx, shape, mask, w2.ws, view(storage.data(), shape, stride), lo.data(), hi.data(),
                              calls.data()).is_ok());
  for (int64_t s = 0; s < segs; ++s) {
    ASSERT_EQ(sum[s], want_sum[s]) << "segment " << s;
    ASSERT_EQ(lo[s], want_lo[s]) << "segment " << s;
    ASSERT_EQ(hi[s], want_hi[s]) << "segment " << s;
    ASSERT_EQ(calls[s], 1) << "segment " << s << " finished " << calls[s] << " times";
  }
}

TEST(SegmentReduceSim, EveryKeptMaskOfRank3Dense) {
  const Shape shape{5, 7, 9};
  const auto x = small_integers(shape.numel(), 1);
  for (uint32_t mask = 0; mask < 8; ++mask) check_sum_min_max(shape, mask, x, dense_strides(shape));
}

TEST(SegmentReduceSim, EveryKeptMaskOfRank3Transposed) {
  // A [5, 7, 9] view of [9, 7, 5] storage (dimensions reversed): nothing is contiguous.
  const Shape shape{5, 7, 9};
  const auto x = small_integers(shape.numel(), 2);
  for (uint32_t mask = 0; mask < 8; ++mask) check_sum_min_max(shape, mask, x, {1, 5, 35});
}

TEST(SegmentReduceSim, PerTokenRowsOnTheWarpAndBlockPaths) {
  const auto ctx = sim_context();
  for (int64_t cols : {1, 31, 100, 255, 256, 300, 777}) {
    const Shape shape{37, cols};
    EXPECT_EQ(detail::segment_reduce_schedule(ctx, shape, 1u).block_per_segment,
              cols >= detail::kSegmentReduceTuningSim.block_segment_min);
    const auto x = small_integers(shape.numel(), 3);
    check_sum_min_max(shape, 1u, x, dense_strides(shape));
  }
}

TEST(SegmentReduceSim, PaddedRowsAndBroadcastInput) {
  const Shape shape{6, 11, 13};
  // Padded rows: row stride 16 > 13.
  const auto padded = small_integers(6 * 11 * 16, 4);
  for (uint32_t mask : {0u, 1u, 3u, 4u, 6u}) check_sum_min_max(shape, mask, padded, {11 * 16, 16, 1});
  // Broadcast along the middle dimension (stride 0), and a fully broadcast scalar.
  const auto row = small_integers(6 * 13, 5);
  for (uint32_t mask : {0u, 2u, 5u, 7u}) check_sum_min_max(shape, mask, row, {13, 0, 1});
  const auto scalar = small_integers(1, 6);
  for (uint32_t mask : {0u, 1u}) check_sum_min_max(shape, mask, scalar, {0, 0, 0});
}

TEST(SegmentReduceSim, RankZeroAndExtentOne) {
  const auto x = small_integers(8, 7);
  check_sum_min_max(Shape{}, 0u, x, {});
  check_sum_min_max(Shape{1, 1, 1}, 0u, x, {1, 1, 1});
  check_sum_min_max(Shape{1, 8, 1}, 5u, x, {8, 1, 1});
}

TEST(SegmentReduceSim, EmptyReducedExtentFinishesEverySegmentWithTheIdentity) {
  const std::vector<float> none(1, 99.0f);
  check_sum_min_max(Shape{4, 0}, 1u, none, {0, 1});
  check_sum_min_max(Shape{3, 0, 5}, 5u, none, {0, 5, 1});
  check_sum_min_max(Shape{2, 700, 0}, 1u, none, {0, 0, 1});  // would take the block path if not empty
}

TEST(SegmentReduceSim, EmptyKeptExtentLaunchesNothing) {
  const auto ctx = sim_context();
  const Shape shape{0, 5};
  float unused = 0.0f;
  EXPECT_TRUE(segment_sum(ctx, shape, 1u, Workspace{}, view(&unused, shape, {5, 1}), nullptr).is_ok());
}

TEST(SegmentReduceSim, FewLongSegmentsTakeTheTwoPassSchedule) {
  const auto ctx = sim_context();
  struct Case {
    Shape shape;
    uint32_t mask;
  };
  for (const Case& c : {Case{Shape{3001}, 0u}, Case{Shape{2, 1500}, 1u}, Case{Shape{40, 3, 50}, 2u},
                        Case{Shape{7, 300}, 0u}}) {
    const auto s = detail::segment_reduce_schedule(ctx, c.shape, c.mask);
    ASSERT_TRUE(s.two_pass()) << s.segments << " x " << s.reduced;
    EXPECT_GT(detail::segment_reduce_workspace_bytes(ctx, c.shape, c.mask, sizeof(double)), 0u);
    const auto x = small_integers(c.shape.numel(), 8);
    check_sum_min_max(c.shape, c.mask, x, dense_strides(c.shape));
    // The same values through a reversed (negative-stride) view of a 1-D problem.
    if (c.shape.rank == 1) {
      std::vector<float> rev(x.rbegin(), x.rend());
      check_sum_min_max(c.shape, c.mask, rev, {1});
    }
  }
}

TEST(SegmentReduceSim, OnePassNeedsNoWorkspace) {
  const auto ctx = sim_context();
  EXPECT_EQ(detail::segment_reduce_workspace_bytes(ctx, Shape{64, 4096}, 1u, 8), 0u);  // many long rows
  EXPECT_EQ(detail::segment_reduce_workspace_bytes(ctx, Shape{3, 100}, 1u, 8), 0u);    // short rows
  EXPECT_EQ(detail::segment_reduce_workspace_bytes(ctx, Shape{100}, 0u, 8), 0u);       // short tensor
}

TEST(SegmentReduceSim, TwoInputsWithBroadcast) {
  const auto ctx = sim_context();
  const Shape shape{9, 700};
  const auto a = small_integers(shape.numel(), 9);
  const auto b = small_integers(700, 10);  // one row, broadcast over the 9 rows
  const std::array<int64_t, kMaxRank> sa = dense_strides(shape), sb{0, 1};
  for (uint32_t mask : {0u, 1u, 2u}) {
    const int64_t segs = segment_count(shape, mask);
    std::vector<double> want(segs, 0.0), got(segs, -1.0);
    for_each_element<2>(shape, mask, {sa.data(), sb.data()}, [&](int64_t seg, const std::array<int64_t, 2>& off) {
      want[seg] += static_cast<double>(a[off[0]]) * b[off[1]];
    });
    Workspace_ w(detail::segment_reduce_workspace_bytes(ctx, shape, mask, sizeof(double)));
    ASSERT_TRUE(segment_dot(ctx, shape, mask, w.ws, view(a.data(), shape, sa), view(b.data(), shape, sb), got.data())
                    .is_ok());
    for (int64_t s = 0; s < segs; ++s) ASSERT_EQ(got[s], want[s]) << "mask " << mask << " segment " << s;
  }
}

TEST(SegmentReduceSim, BitIdenticalRunToRun) {
  const auto ctx = sim_context();
  std::mt19937 rng(11);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(5003);
  for (auto& v : x) v = dist(rng);
  const Shape shape{5003};
  Workspace_ w(detail::segment_reduce_workspace_bytes(ctx, shape, 0u, sizeof(double)));
  ASSERT_GT(w.ws.size, 0u);
  double first = 0.0, again = 0.0;
  ASSERT_TRUE(segment_sum(ctx, shape, 0u, w.ws, view(x.data(), shape, {1}), &first).is_ok());
  for (int run = 0; run < 3; ++run) {
    std::memset(w.storage.data(), 0xAB, w.storage.size() * sizeof(double));  // stale partials must not matter
    ASSERT_TRUE(segment_sum(ctx, shape, 0u, w.ws, view(x.data(), shape, {1}), &again).is_ok());
    ASSERT_EQ(std::memcmp(&first, &again, sizeof(double)), 0);
  }
  double want = 0.0;
  for (float v : x) want += v;
  EXPECT_NEAR(first, want, 1e-9 * x.size());
}

TEST(SegmentReduceSim, TooSmallWorkspaceIsAnError) {
  const auto ctx = sim_context();
  const Shape shape{3001};
  const size_t needed = detail::segment_reduce_workspace_bytes(ctx, shape, 0u, sizeof(double));
  ASSERT_GT(needed, 0u);
  std::vector<double> storage(needed / sizeof(double));
  std::vector<float> x(3001, 1.0f);
  double out = 0.0;
  const Status s = segment_sum(ctx, shape, 0u, Workspace(storage.data(), needed - 8), view(x.data(), shape, {1}), &out);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), ErrorCode::WorkspaceTooSmall);
  EXPECT_EQ(s.error().needed, needed);
  EXPECT_NE(s.error().message.find("SegmentSum"), std::string::npos);
  const Status none = segment_sum(ctx, shape, 0u, Workspace{}, view(x.data(), shape, {1}), &out);
  EXPECT_EQ(none.code(), ErrorCode::WorkspaceTooSmall);
}

TEST(SegmentReduceGeometry, MergesContiguousNeighboursWithinEachList) {
  // [4, 5, 6, 7] dense, keep dims 0 and 2: kept (6, 4) and reduced (7, 5) cannot merge (not adjacent in
  // memory); keep dims 0 and 1: kept merges into 20, reduced into 42.
  const Shape s{4, 5, 6, 7};
  const auto st = dense_strides(s);
  const auto g = detail::segment_reduce_geometry<1>(s, 0b0101u, {st.data()});
  EXPECT_EQ(g.kept.rank, 2);
  EXPECT_EQ(g.reduced.rank, 2);
  const auto h = detail::segment_reduce_geometry<1>(s, 0b0011u, {st.data()});
  ASSERT_EQ(h.kept.rank, 1);
  ASSERT_EQ(h.reduced.rank, 1);
  EXPECT_EQ(h.kept.sizes[0], 20);
  EXPECT_EQ(h.kept.strides[0][0], 42);
  EXPECT_EQ(h.reduced.sizes[0], 42);
}

}  // namespace
}  // namespace baracuda::test
