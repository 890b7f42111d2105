// ReducePlan: every op × kind × problem (rows, columns, non-adjacent dimensions with keepdim, a whole tensor,
// split segments, a transposed input, an empty reduction, a scalar) on sim and cuda against the host
// reference, within a bound derived from the accumulation (exact for integer, bool, extremum and index
// results); the same bits on a second run. The host reference itself is checked against values worked out
// by hand in reduce_values_test.cpp, and against PyTorch in python/tests/test_reduce.py.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "ops/reduce_test_support.hpp"
#include "support/devices.hpp"
#include "support/numeric.hpp"
#include "support/random.hpp"
#include "support/tensor.hpp"

namespace baracuda::test {
namespace {

using K = ElementKind;
using R = ReduceOp;

struct Problem {
  std::string name;
  Shape shape;
  uint32_t dims;
  bool keepdim = false;
  bool transposed = false;  ///< x a transposed view of its storage (rank 2)
};

std::vector<Problem> problems() {
  return {
      {"rows_7x300", Shape{7, 300}, 0b10},
      {"rows_split_3x1100", Shape{3, 1100}, 0b10},  // few long segments: two passes on sim
      {"columns_40x33", Shape{40, 33}, 0b01},
      {"outer_and_inner_4x5x6_keepdim", Shape{4, 5, 6}, 0b101, true},
      {"all_2x3x700", Shape{2, 3, 700}, 0},
      {"rows_transposed_7x300", Shape{7, 300}, 0b10, false, true},
      {"empty_5x0", Shape{5, 0}, 0b10},
      {"scalar", Shape{}, 0},
  };
}

constexpr R kOps[] = {R::Sum,    R::Mean,   R::Prod,     R::Max,   R::Min,       R::Argmax, R::Argmin, R::Var,
                      R::Std,    R::NormL1, R::NormL2,   R::NormLinf, R::NormP, R::LogSumExp, R::Any, R::All};
constexpr K kKinds[] = {K::F32, K::Bf16, K::F16, K::F64, K::S8, K::U8, K::S32, K::S64, K::Bool};

struct Case {
  R op;
  K kind;
  Problem problem;
  DeviceKind device;
  std::string name;
};

std::vector<Case> cases() {
  std::vector<Case> v;
  for (R op : kOps)
    for (K k : kKinds)
      for (const Problem& p : problems())
        for (DeviceKind dev : {DeviceKind::Sim, DeviceKind::Cuda})
          v.push_back({op, k, p, dev,
                       std::string(to_string(op)) + "_" + std::string(to_string(k)) + "_" + p.name + "_" +
                           std::string(to_string(dev))});
  return v;
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class ReduceSweep : public ::testing::TestWithParam<Case> {};

TEST_P(ReduceSweep, MatchesTheHostReference) {
  const Case& c = GetParam();
  BARACUDA_TEST_STREAM(stream, c.device);
  ReduceDescriptor d = ReduceDescriptor().with_op(c.op).with_element(c.kind).with_shape(c.problem.shape);
  d.dims = c.problem.dims;
  d.keepdim = c.problem.keepdim;
  d.p = 3;
  auto host = dynamic::ReducePlan::select(Stream::host(), d);
  auto plan = dynamic::ReducePlan::select(stream, d);
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, c.device);
  if (!host) {  // an op the kind does not take, an empty max, argmax over two dimensions: both devices alike
    ASSERT_FALSE(plan);
    EXPECT_EQ(plan.error().code, host.error().code);
    EXPECT_TRUE(host.error().code == ErrorCode::InvalidProblem || host.error().code == ErrorCode::Unsupported)
        << host.error().message;
    return;
  }
  ASSERT_TRUE(plan) << plan.error().to_string();
  EXPECT_EQ(plan->sku().backend, backend_of(c.device));
  EXPECT_EQ(plan->output_shape(), host->output_shape());
  EXPECT_EQ(plan->output_kind(), host->output_kind());

  const ReduceInput in = reduce_input(c.op, c.kind, c.problem.shape, c.problem.transposed, 11);
  const ReduceOutput want = run_reduce(Stream::host(), *host, in);
  const ReduceOutput got = run_reduce(stream, *plan, in);
  ASSERT_EQ(got.values.size(), want.values.size());
  const std::vector<double> bounds = reduce_error_bounds(d, *host, in, want);
  for (size_t i = 0; i < want.values.size(); ++i) {
    const double g = got.values[i], w = want.values[i];
    if (std::isnan(w)) {
      EXPECT_TRUE(std::isnan(g)) << "output " << i;
      continue;
    }
    if (bounds[i] == 0 || std::isinf(w))
      EXPECT_EQ(g, w) << "output " << i;
    else
      EXPECT_NEAR(g, w, bounds[i]) << "output " << i;
  }
  // The same bits again.
  const ReduceOutput again = run_reduce(stream, *plan, in);
  EXPECT_EQ(again.bits, got.bits);
}

INSTANTIATE_TEST_SUITE_P(AllOps, ReduceSweep, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.name; });

}  // namespace
}  // namespace baracuda::test
