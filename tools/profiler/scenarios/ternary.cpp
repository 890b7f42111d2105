// The ternary family, one scenario per catalog op (BARACUDA_TERNARY_OPS in include/baracuda/ops/ternary.hpp):
//   <op>             TernaryPlan, a, b, c of the problem's shape                 reads 3, writes 1 tensor
//   <op>_backward    TernaryBackwardPlan: dy, a, b, c -> da, db, dc              reads 4, writes 3
//   clamp_bounds     clamp with scalar (shape []) bounds, the common torch.clamp(x, lo, hi) reads 1, writes 1
//   where            WherePlan: cond (Bool), a, b -> out                          reads 2 + cond, writes 1
//   where_backward   WhereBackwardPlan: cond, dy -> da, db                        reads 1 + cond, writes 2
// Inputs are drawn from [-4, 4] (addcdiv's divisor from [0.5, 4], lerp's weight from [-1.5, 1.5]). Every op is
// a fixed sequence of correctly rounded operations, so every device is checked bit for bit against the host.
#include <baracuda/ops/ternary.hpp>

#include "common.hpp"
#include "scenarios.hpp"

namespace baracuda::profiler {
namespace {

struct OpRow {
  TernaryOp op;
  std::string_view name;
  std::string_view backward_name;
  std::string_view summary;
  bool integers;  ///< the catalog lists integer kinds for it
};
constexpr OpRow kOps[] = {
#define BARACUDA_PROFILER_TERNARY(Enum, name, types, doc) \
  {TernaryOp::Enum, #name, #name "_backward", doc, type_list_contains<types, int32_t>::value},
    BARACUDA_TERNARY_OPS(BARACUDA_PROFILER_TERNARY)
#undef BARACUDA_PROFILER_TERNARY
};

// Problem::variant: which plan and which op.
constexpr uint32_t kForward = 0, kBackward = 100, kClampBounds = 200, kWhere = 300, kWhereBackward = 400;
uint32_t group_of(uint32_t v) { return v - v % 100; }
const OpRow& row_of(uint32_t v) { return group_of(v) == kClampBounds ? kOps[0] : kOps[v % 100]; }

/// The shapes of a, b, c (where: cond, a, b).
std::array<Shape, 3> shapes_of(const Problem& p) {
  if (p.variant == kClampBounds) return {p.shape, Shape{}, Shape{}};
  return {p.shape, p.shape, p.shape};
}

TernaryDescriptor ternary_descriptor(const Problem& p) {
  const auto s = shapes_of(p);
  const TernaryOp op = row_of(p.variant).op;
  const double value = op == TernaryOp::Addcmul || op == TernaryOp::Addcdiv ? -0.5 : 1.0;
  return TernaryDescriptor().with_op(op).with_element(p.dtype).with_shapes(s[0], s[1], s[2]).with_value(value);
}

WhereDescriptor where_descriptor(const Problem& p) {
  return WhereDescriptor().with_element(p.dtype).with_shape(p.shape);
}

/// The range operand i (0: a, 1: b, 2: c) is drawn from.
ValueRange range_of(const Problem& p, int i) {
  if (is_integral(p.dtype)) return input_range(p.dtype, p.dtype);
  const TernaryOp op = row_of(p.variant).op;
  if (op == TernaryOp::Addcdiv && i == 2) return ValueRange{0.5, 4, false};
  if (op == TernaryOp::Lerp && i == 2) return ValueRange{-1.5, 1.5, false};
  if (op == TernaryOp::Clamp && i > 0) return ValueRange{i == 1 ? -3.0 : -1.0, i == 1 ? 1.0 : 3.0, false};
  return ValueRange{-4, 4, false};
}

Result<KernelSku> select_sku(const Stream& s, const Problem& p) {
  switch (group_of(p.variant)) {
    case kBackward:
      return sku_of(dynamic::TernaryBackwardPlan::select(s, ternary_descriptor(p)));
    case kWhere:
      return sku_of(dynamic::WherePlan::select(s, where_descriptor(p)));
    case kWhereBackward:
      return sku_of(dynamic::WhereBackwardPlan::select(s, where_descriptor(p)));
    default:
      return sku_of(dynamic::TernaryPlan::select(s, ternary_descriptor(p)));
  }
}

Result<std::unique_ptr<Instance>> prepare(const Stream& s, const Problem& p) {
  const auto sh = shapes_of(p);
  const OperandSpec a{p.dtype, sh[0], range_of(p, 0)}, b{p.dtype, sh[1], range_of(p, 1)},
      c{p.dtype, sh[2], range_of(p, 2)};
  const OperandSpec out{p.dtype, p.shape, {}};
  const OperandSpec dy{p.dtype, p.shape, ValueRange{-2, 2, false}};
  const OperandSpec cond{ElementKind::Bool, p.shape, ValueRange{0, 1, true}};
  switch (group_of(p.variant)) {
    case kBackward: {
      auto plan = dynamic::TernaryBackwardPlan::select(s, ternary_descriptor(p));
      if (!plan) return plan.error();
      return PlanInstance<dynamic::TernaryBackwardPlan, 4, 3>::make(s, std::move(plan).value(), p, {dy, a, b, c},
                                                                   {out, out, out});
    }
    case kWhere: {
      auto plan = dynamic::WherePlan::select(s, where_descriptor(p));
      if (!plan) return plan.error();
      return PlanInstance<dynamic::WherePlan, 3, 1>::make(s, std::move(plan).value(), p, {cond, a, b}, {out});
    }
    case kWhereBackward: {
      auto plan = dynamic::WhereBackwardPlan::select(s, where_descriptor(p));
      if (!plan) return plan.error();
      return PlanInstance<dynamic::WhereBackwardPlan, 2, 2>::make(s, std::move(plan).value(), p, {cond, dy},
                                                                 {out, out});
    }
    default: {
      auto plan = dynamic::TernaryPlan::select(s, ternary_descriptor(p));
      if (!plan) return plan.error();
      return PlanInstance<dynamic::TernaryPlan, 3, 1>::make(s, std::move(plan).value(), p, {a, b, c}, {out});
    }
  }
}

Traffic traffic(const Problem& p) {
  const double n = static_cast<double>(storage_bytes(p.dtype, p.shape.numel()));
  const double bools = static_cast<double>(p.shape.numel());
  switch (group_of(p.variant)) {
    case kBackward:
      return Traffic{7 * n, 0};  // dy, a, b, c in; da, db, dc out
    case kClampBounds:
      return Traffic{2 * n, 0};
    case kWhere:
      return Traffic{3 * n + bools, 0};
    case kWhereBackward:
      return Traffic{3 * n + bools, 0};
    default:
      return Traffic{4 * n, 0};
  }
}


constexpr ScenarioFamily kTernaryFamily{"ternary", select_sku, prepare, traffic, nullptr, elementwise_shapes};

Scenario make(std::string_view name, std::string_view summary, uint32_t variant,
              std::vector<Problem> (*kinds)(uint32_t)) {
  Scenario s = kTernaryFamily.op(name, summary, variant);
  s.default_kinds = kinds;
  return s;
}

}  // namespace

void add_ternary_scenarios(std::vector<Scenario>& out) {
  for (uint32_t i = 0; i < std::size(kOps); ++i)
    out.push_back(
        make(kOps[i].name, kOps[i].summary, kForward + i, kOps[i].integers ? float_and_int_kinds : float_kinds));
  out.push_back(make("clamp_bounds", "clamp with scalar (shape []) bounds, as torch.clamp(x, lo, hi)", kClampBounds,
                     float_kinds));
  for (uint32_t i = 0; i < std::size(kOps); ++i)
    out.push_back(make(kOps[i].backward_name, "da, db and dc of the op at the output shape, from dy, a, b, c",
                       kBackward + i, float_kinds));
  out.push_back(make("where", "out = cond ? a : b (cond Bool)", kWhere, float_and_int_kinds));
  out.push_back(make("where_backward", "da = cond ? dy : 0, db = cond ? 0 : dy", kWhereBackward, float_kinds));
}

}  // namespace baracuda::profiler
