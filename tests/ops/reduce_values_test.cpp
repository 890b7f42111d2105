// ReducePlan on every device against values worked out by hand: the formulas (var with both corrections,
// norms, logsumexp), PyTorch's rules for NaN and infinities (max, argmax's first NaN, logsumexp of ±inf),
// ties (argmax's first index), empty reductions (the identities), integer sums in s64 and their wrap,
// keepdim shapes and the flattened argmax index.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "ops/reduce_test_support.hpp"
#include "support/devices.hpp"
#include "support/numeric.hpp"
#include "support/tensor.hpp"

namespace baracuda::test {
namespace {

using K = ElementKind;
using R = ReduceOp;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

class ReduceValues : public ::testing::TestWithParam<DeviceKind> {
 protected:
  /// Reduces `values` (of kind `k`, dense `shape`) over `dims` with `op`; the outputs as doubles.
  std::vector<double> reduce(R op, K k, const Shape& shape, uint32_t dims, const std::vector<double>& values,
                             double correction = 1, double p = 2, bool keepdim = false, Shape* out_shape = nullptr) {
    std::string why;
    auto stream = stream_for(GetParam(), &why);
    if (!stream) return {};
    ReduceDescriptor d = ReduceDescriptor().with_op(op).with_element(k).with_shape(shape).with_correction(correction);
    d.dims = dims;
    d.p = p;
    d.keepdim = keepdim;
    auto plan = dynamic::ReducePlan::select(*stream, d);
    if (!plan && plan.error().message.find("without CUDA kernels") != std::string::npos) return {};
    EXPECT_TRUE(plan) << plan.error().to_string();
    if (!plan) return {};
    if (out_shape != nullptr) *out_shape = plan->output_shape();
    ReduceInput in{k, shape, dense_layout(shape),
                   std::vector<uint8_t>(static_cast<size_t>(storage_bytes(k, shape.numel()))), values};
    for (size_t i = 0; i < values.size(); ++i)
      EXPECT_TRUE(encode_exact(k, values[i], &in.storage[i * static_cast<size_t>(element_bytes(k))])) << values[i];
    return run_reduce(*stream, *plan, in).values;
  }
  bool skip() {
    std::string why;
    return !stream_for(GetParam(), &why);
  }
};

TEST_P(ReduceValues, Formulas) {
  if (skip()) GTEST_SKIP();
  const std::vector<double> x = {1, 2, 3, 4, -2, 0.5, 8, -1};  // [2, 4]
  const Shape s{2, 4};
  EXPECT_EQ(reduce(R::Sum, K::F32, s, 0b10, x), (std::vector<double>{10, 5.5}));
  EXPECT_EQ(reduce(R::Mean, K::F32, s, 0b10, x), (std::vector<double>{2.5, 1.375}));
  EXPECT_EQ(reduce(R::Prod, K::F32, s, 0b10, x), (std::vector<double>{24, 8}));
  EXPECT_EQ(reduce(R::Sum, K::F32, s, 0b01, x), (std::vector<double>{-1, 2.5, 11, 3}));
  EXPECT_EQ(reduce(R::Sum, K::F32, s, 0, x), (std::vector<double>{15.5}));
  // var of 1..4: mean 2.5, Σ(x − mean)² = 5; /3 (correction 1), /4 (0), /2 (2).
  EXPECT_NEAR(reduce(R::Var, K::F64, s, 0b10, x)[0], 5.0 / 3, 1e-15);
  EXPECT_NEAR(reduce(R::Var, K::F64, s, 0b10, x, 0)[0], 1.25, 1e-15);
  EXPECT_NEAR(reduce(R::Var, K::F64, s, 0b10, x, 2)[0], 2.5, 1e-15);
  EXPECT_NEAR(reduce(R::Std, K::F64, s, 0b10, x, 0)[0], std::sqrt(1.25), 1e-15);
  EXPECT_EQ(reduce(R::NormL1, K::F32, s, 0b10, x), (std::vector<double>{10, 11.5}));
  EXPECT_NEAR(reduce(R::NormL2, K::F64, s, 0b10, x)[0], std::sqrt(30.0), 1e-14);
  EXPECT_EQ(reduce(R::NormLinf, K::F32, s, 0b10, x), (std::vector<double>{4, 8}));
  EXPECT_NEAR(reduce(R::NormP, K::F64, s, 0b10, x, 1, 3)[0], std::cbrt(100.0), 1e-13);
  EXPECT_EQ(reduce(R::NormP, K::F32, Shape{5}, 0, {0, 1, -2, 0, 0.5}, 1, 0), (std::vector<double>{3}));
  EXPECT_NEAR(reduce(R::LogSumExp, K::F64, s, 0b10, x)[0],
              std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0) + std::exp(4.0)), 1e-14);
  // Large values: the max is subtracted first (exp(1000) overflows).
  EXPECT_NEAR(reduce(R::LogSumExp, K::F32, Shape{2}, 0, {1000, 1000})[0], 1000 + std::log(2.0), 1e-3);
  EXPECT_EQ(reduce(R::Max, K::F32, s, 0b10, x), (std::vector<double>{4, 8}));
  EXPECT_EQ(reduce(R::Min, K::F32, s, 0b10, x), (std::vector<double>{1, -2}));
  EXPECT_EQ(reduce(R::Argmax, K::F32, s, 0b10, x), (std::vector<double>{3, 2}));
  EXPECT_EQ(reduce(R::Argmin, K::F32, s, 0b10, x), (std::vector<double>{0, 0}));
  EXPECT_EQ(reduce(R::Argmax, K::F32, s, 0, x), (std::vector<double>{6}));  // flattened
  EXPECT_EQ(reduce(R::Argmin, K::F32, s, 0b01, x), (std::vector<double>{1, 1, 0, 1}));
  EXPECT_EQ(reduce(R::Any, K::F32, Shape{2, 2}, 0b10, {0, 0, 0, -0.0}), (std::vector<double>{0, 0}));
  EXPECT_EQ(reduce(R::All, K::F32, Shape{2, 2}, 0b10, {1, 2, 0, 3}), (std::vector<double>{1, 0}));
}

