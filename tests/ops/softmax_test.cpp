// SoftmaxPlan and SoftmaxBackwardPlan: softmax and log-softmax × kind × problem (rows, rows split across
// blocks, columns, a middle dimension, a transposed input; no mask, a row mask with −inf, a full mask;
// temperatures 1 and 0.7) on sim and cuda against the host reference; the host against values worked out by
// hand and its backward against central finite differences in f64; every rejection.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "support/devices.hpp"
#include "support/expect_error.hpp"
#include "support/numeric.hpp"
#include "support/random.hpp"
#include "support/tensor.hpp"

namespace baracuda::test {
namespace {

using K = ElementKind;
constexpr double kInf = std::numeric_limits<double>::infinity();

/// A tensor of `shape` from logical values: dense, or (rank 2, `transposed`) a view of column-major storage.
struct Input {
  Shape shape;
  Strided layout;
  std::vector<uint8_t> storage;
};

Input make_input(K k, const Shape& shape, const std::vector<uint8_t>& logical, bool transposed = false) {
  Input in{shape, dense_layout(shape), {}};
  if (transposed && shape.rank == 2) in.layout.stride[0] = 1, in.layout.stride[1] = shape.dims[0];
  in.storage = sentinel_storage(k, storage_elements(shape, in.layout));
  scatter(k, logical, &in.storage, shape, in.layout);
  return in;
}

std::vector<uint8_t> encode(K k, const std::vector<double>& v) {
  std::vector<uint8_t> b(static_cast<size_t>(storage_bytes(k, static_cast<int64_t>(v.size()))));
  for (size_t i = 0; i < v.size(); ++i) encode_exact(k, v[i], &b[i * static_cast<size_t>(element_bytes(k))]);
  return b;
}

std::vector<double> decode(K k, const std::vector<uint8_t>& b, int64_t n) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(decode_value(k, &b[static_cast<size_t>(i * element_bytes(k))]));
  return v;
}

/// Runs a softmax plan (forward: inputs x and mask; backward: dy and y) and returns the output's values.
template <class Plan>
std::vector<double> run_plan(const Stream& stream, const Plan& plan, K k, const Input& a, const Input* b) {
  const Shape& shape = plan.descriptor().shape;
  auto at = make_device_tensor(stream, k, a.shape, a.layout, a.storage);
  std::optional<Result<DeviceTensor>> bt;
  if (b != nullptr) bt = make_device_tensor(stream, k, b->shape, b->layout, b->storage);
  auto out = make_device_tensor(stream, k, shape, dense_layout(shape), sentinel_storage(k, shape.numel()));
  auto ws = Buffer::allocate(stream, std::max<size_t>(plan.workspace_size(), 1));
  EXPECT_TRUE(at && out && ws && (!bt || *bt));
  if (!at || !out || !ws || (bt && !*bt)) return {};
  const DynTensor second = bt ? (*bt)->view : DynTensor{};
  const Status s =
      plan.run(stream, Workspace(ws->data(), plan.workspace_size()), typename Plan::Args{at->view, second, out->view});
  EXPECT_TRUE(s) << s.to_string();
  return decode(k, download(*out), shape.numel());
}

struct Problem {
  std::string name;
  Shape shape;
  int dim;
  bool transposed = false;
};

std::vector<Problem> problems() {
  return {{"rows_7x300", Shape{7, 300}, -1},
          {"rows_split_3x1100", Shape{3, 1100}, 1},
          {"columns_40x33", Shape{40, 33}, 0},
          {"middle_4x5x6", Shape{4, 5, 6}, 1},
          {"transposed_7x300", Shape{7, 300}, -1, true},
          {"long_2x17000", Shape{2, 17000}, 1}};  // f32/f64 (and every masked kind) over the row kernel's limit
}

struct Case {
  SoftmaxOp op;
  K kind;
  Problem problem;
  int mask;  // 0 none, 1 a row mask over the last dimension with −inf entries, 2 a full mask
  double temperature;
  DeviceKind device;
  std::string name;
};

std::vector<Case> cases() {
  std::vector<Case> v;
  for (SoftmaxOp op : {SoftmaxOp::Softmax, SoftmaxOp::LogSoftmax})
    for (K k : {K::F32, K::Bf16, K::F16, K::F64})
      for (const Problem& p : problems())
        for (int mask : {0, 1, 2})
          for (DeviceKind dev : {DeviceKind::Sim, DeviceKind::Cuda}) {
            const double t = mask == 2 ? 0.7 : 1.0;
            v.push_back({op, k, p, mask, t, dev,
                         std::string(to_string(op)) + "_" + std::string(to_string(k)) + "_" + p.name + "_mask" +
                             std::to_string(mask) + "_" + std::string(to_string(dev))});
          }
  return v;
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class SoftmaxSweep : public ::testing::TestWithParam<Case> {};

TEST_P(SoftmaxSweep, ForwardAndBackwardMatchTheHost) {
  const Case& c = GetParam();
  BARACUDA_TEST_STREAM(stream, c.device);
  const Shape& shape = c.problem.shape;
  SoftmaxDescriptor d = SoftmaxDescriptor()
                            .with_op(c.op)
                            .with_element(c.kind)
                            .with_shape(shape)
                            .along(c.problem.dim)
                            .with_temperature(c.temperature);
  Shape mask_shape;
  std::vector<double> mask_values;
  if (c.mask == 1) {
    mask_shape = Shape{shape.dims[shape.rank - 1]};
    for (int64_t i = 0; i < mask_shape.numel(); ++i) mask_values.push_back(i % 7 == 3 ? -kInf : 0.0);
  } else if (c.mask == 2) {
    mask_shape = shape;
    for (int64_t i = 0; i < shape.numel(); ++i) mask_values.push_back(static_cast<double>(i % 5) - 2);
  }
  if (c.mask != 0) d.with_mask(mask_shape);
  auto plan = dynamic::SoftmaxPlan::select(stream, d);
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, c.device);
  ASSERT_TRUE(plan) << plan.error().to_string();
  auto host = dynamic::SoftmaxPlan::select(Stream::host(), d);
  ASSERT_TRUE(host);
  std::vector<double> xv;
  const Input x = make_input(c.kind, shape, random_floats(c.kind, shape.numel(), -3, 3, 7, &xv), c.problem.transposed);
  const Input mask = c.mask != 0 ? make_input(c.kind, mask_shape, encode(c.kind, mask_values)) : Input{};
  const Input* m = c.mask != 0 ? &mask : nullptr;
  const std::vector<double> want = run_plan(Stream::host(), *host, c.kind, x, m);
  const std::vector<double> got = run_plan(stream, *plan, c.kind, x, m);
  ASSERT_EQ(got.size(), want.size());
  // One ulp of the kind (the host rounds a long double, the devices an f32 or f64 value) plus the f32
  // log-sum-exp's error, which an exp amplifies by |y| (softmax) or adds as is (log-softmax).
  const double ulp = c.kind == K::F16 ? 0x1p-10 : c.kind == K::Bf16 ? 0x1p-7 : c.kind == K::F64 ? 0x1p-52 : 0x1p-23;
  const double acc = (c.kind == K::F64 ? 0x1p-52 : 0x1p-23) * 64;
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i]) || std::isinf(want[i])) {
      EXPECT_TRUE(std::isnan(want[i]) ? std::isnan(got[i]) : got[i] == want[i]) << i;
      continue;
    }
    EXPECT_NEAR(got[i], want[i], ulp * std::fabs(want[i]) + acc * std::max(1.0, std::fabs(want[i]))) << "y " << i;
  }
  const std::vector<double> again = run_plan(stream, *plan, c.kind, x, m);  // the same values again (NaN too)
  ASSERT_EQ(again.size(), got.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_TRUE(again[i] == got[i] || (std::isnan(again[i]) && std::isnan(got[i])));

  // Backward from the host's y and a random dy.
  auto bwd = dynamic::SoftmaxBackwardPlan::select(stream, d);
  auto host_bwd = dynamic::SoftmaxBackwardPlan::select(Stream::host(), d);
  ASSERT_TRUE(bwd && host_bwd);
  std::vector<double> dyv;
  const Input dy = make_input(c.kind, shape, random_floats(c.kind, shape.numel(), -1, 1, 8, &dyv));
  const Input y = make_input(c.kind, shape, encode(c.kind, want));
  const std::vector<double> want_dx = run_plan(Stream::host(), *host_bwd, c.kind, dy, &y);
  const std::vector<double> got_dx = run_plan(stream, *bwd, c.kind, dy, &y);
  ASSERT_EQ(got_dx.size(), want_dx.size());
  const double n = static_cast<double>(shape.dims[c.problem.dim < 0 ? c.problem.dim + shape.rank : c.problem.dim]);
  for (size_t i = 0; i < want_dx.size(); ++i) {
    if (std::isnan(want_dx[i])) continue;
    EXPECT_NEAR(got_dx[i], want_dx[i], ulp * std::fabs(want_dx[i]) + acc * n / 32 * 4 + 1e-300) << "dx " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(AllKinds, SoftmaxSweep, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.name; });

class SoftmaxValues : public ::testing::TestWithParam<DeviceKind> {};

TEST_P(SoftmaxValues, WorkedOutByHand) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  const auto run = [&](SoftmaxOp op, const Shape& s, const std::vector<double>& x, double t = 1,
                       const std::vector<double>* mask = nullptr) {
    SoftmaxDescriptor d = SoftmaxDescriptor().with_op(op).with_element(K::F64).with_shape(s).with_temperature(t);
    if (mask != nullptr) d.with_mask(s);
    auto plan = dynamic::SoftmaxPlan::select(stream, d);
    if (!plan) return std::vector<double>{};
    const Input xi = make_input(K::F64, s, encode(K::F64, x));
    const Input mi = make_input(K::F64, s, encode(K::F64, mask ? *mask : x));
    return run_plan(stream, *plan, K::F64, xi, mask ? &mi : nullptr);
  };
  auto probe = dynamic::SoftmaxPlan::select(stream, SoftmaxDescriptor().with_shape(Shape{2}));
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(probe, GetParam());
  const double ln2 = std::log(2.0);
  std::vector<double> y = run(SoftmaxOp::Softmax, Shape{1, 2}, {0, ln2});
  EXPECT_NEAR(y[0], 1.0 / 3, 1e-15);
  EXPECT_NEAR(y[1], 2.0 / 3, 1e-15);
  y = run(SoftmaxOp::LogSoftmax, Shape{1, 2}, {0, ln2});
  EXPECT_NEAR(y[0], -std::log(3.0), 1e-15);
  y = run(SoftmaxOp::Softmax, Shape{1, 2}, {0, 2 * ln2}, 2.0);  // temperature 2: [0, ln2]
  EXPECT_NEAR(y[1], 2.0 / 3, 1e-15);
  y = run(SoftmaxOp::Softmax, Shape{2}, {1000, 1000});  // no overflow: the max is subtracted
  ASSERT_EQ(y.size(), 2u);
  EXPECT_NEAR(y[0], 0.5, 1e-15);
  EXPECT_NEAR(y[1], 0.5, 1e-15);
  const std::vector<double> masked = {-kInf, 0, -kInf, -kInf};
  y = run(SoftmaxOp::Softmax, Shape{2, 2}, {3, 1, 5, 7}, 1, &masked);
  EXPECT_EQ(y[0], 0);
  EXPECT_EQ(y[1], 1);
  EXPECT_TRUE(std::isnan(y[2]) && std::isnan(y[3]));  // a fully masked row is NaN, as PyTorch
}

