// ReduceToPlan (a sum down to a broadcast shape) on every device against sums the test computes in double,
// and BinaryBackwardPlan's gradients at the inputs' own shapes against its gradients at the output shape
// summed here; their rejections.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "ops/reduce_test_support.hpp"
#include "support/devices.hpp"
#include "support/expect_error.hpp"
#include "support/numeric.hpp"
#include "support/random.hpp"
#include "support/tensor.hpp"

namespace baracuda::test {
namespace {

using K = ElementKind;

/// `values` (row-major over `from`) summed to `to` in double: element i of `from` adds to the element of `to`
/// whose right-aligned index is i's, with 0 where `to`'s extent is 1.
std::vector<double> sum_to(const Shape& from, const Shape& to, const std::vector<double>& values) {
  std::vector<double> out(static_cast<size_t>(to.numel()), 0.0);
  const int lead = from.rank - to.rank;
  for (int64_t i = 0; i < from.numel(); ++i) {
    int64_t rest = i, o = 0, scale = 1;
    for (int d = from.rank - 1; d >= 0; --d) {
      const int64_t idx = rest % from.dims[d];
      rest /= from.dims[d];
      if (d < lead) continue;
      const int64_t te = to.dims[d - lead];
      o += (te == 1 ? 0 : idx) * scale;
      scale *= te;
    }
    out[static_cast<size_t>(o)] += values[static_cast<size_t>(i)];
  }
  return out;
}

/// Runs `plan` (ReduceToPlan or BinaryBackwardPlan-like) helpers on dense tensors: the outputs' values.
std::vector<double> values_of(ElementKind k, const DeviceTensor& t) {
  const std::vector<uint8_t> bytes = download(t);
  std::vector<double> v;
  for (int64_t i = 0; i < t.view.numel(); ++i)
    v.push_back(decode_value(k, &bytes[static_cast<size_t>(i * element_bytes(k))]));
  return v;
}

struct ToCase {
  Shape from, to;
};

class ReduceTo : public ::testing::TestWithParam<DeviceKind> {};

TEST_P(ReduceTo, SumsOverTheBroadcastDimensions) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  const std::vector<ToCase> cases = {
      {Shape{4, 5, 6}, Shape{5, 1}},  {Shape{4, 5, 6}, Shape{6}},       {Shape{4, 5, 6}, Shape{4, 1, 1}},
      {Shape{4, 5, 6}, Shape{}},      {Shape{4, 5, 6}, Shape{4, 5, 6}}, {Shape{1, 5, 6}, Shape{5, 6}},
      {Shape{3, 700}, Shape{1, 700}}, {Shape{2, 3000}, Shape{2, 1}},    {Shape{3, 0}, Shape{3, 1}}};
  for (K k : {K::F32, K::Bf16, K::F64}) {
    for (const ToCase& c : cases) {
      SCOPED_TRACE(std::string(to_string(k)) + " " + to_string(c.from) + " -> " + to_string(c.to));
      auto plan = dynamic::ReduceToPlan::select(stream, ReduceToDescriptor{k, c.from, c.to});
      BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, GetParam());
      ASSERT_TRUE(plan) << plan.error().to_string();
      std::vector<double> values;
      const std::vector<uint8_t> x = random_floats(k, c.from.numel(), -2, 2, 5, &values);
      auto xt = make_device_tensor(stream, k, c.from, dense_layout(c.from), x);
      auto yt = make_device_tensor(stream, k, c.to, dense_layout(c.to), sentinel_storage(k, c.to.numel()));
      auto ws = Buffer::allocate(stream, std::max<size_t>(plan->workspace_size(), 1));
      ASSERT_TRUE(xt && yt && ws);
      ASSERT_TRUE(plan->run(stream, Workspace(ws->data(), plan->workspace_size()), {xt->view, yt->view}));
      const std::vector<double> got = values_of(k, *yt), want = sum_to(c.from, c.to, values);
      std::vector<double> magnitudes = values;
      for (double& v : magnitudes) v = std::fabs(v);
      const std::vector<double> mag = sum_to(c.from, c.to, magnitudes);
      ASSERT_EQ(got.size(), want.size());
      // One ulp of y's kind, and the accumulator's rounding: a lane sums n/32 elements, then a tree.
      const double n = c.to.numel() == 0 ? 0 : static_cast<double>(c.from.numel() / c.to.numel());
      const double eps = 2 * half_ulp(k == K::F64 ? K::F64 : K::F32);
      for (size_t i = 0; i < got.size(); ++i)
        EXPECT_NEAR(got[i], want[i], 2 * half_ulp(k) * std::fabs(want[i]) + (n / 32 + 16) * eps * mag[i] + 1e-300)
            << "element " << i;
    }
  }
}