TEST_P(ReduceValues, NaNInfinitiesAndTies) {
  if (skip()) GTEST_SKIP();
  const Shape s{1, 5};
  const std::vector<double> nan_row = {1, kNaN, 3, kNaN, -kInf};
  EXPECT_TRUE(std::isnan(reduce(R::Max, K::F32, s, 0b10, nan_row)[0]));
  EXPECT_TRUE(std::isnan(reduce(R::Min, K::Bf16, s, 0b10, nan_row)[0]));
  EXPECT_TRUE(std::isnan(reduce(R::Sum, K::F16, s, 0b10, nan_row)[0]));
  EXPECT_TRUE(std::isnan(reduce(R::LogSumExp, K::F32, s, 0b10, nan_row)[0]));
  EXPECT_TRUE(std::isnan(reduce(R::NormLinf, K::F32, s, 0b10, nan_row)[0]));
  EXPECT_EQ(reduce(R::Argmax, K::F32, s, 0b10, nan_row)[0], 1);  // the first NaN
  EXPECT_EQ(reduce(R::Argmin, K::F32, s, 0b10, nan_row)[0], 1);
  EXPECT_EQ(reduce(R::Any, K::F32, Shape{1}, 0, {kNaN})[0], 1);  // NaN is nonzero
  EXPECT_EQ(reduce(R::Max, K::F32, s, 0b10, {1, kInf, 3, 2, -kInf})[0], kInf);
  EXPECT_EQ(reduce(R::LogSumExp, K::F32, Shape{3}, 0, {1, kInf, 3})[0], kInf);
  EXPECT_EQ(reduce(R::LogSumExp, K::F32, Shape{2}, 0, {-kInf, -kInf})[0], -kInf);
  EXPECT_EQ(reduce(R::LogSumExp, K::F64, Shape{3}, 0, {-kInf, 0, -kInf})[0], 0);
  // Ties: the first index, also across the lanes and blocks that reduce a long row.
  std::vector<double> ties(3000, 1.0);
  ties[1700] = ties[2900] = ties[2200] = 5;
  EXPECT_EQ(reduce(R::Argmax, K::F32, Shape{3000}, 0, ties)[0], 1700);
  ties[90] = ties[2999] = -4;
  EXPECT_EQ(reduce(R::Argmin, K::Bf16, Shape{3000}, 0, ties)[0], 90);
  // A row of identical values: variance 0.
  EXPECT_EQ(reduce(R::Var, K::F32, Shape{1, 700}, 0b10, std::vector<double>(700, 0.375))[0], 0);
  // One element: var with correction 1 divides 0 by 0.
  EXPECT_TRUE(std::isnan(reduce(R::Var, K::F32, Shape{1}, 0, {2})[0]));
}

