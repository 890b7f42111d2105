// The binary family, one scenario per catalog line (include/baracuda/ops/binary_ops.def):
//   <op>            BinaryPlan, a and b of the problem's shape                 reads 2, writes 1 tensor
//   <op>_backward   BinaryBackwardPlan: dy, a, b -> da, db                     reads 3, writes 2
//   <cmp>           ComparePlan (eq, ne, ...) -> Bool                          reads 2, writes 1 byte each
//   add_bcast       BinaryPlan add with b = [last dim] broadcast over the rows (a bias add)
// Inputs are drawn from [-4, 4] (pow: a positive base in [1/16, 4]) for floats, the profiler's integer
// range for integers. The ops the tests' table (tests/ops/binary_test_catalog.hpp) marks `Bitwise`, integers
// and comparisons are checked bit for bit against the host device; pow, atan2, hypot and every backward
// within the per-kind tolerance.
#include <baracuda/ops/binary.hpp>

#include "common.hpp"
#include "ops/binary_test_catalog.hpp"
#include "scenarios.hpp"

namespace baracuda::profiler {
namespace {

struct OpRow {
  BinaryOp op;
  std::string_view name;
  std::string_view backward_name;
  std::string_view summary;
  bool integers;  ///< the catalog lists integer kinds for it
  bool bitwise;   ///< devices agree with the host bit for bit (tests/ops/binary_test_catalog.hpp)
  bool backward;
};
constexpr OpRow kOps[] = {
#define BARACUDA_BINARY_OP(Enum, name, types, has_bwd, doc)                                                     \
  {BinaryOp::Enum, #name, #name "_backward", doc, type_list_contains<types, int32_t>::value,                    \
   test::binary_test_info(BinaryOp::Enum).agreement == test::BinaryAgreement::Bitwise, has_bwd},
#include <baracuda/ops/binary_ops.def>
#undef BARACUDA_BINARY_OP
};

struct CompareRow {
  CompareOp op;
  std::string_view name;
  std::string_view summary;
};
constexpr CompareRow kCompares[] = {
#define BARACUDA_COMPARE_OP(Enum, name, types, doc) {CompareOp::Enum, #name, doc},
#include <baracuda/ops/binary_ops.def>
#undef BARACUDA_COMPARE_OP
};

// Problem::variant: which plan and which op.
constexpr uint32_t kForward = 0, kBackward = 100, kCompare = 200, kBiasAdd = 300;
uint32_t group_of(uint32_t v) { return v - v % 100; }
uint32_t index_of(uint32_t v) { return v % 100; }

/// b's shape: the problem's, or its last dimension alone for the bias add.
Shape b_shape(const Problem& p) {
  if (p.variant != kBiasAdd || p.shape.rank == 0) return p.shape;
  return Shape{p.shape.dims[p.shape.rank - 1]};
}

BinaryDescriptor binary_descriptor(const Problem& p) {
  const BinaryOp op = p.variant == kBiasAdd ? BinaryOp::Add : kOps[index_of(p.variant)].op;
  return BinaryDescriptor().with_op(op).with_element(p.dtype).with_shapes(p.shape, b_shape(p));
}

CompareDescriptor compare_descriptor(const Problem& p) {
  return CompareDescriptor().with_op(kCompares[index_of(p.variant)].op).with_element(p.dtype).with_shape(p.shape);
}

/// The values a and b are drawn from.
std::pair<ValueRange, ValueRange> ranges(const Problem& p) {
  if (is_integral(p.dtype)) return {input_range(p.dtype, p.dtype), input_range(p.dtype, p.dtype)};
  const bool pow = (group_of(p.variant) == kForward || group_of(p.variant) == kBackward) &&
                   kOps[index_of(p.variant)].op == BinaryOp::Pow && p.variant != kBiasAdd;
  if (pow) return {ValueRange{0.0625, 4, false}, ValueRange{-3, 3, false}};
  return {ValueRange{-4, 4, false}, ValueRange{-4, 4, false}};
}

Result<KernelSku> select_sku(const Stream& s, const Problem& p) {
  switch (group_of(p.variant)) {
    case kBackward:
      return sku_of(dynamic::BinaryBackwardPlan::select(s, binary_descriptor(p)));
    case kCompare:
      return sku_of(dynamic::ComparePlan::select(s, compare_descriptor(p)));
    default:
      return sku_of(dynamic::BinaryPlan::select(s, binary_descriptor(p)));
  }
}

Result<std::unique_ptr<Instance>> prepare(const Stream& s, const Problem& p) {
  const auto [ra, rb] = ranges(p);
  const OperandSpec a{p.dtype, p.shape, ra};
  const OperandSpec b{p.dtype, b_shape(p), rb};
  switch (group_of(p.variant)) {
    case kBackward: {
      auto plan = dynamic::BinaryBackwardPlan::select(s, binary_descriptor(p));
      if (!plan) return plan.error();
      const OperandSpec dy{p.dtype, p.shape, ValueRange{-2, 2, false}};
      return PlanInstance<dynamic::BinaryBackwardPlan, 3, 2>::make(
          s, std::move(plan).value(), p, {dy, a, b}, {OperandSpec{p.dtype, p.shape, {}}, OperandSpec{p.dtype, p.shape, {}}});
    }
    case kCompare: {
      auto plan = dynamic::ComparePlan::select(s, compare_descriptor(p));
      if (!plan) return plan.error();
      return PlanInstance<dynamic::ComparePlan, 2, 1>::make(s, std::move(plan).value(), p, {a, b},
                                                           {OperandSpec{ElementKind::Bool, p.shape, {}}});
    }
    default: {
      auto plan = dynamic::BinaryPlan::select(s, binary_descriptor(p));
      if (!plan) return plan.error();
      return PlanInstance<dynamic::BinaryPlan, 2, 1>::make(s, std::move(plan).value(), p, {a, b},
                                                          {OperandSpec{p.dtype, p.shape, {}}});
    }
  }
}

Traffic traffic(const Problem& p) {
  const double n = static_cast<double>(storage_bytes(p.dtype, p.shape.numel()));
  const double nb = static_cast<double>(storage_bytes(p.dtype, b_shape(p).numel()));
  switch (group_of(p.variant)) {
    case kBackward:
      return Traffic{5 * n, 0};  // dy, a, b in; da, db out
    case kCompare:
      return Traffic{2 * n + static_cast<double>(p.shape.numel()), 0};
    default:
      return Traffic{2 * n + nb, 0};
  }
}

std::vector<Problem> compare_kinds(uint32_t variant) {
  return {{ElementKind::F32, ElementKind::Bool, {}, false, variant},
          {ElementKind::S32, ElementKind::Bool, {}, false, variant}};
}

constexpr ScenarioFamily kBinaryFamily{"binary", select_sku, prepare, traffic, nullptr, elementwise_shapes};

Scenario make(std::string_view name, std::string_view summary, uint32_t variant, OutputKind output,
              Comparison comparison, std::vector<Problem> (*kinds)(uint32_t)) {
  Scenario s = kBinaryFamily.op(name, summary, variant);
  s.default_kinds = kinds, s.output = output, s.comparison = comparison;
  return s;
}

}  // namespace

void add_binary_scenarios(std::vector<Scenario>& out) {
  for (uint32_t i = 0; i < std::size(kOps); ++i) {
    const OpRow& r = kOps[i];
    out.push_back(make(r.name, r.summary, kForward + i, OutputKind::SameAsInput,
                       r.bitwise ? Comparison::Exact : Comparison::Tolerance,
                       r.integers ? float_and_int_kinds : float_kinds));
  }
  out.push_back(make("add_bcast", "a + b with b = [last dim] broadcast over the rows (a bias add)", kBiasAdd,
                     OutputKind::SameAsInput, Comparison::Exact, float_kinds));
  for (uint32_t i = 0; i < std::size(kOps); ++i)
    if (kOps[i].backward)
      out.push_back(make(kOps[i].backward_name, "da and db of the op at the output shape, from dy, a, b",
                         kBackward + i, OutputKind::SameAsInput, Comparison::Tolerance, float_kinds));
  for (uint32_t i = 0; i < std::size(kCompares); ++i)
    out.push_back(make(kCompares[i].name, kCompares[i].summary, kCompare + i, OutputKind::Bool, Comparison::Exact,
                       compare_kinds));
}

}  // namespace baracuda::profiler