INSTANTIATE_TEST_SUITE_P(Devices, SoftmaxValues, ::testing::ValuesIn(kTestDevices),
                         [](const ::testing::TestParamInfo<DeviceKind>& i) { return std::string(to_string(i.param)); });

/// The host backward against central differences of L = Σ w ⊙ y(x) in f64.
TEST(SoftmaxBackward, MatchesFiniteDifferences) {
  const Shape s{3, 5};
  std::vector<double> x(15), w(15);
  for (int i = 0; i < 15; ++i) x[i] = std::sin(1.3 * i), w[i] = std::cos(0.7 * i);
  for (SoftmaxOp op : {SoftmaxOp::Softmax, SoftmaxOp::LogSoftmax}) {
    const SoftmaxDescriptor d =
        SoftmaxDescriptor().with_op(op).with_element(K::F64).with_shape(s).along(1).with_temperature(0.8);
    auto fwd = dynamic::SoftmaxPlan::select(Stream::host(), d);
    auto bwd = dynamic::SoftmaxBackwardPlan::select(Stream::host(), d);
    ASSERT_TRUE(fwd && bwd);
    const auto loss = [&](const std::vector<double>& xs) {
      const std::vector<double> y =
          run_plan(Stream::host(), *fwd, K::F64, make_input(K::F64, s, encode(K::F64, xs)), nullptr);
      double l = 0;
      for (size_t i = 0; i < y.size(); ++i) l += w[i] * y[i];
      return l;
    };
    const std::vector<double> y =
        run_plan(Stream::host(), *fwd, K::F64, make_input(K::F64, s, encode(K::F64, x)), nullptr);
    const Input yi = make_input(K::F64, s, encode(K::F64, y));
    const std::vector<double> dx =
        run_plan(Stream::host(), *bwd, K::F64, make_input(K::F64, s, encode(K::F64, w)), &yi);
    for (int i = 0; i < 15; ++i) {
      std::vector<double> hi = x, lo = x;
      hi[i] += 1e-6, lo[i] -= 1e-6;
      EXPECT_NEAR(dx[i], (loss(hi) - loss(lo)) / 2e-6, 1e-8) << to_string(op) << " " << i;
    }
  }
}