TEST_P(ReduceValues, EmptyReductionsAreTheIdentities) {
  if (skip()) GTEST_SKIP();
  const Shape s{3, 0};
  EXPECT_EQ(reduce(R::Sum, K::F32, s, 0b10, {}), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(reduce(R::Prod, K::F32, s, 0b10, {}), (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(reduce(R::Sum, K::S32, s, 0b10, {}), (std::vector<double>{0, 0, 0}));
  EXPECT_TRUE(std::isnan(reduce(R::Mean, K::F32, s, 0b10, {})[1]));
  EXPECT_TRUE(std::isnan(reduce(R::Var, K::F32, s, 0b10, {})[2]));
  EXPECT_EQ(reduce(R::NormL2, K::F32, s, 0b10, {})[0], 0);
  EXPECT_EQ(reduce(R::LogSumExp, K::F32, s, 0b10, {})[0], -kInf);
  EXPECT_EQ(reduce(R::Any, K::F32, s, 0b10, {}), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(reduce(R::All, K::F32, s, 0b10, {}), (std::vector<double>{1, 1, 1}));
  // Keeping an empty dimension gives an empty output: nothing to run.
  Shape out;
  EXPECT_TRUE(reduce(R::Max, K::F32, Shape{0, 4}, 0b10, {}, 1, 2, true, &out).empty());
  EXPECT_EQ(out, (Shape{0, 1}));
}

TEST_P(ReduceValues, IntegersAndBool) {
  if (skip()) GTEST_SKIP();
  EXPECT_EQ(reduce(R::Sum, K::S8, Shape{4}, 0, {100, 100, 100, -7}), (std::vector<double>{293}));  // s64
  EXPECT_EQ(reduce(R::Sum, K::Bool, Shape{5}, 0, {1, 0, 1, 1, 0}), (std::vector<double>{3}));
  EXPECT_EQ(reduce(R::Max, K::U8, Shape{3}, 0, {7, 255, 0}), (std::vector<double>{255}));
  EXPECT_EQ(reduce(R::Min, K::S32, Shape{3}, 0, {7, -5, 0}), (std::vector<double>{-5}));
  EXPECT_EQ(reduce(R::Argmax, K::S64, Shape{4}, 0, {3, 9, 9, 1}), (std::vector<double>{1}));
  EXPECT_EQ(reduce(R::Prod, K::S32, Shape{3}, 0, {-3, 5, 7}), (std::vector<double>{-105}));
  // 2^32 · 2^32 wraps to 0 in s64, as PyTorch's int64 arithmetic.
  EXPECT_EQ(reduce(R::Prod, K::S64, Shape{2}, 0, {4294967296.0, 4294967296.0}), (std::vector<double>{0}));
  EXPECT_EQ(reduce(R::Any, K::U8, Shape{2, 2}, 0b01, {0, 3, 0, 0}), (std::vector<double>{0, 1}));
}

TEST_P(ReduceValues, KeepdimShapes) {
  if (skip()) GTEST_SKIP();
  Shape out;
  std::vector<double> x(24);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i);
  EXPECT_EQ(reduce(R::Sum, K::F32, Shape{2, 3, 4}, 0b101, x, 1, 2, true, &out),
            (std::vector<double>{0 + 1 + 2 + 3 + 12 + 13 + 14 + 15, 4 + 5 + 6 + 7 + 16 + 17 + 18 + 19,
                                 8 + 9 + 10 + 11 + 20 + 21 + 22 + 23}));
  EXPECT_EQ(out, (Shape{1, 3, 1}));
  reduce(R::Sum, K::F32, Shape{2, 3, 4}, 0b101, x, 1, 2, false, &out);
  EXPECT_EQ(out, (Shape{3}));
  reduce(R::Argmax, K::F32, Shape{2, 3, 4}, 0, x, 1, 2, true, &out);
  EXPECT_EQ(out, (Shape{1, 1, 1}));
}

INSTANTIATE_TEST_SUITE_P(Devices, ReduceValues, ::testing::ValuesIn(kTestDevices),
                         [](const ::testing::TestParamInfo<DeviceKind>& i) { return std::string(to_string(i.param)); });

}  // namespace
}  // namespace baracuda::test
