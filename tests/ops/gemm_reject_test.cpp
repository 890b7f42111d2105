// GemmPlan: every rejection of select (the descriptor's rules, the backend preference), can_implement (kinds,
// shapes, ranks, strides against the descriptor, optional operands, alignment, aliasing) and run (the same
// checks, a stream of another device, a plan select did not make).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gemm_test_support.hpp"
#include "support/expect_error.hpp"

namespace baracuda::test::gemm {
namespace {

void expect_code(const Status& s, ErrorCode code, const std::string& needle) {
  expect_error_naming(s, code, "GemmPlan", needle);
}
void expect_select(const GemmDescriptor& g, ErrorCode code, const std::string& needle, PlanPreference pref = {}) {
  expect_code(dynamic::GemmPlan::select(Stream::host(), g, pref).status(), code, needle);
}

constexpr ElementKind F16 = ElementKind::F16, Bf16 = ElementKind::Bf16, F32 = ElementKind::F32, F64 = ElementKind::F64;

GemmDescriptor base() { return GemmDescriptor{}.with_shape(4, 5, 6).with_kinds(F32, F32); }

TEST(GemmReject, SelectKinds) {
  for (auto [in, out] : {std::pair{F16, Bf16},
                         {Bf16, F16},
                         {F32, F16},
                         {F32, F64},
                         {F64, F32},
                         {F16, F64},
                         {ElementKind::S8, ElementKind::S32},
                         {ElementKind::Fp8E4M3, F16}})
    expect_select(base().with_kinds(in, out), ErrorCode::Unsupported, "is not supported");
  GemmDescriptor bad = base();
  bad.input = static_cast<ElementKind>(200);
  expect_select(bad, ErrorCode::InvalidProblem, "");
  for (auto [in, out] : {std::pair{F16, F16}, {F16, F32}, {Bf16, Bf16}, {Bf16, F32}, {F32, F32}, {F64, F64}})
    EXPECT_TRUE(dynamic::GemmPlan::select(Stream::host(), base().with_kinds(in, out)).is_ok());
}

TEST(GemmReject, SelectShapesAndFlags) {
  expect_select(base().with_shape(-1, 5, 6), ErrorCode::InvalidProblem, ">= 0");
  expect_select(base().with_shape(4, 5, -6), ErrorCode::InvalidProblem, ">= 0");
  expect_select(base().with_batch(-1), ErrorCode::InvalidProblem, "batch must be in [0, 65535]");
  expect_select(base().with_batch(65536), ErrorCode::InvalidProblem, "batch must be in [0, 65535]");
  expect_select(base().with_shape(int64_t{1} << 40, 5, int64_t{1} << 20), ErrorCode::InvalidProblem, "2^56");
  // One extent huge and another 0 (every product fits): the extent's own bound, before any tile arithmetic.
  constexpr int64_t kHuge = std::numeric_limits<int64_t>::max();
  expect_select(base().with_shape(kHuge, 5, 0), ErrorCode::InvalidProblem, "at most 2^56");
  expect_select(base().with_shape(0, kHuge, 6), ErrorCode::InvalidProblem, "at most 2^56");
  expect_select(base().with_shape(4, 0, kHuge), ErrorCode::InvalidProblem, "at most 2^56");
  expect_select(base().with_shape(int64_t{1} << 28, int64_t{1} << 28, 1), ErrorCode::InvalidProblem, "tiles");
  expect_select(base().with_alpha_beta(NAN, 0), ErrorCode::InvalidProblem, "finite");
  expect_select(base().with_alpha_beta(1, INFINITY), ErrorCode::InvalidProblem, "finite");
  expect_select(base().with_kinds(Bf16, F32).with_tf32(), ErrorCode::InvalidProblem, "allow_tf32");
  EXPECT_TRUE(dynamic::GemmPlan::select(Stream::host(), base().with_tf32()).is_ok());
  expect_select(base().with_batch(2).with_bias_grad(), ErrorCode::Unsupported, "bias_grad needs batch == 1");
  GemmDescriptor g = base();
  g.activation = static_cast<LinearActivation>(kNumLinearActivations);
  expect_select(g, ErrorCode::InvalidProblem, "invalid LinearActivation");
  g = base();
  g.layout_b = static_cast<MatrixLayout>(2);
  expect_select(g, ErrorCode::InvalidProblem, "invalid MatrixLayout");
}

TEST(GemmReject, SelectLeadingDimensionsAndBatchStrides) {
  // row-major op(A) [4, 6]: lda ≥ 6; column-major: ≥ 4. op(B) [6, 5]: row-major ≥ 5, column-major ≥ 6.
  expect_select(base().with_lda(5), ErrorCode::InvalidProblem, "lda = 5 is below 6");
  EXPECT_TRUE(dynamic::GemmPlan::select(Stream::host(),
                                        base().with_layouts(MatrixLayout::ColMajor, MatrixLayout::RowMajor).with_lda(4))
                  .is_ok());
  expect_select(base().with_layouts(MatrixLayout::ColMajor, MatrixLayout::RowMajor).with_lda(3),
                ErrorCode::InvalidProblem, "lda = 3 is below 4");
  expect_select(base().with_ldb(4), ErrorCode::InvalidProblem, "ldb = 4 is below 5");
  expect_select(base().with_layouts(MatrixLayout::RowMajor, MatrixLayout::ColMajor).with_ldb(5),
                ErrorCode::InvalidProblem, "ldb = 5 is below 6");
  expect_select(base().with_ldc(4), ErrorCode::InvalidProblem, "ldc");
  expect_select(base().with_ldd(-1), ErrorCode::InvalidProblem, "ldd");
  expect_select(base().with_ld_aux(3), ErrorCode::InvalidProblem, "ld_aux");
  expect_select(base().with_batch_stride_a(-2), ErrorCode::InvalidProblem, "negative");
  expect_select(base().with_batch_stride_c(-5), ErrorCode::InvalidProblem, "negative");
  expect_select(base().with_batch(2).with_batch_stride_d(0), ErrorCode::InvalidProblem, "batches of an output");
  expect_select(base().with_batch(2).with_batch_stride_d(19), ErrorCode::InvalidProblem, "batches of an output");
  expect_select(base().with_batch(2).with_aux().with_ldd(7).with_batch_stride_aux(19), ErrorCode::InvalidProblem,
                "batch_stride_aux");
  EXPECT_TRUE(dynamic::GemmPlan::select(Stream::host(), base().with_batch(2).with_batch_stride_d(20)).is_ok());
  // a leading dimension whose storage would pass the view limit (found by plan_fuzz: rows × ld overflowed)
  expect_select(base().with_shape(16, 5, 6).with_lda(int64_t{1} << 60), ErrorCode::InvalidProblem, "2^56");
  expect_select(base().with_ldd(int64_t{1} << 62), ErrorCode::InvalidProblem, "ldd");
}

TEST(GemmReject, SelectBackendPreference) {
  for (BackendKind b : {BackendKind::Sim, BackendKind::Bespoke, BackendKind::CublasLt, BackendKind::Cudnn})
    expect_select(base(), ErrorCode::Unsupported, "", PlanPreference{}.with_backend(b));
  EXPECT_TRUE(
      dynamic::GemmPlan::select(Stream::host(), base(), PlanPreference{}.with_backend(BackendKind::Host)).is_ok());
  expect_code(
      dynamic::GemmPlan::select(Stream::sim(), base(), PlanPreference{}.with_backend(BackendKind::Host)).status(),
      ErrorCode::Unsupported, "");
}

/// A valid problem with every operand (β ≠ 0, bias, aux, bias_grad) and the mutations of its arguments.
struct Fixture {
  GemmDescriptor g = base().with_alpha_beta(1, 1).with_bias().with_aux().with_bias_grad();
  Data x{g, 1};
  dynamic::GemmArgs ok;
  dynamic::GemmPlan plan;
  Fixture() {
    ok.a = x.view<ConstDynTensor>(static_cast<const void*>(x.sa.data()), F32, x.a);
    ok.b = x.view<ConstDynTensor>(static_cast<const void*>(x.sb.data()), F32, x.b);
    ok.c = x.view<ConstDynTensor>(static_cast<const void*>(x.sc.data()), F32, x.c);
    ok.bias = ConstDynTensor::dense(x.sbias.data(), F32, Shape{g.n});
    ok.d = x.view<DynTensor>(const_cast<uint8_t*>(x.sd.data()), F32, x.d);
    ok.aux = x.view<DynTensor>(const_cast<uint8_t*>(x.saux.data()), F32, x.aux);
    ok.bias_grad = DynTensor::dense(const_cast<uint8_t*>(x.sbg.data()), F32, Shape{g.m});
    plan = *dynamic::GemmPlan::select(Stream::host(), g);
  }
  /// can_implement and run both reject the mutated arguments with `code` naming `needle`.
  template <class F>
  void expect(F mutate, ErrorCode code, const std::string& needle) {
    dynamic::GemmArgs t = ok;
    mutate(t);
    expect_code(plan.can_implement(t), code, needle);
    expect_code(plan.run(Stream::host(), {}, t), code, needle);
  }
};

TEST(GemmReject, CanImplementOperands) {
  Fixture f;
  ASSERT_TRUE(f.plan.can_implement(f.ok).is_ok());
  ASSERT_TRUE(f.plan.run(Stream::host(), {}, f.ok).is_ok());
  using A = dynamic::GemmArgs;
  const auto inv = ErrorCode::InvalidProblem;
  f.expect([](A& t) { t.a = {}; }, inv, "a is missing");
  f.expect([](A& t) { t.b = {}; }, inv, "b is missing");
  f.expect([](A& t) { t.c = {}; }, inv, "c is missing");
  f.expect([](A& t) { t.bias = {}; }, inv, "bias is missing");
  f.expect([](A& t) { t.d = {}; }, inv, "d is missing");
  f.expect([](A& t) { t.aux = {}; }, inv, "aux is missing");
  f.expect([](A& t) { t.bias_grad = {}; }, inv, "bias_grad is missing");
  f.expect([](A& t) { t.a.kind = Bf16; }, inv, "a");
  f.expect([](A& t) { t.d.kind = ElementKind::S32; }, inv, "d");
  f.expect([](A& t) { t.b.shape = Shape{6, 4}; }, inv, "b");
  f.expect([](A& t) { t.c.shape = Shape{1, 4, 5}; }, inv, "c");  // rank 3 with batch == 1
  f.expect([](A& t) { t.bias.shape = Shape{4}; }, inv, "bias");
  f.expect([](A& t) { t.bias_grad.shape = Shape{5}; }, inv, "bias_grad");
  // strides other than the descriptor's (a transposed view, a padded one, a strided vector)
  f.expect([](A& t) { t.a.stride[0] = 1, t.a.stride[1] = 4; }, inv, "not the descriptor's");
  f.expect([](A& t) { t.b.stride[0] = 6; }, inv, "not the descriptor's");
  f.expect([](A& t) { t.d.stride[0] = 6; }, inv, "not the descriptor's");
  f.expect([](A& t) { t.bias.stride[0] = 2; }, inv, "contiguous");
  f.expect([](A& t) { t.bias_grad.stride[0] = -1; }, inv, "");
  f.expect([](A& t) { t.d.stride[1] = 0; }, inv, "d");  // a broadcast output
  // alignment: one byte off
  f.expect([](A& t) { t.a.data = static_cast<const char*>(t.a.data) + 1; }, ErrorCode::MisalignedOperand, "a");
  f.expect([](A& t) { t.d.data = static_cast<char*>(t.d.data) + 2; }, ErrorCode::MisalignedOperand, "d");
  // null data with elements
  f.expect([](A& t) { t.b.data = nullptr; }, inv, "b");
}

TEST(GemmReject, OptionalOperandsTheDescriptorLacks) {
  Fixture f;
  const GemmDescriptor g = base();
  auto plan = dynamic::GemmPlan::select(Stream::host(), g);
  ASSERT_TRUE(plan.is_ok());
  dynamic::GemmArgs t{f.ok.a, f.ok.b, {}, {}, f.ok.d, {}, {}};
  ASSERT_TRUE(plan->can_implement(t).is_ok());
  for (int which = 0; which < 4; ++which) {
    dynamic::GemmArgs u = t;
    const char* names[] = {"c must be empty", "bias must be empty", "aux must be empty", "bias_grad must be empty"};
    if (which == 0) u.c = f.ok.c;
    if (which == 1) u.bias = f.ok.bias;
    if (which == 2) u.aux = f.ok.aux;
    if (which == 3) u.bias_grad = f.ok.bias_grad;
    expect_code(plan->can_implement(u), ErrorCode::InvalidProblem, names[which]);
    expect_code(plan->run(Stream::host(), {}, u), ErrorCode::InvalidProblem, names[which]);
  }
}

TEST(GemmReject, Aliasing) {
  Fixture f;
  using A = dynamic::GemmArgs;
  const auto inv = ErrorCode::InvalidProblem;
  // d over an input
  f.expect([](A& t) { t.d.data = const_cast<void*>(t.a.data); }, inv, "overlap");
  f.expect([](A& t) { t.d.data = const_cast<void*>(t.b.data); }, inv, "overlap");
  f.expect([](A& t) { t.d.data = static_cast<char*>(const_cast<void*>(t.c.data)) + 4; }, inv, "only exactly");
  f.expect([](A& t) { t.d.data = const_cast<void*>(t.bias.data); }, inv, "overlap");
  f.expect([](A& t) { t.aux.data = const_cast<void*>(t.c.data); }, inv, "overlap");
  f.expect([](A& t) { t.aux.data = t.d.data; }, inv, "overlap");
  f.expect([](A& t) { t.bias_grad.data = const_cast<void*>(t.a.data); }, inv, "overlap");
  f.expect([](A& t) { t.bias_grad.data = t.aux.data; }, inv, "overlap");
  // d exactly c: allowed (same ld and batch stride, which the descriptor's packed C and D have)
  A t = f.ok;
  t.d.data = const_cast<void*>(t.c.data);
  EXPECT_TRUE(f.plan.can_implement(t).is_ok());
  // d exactly c in storage, but with other leading dimensions: rejected
  const GemmDescriptor g = base().with_alpha_beta(1, 1).with_ldc(7).with_ldd(8);
  std::vector<float> c(4 * 8 + 8, 1.0f);
  auto plan = dynamic::GemmPlan::select(Stream::host(), g);
  ASSERT_TRUE(plan.is_ok());
  dynamic::GemmArgs u{
      f.ok.a, f.ok.b, DynTensor::dense(c.data(), F32, Shape{4, 5}), {}, DynTensor::dense(c.data(), F32, Shape{4, 5}),
      {},     {}};
  u.c.stride[0] = 7, u.d.stride[0] = 8;
  expect_code(plan->can_implement(u), inv, "only exactly");
}

// An empty view addresses nothing: its strides are not checked (a transposed [K, 0] tensor is a [0, K] op(A)).
TEST(GemmReject, EmptyViewsTakeAnyStrides) {
  const GemmDescriptor g = base().with_shape(0, 5, 6).with_layouts(MatrixLayout::ColMajor, MatrixLayout::RowMajor);
  auto plan = dynamic::GemmPlan::select(Stream::host(), g);
  ASSERT_TRUE(plan.is_ok());
  std::vector<float> b(30), d(1);
  DynTensor a = DynTensor::dense(nullptr, F32, Shape{0, 6});
  a.stride[0] = 1, a.stride[1] = 0;
  const dynamic::GemmArgs t{
      a, DynTensor::dense(b.data(), F32, Shape{6, 5}), {}, {}, DynTensor::dense(d.data(), F32, Shape{0, 5}), {}, {}};
  EXPECT_TRUE(plan->can_implement(t).is_ok());
  EXPECT_TRUE(plan->run(Stream::host(), {}, t).is_ok());
}

TEST(GemmReject, RunOnAnotherDeviceOrUnselected) {
  Fixture f;
  expect_code(f.plan.run(Stream::sim(), {}, f.ok), ErrorCode::InvalidProblem, "");
  dynamic::GemmPlan unselected;
  expect_code(unselected.run(Stream::host(), {}, f.ok), ErrorCode::InvalidProblem, "did not produce");
}

}  // namespace
}  // namespace baracuda::test::gemm
