// ReducePlan's rejections: every rule of select (op, dimensions, argmax's one dimension, correction, p, the op
// and kind pairs, empty reductions without an identity, the backend) and of run (operands, overlap, the
// workspace, an unselected plan, another device's stream), each with its code and the plan's name.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "support/devices.hpp"
#include "support/expect_error.hpp"

namespace baracuda::test {
namespace {

using K = ElementKind;
using R = ReduceOp;
constexpr const char* kPlan = "ReducePlan";
constexpr double kInf = std::numeric_limits<double>::infinity();

ReduceDescriptor desc(R op, K k, const Shape& s, uint32_t dims = 0) {
  ReduceDescriptor d = ReduceDescriptor().with_op(op).with_element(k).with_shape(s);
  d.dims = dims;
  return d;
}

Status select_status(const ReduceDescriptor& d) { return dynamic::ReducePlan::select(Stream::host(), d).status(); }

TEST(ReduceRejects, Descriptor) {
  expect_error(select_status(desc(static_cast<R>(99), K::F32, Shape{4})), ErrorCode::InvalidProblem, kPlan);
  expect_error(select_status(desc(R::Sum, K::F32, Shape{4, -1})), ErrorCode::InvalidProblem, kPlan);
  expect_error(select_status(desc(R::Sum, K::F32, Shape{4, 5}, 0b100)), ErrorCode::InvalidProblem, kPlan);
  expect_error(select_status(desc(R::Argmax, K::F32, Shape{4, 5, 6}, 0b011)), ErrorCode::InvalidProblem, kPlan);
  for (double c : {-1.0, std::nan(""), kInf})
    expect_error(select_status(desc(R::Var, K::F32, Shape{4}).with_correction(c)), ErrorCode::InvalidProblem, kPlan);
  for (double p : {-2.0, kInf, std::nan("")})
    expect_error(select_status(desc(R::NormP, K::F32, Shape{4}).with_p(p)), ErrorCode::InvalidProblem, kPlan);
  // Ops without an identity over an empty dimension.
  for (R op : {R::Max, R::Min, R::Argmax, R::Argmin, R::NormLinf})
    expect_error(select_status(desc(op, K::F32, Shape{3, 0}, 0b10)), ErrorCode::InvalidProblem, kPlan);
  // ... while an empty output has nothing to reduce.
  EXPECT_TRUE(dynamic::ReducePlan::select(Stream::host(), desc(R::Max, K::F32, Shape{0, 3}, 0b10)));
}

TEST(ReduceRejects, OpAndKindPairs) {
  for (R op : {R::Mean, R::Var, R::Std, R::NormL1, R::NormL2, R::NormLinf, R::NormP, R::LogSumExp})
    for (K k : {K::S8, K::U8, K::S32, K::S64, K::Bool})
      expect_error(select_status(desc(op, k, Shape{4})), ErrorCode::Unsupported, kPlan);
  for (R op : {R::Argmax, R::Argmin})
    expect_error(select_status(desc(op, K::Bool, Shape{4})), ErrorCode::Unsupported, kPlan);
  for (K k : {K::Fp8E4M3, K::Fp8E5M2, K::U32})
    expect_error(select_status(desc(R::Sum, k, Shape{4})), ErrorCode::Unsupported, kPlan);
}

TEST(ReduceRejects, Backend) {
  expect_other_backend_unsupported<dynamic::ReducePlan>(Stream::host(), desc(R::Sum, K::F32, Shape{4}),
                                                        BackendKind::Bespoke, kPlan);
}

TEST(ReduceRejects, Operands) {
  auto plan = dynamic::ReducePlan::select(Stream::host(), desc(R::Sum, K::F32, Shape{2, 3}, 0b10));
  ASSERT_TRUE(plan);
  std::vector<float> x(6, 1.0f), y(2, 0.0f);
  std::vector<double> y64(2);
  const DynTensor xv = DynTensor::dense(x.data(), K::F32, Shape{2, 3});
  const DynTensor yv = DynTensor::dense(y.data(), K::F32, Shape{2});
  EXPECT_TRUE(plan->can_implement({xv, yv}));
  expect_rejected(*plan, {xv, DynTensor::dense(y.data(), K::F32, Shape{3})}, ErrorCode::InvalidProblem, "y", {y});
  expect_rejected(*plan, {xv, DynTensor::dense(y64.data(), K::F64, Shape{2})}, ErrorCode::InvalidProblem, "y", {});
  expect_rejected(*plan, {DynTensor::dense(x.data(), K::F32, Shape{3, 2}), yv}, ErrorCode::InvalidProblem, "x", {y});
  expect_rejected(*plan, {xv, DynTensor::dense(x.data() + 4, K::F32, Shape{2})}, ErrorCode::InvalidProblem, "overlaps",
                  {});
  DynTensor broadcast = yv;
  broadcast.stride[0] = 0;
  expect_rejected(*plan, {xv, broadcast}, ErrorCode::InvalidProblem, "y", {y});
  expect_rejected(*plan, {xv, DynTensor{}}, ErrorCode::InvalidProblem, "y", {});
  // The output kind is PyTorch's: s64 for an integer sum.
  auto isum = dynamic::ReducePlan::select(Stream::host(), desc(R::Sum, K::S32, Shape{2, 3}, 0b10));
  ASSERT_TRUE(isum);
  EXPECT_EQ(isum->output_kind(), K::S64);
}

TEST(ReduceRejects, RunOnAnotherDeviceOrUnselectedPlan) {
  std::vector<float> x(4, 1.0f), y(1);
  const dynamic::ReduceArgs args{DynTensor::dense(x.data(), K::F32, Shape{4}),
                                 DynTensor::dense(y.data(), K::F32, Shape{})};
  expect_error(dynamic::ReducePlan{}.run(Stream::host(), {}, args), ErrorCode::InvalidProblem,
               "select did not produce");
  auto plan = dynamic::ReducePlan::select(Stream::host(), desc(R::Sum, K::F32, Shape{4}));
  ASSERT_TRUE(plan);
  expect_error(plan->run(Stream::sim(), {}, args), ErrorCode::InvalidProblem, kPlan);
}

TEST(ReduceRejects, Workspace) {
  // A few long rows: the sim device splits them across blocks and needs a workspace for the partials.
  const ReduceDescriptor d = desc(R::Var, K::F32, Shape{2, 5000}, 0b10);
  auto plan = dynamic::ReducePlan::select(Stream::sim(), d);
  ASSERT_TRUE(plan);
  ASSERT_GT(plan->workspace_size(), 0u);
  EXPECT_EQ(dynamic::ReducePlan::select(Stream::host(), d)->workspace_size(), 0u);
  auto x = Buffer::allocate(Stream::sim(), 2 * 5000 * sizeof(float));
  auto y = Buffer::allocate(Stream::sim(), 2 * sizeof(float));
  auto ws = Buffer::allocate(Stream::sim(), plan->workspace_size() + 256);
  ASSERT_TRUE(x && y && ws);
  const dynamic::ReduceArgs args{DynTensor::dense(x->data(), K::F32, Shape{2, 5000}),
                                 DynTensor::dense(y->data(), K::F32, Shape{2})};
  expect_error(plan->run(Stream::sim(), Workspace(ws->data(), plan->workspace_size() - 1), args),
               ErrorCode::WorkspaceTooSmall, kPlan);
  expect_error(plan->run(Stream::sim(), Workspace(static_cast<char*>(ws->data()) + 8, plan->workspace_size()), args),
               ErrorCode::MisalignedOperand, kPlan);
  expect_error(plan->run(Stream::sim(), Workspace(x->data(), plan->workspace_size()), args), ErrorCode::InvalidProblem,
               "overlaps x");
}

}  // namespace
}  // namespace baracuda::test
