// GroupedGemmPlan: every rejection of select (kinds, offsets kind, group count, shape limits, backend
// preference), can_implement and run (missing operands, kinds, shapes, strides, alignment, aliasing, a stream of
// another device). Each rejected run writes nothing.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "baracuda/ops/grouped_gemm.hpp"
#include "support/expect_error.hpp"

namespace baracuda::test {
namespace {

constexpr ElementKind F16 = ElementKind::F16, Bf16 = ElementKind::Bf16, F32 = ElementKind::F32, S32 = ElementKind::S32,
                      S64 = ElementKind::S64;
constexpr std::string_view P = "GroupedGemmPlan";

void expect_code(const Status& s, ErrorCode code, const std::string& needle) {
  expect_error_naming(s, code, P, needle);
}
void expect_select(const GroupedGemmDescriptor& g, ErrorCode code, const std::string& needle,
                   PlanPreference pref = {}) {
  expect_code(dynamic::GroupedGemmPlan::select(Stream::host(), g, pref).status(), code, needle);
}

// E = 2, total_M = 6, N = 4, K = 8, f16 -> f32 with bias, s64 offsets.
GroupedGemmDescriptor base() {
  return GroupedGemmDescriptor{}.with_shape(2, 6, 4, 8).with_kinds(F16, F32).with_offsets_kind(S64).with_bias();
}

TEST(GroupedGemmReject, SelectKinds) {
  for (auto [in, out] : {std::pair{F16, Bf16},
                         {Bf16, F16},
                         {F32, F16},
                         {F32, Bf16},
                         {F16, ElementKind::F64},
                         {ElementKind::F64, ElementKind::F64},
                         {ElementKind::S8, ElementKind::S32}})
    expect_select(base().with_kinds(in, out), ErrorCode::Unsupported, "is not supported");
  for (ElementKind k : {ElementKind::U32, ElementKind::S8, F32, ElementKind::U8})
    expect_select(base().with_offsets_kind(k), ErrorCode::Unsupported, "offsets must be s32 or s64");
  GroupedGemmDescriptor bad = base();
  bad.input = static_cast<ElementKind>(200);
  expect_select(bad, ErrorCode::InvalidProblem, "");
  bad = base();
  bad.offsets = static_cast<ElementKind>(201);
  expect_select(bad, ErrorCode::InvalidProblem, "");
  for (auto [in, out] : {std::pair{F16, F16}, {F16, F32}, {Bf16, Bf16}, {Bf16, F32}, {F32, F32}})
    for (ElementKind ok : {S32, S64})
      EXPECT_TRUE(dynamic::GroupedGemmPlan::select(Stream::host(), base().with_kinds(in, out).with_offsets_kind(ok)));
}

TEST(GroupedGemmReject, SelectShapes) {
  expect_select(base().with_shape(0, 6, 4, 8), ErrorCode::InvalidProblem, "E must be >= 1");
  expect_select(base().with_shape(-3, 6, 4, 8), ErrorCode::InvalidProblem, "E must be >= 1");
  expect_select(base().with_shape(1025, 6, 4, 8), ErrorCode::Unsupported, "at most 1024 groups");
  EXPECT_TRUE(dynamic::GroupedGemmPlan::select(Stream::host(), base().with_shape(1024, 6, 4, 8)));
  expect_select(base().with_shape(2, -1, 4, 8), ErrorCode::InvalidProblem, ">= 0");
  expect_select(base().with_shape(2, 6, -4, 8), ErrorCode::InvalidProblem, ">= 0");
  expect_select(base().with_shape(2, 6, 4, -8), ErrorCode::InvalidProblem, ">= 0");
  expect_select(base().with_shape(2, int64_t{1} << 31, 4, 8), ErrorCode::InvalidProblem, "below 2^31 - 256");
  expect_select(base().with_shape(2, 6, 4, (int64_t{1} << 31) - 255), ErrorCode::InvalidProblem, "below 2^31");
  expect_select(base().with_shape(2, 6, 65535 * 64 + 1, 8), ErrorCode::InvalidProblem, "65535 * 64");
  expect_select(base().with_shape(1024, 6, 65535 * 64, int64_t{1} << 30), ErrorCode::InvalidProblem, "2^56");
  expect_select(base().with_shape(2, int64_t{1} << 30, 4, int64_t{1} << 30), ErrorCode::InvalidProblem, "2^56");
}

TEST(GroupedGemmReject, SelectBackend) {
  expect_other_backend_unsupported<dynamic::GroupedGemmPlan>(Stream::host(), base(), BackendKind::CublasLt, P);
  expect_other_backend_unsupported<dynamic::GroupedGemmPlan>(Stream::sim(), base(), BackendKind::Host, P);
  expect_typed_plans_reject<GroupedGemmPlan<__half, __half, int64_t>, GroupedGemmPlan<__half, float, int32_t>,
                            GroupedGemmPlan<__nv_bfloat16, float, int64_t>>(base(), P);
}

/// Host operands of base(): x [6, 8], w [2, 4, 8], offsets [3], bias [2, 4], y [6, 4], in one 16-byte aligned
/// buffer each.
struct Operands {
  std::vector<uint64_t> xs = std::vector<uint64_t>(64), ws = std::vector<uint64_t>(64), os = {0, 2, 6, 0},
                        bs = std::vector<uint64_t>(8), ys = std::vector<uint64_t>(32);
  dynamic::GroupedGemmArgs args() {
    dynamic::GroupedGemmArgs a;
    a.x = ConstDynTensor::dense(xs.data(), F16, Shape{6, 8});
    a.w = ConstDynTensor::dense(ws.data(), F16, Shape{2, 4, 8});
    a.offsets = ConstDynTensor::dense(os.data(), S64, Shape{3});
    a.bias = ConstDynTensor::dense(bs.data(), F32, Shape{2, 4});
    a.y = DynTensor::dense(reinterpret_cast<float*>(ys.data()), F32, Shape{6, 4});
    return a;
  }
  std::span<float> y() { return {reinterpret_cast<float*>(ys.data()), 24}; }
};

TEST(GroupedGemmReject, CanImplementAndRun) {
  auto plan = dynamic::GroupedGemmPlan::select(Stream::host(), base());
  ASSERT_TRUE(plan);
  Operands o;
  ASSERT_TRUE(plan->can_implement(o.args()));
  ASSERT_TRUE(plan->run(Stream::host(), {}, o.args()));
  auto reject = [&](const dynamic::GroupedGemmArgs& a, ErrorCode code, const std::string& needle) {
    expect_code(plan->can_implement(a), code, needle);
    std::fill(o.y().begin(), o.y().end(), 7.0f);
    expect_code(plan->run(Stream::host(), {}, a), code, needle);
    for (float f : o.y()) EXPECT_EQ(f, 7.0f) << "run wrote despite the rejection (" << needle << ")";
  };
  // Missing operands: the message says "missing".
  for (int which = 0; which < 5; ++which) {
    auto a = o.args();
    if (which == 0) a.x = {};
    if (which == 1) a.w = {};
    if (which == 2) a.offsets = {};
    if (which == 3) a.bias = {};
    if (which == 4) a.y = {};
    const char* names[] = {"x", "w", "offsets", "bias", "y"};
    expect_code(plan->can_implement(a), ErrorCode::InvalidProblem, "missing");
    expect_code(plan->can_implement(a), ErrorCode::InvalidProblem, names[which]);
  }
  // A bias the descriptor does not have.
  {
    auto nobias = dynamic::GroupedGemmPlan::select(Stream::host(), base().with_bias(false));
    ASSERT_TRUE(nobias);
    expect_code(nobias->can_implement(o.args()), ErrorCode::InvalidProblem, "bias must be empty");
  }
  // Kinds.
  {
    auto a = o.args();
    a.x.kind = Bf16;
    reject(a, ErrorCode::InvalidProblem, "x");
    a = o.args();
    a.w.kind = Bf16;
    reject(a, ErrorCode::InvalidProblem, "w");
    a = o.args();
    a.offsets.kind = S32;
    reject(a, ErrorCode::InvalidProblem, "offsets");
    a = o.args();
    a.bias.kind = F16;
    reject(a, ErrorCode::InvalidProblem, "bias");
  }
  // Shapes.
  {
    auto a = o.args();
    a.x = ConstDynTensor::dense(o.xs.data(), F16, Shape{5, 8});
    reject(a, ErrorCode::InvalidProblem, "x");
    a = o.args();
    a.w = ConstDynTensor::dense(o.ws.data(), F16, Shape{2, 8, 4});
    reject(a, ErrorCode::InvalidProblem, "w");
    a = o.args();
    a.w = ConstDynTensor::dense(o.ws.data(), F16, Shape{8, 8});
    reject(a, ErrorCode::InvalidProblem, "w");
    a = o.args();
    a.offsets = ConstDynTensor::dense(o.os.data(), S64, Shape{2});
    reject(a, ErrorCode::InvalidProblem, "offsets");
    a = o.args();
    a.offsets = ConstDynTensor::dense(o.os.data(), S64, Shape{1, 3});
    reject(a, ErrorCode::InvalidProblem, "offsets");
    a = o.args();
    a.bias = ConstDynTensor::dense(o.bs.data(), F32, Shape{4});
    reject(a, ErrorCode::InvalidProblem, "bias");
    a = o.args();
    a.y = DynTensor::dense(reinterpret_cast<float*>(o.ys.data()), F32, Shape{6, 3});
    reject(a, ErrorCode::InvalidProblem, "y");
  }
  // Strides: unit along the last dimension, non-negative elsewhere, contiguous offsets, y's rows apart.
  {
    auto a = o.args();
    a.x.stride[1] = 2;
    reject(a, ErrorCode::InvalidProblem, "x must have unit stride along K");
    a = o.args();
    a.w.stride[2] = 2;
    a.w.stride[1] = 16, a.w.stride[0] = 64;
    reject(a, ErrorCode::InvalidProblem, "w must have unit stride along K");
    a = o.args();
    a.x.stride[0] = -8;
    reject(a, ErrorCode::InvalidProblem, "non-negative");
    a = o.args();
    a.w.stride[0] = -32;
    reject(a, ErrorCode::InvalidProblem, "non-negative");
    a = o.args();
    a.bias.stride[1] = 2;
    reject(a, ErrorCode::InvalidProblem, "bias must have unit stride along N");
    a = o.args();
    a.offsets.stride[0] = -1;
    reject(a, ErrorCode::InvalidProblem, "offsets");
    a = o.args();
    a.offsets.stride[0] = 2;
    a.offsets.data = o.os.data();
    reject(a, ErrorCode::InvalidProblem, "offsets must be contiguous");
    a = o.args();
    a.y.stride[0] = 3;
    reject(a, ErrorCode::InvalidProblem, "rows would overlap");
    a = o.args();
    a.y.stride[0] = 0;
    reject(a, ErrorCode::InvalidProblem, "y");
  }
  // Alignment: a pointer not aligned to its element.
  {
    auto a = o.args();
    a.x.data = reinterpret_cast<const uint8_t*>(o.xs.data()) + 1;
    reject(a, ErrorCode::MisalignedOperand, "x");
    a = o.args();
    a.offsets.data = reinterpret_cast<const uint8_t*>(o.os.data()) + 4;
    reject(a, ErrorCode::MisalignedOperand, "offsets");
    a = o.args();
    a.bias.data = reinterpret_cast<const uint8_t*>(o.bs.data()) + 2;
    reject(a, ErrorCode::MisalignedOperand, "bias");
  }
  // Null data with elements.
  {
    auto a = o.args();
    a.w.data = nullptr;
    reject(a, ErrorCode::InvalidProblem, "w");
  }
  // Overlap: y over each input.
  {
    auto a = o.args();
    a.x = ConstDynTensor::dense(o.ys.data(), F16, Shape{6, 8});
    expect_code(plan->can_implement(a), ErrorCode::InvalidProblem, "overlap");
    a = o.args();
    a.w = ConstDynTensor::dense(o.ys.data(), F16, Shape{2, 4, 8});
    expect_code(plan->can_implement(a), ErrorCode::InvalidProblem, "overlap");
    a = o.args();
    a.bias = ConstDynTensor::dense(o.ys.data() + 4, F32, Shape{2, 4});
    expect_code(plan->can_implement(a), ErrorCode::InvalidProblem, "overlap");
    a = o.args();
    a.offsets = ConstDynTensor::dense(o.ys.data() + 2, S64, Shape{3});
    expect_code(plan->can_implement(a), ErrorCode::InvalidProblem, "overlap");
  }
  // A stream of another device.
  expect_code(plan->run(Stream::sim(), {}, o.args()), ErrorCode::InvalidProblem, "");
}

}  // namespace
}  // namespace baracuda::test