TEST(SoftmaxRejects, DescriptorAndOperands) {
  const auto status = [](const SoftmaxDescriptor& d) {
    return dynamic::SoftmaxPlan::select(Stream::host(), d).status();
  };
  const SoftmaxDescriptor ok = SoftmaxDescriptor().with_shape(Shape{4, 5});
  expect_error(status(SoftmaxDescriptor(ok).with_op(static_cast<SoftmaxOp>(7))), ErrorCode::InvalidProblem,
               "SoftmaxPlan");
  expect_error(status(SoftmaxDescriptor(ok).along(2)), ErrorCode::InvalidProblem, "SoftmaxPlan");
  expect_error(status(SoftmaxDescriptor(ok).along(-3)), ErrorCode::InvalidProblem, "SoftmaxPlan");
  expect_error(status(SoftmaxDescriptor().with_shape(Shape{})), ErrorCode::InvalidProblem, "SoftmaxPlan");
  for (double t : {0.0, -1.0, kInf, std::nan("")})
    expect_error(status(SoftmaxDescriptor(ok).with_temperature(t)), ErrorCode::InvalidProblem, "SoftmaxPlan");
  expect_error(status(SoftmaxDescriptor(ok).with_element(K::S32)), ErrorCode::Unsupported, "SoftmaxPlan");
  expect_error(status(SoftmaxDescriptor(ok).with_mask(Shape{3})), ErrorCode::InvalidProblem, "SoftmaxPlan");
  expect_error(status(SoftmaxDescriptor(ok).with_mask(Shape{2, 4, 5})), ErrorCode::InvalidProblem, "SoftmaxPlan");
  expect_error(dynamic::SoftmaxBackwardPlan::select(Stream::host(), SoftmaxDescriptor(ok).along(5)).status(),
               ErrorCode::InvalidProblem, "SoftmaxBackwardPlan");
  auto bwd = dynamic::SoftmaxBackwardPlan::select(Stream::host(), ok);
  ASSERT_TRUE(bwd);
  std::vector<float> g(20), yb(20), dx(20);
  const DynTensor gv = DynTensor::dense(g.data(), K::F32, Shape{4, 5}),
                  ybv = DynTensor::dense(yb.data(), K::F32, Shape{4, 5});
  EXPECT_TRUE(bwd->can_implement({gv, ybv, DynTensor::dense(dx.data(), K::F32, Shape{4, 5})}));
  expect_error(bwd->can_implement({gv, ybv, gv}), ErrorCode::InvalidProblem, "overlaps");   // dx over dy
  expect_error(bwd->can_implement({gv, ybv, ybv}), ErrorCode::InvalidProblem, "overlaps");  // dx over y
  expect_error(bwd->can_implement({gv, ybv, DynTensor::dense(dx.data(), K::F64, Shape{4, 5})}),
               ErrorCode::InvalidProblem, "dx");

  auto plan = dynamic::SoftmaxPlan::select(Stream::host(), SoftmaxDescriptor(ok).with_mask(Shape{5}));
  ASSERT_TRUE(plan);
  std::vector<float> x(20), m(5), y(20);
  const DynTensor xv = DynTensor::dense(x.data(), K::F32, Shape{4, 5});
  const DynTensor mv = DynTensor::dense(m.data(), K::F32, Shape{5});
  const DynTensor yv = DynTensor::dense(y.data(), K::F32, Shape{4, 5});
  EXPECT_TRUE(plan->can_implement({xv, mv, yv}));
  expect_error(plan->can_implement({xv, DynTensor{}, yv}), ErrorCode::InvalidProblem, "mask");
  expect_error(plan->can_implement({xv, mv, xv}), ErrorCode::InvalidProblem, "overlaps");
  expect_error(plan->can_implement({xv, mv, DynTensor::dense(y.data(), K::F32, Shape{5, 4})}),
               ErrorCode::InvalidProblem, "y");
  auto nomask = dynamic::SoftmaxPlan::select(Stream::host(), ok);
  ASSERT_TRUE(nomask);
  expect_error(nomask->can_implement({xv, mv, yv}), ErrorCode::InvalidProblem, "mask");
  expect_error(dynamic::SoftmaxPlan{}.run(Stream::host(), {}, {xv, {}, yv}), ErrorCode::InvalidProblem,
               "select did not produce");
  // A long row on sim (over the row kernel's 64 KiB) needs the workspace; a shorter one none.
  auto short_rows = dynamic::SoftmaxPlan::select(Stream::sim(), SoftmaxDescriptor().with_shape(Shape{2, 5000}));
  ASSERT_TRUE(short_rows);
  EXPECT_EQ(short_rows->workspace_size(), 0u);
  auto sim = dynamic::SoftmaxPlan::select(Stream::sim(), SoftmaxDescriptor().with_shape(Shape{2, 17000}));
  ASSERT_TRUE(sim);
  ASSERT_GT(sim->workspace_size(), 0u);
  auto xs = Buffer::allocate(Stream::sim(), 2 * 17000 * 4), ys = Buffer::allocate(Stream::sim(), 2 * 17000 * 4);
  ASSERT_TRUE(xs && ys);
  expect_error(sim->run(Stream::sim(), Workspace(ys->data(), 8),
                        {DynTensor::dense(xs->data(), K::F32, Shape{2, 17000}),
                         {},
                         DynTensor::dense(ys->data(), K::F32, Shape{2, 17000})}),
               ErrorCode::WorkspaceTooSmall, "SoftmaxPlan");
}

}  // namespace
}  // namespace baracuda::test
