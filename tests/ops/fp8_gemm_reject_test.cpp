// Fp8GemmPlan: every rejection of select (the descriptor's rules, the architecture, the backend preference),
// can_implement (kinds, shapes, strides against the descriptor, the scales of each scaling, the optional operands,
// alignment, aliasing) and run (the same checks, a stream of another device, a plan select did not make).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fp8_gemm_test_support.hpp"
#include "support/expect_error.hpp"

namespace baracuda::test::fp8_gemm {
namespace {

constexpr ElementKind E4 = ElementKind::Fp8E4M3, E5 = ElementKind::Fp8E5M2, F16 = ElementKind::F16,
                      Bf16 = ElementKind::Bf16, F32 = ElementKind::F32;

void expect_code(const Status& s, ErrorCode code, const std::string& needle) {
  expect_error_naming(s, code, "Fp8GemmPlan", needle);
}
void expect_select(const Fp8GemmDescriptor& g, ErrorCode code, const std::string& needle, PlanPreference pref = {}) {
  expect_code(dynamic::Fp8GemmPlan::select(Stream::host(), g, pref).status(), code, needle);
}

Fp8GemmDescriptor base() { return Fp8GemmDescriptor{}.with_shape(4, 5, 32); }

TEST(Fp8GemmReject, SelectKinds) {
  const auto uns = ErrorCode::Unsupported;
  expect_select(base().with_kinds(E5, E5, Bf16), uns, "e5m2 x fp8e5m2");
  expect_select(base().with_kinds(F16, E4, Bf16), uns, "must be fp8e4m3 or fp8e5m2");
  expect_select(base().with_kinds(E4, ElementKind::S8, Bf16), uns, "must be fp8e4m3 or fp8e5m2");
  expect_select(base().with_kinds(E4, E4, ElementKind::F64), uns, "the output must be");
  expect_select(base().with_kinds(E4, E4, ElementKind::S32), uns, "the output must be");
  expect_select(base().with_bias(ElementKind::F64), uns, "the bias must be");
  expect_select(base().with_bias(E4), uns, "the bias must be");
  expect_select(base().with_kinds(E4, E4, Bf16).with_amax(), uns, "amax output needs an fp8 D");
  expect_select(base().with_kinds(E4, E4, F32).with_amax(), uns, "amax output needs an fp8 D");
  Fp8GemmDescriptor bad = base();
  bad.output = static_cast<ElementKind>(200);
  expect_select(bad, ErrorCode::InvalidProblem, "");
  bad = base();
  bad.bias_kind = static_cast<ElementKind>(200);
  expect_select(bad, ErrorCode::InvalidProblem, "");
  for (auto [a, b] : {std::pair{E4, E4}, {E4, E5}, {E5, E4}})
    for (ElementKind d : {F16, Bf16, F32, E4, E5})
      for (ElementKind bias : {F16, Bf16, F32})
        EXPECT_TRUE(dynamic::Fp8GemmPlan::select(Stream::host(), base().with_kinds(a, b, d).with_bias(bias)).is_ok());
}

TEST(Fp8GemmReject, SelectShapesAndFlags) {
  const auto inv = ErrorCode::InvalidProblem;
  expect_select(base().with_shape(-1, 5, 32), inv, ">= 0");
  expect_select(base().with_shape(4, -5, 32), inv, ">= 0");
  expect_select(base().with_shape(4, 5, -16), inv, ">= 0");
  expect_select(base().with_shape(int64_t{1} << 31, 5, 32), inv, "2^31 - 256");
  expect_select(base().with_shape(4, 5, int64_t{1} << 31), inv, "2^31 - 256");
  expect_select(base().with_shape(4, 5, 24), inv, "K must be a multiple of 16");
  expect_select(base().with_shape(4, 5, 8), inv, "K must be a multiple of 16");
  expect_select(base().with_alpha(NAN), inv, "alpha must be finite");
  expect_select(base().with_alpha(INFINITY), inv, "alpha must be finite");
  expect_select(base().with_a_scale_m_major(), inv, "a_scale_m_major applies to Block128 scaling only");
  Fp8GemmDescriptor g = base();
  g.scaling = static_cast<Fp8GemmScaling>(7);
  expect_select(g, inv, "invalid Fp8GemmScaling");
  g = base();
  g.activation = static_cast<LinearActivation>(kNumLinearActivations);
  expect_select(g, inv, "invalid LinearActivation");
  EXPECT_TRUE(dynamic::Fp8GemmPlan::select(Stream::host(), base().with_shape(0, 0, 0)).is_ok());
}

TEST(Fp8GemmReject, SelectLeadingDimensions) {
  const auto inv = ErrorCode::InvalidProblem;
  expect_select(base().with_lda(16), inv, "lda = 16 is below 32");
  expect_select(base().with_lda(40), inv, "lda = 40 is not a multiple of 16");
  expect_select(base().with_ldb(16), inv, "ldb = 16 is below 32");
  expect_select(base().with_ldb(33), inv, "not a multiple of 16");
  expect_select(base().with_ldd(4), inv, "ldd = 4 is below 5");
  expect_select(base().with_shape(int64_t{1} << 30, 5, 32).with_lda(int64_t{1} << 27), inv, "2^56");
  EXPECT_TRUE(dynamic::Fp8GemmPlan::select(Stream::host(), base().with_lda(48).with_ldb(64).with_ldd(7)).is_ok());
}

TEST(Fp8GemmReject, ArchitectureWithoutFp8TensorCores) {
  for (int sm : {70, 75, 80, 86, 87}) {
    const Status s = detail::fp8_gemm_arch_check(sm);
    expect_code(s, ErrorCode::Unsupported, "compute capability 8.9");
  }
  for (int sm : {89, 90, 100, 120}) EXPECT_TRUE(detail::fp8_gemm_arch_check(sm).is_ok()) << sm;
}

TEST(Fp8GemmReject, SelectBackendPreference) {
  for (BackendKind b : {BackendKind::Sim, BackendKind::Bespoke, BackendKind::CublasLt, BackendKind::Cudnn})
    expect_select(base(), ErrorCode::Unsupported, "", PlanPreference{}.with_backend(b));
  EXPECT_TRUE(
      dynamic::Fp8GemmPlan::select(Stream::host(), base(), PlanPreference{}.with_backend(BackendKind::Host)).is_ok());
  expect_code(dynamic::Fp8GemmPlan::select(Stream::sim(), base(), PlanPreference{}.with_backend(BackendKind::CublasLt))
                  .status(),
              ErrorCode::Unsupported, "");
}

/// A valid problem with every operand (Block128 scales, bias, FP8 D with d_scale and amax) in 16-byte aligned host
/// buffers, and the mutations of its arguments.
struct Fixture {
  Fp8GemmDescriptor g = Fp8GemmDescriptor{}
                            .with_shape(4, 5, 160)
                            .with_kinds(E4, E5, E4)
                            .with_scaling(Fp8GemmScaling::Block128)
                            .with_bias(Bf16)
                            .with_amax();
  std::vector<Buffer> keep;
  dynamic::Fp8GemmArgs ok;
  dynamic::Fp8GemmPlan plan;
  void* alloc(size_t bytes) {
    keep.push_back(std::move(Buffer::allocate(Stream::host(), bytes)).value());
    return keep.back().data();
  }
  Fixture() {
    ok.a = ConstDynTensor::dense(alloc(4 * 160), E4, Shape{4, 160});
    ok.b = ConstDynTensor::dense(alloc(5 * 160), E5, Shape{5, 160});
    ok.a_scale = ConstDynTensor::dense(alloc(4 * 2 * 4), F32, Shape{4, 2});
    ok.b_scale = ConstDynTensor::dense(alloc(1 * 2 * 4), F32, Shape{1, 2});
    ok.bias = ConstDynTensor::dense(alloc(5 * 2), Bf16, Shape{5});
    ok.d_scale = ConstDynTensor::dense(alloc(4), F32, Shape{1});
    ok.d = DynTensor::dense(alloc(4 * 5), E4, Shape{4, 5});
    ok.amax = DynTensor::dense(alloc(4), F32, Shape{1});
    for (Buffer& b : keep) std::memset(b.data(), 0x38,
                                       b.size());  // 0x38: e4m3 1.0; f32/bf16 small positives
    plan = *dynamic::Fp8GemmPlan::select(Stream::host(), g);
  }
  /// can_implement and run both reject the mutated arguments with `code` naming `needle`.
  template <class F>
  void expect(F mutate, ErrorCode code, const std::string& needle) {
    dynamic::Fp8GemmArgs t = ok;
    mutate(t);
    expect_code(plan.can_implement(t), code, needle);
    expect_code(plan.run(Stream::host(), {}, t), code, needle);
  }
};

TEST(Fp8GemmReject, CanImplementOperands) {
  Fixture f;
  ASSERT_TRUE(f.plan.can_implement(f.ok).is_ok());
  ASSERT_TRUE(f.plan.run(Stream::host(), {}, f.ok).is_ok());
  using A = dynamic::Fp8GemmArgs;
  const auto inv = ErrorCode::InvalidProblem;
  f.expect([](A& t) { t.a = {}; }, inv, "a is missing");
  f.expect([](A& t) { t.b = {}; }, inv, "b is missing");
  f.expect([](A& t) { t.a_scale = {}; }, inv, "a_scale is missing");
  f.expect([](A& t) { t.b_scale = {}; }, inv, "b_scale is missing");
  f.expect([](A& t) { t.bias = {}; }, inv, "bias is missing");
  f.expect([](A& t) { t.d_scale = {}; }, inv, "d_scale is missing");
  f.expect([](A& t) { t.d = {}; }, inv, "d is missing");
  f.expect([](A& t) { t.amax = {}; }, inv, "amax is missing");
  f.expect([](A& t) { t.a.kind = E5; }, inv, "a");
  f.expect([](A& t) { t.b.kind = E4; }, inv, "b");
  f.expect([](A& t) { t.a_scale.kind = F16; }, inv, "a_scale");
  f.expect([](A& t) { t.bias.kind = F16; }, inv, "bias");
  f.expect([](A& t) { t.d.kind = Bf16; }, inv, "d");
  f.expect([](A& t) { t.amax.kind = Bf16; }, inv, "amax");
  f.expect([](A& t) { t.a.shape = Shape{4, 144}; }, inv, "a");
  f.expect([](A& t) { t.b.shape = Shape{160, 5}; }, inv, "b");
  f.expect([](A& t) { t.a_scale.shape = Shape{4, 1}; }, inv, "a_scale");  // ⌈160/128⌉ = 2 K blocks
  f.expect([](A& t) { t.b_scale.shape = Shape{2, 2}; }, inv, "b_scale");  // ⌈5/128⌉ = 1 N block
  f.expect([](A& t) { t.bias.shape = Shape{4}; }, inv, "bias");
  f.expect([](A& t) { t.d_scale.shape = Shape{2}; }, inv, "d_scale");
  f.expect([](A& t) { t.d.shape = Shape{5, 4}; }, inv, "d");
  f.expect([](A& t) { t.amax.shape = Shape{1, 1}; }, inv, "amax");
  // strides other than the descriptor's
  f.expect([](A& t) { t.a.stride[0] = 176; }, inv, "not the descriptor's");
  f.expect([](A& t) { t.a.stride[0] = 1, t.a.stride[1] = 4; }, inv, "not the descriptor's");
  f.expect([](A& t) { t.b.stride[1] = 2; }, inv, "not the descriptor's");
  f.expect([](A& t) { t.d.stride[0] = 6; }, inv, "not the descriptor's");
  f.expect([](A& t) { t.bias.stride[0] = 2; }, inv, "contiguous");
  f.expect([](A& t) { t.a_scale.stride[0] = 1, t.a_scale.stride[1] = 4; }, inv,
           "not the descriptor's (2, 1) (packed row-major)");
  f.expect([](A& t) { t.a_scale.stride[0] = 3; }, inv, "not the descriptor's");
  f.expect([](A& t) { t.b_scale.stride[1] = 2; }, inv, "not the descriptor's");
  f.expect([](A& t) { t.d.stride[1] = 0; }, inv, "d");  // a broadcast output
  // alignment: a and b 16-byte aligned; the rest to their element size
  f.expect([](A& t) { t.a.data = static_cast<const char*>(t.a.data) + 8; }, ErrorCode::MisalignedOperand, "a must be");
  f.expect([](A& t) { t.b.data = static_cast<const char*>(t.b.data) + 1; }, ErrorCode::MisalignedOperand, "b must be");
  f.expect([](A& t) { t.a_scale.data = static_cast<const char*>(t.a_scale.data) + 2; }, ErrorCode::MisalignedOperand,
           "a_scale");
  f.expect([](A& t) { t.b.data = nullptr; }, inv, "b");
}

TEST(Fp8GemmReject, TensorScalesHaveOneElement) {
  Fixture f;
  const Fp8GemmDescriptor g = Fp8GemmDescriptor{}.with_shape(4, 5, 160).with_kinds(E4, E5, Bf16);
  auto plan = dynamic::Fp8GemmPlan::select(Stream::host(), g);
  ASSERT_TRUE(plan.is_ok());
  dynamic::Fp8GemmArgs t = f.ok;
  t.bias = {}, t.d_scale = {}, t.amax = {};
  t.d = DynTensor::dense(f.alloc(4 * 5 * 2), Bf16, Shape{4, 5});
  t.a_scale = ConstDynTensor::dense(f.ok.a_scale.data, F32, Shape{1});
  t.b_scale = ConstDynTensor::dense(f.ok.b_scale.data, F32, Shape{1, 1});  // [1, 1] too
  ASSERT_TRUE(plan->can_implement(t).is_ok()) << plan->can_implement(t).to_string();
  ASSERT_TRUE(plan->run(Stream::host(), {}, t).is_ok());
  dynamic::Fp8GemmArgs u = t;
  u.a_scale.shape = Shape{2};
  expect_code(plan->can_implement(u), ErrorCode::InvalidProblem, "a_scale");
  u = t;
  u.b_scale = ConstDynTensor::dense(f.ok.b_scale.data, F32, Shape{1, 2});
  expect_code(plan->can_implement(u), ErrorCode::InvalidProblem, "b_scale");
}

TEST(Fp8GemmReject, MMajorBlockScales) {
  Fixture f;
  auto plan = dynamic::Fp8GemmPlan::select(Stream::host(), Fp8GemmDescriptor{f.g}.with_a_scale_m_major());
  ASSERT_TRUE(plan.is_ok());
  dynamic::Fp8GemmArgs t = f.ok;
  expect_code(plan->can_implement(t), ErrorCode::InvalidProblem,
              "not the descriptor's (1, 4) (packed M-major (a_scale_m_major))");
  t.a_scale.stride[0] = 1, t.a_scale.stride[1] = 4;  // [4, 2] M-major: (1, M)
  EXPECT_TRUE(plan->can_implement(t).is_ok()) << plan->can_implement(t).to_string();
  EXPECT_TRUE(plan->run(Stream::host(), {}, t).is_ok());
}

TEST(Fp8GemmReject, OptionalOperandsTheDescriptorLacks) {
  Fixture f;
  const Fp8GemmDescriptor g =
      Fp8GemmDescriptor{}.with_shape(4, 5, 160).with_kinds(E4, E5, E4).with_scaling(Fp8GemmScaling::Block128);
  auto plan = dynamic::Fp8GemmPlan::select(Stream::host(), g);
  ASSERT_TRUE(plan.is_ok());
  dynamic::Fp8GemmArgs t = f.ok;
  t.bias = {}, t.amax = {};
  ASSERT_TRUE(plan->can_implement(t).is_ok());
  dynamic::Fp8GemmArgs u = t;
  u.bias = f.ok.bias;
  expect_code(plan->can_implement(u), ErrorCode::InvalidProblem, "bias must be empty");
  u = t;
  u.amax = f.ok.amax;
  expect_code(plan->can_implement(u), ErrorCode::InvalidProblem, "amax must be empty");
  expect_code(plan->run(Stream::host(), {}, u), ErrorCode::InvalidProblem, "amax must be empty");
  // a bf16 D takes no d_scale
  auto bf = dynamic::Fp8GemmPlan::select(Stream::host(), Fp8GemmDescriptor{g}.with_kinds(E4, E5, Bf16));
  ASSERT_TRUE(bf.is_ok());
  u = t;
  u.d = DynTensor::dense(f.alloc(4 * 5 * 2), Bf16, Shape{4, 5});
  expect_code(bf->can_implement(u), ErrorCode::InvalidProblem, "d_scale must be empty");
}

TEST(Fp8GemmReject, Aliasing) {
  Fixture f;
  using A = dynamic::Fp8GemmArgs;
  const auto inv = ErrorCode::InvalidProblem;
  f.expect([](A& t) { t.d.data = const_cast<void*>(t.a.data); }, inv, "overlap");
  f.expect([](A& t) { t.d.data = const_cast<void*>(t.b.data); }, inv, "overlap");
  f.expect([](A& t) { t.d.data = const_cast<void*>(t.a_scale.data); }, inv, "overlap");
  f.expect([](A& t) { t.d.data = const_cast<void*>(t.bias.data); }, inv, "overlap");
  f.expect([](A& t) { t.amax.data = const_cast<void*>(t.d_scale.data); }, inv, "overlap");
  f.expect([](A& t) { t.amax.data = const_cast<void*>(t.b_scale.data); }, inv, "overlap");
  f.expect([](A& t) { t.amax.data = t.d.data; }, inv, "overlap");
}

TEST(Fp8GemmReject, RunOnAnotherDeviceOrUnselected) {
  Fixture f;
  expect_code(f.plan.run(Stream::sim(), {}, f.ok), ErrorCode::InvalidProblem, "");
  dynamic::Fp8GemmPlan unselected;
  expect_code(unselected.run(Stream::host(), {}, f.ok), ErrorCode::InvalidProblem, "did not produce");
}

}  // namespace
}  // namespace baracuda::test::fp8_gemm
