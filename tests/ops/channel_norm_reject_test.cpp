// Every rejection of the channel_norm plans: the descriptors (groups, C not divisible, rank, eps, momentum,
// inference without running statistics, one value per channel in training, kinds), the operands (missing,
// unexpected, wrong shapes and kinds, overlapping outputs, the running statistics' overlap), the workspace.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "support/expect_error.hpp"

namespace baracuda::test {
namespace {

using K = ElementKind;
constexpr auto kInvalid = ErrorCode::InvalidProblem;

TEST(ChannelNormRejects, GroupNormDescriptor) {
  const GroupNormDescriptor ok = GroupNormDescriptor().with_shape(Shape{2, 6, 5}).with_groups(3);
  const auto status = [](const GroupNormDescriptor& d) {
    return dynamic::GroupNormPlan::select(Stream::host(), d).status();
  };
  EXPECT_TRUE(status(ok));
  for (int64_t g : {0, -1, 4, 12}) expect_error(status(GroupNormDescriptor(ok).with_groups(g)), kInvalid, "groups");
  expect_error(status(GroupNormDescriptor(ok).with_shape(Shape{2, 0, 5})), kInvalid, "groups");  // C = 0: G = 1
  EXPECT_TRUE(status(GroupNormDescriptor(ok).with_shape(Shape{2, 0, 5}).with_groups(1)));
  expect_error(status(GroupNormDescriptor(ok).with_shape(Shape{6})), kInvalid, "rank");
  expect_error(status(GroupNormDescriptor(ok).with_shape(Shape{})), kInvalid, "rank");
  expect_error(status(GroupNormDescriptor(ok).with_shape(Shape{1, 6, 1, 1, 1, 1, 1, 1})), kInvalid, "rank 2 to 7");
  expect_error(status(GroupNormDescriptor(ok).with_shape(Shape{2, -6, 5})), kInvalid, "GroupNormPlan");
  for (double e : {-1.0, std::numeric_limits<double>::infinity(), std::nan("")})
    expect_error(status(GroupNormDescriptor(ok).with_eps(e)), kInvalid, "eps");
  expect_error(status(GroupNormDescriptor(ok).with_element(K::S32)), ErrorCode::Unsupported, "GroupNormPlan");
  expect_error(dynamic::GroupNormBackwardPlan::select(Stream::host(), GroupNormDescriptor(ok).with_groups(4)).status(),
               kInvalid, "GroupNormBackwardPlan");
}

TEST(ChannelNormRejects, BatchNormDescriptor) {
  const BatchNormDescriptor ok = BatchNormDescriptor().with_shape(Shape{2, 3, 4});
  const auto status = [](const BatchNormDescriptor& d) {
    return dynamic::BatchNormPlan::select(Stream::host(), d).status();
  };
  EXPECT_TRUE(status(ok));
  EXPECT_TRUE(status(BatchNormDescriptor(ok).with_shape(Shape{1, 6, 1, 1, 1, 1, 1, 2})));  // rank 8
  expect_error(status(BatchNormDescriptor(ok).with_shape(Shape{3})), kInvalid, "rank");
  for (double e : {-1e-5, std::numeric_limits<double>::infinity(), std::nan("")})
    expect_error(status(BatchNormDescriptor(ok).with_eps(e)), kInvalid, "eps");
  for (double m : {-0.1, 1.5, std::nan("")})
    expect_error(status(BatchNormDescriptor(ok).with_momentum(m)), kInvalid, "momentum");
  EXPECT_TRUE(status(BatchNormDescriptor(ok).with_momentum(0)));
  EXPECT_TRUE(status(BatchNormDescriptor(ok).with_momentum(1)));
  expect_error(status(BatchNormDescriptor(ok).with_training(false).with_running_stats(false)), kInvalid,
               "has_running_stats");
  expect_error(status(BatchNormDescriptor(ok).with_shape(Shape{1, 3, 1})), kInvalid, "more than 1 value");
  expect_error(status(BatchNormDescriptor(ok).with_shape(Shape{1, 3})), kInvalid, "more than 1 value");
  EXPECT_TRUE(status(BatchNormDescriptor(ok).with_shape(Shape{1, 3}).with_training(false)));
  expect_error(status(BatchNormDescriptor(ok).with_element(K::U8)), ErrorCode::Unsupported, "BatchNormPlan");
  expect_error(
      dynamic::BatchNormBackwardPlan::select(Stream::host(), BatchNormDescriptor(ok).with_momentum(2)).status(),
      kInvalid, "BatchNormBackwardPlan");
}

TEST(ChannelNormRejects, GroupNormOperands) {
  const Shape s{2, 6, 5}, c{6}, st{2, 3};
  auto plan = dynamic::GroupNormPlan::select(Stream::host(), GroupNormDescriptor().with_shape(s).with_groups(3));
  ASSERT_TRUE(plan);
  std::vector<float> x(60), w(6), b(6), y(60), mean(6), rstd(6);
  std::vector<double> x64(60);
  const DynTensor xv = DynTensor::dense(x.data(), K::F32, s), wv = DynTensor::dense(w.data(), K::F32, c),
                  bv = DynTensor::dense(b.data(), K::F32, c), yv = DynTensor::dense(y.data(), K::F32, s),
                  mv = DynTensor::dense(mean.data(), K::F32, st), rv = DynTensor::dense(rstd.data(), K::F32, st);
  EXPECT_TRUE(plan->can_implement({xv, wv, bv, yv, mv, rv}));
  EXPECT_TRUE(plan->can_implement({xv, wv, bv, yv, {}, {}}));
  EXPECT_TRUE(plan->can_implement({xv, wv, bv, xv, mv, rv}));  // in place: y exactly x
  expect_error(plan->can_implement({{}, wv, bv, yv, mv, rv}), kInvalid, "x");
  expect_error(plan->can_implement({DynTensor::dense(x64.data(), K::F64, s), wv, bv, yv, mv, rv}), kInvalid, "x");
  expect_error(plan->can_implement({xv, {}, bv, yv, mv, rv}), kInvalid, "weight");
  expect_error(plan->can_implement({xv, DynTensor::dense(w.data(), K::F32, Shape{5}), bv, yv, mv, rv}), kInvalid,
               "weight");
  expect_error(plan->can_implement({xv, wv, bv, yv, DynTensor::dense(mean.data(), K::F32, Shape{6}), rv}), kInvalid,
               "mean");
  expect_error(plan->can_implement({xv, wv, bv, yv, mv, DynTensor::dense(rstd.data(), K::F64, st)}), kInvalid, "rstd");
  expect_error(plan->can_implement({xv, wv, bv, DynTensor::dense(x.data() + 1, K::F32, s), mv, rv}), kInvalid,
               "overlaps");
  expect_error(plan->can_implement({xv, wv, bv, yv, mv, mv}), kInvalid, "overlaps");
  expect_error(plan->can_implement({xv, wv, bv, yv, DynTensor::dense(w.data(), K::F32, st), rv}), kInvalid, "overlaps");
  auto bare = dynamic::GroupNormPlan::select(
      Stream::host(), GroupNormDescriptor().with_shape(s).with_groups(3).with_weight(false).with_bias(false));
  ASSERT_TRUE(bare);
  expect_error(bare->can_implement({xv, wv, {}, yv, mv, rv}), kInvalid, "weight");
  expect_error(bare->can_implement({xv, {}, bv, yv, mv, rv}), kInvalid, "bias");
  expect_error(plan->run(Stream::host(), Workspace(y.data(), 4), {xv, wv, bv, yv, mv, rv}),
               ErrorCode::WorkspaceTooSmall, "GroupNormPlan");
  expect_error(dynamic::GroupNormPlan{}.run(Stream::host(), {}, {xv, wv, bv, yv, mv, rv}), kInvalid,
               "select did not produce");

  auto bwd = dynamic::GroupNormBackwardPlan::select(Stream::host(), GroupNormDescriptor().with_shape(s).with_groups(3));
  ASSERT_TRUE(bwd);
  std::vector<float> dy(60), dx(60), dw(6), db(6);
  const DynTensor dyv = DynTensor::dense(dy.data(), K::F32, s), dxv = DynTensor::dense(dx.data(), K::F32, s),
                  dwv = DynTensor::dense(dw.data(), K::F32, c), dbv = DynTensor::dense(db.data(), K::F32, c);
  EXPECT_TRUE(bwd->can_implement({dyv, xv, wv, mv, rv, dxv, dwv, dbv}));
  expect_error(bwd->can_implement({dyv, xv, wv, mv, rv, {}, {}, {}}), kInvalid, "none of dx");
  expect_error(bwd->can_implement({dyv, xv, wv, {}, rv, dxv, dwv, dbv}), kInvalid, "mean");
  expect_error(bwd->can_implement({dyv, xv, wv, mv, {}, dxv, dwv, dbv}), kInvalid, "rstd");
  expect_error(bwd->can_implement({dyv, xv, wv, mv, rv, dyv, dwv, dbv}), kInvalid, "overlaps");
  expect_error(bwd->can_implement({dyv, xv, wv, mv, rv, dxv, dwv, dwv}), kInvalid, "overlaps");
  expect_error(bwd->can_implement({dyv, xv, wv, mv, rv, dxv, DynTensor::dense(dw.data(), K::F32, Shape{3}), dbv}),
               kInvalid, "dweight");
  auto bare_bwd = dynamic::GroupNormBackwardPlan::select(
      Stream::host(), GroupNormDescriptor().with_shape(s).with_groups(3).with_weight(false).with_bias(false));
  ASSERT_TRUE(bare_bwd);
  expect_error(bare_bwd->can_implement({dyv, xv, {}, mv, rv, dxv, dwv, {}}), kInvalid, "dweight");
  expect_error(bare_bwd->can_implement({dyv, xv, {}, mv, rv, dxv, {}, dbv}), kInvalid, "dbias");
  expect_error(bwd->run(Stream::host(), Workspace(dx.data(), 4), {dyv, xv, wv, mv, rv, dxv, dwv, dbv}),
               ErrorCode::WorkspaceTooSmall, "GroupNormBackwardPlan");
}

TEST(ChannelNormRejects, BatchNormOperands) {
  const Shape s{2, 3, 4}, c{3};
  const BatchNormDescriptor train = BatchNormDescriptor().with_shape(s);
  auto plan = dynamic::BatchNormPlan::select(Stream::host(), train);
  auto eval = dynamic::BatchNormPlan::select(Stream::host(), BatchNormDescriptor(train).with_training(false));
  auto no_running =
      dynamic::BatchNormPlan::select(Stream::host(), BatchNormDescriptor(train).with_running_stats(false));
  ASSERT_TRUE(plan && eval && no_running);
  std::vector<float> x(24), y(24), w(3), b(3), mean(3), rstd(3), rm(3), rv(3);
  const DynTensor xv = DynTensor::dense(x.data(), K::F32, s), yv = DynTensor::dense(y.data(), K::F32, s),
                  wv = DynTensor::dense(w.data(), K::F32, c), bv = DynTensor::dense(b.data(), K::F32, c),
                  mv = DynTensor::dense(mean.data(), K::F32, c), sv = DynTensor::dense(rstd.data(), K::F32, c),
                  rmv = DynTensor::dense(rm.data(), K::F32, c), rvv = DynTensor::dense(rv.data(), K::F32, c);
  EXPECT_TRUE(plan->can_implement({xv, wv, bv, yv, mv, sv, rmv, rvv}));
  EXPECT_TRUE(plan->can_implement({xv, wv, bv, xv, {}, {}, rmv, rvv}));
  EXPECT_TRUE(eval->can_implement({xv, wv, bv, yv, {}, {}, rmv, rvv}));
  EXPECT_TRUE(no_running->can_implement({xv, wv, bv, yv, mv, sv, {}, {}}));
  expect_error(plan->can_implement({xv, wv, bv, yv, mv, sv, {}, rvv}), kInvalid, "running_mean");
  expect_error(plan->can_implement({xv, wv, bv, yv, mv, sv, rmv, {}}), kInvalid, "running_var");
  expect_error(eval->can_implement({xv, wv, bv, yv, {}, {}, {}, {}}), kInvalid, "running_mean");
  expect_error(no_running->can_implement({xv, wv, bv, yv, mv, sv, rmv, rvv}), kInvalid, "running_mean");
  expect_error(eval->can_implement({xv, wv, bv, yv, mv, {}, rmv, rvv}), kInvalid, "mean");
  std::vector<double> rm64(3);
  expect_error(plan->can_implement({xv, wv, bv, yv, mv, sv, DynTensor::dense(rm64.data(), K::F64, c), rvv}), kInvalid,
               "running_mean");
  expect_error(plan->can_implement({xv, wv, bv, yv, mv, sv, rmv, DynTensor::dense(rv.data(), K::F32, Shape{2})}),
               kInvalid, "running_var");
  expect_error(plan->can_implement({xv, wv, bv, yv, DynTensor::dense(mean.data(), K::F32, Shape{2, 3}), sv, rmv, rvv}),
               kInvalid, "mean");
  // Overlaps: the read-write running statistics with an input, each other or an output; y over x, shifted.
  expect_error(plan->can_implement({xv, wv, bv, yv, mv, sv, DynTensor::dense(w.data(), K::F32, c), rvv}), kInvalid,
               "overlaps");
  expect_error(plan->can_implement({xv, wv, bv, yv, mv, sv, rmv, rmv}), kInvalid, "overlaps");
  expect_error(plan->can_implement({xv, wv, bv, yv, mv, sv, mv, rvv}), kInvalid, "overlaps");
  expect_error(plan->can_implement({xv, wv, bv, DynTensor::dense(x.data() + 1, K::F32, s), mv, sv, rmv, rvv}), kInvalid,
               "overlaps");
  expect_error(eval->can_implement({xv, wv, bv, DynTensor::dense(rm.data(), K::F32, s), {}, {}, rmv, rvv}), kInvalid,
               "overlaps");
  expect_error(plan->run(Stream::host(), Workspace(y.data(), 4), {xv, wv, bv, yv, mv, sv, rmv, rvv}),
               ErrorCode::WorkspaceTooSmall, "BatchNormPlan");

  auto bwd = dynamic::BatchNormBackwardPlan::select(Stream::host(), train);
  auto bwd_eval =
      dynamic::BatchNormBackwardPlan::select(Stream::host(), BatchNormDescriptor(train).with_training(false));
  ASSERT_TRUE(bwd && bwd_eval);
  std::vector<float> dy(24), dx(24), dw(3), db(3);
  const DynTensor dyv = DynTensor::dense(dy.data(), K::F32, s), dxv = DynTensor::dense(dx.data(), K::F32, s),
                  dwv = DynTensor::dense(dw.data(), K::F32, c), dbv = DynTensor::dense(db.data(), K::F32, c);
  EXPECT_TRUE(bwd->can_implement({dyv, xv, wv, mv, sv, {}, {}, dxv, dwv, dbv}));
  EXPECT_TRUE(bwd_eval->can_implement({dyv, xv, wv, {}, {}, rmv, rvv, dxv, dwv, dbv}));
  expect_error(bwd->can_implement({dyv, xv, wv, {}, sv, {}, {}, dxv, dwv, dbv}), kInvalid, "mean");
  expect_error(bwd->can_implement({dyv, xv, wv, mv, sv, rmv, rvv, dxv, dwv, dbv}), kInvalid, "running_mean");
  expect_error(bwd_eval->can_implement({dyv, xv, wv, mv, sv, rmv, rvv, dxv, dwv, dbv}), kInvalid, "mean");
  expect_error(bwd_eval->can_implement({dyv, xv, wv, {}, {}, rmv, {}, dxv, dwv, dbv}), kInvalid, "running_var");
  expect_error(bwd->can_implement({dyv, xv, wv, mv, sv, {}, {}, {}, {}, {}}), kInvalid, "none of dx");
  expect_error(bwd->can_implement({dyv, xv, wv, mv, sv, {}, {}, dxv, dwv, dwv}), kInvalid, "overlaps");
  expect_error(bwd_eval->can_implement({dyv, xv, wv, {}, {}, rmv, rvv, dxv, rmv, dbv}), kInvalid, "overlaps");
  expect_error(bwd->run(Stream::host(), Workspace(dx.data(), 4), {dyv, xv, wv, mv, sv, {}, {}, dxv, dwv, dbv}),
               ErrorCode::WorkspaceTooSmall, "BatchNormBackwardPlan");
}

}  // namespace
}  // namespace baracuda::test
