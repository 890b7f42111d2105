// GroupNorm (InstanceNorm as groups = C) and BatchNorm (training with and without running statistics,
// inference), forward and backward: every kind × ragged problem (N = 1, a spatial extent of 1, rank 2 to 4,
// segments long enough for the reductions' two-pass schedule; GroupNorm's groups on the row kernel's warp and
// block paths and one over its 64 KiB; dense and channels-last x; with and without
// weight and bias) on sim and cuda against the host reference; the same bits on a second run. The host
// against f64 formulas and finite differences: channel_norm_reference_test.cpp; rejections:
// channel_norm_reject_test.cpp; PyTorch: channel_norm_golden_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ops/channel_norm_test_support.hpp"
#include "support/devices.hpp"

namespace baracuda::test::channel_norm {
namespace {

enum class Op { Group, BatchTrain, BatchTrainNoRunning, BatchEval };

struct Case {
  Op op;
  K kind;
  Shape shape;
  int64_t groups;
  int affine;  // 0 none, 1 weight, 2 weight and bias
  bool nhwc;
  DeviceKind device;
  std::string name;
};

std::string op_name(Op op) {
  switch (op) {
    case Op::Group:
      return "group_norm";
    case Op::BatchTrain:
      return "batch_norm";
    case Op::BatchTrainNoRunning:
      return "batch_norm_no_running";
    case Op::BatchEval:
      return "batch_norm_eval";
  }
  return "?";
}

std::vector<Case> cases() {
  struct P {
    std::string name;
    Shape shape;
    std::vector<int64_t> groups;
  };
  const std::vector<P> problems = {{"3x6x7", Shape{3, 6, 7}, {1, 3, 6}},
                                   {"2x4x5x9", Shape{2, 4, 5, 9}, {2}},
                                   {"1x8x1", Shape{1, 8, 1}, {4}},
                                   {"5x3", Shape{5, 3}, {3}},
                                   {"two_pass_2x3x24x24", Shape{2, 3, 24, 24}, {1}},
                                   {"long_group_1x2x90x100", Shape{1, 2, 90, 100}, {1}}};
  std::vector<Case> v;
  for (Op op : {Op::Group, Op::BatchTrain, Op::BatchTrainNoRunning, Op::BatchEval})
    for (K k : {K::F32, K::Bf16, K::F16, K::F64})
      for (const P& p : problems)
        for (int64_t g : op == Op::Group ? p.groups : std::vector<int64_t>{0})
          for (int affine : {0, 1, 2})
            for (bool nhwc : {false, true}) {
              if (nhwc && (p.shape.rank < 3 || affine != 2)) continue;
              if (op != Op::Group && op != Op::BatchTrain && (affine == 1 || nhwc)) continue;
              const bool big = p.shape.numel() > 1000;  // the two-pass problem: f32 and f64, affine only
              if (big && (affine != 2 || k == K::F16 || k == K::Bf16)) continue;
              if (op == Op::BatchTrain && p.shape.numel() / p.shape.dims[1] < 2) continue;
              if (op == Op::BatchTrainNoRunning && p.shape.numel() / p.shape.dims[1] < 2) continue;
              for (DeviceKind dev : {DeviceKind::Sim, DeviceKind::Cuda})
                v.push_back({op, k, p.shape, g, affine, nhwc, dev,
                             op_name(op) + "_" + std::string(to_string(k)) + "_" + p.name +
                                 (op == Op::Group ? "_g" + std::to_string(g) : "") + "_affine" +
                                 std::to_string(affine) + (nhwc ? "_nhwc" : "") + "_" + std::string(to_string(dev))});
            }
  return v;
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

GroupNormDescriptor group_desc(const Case& c) {
  return GroupNormDescriptor()
      .with_element(c.kind)
      .with_shape(c.shape)
      .with_groups(c.groups)
      .with_weight(c.affine >= 1)
      .with_bias(c.affine == 2);
}

BatchNormDescriptor batch_desc(const Case& c) {
  return BatchNormDescriptor()
      .with_element(c.kind)
      .with_shape(c.shape)
      .with_training(c.op != Op::BatchEval)
      .with_running_stats(c.op != Op::BatchTrainNoRunning)
      .with_momentum(0.3)
      .with_weight(c.affine >= 1)
      .with_bias(c.affine == 2);
}

class ChannelNormSweep : public ::testing::TestWithParam<Case> {};

TEST_P(ChannelNormSweep, ForwardAndBackwardMatchTheHost) {
  const Case& c = GetParam();
  BARACUDA_TEST_STREAM(stream, c.device);
  const bool group = c.op == Op::Group;
  const Status probe = group ? dynamic::GroupNormPlan::select(stream, group_desc(c)).status()
                             : dynamic::BatchNormPlan::select(stream, batch_desc(c)).status();
  if (c.device == DeviceKind::Cuda && !probe && probe.error().message.find("without CUDA kernels") != std::string::npos)
    GTEST_SKIP() << probe.error().message;
  if (group && probe) {  // GroupNorm's forward path by its rule: a group of up to 64 KiB takes the row kernel
    const int64_t len = c.shape.numel() / (c.shape.dims[0] * c.groups), bytes = len * element_bytes(c.kind);
    const char* path = len <= 1024 && bytes <= 4096 ? "rows_warp"
                       : bytes <= 64 * 1024         ? "rows_block"
                                                    : "segment_reduce+elementwise";
    EXPECT_EQ(dynamic::GroupNormPlan::select(stream, group_desc(c))->sku().variant, path);
  }
  const Values v = make_values(c.kind, c.shape, 11);
  const auto run = [&](const Stream& s) {
    return group ? run_both(s, group_desc(c), v, c.nhwc) : run_both(s, batch_desc(c), v, c.nhwc);
  };
  const Outputs want = run(Stream::host());
  const Outputs got = run(stream);
  const double ulp = ulp_of(c.kind);
  const double acc = (c.kind == K::F64 ? 0x1p-52 : 0x1p-23) * 64;               // the f32 statistics' rounding
  const double count = static_cast<double>(c.shape.numel() / c.shape.dims[1]);  // values per channel
  expect_close(got.rstd, want.rstd, acc, 0, "rstd");
  expect_close(got.mean, want.mean, 0, acc * 3, "mean");
  expect_close(got.rm, want.rm, ulp, acc * 3, "running_mean");
  expect_close(got.rv, want.rv, ulp, acc * 8, "running_var");
  expect_close(got.y, want.y, ulp, acc * 8, "y");
  expect_close(got.dx, want.dx, ulp, acc * 16, "dx");
  expect_close(got.dw, want.dw, ulp, acc * count * 4, "dweight");
  expect_close(got.db, want.db, ulp, acc * count * 2, "dbias");
  const Outputs again = run(stream);  // the same bits again
  EXPECT_EQ(again.y, got.y);
  EXPECT_EQ(again.dx, got.dx);
  EXPECT_EQ(again.dw, got.dw);
  EXPECT_EQ(again.db, got.db);
}

INSTANTIATE_TEST_SUITE_P(AllKinds, ChannelNormSweep, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.name; });

class ChannelNormValues : public ::testing::TestWithParam<DeviceKind> {};

/// A channel of identical values: variance 0, y exactly the bias, rstd 1/sqrt(eps); dx ≈ 0 (dy constant).
TEST_P(ChannelNormValues, IdenticalValuesHaveVarianceZero) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  const Shape s{2, 3, 40};
  const BatchNormDescriptor bd = BatchNormDescriptor().with_shape(s).with_eps(1e-5);
  const GroupNormDescriptor gd = GroupNormDescriptor().with_shape(s).with_groups(3).with_eps(1e-5);
  auto probe = dynamic::BatchNormPlan::select(stream, bd);
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(probe, GetParam());
  Values v = make_values(K::F32, s, 5);
  for (int n = 0; n < 2; ++n)
    for (int j = 0; j < 40; ++j) {
      const auto i = static_cast<size_t>(n * 120 + 40 + j);
      v.x[i] = 0.75, v.dy[i] = 0.5;
    }
  for (const Outputs& r : {run_both(stream, bd, v), run_both(stream, gd, v)}) {
    for (int n = 0; n < 2; ++n)
      for (int j = 0; j < 40; ++j) {
        EXPECT_EQ(r.y[static_cast<size_t>(n * 120 + 40 + j)], v.b[1]);  // x − mean is exactly 0
        EXPECT_NEAR(r.dx[static_cast<size_t>(n * 120 + 40 + j)], 0, 1e-3);
      }
  }
  const Outputs b = run_both(stream, bd, v);
  EXPECT_EQ(b.mean[1], 0.75);
  EXPECT_NEAR(b.rstd[1], 1 / std::sqrt(1e-5), 1e-2);
  EXPECT_NEAR(b.rv[1], 0.9 * v.rv[1], 1e-6);  // the unbiased variance 0 enters the running one
  EXPECT_NEAR(b.rm[1], 0.9 * v.rm[1] + 0.1 * 0.75, 1e-6);
}

/// Without the caller's mean and rstd (the workspace holds them), y has the same bits; in place (y exactly x)
/// too.
TEST_P(ChannelNormValues, StatisticsOptionalAndInPlace) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  const Shape s{2, 2, 600};  // two-pass segments on sim
  const GroupNormDescriptor gd = GroupNormDescriptor().with_shape(s).with_groups(1);
  const BatchNormDescriptor bd = BatchNormDescriptor().with_shape(s).with_running_stats(false);
  auto gn = dynamic::GroupNormPlan::select(stream, gd);
  auto bn = dynamic::BatchNormPlan::select(stream, bd);
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(gn, GetParam());
  ASSERT_TRUE(gn && bn);
  const Values v = make_values(K::F32, s, 9);
  const Outputs gw = run_both(stream, gd, v), bw = run_both(stream, bd, v);
  const Shape c{2};
  auto w = make_device_tensor(stream, K::F32, c, dense_layout(c), encode(K::F32, v.w));
  auto b = make_device_tensor(stream, K::F32, c, dense_layout(c), encode(K::F32, v.b));
  auto ws = Buffer::allocate(stream, std::max(gn->workspace_size(), bn->workspace_size()));
  ASSERT_TRUE(w && b && ws);
  for (bool batch : {false, true}) {
    for (bool in_place : {false, true}) {
      auto x = make_device_tensor(stream, K::F32, s, dense_layout(s), encode(K::F32, v.x));
      auto y = make_device_tensor(stream, K::F32, s, dense_layout(s), sentinel_storage(K::F32, s.numel()));
      ASSERT_TRUE(x && y);
      const DynTensor out = in_place ? x->view : y->view;
      const Workspace wsv(ws->data(), ws->size());
      const Status st = batch ? bn->run(stream, wsv, {x->view, w->view, b->view, out, {}, {}, {}, {}})
                              : gn->run(stream, wsv, {x->view, w->view, b->view, out, {}, {}});
      ASSERT_TRUE(st) << st.to_string();
      EXPECT_EQ(decode(K::F32, download(in_place ? *x : *y), s.numel()), batch ? bw.y : gw.y)
          << (batch ? "batch_norm" : "group_norm") << (in_place ? " in place" : "");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, ChannelNormValues, ::testing::ValuesIn(kTestDevices),
                         [](const ::testing::TestParamInfo<DeviceKind>& i) { return std::string(to_string(i.param)); });

}  // namespace
}  // namespace baracuda::test::channel_norm
