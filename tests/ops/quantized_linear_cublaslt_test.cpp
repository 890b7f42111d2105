// QuantizedLinearPlan and SmoothQuantLinearPlan on cuBLASLt (int_gemm.hpp's "cuBLASLt"): cuBLASLt's s32 sums into
// the workspace, then the linear epilogue alone. Without a GPU: the epilogue-only kernel on sim over exact sums
// against the host reference of the fused plan (the same arithmetic: the same bits), and the select rules; on a
// GPU (skipped without one): both plans against the host.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/exec_context.hpp"
#include "int_gemm_test_support.hpp"
#include "ops/int_gemm/tables.hpp"
#include "support/devices.hpp"
#include "support/numeric.hpp"
#include "support/tensor.hpp"

namespace baracuda::test {
namespace {

constexpr ElementKind S8 = ElementKind::S8, S32 = ElementKind::S32, F32 = ElementKind::F32;
const PlanPreference kLt = PlanPreference{}.with_backend(BackendKind::CublasLt);

/// A symmetric W8A8 problem: x_q [M, K] and w [N, K] s8, per-token x_scale and per-channel w_scale (f32), a bias
/// of the output kind, and the exact s32 sums x_q · wᵀ.
struct Problem {
  int64_t m, n, k;
  ElementKind out;
  std::vector<int8_t> xq, w;
  std::vector<float> x_scale, w_scale;
  std::vector<uint8_t> bias;
  std::vector<int32_t> sums;
  Problem(int64_t m_, int64_t n_, int64_t k_, ElementKind out_, uint64_t seed)
      : m(m_), n(n_), k(k_), out(out_), xq(m * k), w(n * k), x_scale(m), w_scale(n), bias(n * 4), sums(m * n) {
    std::mt19937_64 g(seed);
    std::uniform_int_distribution<int> q(-127, 127);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (auto& v : xq) v = static_cast<int8_t>(q(g));
    for (auto& v : w) v = static_cast<int8_t>(q(g) / ((&v - w.data()) % 3 + 1));  // non-uniform magnitudes
    for (int64_t i = 0; i < m; ++i)
      x_scale[i] = static_cast<float>(std::ldexp(1.0 + u(g), -7 - static_cast<int>(i % 4)));
    for (int64_t j = 0; j < n; ++j)
      w_scale[j] = static_cast<float>(std::ldexp(1.0 + u(g), -8 + static_cast<int>(j % 3)));
    for (int64_t j = 0; j < n; ++j) write_float(out, bias.data(), j, u(g));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        int32_t s = 0;
        for (int64_t t = 0; t < k; ++t) s += int32_t{xq[i * k + t]} * int32_t{w[j * k + t]};
        sums[i * n + j] = s;
      }
  }
  QuantizedLinearDescriptor desc(LinearActivation a) const {
    return QuantizedLinearDescriptor{}
        .with_shape(m, n, k)
        .with_element(F32)
        .with_output(out)
        .with_bias(true)
        .with_activation(a);
  }
};

/// The host plan's y over x_q (the fused reference).
std::vector<uint8_t> host_y(const Problem& p, LinearActivation a) {
  std::vector<uint8_t> y(p.m * p.n * static_cast<size_t>(element_bytes(p.out)));
  auto plan = dynamic::QuantizedLinearPlan::select(Stream::host(), p.desc(a));
  EXPECT_TRUE(plan.is_ok()) << plan.status().to_string();
  auto ws = Buffer::allocate(Stream::host(), std::max<size_t>(plan->workspace_size(), 1));
  dynamic::QuantizedLinearArgs t;
  t.x_q = DynTensor::dense(const_cast<int8_t*>(p.xq.data()), S8, Shape{p.m, p.k});
  t.x_scale = DynTensor::dense(const_cast<float*>(p.x_scale.data()), F32, Shape{p.m});
  t.weight = DynTensor::dense(const_cast<int8_t*>(p.w.data()), S8, Shape{p.n, p.k});
  t.weight_scale = DynTensor::dense(const_cast<float*>(p.w_scale.data()), F32, Shape{p.n});
  t.bias = DynTensor::dense(const_cast<uint8_t*>(p.bias.data()), p.out, Shape{p.n});
  t.y = DynTensor::dense(y.data(), p.out, Shape{p.m, p.n});
  const Status st = plan->run(Stream::host(), ws->as_workspace(), t);
  EXPECT_TRUE(st.is_ok()) << st.to_string();
  return y;
}

void expect_same(const Problem& p, const std::vector<uint8_t>& got, const std::vector<uint8_t>& want, bool exact,
                 const std::string& what) {
  for (int64_t i = 0; i < p.m * p.n; ++i) {
    const double g = read_out(p.out, got.data(), i), w = read_out(p.out, want.data(), i);
    if (exact)
      ASSERT_EQ(0, std::memcmp(got.data() + i * static_cast<size_t>(element_bytes(p.out)), want.data() + i * static_cast<size_t>(element_bytes(p.out)),
                               static_cast<size_t>(element_bytes(p.out))))
          << what << " y[" << i << "] = " << g << ", the fused reference " << w;
    else
      ASSERT_LE(std::fabs(g - w), 4 * unit_roundoff(p.out) * std::fabs(w) + 1e-30) << what << " y[" << i << "]";
  }
}

// The epilogue-only kernel (the cuBLASLt SKU's second step) on sim over the exact sums: the fused host plan's bits
// (SiLU and GELU within a few ulps: host and device libm calls).
TEST(QuantizedLinearCublasLt, EpilogueOverSumsIsTheFusedArithmetic) {
  BARACUDA_TEST_STREAM(st, DeviceKind::Sim);
  auto ctx = detail::make_exec_context(st);
  ASSERT_TRUE(ctx.is_ok());
  const auto& table = device_sim::int_gemm_tables();
  EXPECT_EQ(table.linear_epilogue[detail::kind_index(ElementKind::F64)], nullptr);
  uint64_t seed = 1;
  for (ElementKind out : {F32, ElementKind::Bf16, ElementKind::F16})
    for (LinearActivation a :
         {LinearActivation::None, LinearActivation::Relu, LinearActivation::Silu, LinearActivation::GeluTanh}) {
      const Problem p(37, 45, 96, out, ++seed);
      const std::vector<uint8_t> want = host_y(p, a);
      std::vector<uint8_t> y(want.size(), 0xA5);
      detail::LinearLaunch l;
      l.m = p.m, l.n = p.n, l.k = p.k;
      l.a = DynTensor::dense(const_cast<int8_t*>(p.xq.data()), S8, Shape{p.m, p.k});
      l.w = DynTensor::dense(const_cast<int8_t*>(p.w.data()), S8, Shape{p.n, p.k});
      l.a_scale = DynTensor::dense(const_cast<float*>(p.x_scale.data()), F32, Shape{p.m});
      l.w_scale = DynTensor::dense(const_cast<float*>(p.w_scale.data()), F32, Shape{p.n});
      l.bias = DynTensor::dense(const_cast<uint8_t*>(p.bias.data()), out, Shape{p.n});
      l.activation = a;
      l.y = DynTensor::dense(y.data(), out, Shape{p.m, p.n});
      l.split.splits = 1;
      l.split.partial = DynTensor::dense(const_cast<int32_t*>(p.sums.data()), S32, Shape{1, p.m, p.n});
      const detail::LinearFn fn = table.linear_epilogue[detail::kind_index(out)];
      ASSERT_NE(fn, nullptr);
      ASSERT_TRUE(fn(*ctx, l).is_ok());
      const bool exact = a == LinearActivation::None || a == LinearActivation::Relu;
      expect_same(p, y, want, exact, std::string(to_string(out)) + "/" + std::string(to_string(a)));
      // Without sums, or with an asymmetric x, the epilogue refuses (the plan never asks for either).
      detail::LinearLaunch bad = l;
      bad.split.partial = {};
      EXPECT_EQ(fn(*ctx, bad).code(), ErrorCode::Internal);
      bad = l;
      const int32_t zp[64] = {};
      bad.a_zero_point = DynTensor::dense(const_cast<int32_t*>(zp), S32, Shape{p.m});
      EXPECT_EQ(fn(*ctx, bad).code(), ErrorCode::Internal);
    }
}

TEST(QuantizedLinearCublasLt, SelectRules) {
  const QuantizedLinearDescriptor q = QuantizedLinearDescriptor{}.with_shape(8, 8, 32);
  const SmoothQuantLinearDescriptor sq = SmoothQuantLinearDescriptor{}.with_shape(8, 8, 32);
  for (const Stream& st : {Stream::host(), Stream::sim()}) {
    expect_select_error(dynamic::QuantizedLinearPlan::select(st, q, kLt), ErrorCode::Unsupported,
                        "serves the cuda device only");
    expect_select_error(dynamic::SmoothQuantLinearPlan::select(st, sq, kLt), ErrorCode::Unsupported,
                        "serves the cuda device only");
    expect_select_error(dynamic::QuantizedLinearPlan::select(
                            st, QuantizedLinearDescriptor{q}.with_mode(DynamicRangeMode::Asymmetric), kLt),
                        ErrorCode::Unsupported, "symmetric x only");
  }
}

// On a GPU: both plans on cuBLASLt against the host (x quantized by the plan, and x_q given), the SKU, the
// workspace, and the packed-rows rule.
TEST(QuantizedLinearCublasLt, OnAGpuAgainstTheHost) {
  BARACUDA_TEST_STREAM(st, DeviceKind::Cuda);
  const Problem p(64, 96, 128, ElementKind::Bf16, 99);
  auto plan = dynamic::QuantizedLinearPlan::select(st, p.desc(LinearActivation::Relu), kLt);
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, DeviceKind::Cuda);
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  EXPECT_EQ(plan->sku().backend, BackendKind::CublasLt);
  EXPECT_EQ(plan->sku().variant, "cublaslt_imma");
  EXPECT_GE(plan->workspace_size(), static_cast<size_t>(p.m * p.n * 4));
  auto up = [&](const void* h, size_t n) {
    auto b = Buffer::allocate(st, n);
    EXPECT_TRUE(b.is_ok());
    EXPECT_TRUE(b->copy_from_host(h, n).is_ok());
    return std::move(b).value();
  };
  Buffer xq = up(p.xq.data(), p.xq.size()), w = up(p.w.data(), p.w.size()), xs = up(p.x_scale.data(), p.m * 4),
         ws_ = up(p.w_scale.data(), p.n * 4), bias = up(p.bias.data(), p.bias.size());
  auto y = Buffer::allocate(st, p.m * p.n * 2);
  auto ws = Buffer::allocate(st, plan->workspace_size());
  ASSERT_TRUE(y.is_ok() && ws.is_ok());
  dynamic::QuantizedLinearArgs t;
  t.x_q = DynTensor::dense(xq.data(), S8, Shape{p.m, p.k});
  t.x_scale = DynTensor::dense(xs.data(), F32, Shape{p.m});
  t.weight = DynTensor::dense(w.data(), S8, Shape{p.n, p.k});
  t.weight_scale = DynTensor::dense(ws_.data(), F32, Shape{p.n});
  t.bias = DynTensor::dense(bias.data(), p.out, Shape{p.n});
  t.y = DynTensor::dense(y->data(), p.out, Shape{p.m, p.n});
  ASSERT_TRUE(plan->run(st, ws->as_workspace(), t).is_ok());
  ASSERT_TRUE(st.synchronize().is_ok());
  std::vector<uint8_t> got(p.m * p.n * 2);
  ASSERT_TRUE(y->copy_to_host(got.data(), got.size()).is_ok());
  expect_same(p, got, host_y(p, LinearActivation::Relu), true, "cuda QuantizedLinear x_q");
  // A weight with padded rows: the layouts were built for packed ones.
  dynamic::QuantizedLinearArgs padded = t;
  padded.weight.shape = Shape{p.n, p.k - 16};
  auto plan2 = dynamic::QuantizedLinearPlan::select(
      st, QuantizedLinearDescriptor{p.desc(LinearActivation::Relu)}.with_shape(p.m, p.n, p.k - 16), kLt);
  ASSERT_TRUE(plan2.is_ok());
  padded.x_q.shape = Shape{p.m, p.k - 16};
  expect_error(plan2->can_implement(padded), ErrorCode::InvalidProblem, "packed");
  // SmoothQuantLinear: one scale for x.
  auto sq = dynamic::SmoothQuantLinearPlan::select(
      st,
      SmoothQuantLinearDescriptor{}.with_shape(p.m, p.n, p.k).with_output(p.out).with_x_scale(0.01f).with_bias(true),
      kLt);
  ASSERT_TRUE(sq.is_ok()) << sq.status().to_string();
  EXPECT_EQ(sq->sku().variant, "cublaslt_imma");
}

}  // namespace
}  // namespace baracuda::test
