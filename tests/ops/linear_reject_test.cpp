// Every rejection of LinearPlan and LinearBackwardPlan: descriptor rules at select (kinds, extents, layouts,
// leading dimensions, no gradient), the GemmPlan's own rules passed on, and at can_implement and run: missing
// operands (the message says "missing"), operands the descriptor does not use, kinds, shapes, leading dimensions
// that differ or do not flatten, strides other than the descriptor's, overlaps, another device's stream, a plan
// select did not make, and (cuda) a workspace too small.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ops/linear_test_support.hpp"
#include "support/devices.hpp"

namespace baracuda::test::linear {
namespace {

constexpr MatrixLayout R = MatrixLayout::RowMajor, C = MatrixLayout::ColMajor;
constexpr ElementKind F16 = ElementKind::F16, F32 = ElementKind::F32;

LinearDescriptor base() {
  return LinearDescriptor{}.with_shape(6, 8, 5).with_kinds(F32, F32).with_bias().with_gradients(true, true, true);
}

void expect_error(const Status& s, ErrorCode code, const std::string& text, const std::string& what) {
  ASSERT_FALSE(s) << what << ": accepted";
  EXPECT_EQ(s.error().code, code) << what << ": " << s.error().to_string();
  EXPECT_NE(s.error().message.find(text), std::string::npos) << what << ": " << s.error().message;
}
template <class T>
void expect_select_error(const Result<T>& r, ErrorCode code, const std::string& text, const std::string& what) {
  ASSERT_FALSE(r) << what << ": selected";
  EXPECT_EQ(r.error().code, code) << what << ": " << r.error().to_string();
  EXPECT_NE(r.error().message.find(text), std::string::npos) << what << ": " << r.error().message;
}

TEST(LinearReject, DescriptorRules) {
  const Stream st = Stream::sim();
  using F = dynamic::LinearPlan;
  using B = dynamic::LinearBackwardPlan;
  const std::pair<ElementKind, ElementKind> bad_kinds[] = {
      {ElementKind::S8, ElementKind::S32}, {F16, ElementKind::Bf16}, {F32, F16}, {ElementKind::F64, F32}};
  for (const auto& [in, out] : bad_kinds) {
    expect_select_error(F::select(st, base().with_kinds(in, out)), ErrorCode::Unsupported, "is not supported", "kinds");
    expect_select_error(B::select(st, base().with_kinds(in, out)), ErrorCode::Unsupported, "is not supported", "kinds");
  }
  expect_select_error(F::select(st, base().with_kinds(static_cast<ElementKind>(200), F32)), ErrorCode::InvalidProblem,
                      "", "an invalid kind");
  expect_select_error(F::select(st, base().with_shape(-1, 8, 5)), ErrorCode::InvalidProblem, ">= 0", "rows < 0");
  expect_select_error(B::select(st, base().with_shape(6, -8, 5)), ErrorCode::InvalidProblem, ">= 0", "K < 0");
  expect_select_error(F::select(st, base().with_shape(int64_t{1} << 40, int64_t{1} << 40, 5)),
                      ErrorCode::InvalidProblem, "2^56", "rows x in_features above 2^56");
  expect_select_error(B::select(st, base().with_shape(5, int64_t{1} << 40, int64_t{1} << 40)),
                      ErrorCode::InvalidProblem, "2^56", "out_features x in_features above 2^56");
  expect_select_error(F::select(st, base().with_x(static_cast<MatrixLayout>(7))), ErrorCode::InvalidProblem,
                      "MatrixLayout", "layout of x");
  expect_select_error(B::select(st, base().with_dy(static_cast<MatrixLayout>(7))), ErrorCode::InvalidProblem,
                      "MatrixLayout", "layout of dy");
  expect_select_error(F::select(st, base().with_activation(static_cast<LinearActivation>(99))),
                      ErrorCode::InvalidProblem, "LinearActivation", "activation");
  expect_select_error(F::select(st, base().with_x(R, 7)), ErrorCode::InvalidProblem, "ld_x", "ld_x < K");
  expect_select_error(F::select(st, base().with_x(C, 5)), ErrorCode::InvalidProblem, "ld_x", "ld_x < rows");
  expect_select_error(F::select(st, base().with_w(R, 7)), ErrorCode::InvalidProblem, "ld_w", "ld_w < K");
  expect_select_error(F::select(st, base().with_ld_y(4)), ErrorCode::InvalidProblem, "ld_y", "ld_y < N");
  expect_select_error(F::select(st, base().with_ld_preactivation(4)), ErrorCode::InvalidProblem, "ld_preactivation",
                      "ld_preactivation < N");
  expect_select_error(B::select(st, base().with_dy(R, 4)), ErrorCode::InvalidProblem, "ld_dy", "ld_dy < N");
  expect_select_error(B::select(st, base().with_ld_dx(7)), ErrorCode::InvalidProblem, "ld_dx", "ld_dx < K");
  expect_select_error(B::select(st, base().with_ld_dw(7)), ErrorCode::InvalidProblem, "ld_dw", "ld_dw < K");
  expect_select_error(B::select(st, base().with_gradients(false, false, false)), ErrorCode::InvalidProblem,
                      "no gradient", "no gradient");
  expect_select_error(B::select(st, base().with_kinds(ElementKind::Bf16, F32).with_activation(LinearActivation::Relu)),
                      ErrorCode::Unsupported, "input == output", "an activation's backward with f32 gradients");
  expect_select_error(B::select(st, base().with_activation(static_cast<LinearActivation>(99))),
                      ErrorCode::InvalidProblem, "LinearActivation", "the backward's activation");
  expect_select_error(
      B::select(st, base().with_activation(LinearActivation::Silu), PlanPreference{}.with_max_workspace_bytes(64)),
      ErrorCode::Unsupported, "max_workspace_bytes", "dz's workspace above the bound");
  // The GemmPlan's own rules come back under the plan's name and the pass's.
  expect_select_error(F::select(st, base().with_kinds(F16, F16).with_tf32()), ErrorCode::InvalidProblem,
                      "LinearPlan: the forward GEMM: ", "tf32 with f16");
  expect_select_error(B::select(st, base().with_kinds(F16, F16).with_tf32()), ErrorCode::InvalidProblem,
                      "LinearBackwardPlan: the dx GEMM: ", "tf32 with f16");
  expect_select_error(F::select(st, base(), PlanPreference{}.with_backend(BackendKind::CublasLt)),
                      ErrorCode::Unsupported, "LinearPlan: the forward GEMM: ", "cuBLASLt on sim");
}

/// A forward and a backward over sim buffers of `base()`'s layer, for mutating.
struct Fixture {
  Stream st = Stream::sim();
  Layer L{base(), {6}, 1};
  Device dev;
  dynamic::LinearPlan fwd;
  dynamic::LinearBackwardPlan bwd;
  Fixture() {
    dev = std::move(Device::of(st, L)).value();
    fwd = std::move(dynamic::LinearPlan::select(st, L.d)).value();
    bwd = std::move(dynamic::LinearBackwardPlan::select(st, L.d)).value();
  }
  void forward_rejects(const dynamic::LinearArgs& a, ErrorCode code, const std::string& text, const std::string& what) {
    expect_error(fwd.can_implement(a), code, text, what);
    expect_error(fwd.run(st, Workspace{}, a), code, text, what + " (run)");
  }
  void backward_rejects(const dynamic::LinearBackwardArgs& a, ErrorCode code, const std::string& text,
                        const std::string& what) {
    expect_error(bwd.can_implement(a), code, text, what);
    expect_error(bwd.run(st, Workspace{}, a), code, text, what + " (run)");
  }
};

TEST(LinearReject, ForwardOperands) {
  Fixture f;
  const dynamic::LinearArgs good = f.dev.forward_args(f.L);
  ASSERT_TRUE(f.fwd.can_implement(good));
  using A = dynamic::LinearArgs;
  constexpr auto I = ErrorCode::InvalidProblem;
  {
    A a = good;
    a.x = {};
    f.forward_rejects(a, I, "x is missing", "x missing");
  }
  {
    A a = good;
    a.w = {};
    f.forward_rejects(a, I, "w is missing", "w missing");
  }
  {
    A a = good;
    a.y = {};
    f.forward_rejects(a, I, "y is missing", "y missing");
  }
  {
    A a = good;
    a.bias = {};
    f.forward_rejects(a, I, "bias is missing", "bias missing");
  }
  {
    A a = good;
    a.preactivation = a.y;
    f.forward_rejects(a, I, "preactivation must be empty", "a pre-activation the descriptor has not");
  }
  {
    A a = good;
    a.x.kind = F16;
    f.forward_rejects(a, I, "element kind", "x of another kind");
  }
  {
    A a = good;
    a.bias.kind = ElementKind::S32;
    f.forward_rejects(a, I, "element kind", "bias of another kind");
  }
  {
    A a = good;
    a.x.shape.dims[1] = 9;
    f.forward_rejects(a, I, "has shape", "x's features");
  }
  {
    A a = good;
    a.x.shape = Shape{2, 3, 8};  // 6 rows, but y has [6] as its leading dimensions
    a.x.stride = {24, 8, 1};
    f.forward_rejects(a, I, "y has shape", "leading dimensions of x and y differ");
  }
  {
    A a = good;
    a.x.shape = Shape{2, 3, 8};
    a.x.stride = {30, 8, 1};  // 30 is not 3 × 8
    a.y.shape = Shape{2, 3, 5};
    a.y.stride = {15, 5, 1};
    f.forward_rejects(a, I, "do not flatten", "leading dimensions that do not flatten");
  }
  {
    A a = good;
    a.x.shape.rank = kMaxRank + 1;  // a view no plan takes (as a fuzzer makes it)
    f.forward_rejects(a, I, "x has shape", "x of rank 9");
  }
  {
    A a = good;
    a.x.stride = {1, 6};  // column-major, the descriptor says row-major
    f.forward_rejects(a, I, "not the descriptor's", "x's strides");
  }
  {
    A a = good;
    a.w.stride = {1, 5};
    f.forward_rejects(a, I, "not the descriptor's", "w's strides");
  }
  {
    A a = good;
    a.bias.stride[0] = 2;
    f.forward_rejects(a, I, "contiguous", "bias strided");
  }
  {
    A a = good;
    a.y.stride[0] = 0;
    f.forward_rejects(a, I, "stride 0", "broadcast y");
  }
  {
    A a = good;
    a.y.data = static_cast<char*>(a.y.data) + 1;
    f.forward_rejects(a, ErrorCode::MisalignedOperand, "aligned", "misaligned y");
  }
  {
    A a = good;
    a.y = DynTensor::dense(const_cast<void*>(a.x.data), F32, Shape{6, 5});
    f.forward_rejects(a, I, "y overlaps x", "y over x");
  }
  {
    A a = good;
    a.y = DynTensor::dense(const_cast<void*>(a.w.data), F32, Shape{6, 5});
    f.forward_rejects(a, I, "y overlaps w", "y over w");
  }
  // Another device's stream; a plan select did not make.
  expect_error(f.fwd.run(Stream::host(), Workspace{}, good), I, "", "another device");
  expect_error(dynamic::LinearPlan{}.run(f.st, Workspace{}, good), I, "", "a default plan");
  expect_error(dynamic::LinearBackwardPlan{}.run(f.st, Workspace{}, f.dev.backward_args(f.L)), I, "",
               "a default backward plan");
}

TEST(LinearReject, BackwardOperands) {
  Fixture f;
  const dynamic::LinearBackwardArgs good = f.dev.backward_args(f.L);
  ASSERT_TRUE(f.bwd.can_implement(good));
  using A = dynamic::LinearBackwardArgs;
  constexpr auto I = ErrorCode::InvalidProblem;
  const char* names[] = {"dy", "x", "w", "dx", "dw", "db"};
  for (int i = 0; i < 6; ++i) {
    A a = good;
    switch (i) {
      case 0:
        a.dy = {};
        break;
      case 1:
        a.x = {};
        break;
      case 2:
        a.w = {};
        break;
      case 3:
        a.dx = {};
        break;
      case 4:
        a.dw = {};
        break;
      default:
        a.db = {};
        break;
    }
    f.backward_rejects(a, I, std::string(names[i]) + " is missing", std::string(names[i]) + " missing");
  }
  // Operands a descriptor without a gradient does not use must be empty.
  {
    auto only_db =
        dynamic::LinearBackwardPlan::select(f.st, LinearDescriptor(f.L.d).with_gradients(false, false, true));
    ASSERT_TRUE(only_db);
    A a = good;
    expect_error(only_db->can_implement(a), I, "x must be empty", "x without grad_weight");
    a.x = {};
    expect_error(only_db->can_implement(a), I, "w must be empty", "w without grad_input");
    a.w = {};
    expect_error(only_db->can_implement(a), I, "dx must be empty", "dx without grad_input");
    a.dx = {};
    expect_error(only_db->can_implement(a), I, "dw must be empty", "dw without grad_weight");
    a.dw = {};
    EXPECT_TRUE(only_db->can_implement(a));
    auto no_db = dynamic::LinearBackwardPlan::select(f.st, LinearDescriptor(f.L.d).with_gradients(true, true, false));
    ASSERT_TRUE(no_db);
    expect_error(no_db->can_implement(good), I, "db must be empty", "db without grad_bias");
  }
  {
    A a = good;
    a.dy.kind = F16;
    f.backward_rejects(a, I, "element kind", "dy of another kind");
  }
  {
    A a = good;
    a.dw.shape = Shape{5, 9};
    f.backward_rejects(a, I, "has shape", "dw's shape");
  }
  {
    A a = good;
    a.dx.shape = Shape{1, 6, 8};  // leading dimensions [1, 6] against dy's [6]
    a.dx.stride = {48, 8, 1};
    f.backward_rejects(a, I, "dx has shape", "dx's leading dimensions");
  }
  {
    A a = good;
    a.dy.stride = {1, 6};
    f.backward_rejects(a, I, "not the descriptor's", "dy's strides");
  }
  {
    A a = good;
    a.dw.stride = {9, 1};
    f.backward_rejects(a, I, "not the descriptor's", "dw's strides");
  }
  {
    A a = good;
    a.db.stride[0] = 0;
    f.backward_rejects(a, I, "stride 0", "broadcast db");
  }
  {
    A a = good;
    a.dx = DynTensor::dense(const_cast<void*>(a.x.data), F32, Shape{6, 8});  // dW would read the dx written
    f.backward_rejects(a, I, "dx overlaps x", "dx over x");
  }
  {
    A a = good;
    a.db = DynTensor::dense(a.dw.data, F32, Shape{5});
    f.backward_rejects(a, I, "db overlaps dw", "db over dw");
  }
  {
    A a = good;
    a.dw = DynTensor::dense(const_cast<void*>(a.dy.data), F32, Shape{5, 8});
    f.backward_rejects(a, I, "dw overlaps dy", "dw over dy");
  }
  expect_error(f.bwd.run(Stream::host(), Workspace{}, good), I, "", "another device");
  {
    A a = good;
    a.preactivation = a.dy;
    f.backward_rejects(a, I, "preactivation must be empty", "a pre-activation without an activation");
  }
}

TEST(LinearReject, ActivationBackwardOperands) {
  const Stream st = Stream::sim();
  const Layer L(LinearDescriptor(base()).with_activation(LinearActivation::GeluTanh).with_preactivation(), {6}, 2);
  auto dev = Device::of(st, L);
  ASSERT_TRUE(dev);
  auto bwd = dynamic::LinearBackwardPlan::select(st, L.d);
  ASSERT_TRUE(bwd) << bwd.error().to_string();
  ASSERT_GT(bwd->workspace_size(), 0u);
  auto ws = Buffer::allocate(st, bwd->workspace_size());
  ASSERT_TRUE(ws);
  const dynamic::LinearBackwardArgs good = dev->backward_args(L);
  EXPECT_TRUE(bwd->can_implement(good));
  constexpr auto I = ErrorCode::InvalidProblem;
  dynamic::LinearBackwardArgs a = good;
  a.preactivation = {};
  expect_error(bwd->can_implement(a), I, "preactivation is missing", "preactivation missing");
  a = good;
  a.preactivation.stride = {1, 6};
  expect_error(bwd->can_implement(a), I, "not the descriptor's", "preactivation's strides");
  a = good;
  a.dx = DynTensor::dense(const_cast<void*>(a.preactivation.data), F32, Shape{6, 8});
  expect_error(bwd->can_implement(a), I, "dx overlaps preactivation", "dx over the pre-activation");
  // The workspace: too small, misaligned, over an operand.
  expect_error(bwd->run(st, Workspace(ws->data(), bwd->workspace_size() - 1), good), ErrorCode::WorkspaceTooSmall,
               "workspace too small", "short workspace");
  expect_error(bwd->run(st, Workspace{}, good), ErrorCode::WorkspaceTooSmall, "workspace too small", "no workspace");
  expect_error(bwd->run(st, Workspace(static_cast<char*>(ws->data()) + 8, bwd->workspace_size() - 8), good),
               ErrorCode::WorkspaceTooSmall, "", "a shorter misaligned workspace");
  EXPECT_TRUE(bwd->run(st, ws->as_workspace(), good));
}

TEST(LinearReject, WorkspaceTooSmallOnCuda) {
  // Host and sim plans take no workspace; a cuBLASLt plan on cuda does.
  BARACUDA_TEST_STREAM(st, DeviceKind::Cuda);
  const Layer L(LinearDescriptor(base()).with_shape(64, 64, 64), {64}, 3);
  auto fwd = dynamic::LinearPlan::select(st, L.d);
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(fwd, DeviceKind::Cuda);
  ASSERT_TRUE(fwd) << fwd.error().to_string();
  auto bwd = dynamic::LinearBackwardPlan::select(st, L.d);
  ASSERT_TRUE(bwd) << bwd.error().to_string();
  if (fwd->workspace_size() == 0 && bwd->workspace_size() == 0) GTEST_SKIP() << "the GEMMs need no workspace here";
  EXPECT_EQ(fwd->workspace_size() % 256, 0u);
  EXPECT_EQ(bwd->workspace_size() % 256, 0u);
  auto dev = Device::of(st, L);
  ASSERT_TRUE(dev);
  auto ws = Buffer::allocate(st, std::max(fwd->workspace_size(), bwd->workspace_size()));
  ASSERT_TRUE(ws);
  if (fwd->workspace_size() > 0)
    expect_error(fwd->run(st, Workspace(ws->data(), fwd->workspace_size() - 1), dev->forward_args(L)),
                 ErrorCode::WorkspaceTooSmall, "workspace too small", "forward");
  if (bwd->workspace_size() > 0)
    expect_error(bwd->run(st, Workspace(ws->data(), bwd->workspace_size() - 1), dev->backward_args(L)),
                 ErrorCode::WorkspaceTooSmall, "workspace too small", "backward");
}

}  // namespace
}  // namespace baracuda::test::linear
