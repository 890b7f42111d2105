// Int4MarlinGemmPlan on the host: every select / can_implement / run rejection, empty problems, the workspace.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "int4_gemm_test_support.hpp"

namespace baracuda::test {
namespace {

// ------------------------------------------------------------------------------------------ rejections

TEST(Int4MarlinGemm, SelectRejections) {
  const Stream host = Stream::host();
  using D = Int4GemmDescriptor;
  const D ok = D{}.with_shape(4, 64, 128);
  ASSERT_TRUE(dynamic::Int4MarlinGemmPlan::select(host, ok).is_ok());
  auto sel = [&](const D& d, PlanPreference pref = {}) { return dynamic::Int4MarlinGemmPlan::select(host, d, pref); };
  expect_select_error(sel(D(ok).with_element(ElementKind::F32)), ErrorCode::Unsupported, "f16 or bf16");
  expect_select_error(sel(D(ok).with_element(ElementKind::S8)), ErrorCode::Unsupported, "f16 or bf16");
  expect_select_error(sel(D(ok).with_shape(-1, 64, 128)), ErrorCode::InvalidProblem, ">= 0");
  expect_select_error(sel(D(ok).with_shape(1, -64, 128)), ErrorCode::InvalidProblem, ">= 0");
  // the kernel's grid (65535 blocks of 64 rows) and 32-bit sizes, on every device
  EXPECT_TRUE(sel(D(ok).with_shape(4194240, 64, 128)).is_ok());
  expect_select_error(sel(D(ok).with_shape(4194241, 64, 128)), ErrorCode::InvalidProblem, "M must be at most 4194240");
  expect_select_error(sel(D(ok).with_shape(4, int64_t{1} << 31, 128)), ErrorCode::InvalidProblem, "N, K at most");
  expect_select_error(sel(D(ok).with_shape(4, 64, int64_t{1} << 32)), ErrorCode::InvalidProblem, "N, K at most");
  expect_select_error(sel(D(ok).with_group(16)), ErrorCode::InvalidProblem, "group must be");
  expect_select_error(sel(D(ok).with_group(0)), ErrorCode::InvalidProblem, "group must be");
  expect_select_error(sel(D(ok).with_shape(4, 96, 128)), ErrorCode::InvalidProblem, "multiple of 64");
  expect_select_error(sel(D(ok).with_shape(4, 65, 128)), ErrorCode::InvalidProblem, "multiple of 64");
  expect_select_error(sel(D(ok).with_shape(4, 64, 64)), ErrorCode::InvalidProblem, "multiple of 128");
  expect_select_error(sel(D(ok).with_shape(4, 64, 192)), ErrorCode::InvalidProblem, "multiple of 128");
  expect_select_error(sel(D(ok).with_shape(4, 64, 0)), ErrorCode::InvalidProblem, "positive multiple of 128");
  expect_select_error(sel(D(ok).with_scheme(static_cast<Int4Scheme>(7))), ErrorCode::InvalidProblem, "Int4Scheme");
  expect_select_error(sel(ok, PlanPreference{}.with_backend(BackendKind::CublasLt)), ErrorCode::Unsupported,
                      "preferred backend");
  // act-order's workspace above the preference's limit (M·K·2 = 1024 bytes)
  expect_select_error(sel(D(ok).with_act_order().with_group(32), PlanPreference{}.with_max_workspace_bytes(1023)),
                      ErrorCode::Unsupported, "max_workspace_bytes");
  EXPECT_TRUE(sel(D(ok).with_act_order().with_group(32), PlanPreference{}.with_max_workspace_bytes(1024)).is_ok());
  EXPECT_TRUE(sel(D(ok).with_act_order().with_group(-1), PlanPreference{}.with_max_workspace_bytes(0)).is_ok());
  // sim always serves it; cuda does, or says the library was built without CUDA kernels.
  EXPECT_TRUE(dynamic::Int4MarlinGemmPlan::select(Stream::sim(), ok).is_ok());
  std::string why;
  if (auto st = stream_for(DeviceKind::Cuda, &why)) {
    auto r = dynamic::Int4MarlinGemmPlan::select(*st, ok);
    if (!r) {
      EXPECT_EQ(r.error().code, ErrorCode::Unsupported) << r.error().to_string();
      EXPECT_NE(r.error().message.find("without CUDA kernels"), std::string::npos) << r.error().message;
    }
  }
}

/// A valid asymmetric act-order problem with bias (every optional tensor present), for the rejections.
struct RejectFixture {
  static constexpr int64_t M = 4, N = 64, K = 128, G = 4;
  Arr<__half> a{M * K + 64}, scales{G * N}, bias{N}, c{M * N + 64};
  Arr<int32_t> b_q{K / 16 * 2 * N + 8}, zeros{G * N / 8 + 8}, perm{K};
  Int4GemmDescriptor desc = Int4GemmDescriptor{}
                                .with_shape(M, N, K)
                                .with_group(32)
                                .with_scheme(Int4Scheme::Asymmetric)
                                .with_act_order()
                                .with_bias();
  RejectFixture() {
    std::iota(perm.data(), perm.data() + K, 0);
    for (size_t i = 0; i < scales.n; ++i) scales[i] = __float2half(0.01f);
  }
  dynamic::Int4MarlinGemmArgs tensors() const {
    dynamic::Int4MarlinGemmArgs t;
    t.a = mat(a.data(), ElementKind::F16, M, K, K);
    t.b_q = ConstDynTensor::dense(b_q.data(), ElementKind::S32, Shape{K / 16, 2 * N});
    t.scales = ConstDynTensor::dense(scales.data(), ElementKind::F16, Shape{G, N});
    t.zeros = ConstDynTensor::dense(zeros.data(), ElementKind::S32, Shape{G, N / 8});
    t.perm = vec(perm.data(), ElementKind::S32, K);
    t.bias = vec(bias.data(), ElementKind::F16, N);
    t.c = mat(c.data(), ElementKind::F16, M, N, N);
    return t;
  }
};

TEST(Int4MarlinGemm, CanImplementRejections) {
  RejectFixture f;
  const int64_t M = f.M, N = f.N, K = f.K, G = f.G;
  auto plan = dynamic::Int4MarlinGemmPlan::select(Stream::host(), f.desc);
  ASSERT_TRUE(plan.is_ok());
  const dynamic::Int4MarlinGemmArgs ok = f.tensors();
  ASSERT_TRUE(plan->can_implement(ok).is_ok()) << plan->can_implement(ok).error().to_string();
  auto with = [&](auto fn) {
    dynamic::Int4MarlinGemmArgs t = ok;
    fn(t);
    return plan->can_implement(t);
  };
  using E = ErrorCode;
  using T = dynamic::Int4MarlinGemmArgs;
  // a
  expect_error(with([](T& t) { t.a.kind = ElementKind::Bf16; }), E::InvalidProblem, "element kind");
  expect_error(with([&](T& t) { t.a = mat(f.a.data(), ElementKind::F16, M + 1, K, K); }), E::InvalidProblem, "shape");
  expect_error(with([](T& t) { t.a.data = nullptr; }), E::InvalidProblem, "null");
  expect_error(with([&](T& t) { t.a.stride[1] = 2, t.a.stride[0] = 2 * K; }), E::MisalignedOperand, "unit stride");
  expect_error(with([&](T& t) { t.a.stride[0] = K + 4; }), E::MisalignedOperand, "multiple of 8");
  expect_error(with([&](T& t) { t.a.stride[0] = K - 8; }), E::MisalignedOperand, "row stride");
  expect_error(with([&](T& t) { t.a.data = f.a.data() + 4; }), E::MisalignedOperand, "16-byte");
  // b_q
  expect_error(with([](T& t) { t.b_q.kind = ElementKind::U32; }), E::InvalidProblem, "element kind");
  expect_error(with([&](T& t) {
                 t.b_q = ConstDynTensor::dense(f.b_q.data(), ElementKind::S32, Shape{K / 16, N});
               }),
               E::InvalidProblem, "shape");
  expect_error(with([&](T& t) { t.b_q.stride[0] = 2 * N + 4; }), E::InvalidProblem, "dense");
  expect_error(with([&](T& t) { t.b_q.data = f.b_q.data() + 1; }), E::MisalignedOperand, "16-byte");
  // scales
  expect_error(with([](T& t) { t.scales.kind = ElementKind::Bf16; }), E::InvalidProblem, "element kind");
  expect_error(with([&](T& t) {
                 t.scales = ConstDynTensor::dense(f.scales.data(), ElementKind::F16, Shape{1, N});
               }),
               E::InvalidProblem, "shape");
  expect_error(with([&](T& t) { t.scales.stride[1] = 0; }), E::InvalidProblem, "dense");
  expect_error(with([&](T& t) { t.scales.data = f.scales.data() + 2; }), E::MisalignedOperand, "16-byte");
  // zeros
  expect_error(with([](T& t) { t.zeros = ConstDynTensor{}; }), E::InvalidProblem, "zeros is missing");
  expect_error(with([&](T& t) {
                 t.zeros = ConstDynTensor::dense(f.zeros.data(), ElementKind::S32, Shape{G, N});
               }),
               E::InvalidProblem, "shape");
  expect_error(with([&](T& t) { t.zeros.data = f.zeros.data() + 1; }), E::MisalignedOperand, "16-byte");
  // perm
  expect_error(with([](T& t) { t.perm = ConstDynTensor{}; }), E::InvalidProblem, "perm is missing");
  expect_error(with([&](T& t) { t.perm = vec(f.perm.data(), ElementKind::S32, K - 1); }), E::InvalidProblem, "shape");
  expect_error(with([&](T& t) { t.perm.stride[0] = 2; }), E::InvalidProblem, "dense");
  // bias
  expect_error(with([](T& t) { t.bias = ConstDynTensor{}; }), E::InvalidProblem, "bias is missing");
  expect_error(with([&](T& t) { t.bias = vec(f.bias.data(), ElementKind::F16, N / 2); }), E::InvalidProblem, "shape");
  // c
  expect_error(with([](T& t) { t.c.kind = ElementKind::F32; }), E::InvalidProblem, "element kind");
  expect_error(with([&](T& t) { t.c = mat(f.c.data(), ElementKind::F16, M, N + 64, N + 64); }), E::InvalidProblem,
               "shape");
  expect_error(with([](T& t) { t.c.stride[0] = 0; }), E::InvalidProblem, "stride 0");
  expect_error(with([&](T& t) { t.c.stride[0] = N + 1; }), E::MisalignedOperand, "multiple of 8");
  expect_error(with([&](T& t) { t.c.stride[1] = 2, t.c.stride[0] = 2 * N; }), E::MisalignedOperand, "unit stride");
  expect_error(with([&](T& t) { t.c.data = f.c.data() + 1; }), E::MisalignedOperand, "16-byte");
  // c overlapping an input
  expect_error(with([&](T& t) { t.c.data = f.a.data() + 64; }), E::InvalidProblem, "c overlaps a");
  expect_error(with([&](T& t) { t.c.data = f.b_q.data(); }), E::InvalidProblem, "c overlaps b_q");
  expect_error(with([&](T& t) { t.c = mat(f.scales.data(), ElementKind::F16, M, N, N); }), E::InvalidProblem,
               "c overlaps scales");
  expect_error(with([&](T& t) { t.c.data = f.zeros.data(); }), E::InvalidProblem, "c overlaps zeros");
  expect_error(with([&](T& t) { t.c.data = f.perm.data(); }), E::InvalidProblem, "c overlaps perm");
  // tensors the descriptor says are absent
  {
    auto sym =
        dynamic::Int4MarlinGemmPlan::select(Stream::host(), Int4GemmDescriptor{}.with_shape(M, N, K).with_group(32));
    ASSERT_TRUE(sym.is_ok());
    dynamic::Int4MarlinGemmArgs t = ok;
    t.zeros = ConstDynTensor{}, t.perm = ConstDynTensor{}, t.bias = ConstDynTensor{};
    ASSERT_TRUE(sym->can_implement(t).is_ok()) << sym->can_implement(t).error().to_string();
    dynamic::Int4MarlinGemmArgs z = t;
    z.zeros = ok.zeros;
    expect_error(sym->can_implement(z), E::InvalidProblem, "zeros must be empty");
    dynamic::Int4MarlinGemmArgs p = t;
    p.perm = ok.perm;
    expect_error(sym->can_implement(p), E::InvalidProblem, "perm must be empty");
    dynamic::Int4MarlinGemmArgs b = t;
    b.bias = ok.bias;
    expect_error(sym->can_implement(b), E::InvalidProblem, "bias must be empty");
    // act-order with one group: no perm
    auto one = dynamic::Int4MarlinGemmPlan::select(
        Stream::host(), Int4GemmDescriptor{}.with_shape(M, N, K).with_group(-1).with_act_order());
    ASSERT_TRUE(one.is_ok());
    dynamic::Int4MarlinGemmArgs o = t;
    o.scales = ConstDynTensor::dense(f.scales.data(), ElementKind::F16, Shape{1, N});
    ASSERT_TRUE(one->can_implement(o).is_ok()) << one->can_implement(o).error().to_string();
    o.perm = ok.perm;
    expect_error(one->can_implement(o), E::InvalidProblem, "single group");
  }
}

TEST(Int4MarlinGemm, RunRejections) {
  RejectFixture f;
  auto plan = dynamic::Int4MarlinGemmPlan::select(Stream::host(), f.desc);
  ASSERT_TRUE(plan.is_ok());
  const size_t need = plan->workspace_size();
  ASSERT_EQ(need, static_cast<size_t>(f.M * f.K * 2));
  Arr<uint8_t> ws(need + 64);
  const dynamic::Int4MarlinGemmArgs ok = f.tensors();
  const Stream host = Stream::host();
  ASSERT_TRUE(plan->run(host, Workspace(ws.data(), need), ok).is_ok());
  expect_error(plan->run(host, Workspace(ws.data(), need - 1), ok), ErrorCode::WorkspaceTooSmall, "workspace");
  expect_error(plan->run(host, Workspace{}, ok), ErrorCode::WorkspaceTooSmall, "workspace");
  expect_error(plan->run(host, Workspace(ws.data() + 8, need), ok), ErrorCode::MisalignedOperand, "16-byte");
  expect_error(plan->run(host, Workspace(f.a.data(), need), ok), ErrorCode::InvalidProblem, "the workspace overlaps a");
  expect_error(plan->run(host, Workspace(f.c.data(), need), ok), ErrorCode::InvalidProblem, "the workspace overlaps c");
  // run re-validates, checks the device, needs a selected plan
  dynamic::Int4MarlinGemmArgs bad = ok;
  bad.c.kind = ElementKind::F32;
  expect_error(plan->run(host, Workspace(ws.data(), need), bad), ErrorCode::InvalidProblem, "element kind");
  expect_error(plan->run(Stream::sim(), Workspace(ws.data(), need), ok), ErrorCode::InvalidProblem,
               "selected for the host");
  expect_error(dynamic::Int4MarlinGemmPlan{}.run(host, {}, ok), ErrorCode::InvalidProblem, "select did not produce");
  // The host reference rejects a perm value out of range (sim/cuda do not check; see int4_gemm.hpp).
  f.perm[5] = static_cast<int32_t>(f.K);
  expect_error(plan->run(host, Workspace(ws.data(), need), ok), ErrorCode::InvalidProblem, "perm[5]");
  f.perm[5] = -1;
  expect_error(plan->run(host, Workspace(ws.data(), need), ok), ErrorCode::InvalidProblem,
               "perm is not a permutation of [0, K): perm[5] = -1 is out of range");
}

TEST(Int4MarlinGemm, EmptyProblemsTouchNothing) {
  const Stream host = Stream::host();
  // M = 0 (even with act-order: no workspace needed)
  {
    RejectFixture f;
    Int4GemmDescriptor d = f.desc;
    d.with_shape(0, f.N, f.K);
    auto plan = dynamic::Int4MarlinGemmPlan::select(host, d);
    ASSERT_TRUE(plan.is_ok());
    EXPECT_EQ(plan->workspace_size(), 0u);
    dynamic::Int4MarlinGemmArgs t = f.tensors();
    t.a = mat(f.a.data(), ElementKind::F16, 0, f.K, f.K);
    t.c = mat(f.c.data(), ElementKind::F16, 0, f.N, f.N);
    f.c[0] = __float2half(3.0f);
    ASSERT_TRUE(plan->run(host, {}, t).is_ok());
    EXPECT_EQ(__half2float(f.c[0]), 3.0f);
  }
  // N = 0
  {
    Arr<__half> a(4 * 128, __float2half(1.0f)), c(8, __float2half(3.0f));
    auto plan = dynamic::Int4MarlinGemmPlan::select(host, Int4GemmDescriptor{}.with_shape(4, 0, 128));
    ASSERT_TRUE(plan.is_ok()) << plan.error().to_string();
    dynamic::Int4MarlinGemmArgs t;
    t.a = mat(a.data(), ElementKind::F16, 4, 128, 128);
    t.b_q = ConstDynTensor::dense(nullptr, ElementKind::S32, Shape{8, 0});
    t.scales = ConstDynTensor::dense(nullptr, ElementKind::F16, Shape{1, 0});
    t.c = mat(c.data(), ElementKind::F16, 4, 0, 8);
    ASSERT_TRUE(plan->run(host, {}, t).is_ok());
    EXPECT_EQ(__half2float(c[0]), 3.0f);
  }
}

}  // namespace
}  // namespace baracuda::test