/// BinaryBackwardPlan (mul) with da and db at a's and b's shapes equals its output-shape gradients summed.
TEST_P(ReduceTo, BinaryBackwardSumsToTheInputsShapes) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  const Shape as{4, 1, 6}, bs{5, 1}, os{4, 5, 6};
  const K k = K::F32;
  BinaryDescriptor d;
  d.op = BinaryOp::Mul, d.element = k, d.a_shape = as, d.b_shape = bs;
  auto plan = dynamic::BinaryBackwardPlan::select(stream, d);
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, GetParam());
  ASSERT_TRUE(plan) << plan.error().to_string();
  ASSERT_GT(plan->workspace_size(), 0u);
  std::vector<double> av, bv, dyv;
  auto a = make_device_tensor(stream, k, as, dense_layout(as), random_floats(k, as.numel(), -2, 2, 1, &av));
  auto b = make_device_tensor(stream, k, bs, dense_layout(bs), random_floats(k, bs.numel(), -2, 2, 2, &bv));
  auto dy = make_device_tensor(stream, k, os, dense_layout(os), random_floats(k, os.numel(), -2, 2, 3, &dyv));
  auto full_a = make_device_tensor(stream, k, os, dense_layout(os), sentinel_storage(k, os.numel()));
  auto full_b = make_device_tensor(stream, k, os, dense_layout(os), sentinel_storage(k, os.numel()));
  auto da = make_device_tensor(stream, k, as, dense_layout(as), sentinel_storage(k, as.numel()));
  auto db = make_device_tensor(stream, k, bs, dense_layout(bs), sentinel_storage(k, bs.numel()));
  auto ws = Buffer::allocate(stream, plan->workspace_size());
  ASSERT_TRUE(a && b && dy && full_a && full_b && da && db && ws);
  // At the output shape: no workspace needed.
  ASSERT_TRUE(plan->run(stream, {}, {dy->view, a->view, b->view, full_a->view, full_b->view}));
  const Workspace w(ws->data(), plan->workspace_size());
  ASSERT_TRUE(plan->run(stream, w, {dy->view, a->view, b->view, da->view, db->view}));
  const std::vector<double> want_a = sum_to(os, as, values_of(k, *full_a)),
                            want_b = sum_to(os, bs, values_of(k, *full_b));
  const std::vector<double> got_a = values_of(k, *da), got_b = values_of(k, *db);
  for (size_t i = 0; i < want_a.size(); ++i) EXPECT_NEAR(got_a[i], want_a[i], 1e-5) << "da " << i;
  for (size_t i = 0; i < want_b.size(); ++i) EXPECT_NEAR(got_b[i], want_b[i], 1e-5) << "db " << i;
  // Only db, summed; da at the output shape beside it.
  ASSERT_TRUE(plan->run(stream, w, {dy->view, a->view, b->view, DynTensor{}, db->view}));
  EXPECT_EQ(values_of(k, *db), got_b);
  // Too small a workspace for the summed gradients.
  expect_error(plan->run(stream, Workspace(ws->data(), 16), {dy->view, a->view, b->view, da->view, db->view}),
               ErrorCode::WorkspaceTooSmall, "BinaryBackwardPlan");
}

INSTANTIATE_TEST_SUITE_P(Devices, ReduceTo, ::testing::ValuesIn(kTestDevices),
                         [](const ::testing::TestParamInfo<DeviceKind>& i) { return std::string(to_string(i.param)); });

TEST(ReduceToRejects, Descriptor) {
  const auto status = [](K k, const Shape& from, const Shape& to) {
    return dynamic::ReduceToPlan::select(Stream::host(), ReduceToDescriptor{k, from, to}).status();
  };
  expect_error(status(K::F32, Shape{4, 5}, Shape{3, 4, 5}), ErrorCode::InvalidProblem, "ReduceToPlan");
  expect_error(status(K::F32, Shape{4, 5}, Shape{2, 5}), ErrorCode::InvalidProblem, "ReduceToPlan");
  expect_error(status(K::F32, Shape{4, -5}, Shape{5}), ErrorCode::InvalidProblem, "ReduceToPlan");
  expect_error(status(K::S32, Shape{4, 5}, Shape{5}), ErrorCode::Unsupported, "ReduceToPlan");
  const Shape r8{2, 2, 2, 2, 2, 2, 2, 2};
  expect_error(status(K::F32, r8, r8), ErrorCode::InvalidProblem, "ReduceToPlan");
  auto plan = dynamic::ReduceToPlan::select(Stream::host(), ReduceToDescriptor{K::F32, Shape{2, 3}, Shape{3}});
  ASSERT_TRUE(plan);
  std::vector<float> x(6), y(3);
  expect_error(plan->can_implement(
                   {DynTensor::dense(x.data(), K::F32, Shape{2, 3}), DynTensor::dense(y.data(), K::F32, Shape{2})}),
               ErrorCode::InvalidProblem, "ReduceToPlan");
  expect_error(
      plan->run(Stream::host(), {},
                {DynTensor::dense(x.data(), K::F32, Shape{2, 3}), DynTensor::dense(x.data() + 3, K::F32, Shape{3})}),
      ErrorCode::InvalidProblem, "overlaps");
}

}  // namespace
}  // namespace baracuda::test
