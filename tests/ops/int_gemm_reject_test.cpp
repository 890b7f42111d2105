// IntGemm, SmoothQuantLinear and QuantizedLinear on the host: every rejection of select, can_implement and run.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "int_gemm_test_support.hpp"

namespace baracuda::test {
namespace {

TEST(IntGemm, SelectRejections) {
  const Stream host = Stream::host();
  using D = IntGemmDescriptor;
  expect_select_error(dynamic::IntGemmPlan::select(host, D{}.with_shape(4, 4, 24)), ErrorCode::InvalidProblem,
                      "multiple of 16");
  expect_select_error(dynamic::IntGemmPlan::select(host, D{}.with_shape(-1, 4, 16)), ErrorCode::InvalidProblem, ">= 0");
  // the kernels' grid (65535 blocks of 64 rows) and 32-bit sizes, on every device
  EXPECT_TRUE(dynamic::IntGemmPlan::select(host, D{}.with_shape(4194240, 4, 16)).is_ok());
  expect_select_error(dynamic::IntGemmPlan::select(host, D{}.with_shape(4194241, 4, 16)), ErrorCode::InvalidProblem,
                      "M must be at most 4194240");
  expect_select_error(dynamic::IntGemmPlan::select(host, D{}.with_shape(4, int64_t{1} << 31, 16)),
                      ErrorCode::InvalidProblem, "N at most");
  expect_select_error(dynamic::IntGemmPlan::select(host, D{}.with_shape(1, 1, 131072)), ErrorCode::InvalidProblem,
                      "overflow");
  expect_select_error(dynamic::IntGemmPlan::select(host, D{}.with_shape(1, 1, 33040).with_kinds(ElementKind::U8, ElementKind::U8)),
                      ErrorCode::InvalidProblem, "overflow");
  expect_select_error(dynamic::IntGemmPlan::select(host, D{}.with_shape(1, 1, 16).with_kinds(ElementKind::F32, ElementKind::S8)),
                      ErrorCode::Unsupported, "s8 or u8");
  // the leading dimensions: 0 or >= K and a multiple of 16 (a, b); 0 or >= N (c)
  expect_select_error(dynamic::IntGemmPlan::select(host, D{}.with_shape(4, 4, 32).with_leading_dims(16, 0, 0)),
                      ErrorCode::InvalidProblem, "lda must be 0 (packed) or a multiple of 16 that is >= K");
  expect_select_error(dynamic::IntGemmPlan::select(host, D{}.with_shape(4, 4, 32).with_leading_dims(0, 40, 0)),
                      ErrorCode::InvalidProblem, "ldb must be");
  expect_select_error(dynamic::IntGemmPlan::select(host, D{}.with_shape(4, 4, 32).with_leading_dims(-32, 0, 0)),
                      ErrorCode::InvalidProblem, "lda must be");
  expect_select_error(dynamic::IntGemmPlan::select(host, D{}.with_shape(4, 4, 32).with_leading_dims(0, 0, 3)),
                      ErrorCode::InvalidProblem, "ldc must be 0 (packed) or >= N = 4");
  EXPECT_TRUE(dynamic::IntGemmPlan::select(host, D{}.with_shape(4, 4, 32).with_leading_dims(48, 32, 5)).is_ok());
  D bad_c = D{}.with_shape(1, 1, 16);
  bad_c.c = ElementKind::F32;
  expect_select_error(dynamic::IntGemmPlan::select(host, bad_c), ErrorCode::Unsupported, "c must be s32");
  // cuBLASLt serves the cuda device only; another backend than the device's own is refused.
  for (const Stream& st : {host, Stream::sim()})
    expect_select_error(dynamic::IntGemmPlan::select(st, D{}.with_shape(1, 4, 16),
                                                     PlanPreference{}.with_backend(BackendKind::CublasLt)),
                        ErrorCode::Unsupported, "cuda device only");
  expect_select_error(dynamic::IntGemmPlan::select(host, D{}.with_shape(1, 1, 16),
                                                   PlanPreference{}.with_backend(BackendKind::Sim)),
                      ErrorCode::Unsupported, "preferred backend");
}

TEST(IntGemm, CanImplementRejections) {
  const Stream host = Stream::host();
  const int64_t M = 4, N = 5, K = 32;
  Arr<int8_t> a(M * 64 + 64), b(N * 64);
  Arr<int32_t> c(M * 8);
  auto plan = dynamic::IntGemmPlan::select(host, IntGemmDescriptor{}.with_shape(M, N, K));
  ASSERT_TRUE(plan.is_ok());
  using Args = dynamic::IntGemmArgs;
  const Args ok{mat(a.data(), ElementKind::S8, M, K, K), mat(b.data(), ElementKind::S8, N, K, K),
                mat(c.data(), ElementKind::S32, M, N, N)};
  ASSERT_TRUE(plan->can_implement(ok).is_ok());
  auto with = [&](auto f) { Args t = ok; f(t); return plan->can_implement(t); };
  expect_error(with([&](Args& t) { t.a.kind = ElementKind::U8; }), ErrorCode::InvalidProblem, "element kind");
  expect_error(with([&](Args& t) { t.b = mat(b.data(), ElementKind::S8, N + 1, K, K); }),
               ErrorCode::InvalidProblem, "shape");
  expect_error(with([&](Args& t) { t.a = mat(a.data(), ElementKind::S8, M, K, 40); }),
               ErrorCode::MisalignedOperand, "row stride");
  expect_error(with([&](Args& t) { t.a = mat(a.data(), ElementKind::S8, M, K, 16); }),
               ErrorCode::MisalignedOperand, "row stride");  // < K
  expect_error(with([&](Args& t) { t.a.stride[1] = 2, t.a.stride[0] = 64; }), ErrorCode::MisalignedOperand,
               "contiguous along K");
  expect_error(with([&](Args& t) { t.a.data = a.data() + 8; }), ErrorCode::MisalignedOperand, "16-byte");
  expect_error(with([&](Args& t) { t.b.data = b.data() + 1; }), ErrorCode::MisalignedOperand, "16-byte");
  expect_error(with([&](Args& t) { t.c.stride[1] = 2; t.c.stride[0] = 16; }), ErrorCode::MisalignedOperand,
               "contiguous along N");
  expect_error(with([&](Args& t) { t.c.stride[0] = N - 1; }), ErrorCode::InvalidProblem, "below N");
  // valid strides, but not the descriptor's (packed here)
  expect_error(with([&](Args& t) { t.a = mat(a.data(), ElementKind::S8, M, K, 48); }), ErrorCode::InvalidProblem,
               "a's row stride must be the descriptor's 32, got 48");
  expect_error(with([&](Args& t) { t.b = mat(b.data(), ElementKind::S8, N, K, 48); }), ErrorCode::InvalidProblem,
               "b's row stride must be the descriptor's 32");
  expect_error(with([&](Args& t) { t.c.stride[0] = 8; }), ErrorCode::InvalidProblem,
               "c's row stride must be the descriptor's 5, got 8");
  expect_error(with([&](Args& t) { t.c.stride[0] = 0; }), ErrorCode::InvalidProblem, "stride 0");
  expect_error(with([&](Args& t) { t.c.kind = ElementKind::F32; }), ErrorCode::InvalidProblem, "element kind");
  expect_error(with([&](Args& t) { t.a.data = nullptr; }), ErrorCode::InvalidProblem, "null");
  expect_error(with([&](Args& t) { t.c = mat(a.data(), ElementKind::S32, M, N, N); }),
               ErrorCode::InvalidProblem, "overlaps a");
  // run re-validates and checks the device.
  expect_error(plan->run(host, {}, Args{}), ErrorCode::InvalidProblem, "a is missing");
  expect_error(plan->run(Stream::sim(), {}, ok), ErrorCode::InvalidProblem, "selected for the host");
  expect_error(dynamic::IntGemmPlan{}.run(host, {}, ok), ErrorCode::InvalidProblem, "select did not produce");
}

TEST(SmoothQuantLinear, Rejections) {
  const Stream host = Stream::host();
  using D = SmoothQuantLinearDescriptor;
  const D ok = D{}.with_shape(4, 5, 32).with_output(ElementKind::F32);
  expect_select_error(dynamic::SmoothQuantLinearPlan::select(host, D(ok).with_x_scale(NAN)), ErrorCode::InvalidProblem,
                      "x_scale must be finite");
  expect_select_error(dynamic::SmoothQuantLinearPlan::select(host, D(ok).with_shape(4194241, 5, 32)),
                      ErrorCode::InvalidProblem, "M must be at most 4194240");
  expect_select_error(dynamic::SmoothQuantLinearPlan::select(host, D(ok).with_x_scale(INFINITY)),
                      ErrorCode::InvalidProblem, "x_scale must be finite");
  expect_select_error(dynamic::SmoothQuantLinearPlan::select(host, D(ok).with_shape(4, 5, 40)),
                      ErrorCode::InvalidProblem, "multiple of 16");
  expect_select_error(dynamic::SmoothQuantLinearPlan::select(host, D(ok).with_output(ElementKind::S32)),
                      ErrorCode::Unsupported, "output must be");
  D u8 = ok;
  u8.x_quantized = ElementKind::U8;
  expect_select_error(dynamic::SmoothQuantLinearPlan::select(host, u8), ErrorCode::Unsupported,
                      "x_q (x_quantized) must be s8");
  D wu8 = ok;
  wu8.weight_element = ElementKind::U8;
  expect_select_error(dynamic::SmoothQuantLinearPlan::select(host, wu8), ErrorCode::Unsupported, "weight must be s8");
  expect_select_error(dynamic::SmoothQuantLinearPlan::select(host, D(ok).with_activation(static_cast<LinearActivation>(9))),
                      ErrorCode::InvalidProblem, "LinearActivation");

  auto plan = dynamic::SmoothQuantLinearPlan::select(host, D(ok).with_bias());
  ASSERT_TRUE(plan.is_ok());
  Arr<int8_t> a(4 * 32), w(5 * 32);
  Arr<float> sw(5), bias(5), y(20);
  Arr<double> swd(5);
  const dynamic::SmoothQuantLinearArgs good{mat(a.data(), ElementKind::S8, 4, 32, 32),
                                           mat(w.data(), ElementKind::S8, 5, 32, 32),
                                           vec(sw.data(), ElementKind::F32, 5), vec(bias.data(), ElementKind::F32, 5),
                                           mat(y.data(), ElementKind::F32, 4, 5, 5)};
  ASSERT_TRUE(plan->can_implement(good).is_ok());
  auto with = [&](auto f) { dynamic::SmoothQuantLinearArgs t = good; f(t); return plan->can_implement(t); };
  expect_error(with([&](auto& t) { t.weight_scale = vec(sw.data(), ElementKind::F32, 1); }), ErrorCode::InvalidProblem,
               "weight_scale (per channel: [N])");
  expect_error(with([&](auto& t) { t.weight_scale = vec(swd.data(), ElementKind::F64, 5); }), ErrorCode::InvalidProblem,
               "element kind");
  expect_error(with([&](auto& t) { t.bias = DynTensor{}; }), ErrorCode::InvalidProblem, "bias");
  expect_error(with([&](auto& t) { t.bias = vec(bias.data(), ElementKind::F32, 4); }), ErrorCode::InvalidProblem, "bias");
  expect_error(with([&](auto& t) { t.y.kind = ElementKind::F16; }), ErrorCode::InvalidProblem, "element kind");
  expect_error(with([&](auto& t) { t.x_q.kind = ElementKind::U8; }), ErrorCode::InvalidProblem, "element kind");
  expect_error(with([&](auto& t) { t.x_q.data = a.data() + 4; }), ErrorCode::MisalignedOperand, "16-byte");
  expect_error(with([&](auto& t) { t.y = mat(bias.data(), ElementKind::F32, 4, 5, 5); }), ErrorCode::InvalidProblem,
               "overlaps");
  auto nobias = dynamic::SmoothQuantLinearPlan::select(host, ok);
  ASSERT_TRUE(nobias.is_ok());
  expect_error(nobias->can_implement(good), ErrorCode::InvalidProblem, "has no bias");
  auto per_tensor = dynamic::SmoothQuantLinearPlan::select(
      host, D(ok).with_weight_scale_granularity(WeightScaleGranularity::PerTensor));
  ASSERT_TRUE(per_tensor.is_ok());
  dynamic::SmoothQuantLinearArgs pt = good;
  pt.bias = DynTensor{};
  expect_error(per_tensor->can_implement(pt), ErrorCode::InvalidProblem, "weight_scale (per tensor: [1])");
}

TEST(QuantizedLinear, Rejections) {
  const Stream host = Stream::host();
  using D = QuantizedLinearDescriptor;
  const D ok = D{}.with_shape(4, 5, 32).with_element(ElementKind::F32).with_output(ElementKind::F32);
  auto sel = [&](const D& d) { return dynamic::QuantizedLinearPlan::select(host, d); };
  expect_select_error(sel(D(ok).with_shape(4, 5, 8)), ErrorCode::InvalidProblem, "multiple of 16");
  expect_select_error(sel(D(ok).with_shape(4194241, 5, 32)), ErrorCode::InvalidProblem, "M must be at most 4194240");
  expect_select_error(sel(D(ok).with_element(ElementKind::S8)), ErrorCode::Unsupported, "x must be");
  expect_select_error(sel(D(ok).with_output(ElementKind::F64)), ErrorCode::Unsupported, "f64 x gives f64 only");
  expect_select_error(sel(D(ok).with_element(ElementKind::F64).with_output(ElementKind::F16)), ErrorCode::Unsupported,
                      "f64 x gives f64 only");
  expect_select_error(sel(D(ok).with_x_quantized(ElementKind::U8)), ErrorCode::Unsupported,
                      "u8 (asymmetric only)");
  expect_select_error(sel(D(ok).with_x_quantized(ElementKind::S4).with_mode(DynamicRangeMode::Asymmetric)),
                      ErrorCode::Unsupported, "x_quantized (the kind x is quantized to) must be");
  D wu8 = ok;
  wu8.weight_element = ElementKind::U8;
  expect_select_error(sel(wu8), ErrorCode::Unsupported, "weight must be s8");
  expect_select_error(sel(D(ok).with_shape(1, 1, 65808).with_mode(DynamicRangeMode::Asymmetric)),
                      ErrorCode::InvalidProblem, "overflow");
  expect_select_error(sel(D(ok).with_mode(static_cast<DynamicRangeMode>(7))), ErrorCode::InvalidProblem, "DynamicRangeMode");
  expect_select_error(dynamic::QuantizedLinearPlan::select(host, ok, PlanPreference{}.with_max_workspace_bytes(16)),
                      ErrorCode::Unsupported, "max_workspace_bytes");

  auto plan = sel(ok);
  ASSERT_TRUE(plan.is_ok());
  Arr<float> x(4 * 32), sw(5), y(20), bias(5);
  Arr<int8_t> w(5 * 32);
  Arr<uint8_t> ws(plan->workspace_size() + 256);
  const dynamic::QuantizedLinearArgs good{mat(x.data(), ElementKind::F32, 4, 32, 32),
                                         mat(w.data(), ElementKind::S8, 5, 32, 32), vec(sw.data(), ElementKind::F32, 5),
                                         {}, mat(y.data(), ElementKind::F32, 4, 5, 5)};
  ASSERT_TRUE(plan->can_implement(good).is_ok());
  auto with = [&](auto f) { dynamic::QuantizedLinearArgs t = good; f(t); return plan->can_implement(t); };
  expect_error(with([&](auto& t) { t.x.kind = ElementKind::F16; }), ErrorCode::InvalidProblem, "element kind");
  expect_error(with([&](auto& t) { t.weight = mat(w.data(), ElementKind::S8, 5, 32, 24); }), ErrorCode::MisalignedOperand,
               "row stride");
  expect_error(with([&](auto& t) { t.weight_scale = vec(sw.data(), ElementKind::F32, 4); }), ErrorCode::InvalidProblem,
               "weight_scale");
  expect_error(with([&](auto& t) { t.bias = vec(bias.data(), ElementKind::F32, 5); }), ErrorCode::InvalidProblem, "has no bias");
  expect_error(with([&](auto& t) { t.y = mat(x.data(), ElementKind::F32, 4, 5, 5); }), ErrorCode::InvalidProblem, "overlaps x");
  expect_error(plan->run(host, Workspace(ws.data(), plan->workspace_size() - 1), good), ErrorCode::WorkspaceTooSmall,
               "workspace too small");
  expect_error(plan->run(host, Workspace{}, good), ErrorCode::WorkspaceTooSmall, "workspace too small");
  expect_error(plan->run(host, Workspace(ws.data() + 16, plan->workspace_size()), good), ErrorCode::MisalignedOperand,
               "256-byte");
  expect_error(plan->run(host, Workspace(x.data(), plan->workspace_size()), good), ErrorCode::InvalidProblem, "overlaps");
  ASSERT_TRUE(plan->run(host, Workspace(ws.data(), plan->workspace_size()), good).is_ok());
}

}  // namespace
}  // namespace baracuda::test
