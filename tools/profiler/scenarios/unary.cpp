// The unary family, two scenarios per catalog line (include/baracuda/ops/unary_ops.def):
//   <op>            UnaryPlan: out = f(in)                                       reads 1, writes 1 tensor
//   <op>_backward   UnaryBackwardPlan: dx from dy and the saved x or y           reads 2 (1 when the op saves
//                                                                                nothing), writes 1
// with the op's default parameters (a required parameter, threshold's threshold and value, gets 0). Inputs
// (and the saved operand) are drawn from the op's domain in the tests' table (tests/ops/unary_test_catalog.hpp),
// dy from [-2, 2]. Ops whose tolerance there is `exact` are checked bit for bit against the host device, the
// others within the per-kind tolerance.
// `--op unary` runs every one of them.
#include <baracuda/ops/unary.hpp>

#include <algorithm>

#include "common.hpp"
#include "ops/unary_test_catalog.hpp"
#include "scenarios.hpp"

namespace baracuda::profiler {
namespace {

/// The backward ops' names ("exp_backward"), static text like the forward names.
constexpr std::string_view kBackwardNames[] = {
#define BARACUDA_UNARY_OP(name, Enum, params, saved, types, doc) #name "_backward",
#include <baracuda/ops/unary_ops.def>
#undef BARACUDA_UNARY_OP
};
static_assert(std::size(kBackwardNames) == kNumUnaryKinds);

// Problem::variant: the op's index, + kBackward for its backward.
constexpr uint32_t kBackward = 1000;
UnaryKind op_of(const Problem& p) { return static_cast<UnaryKind>(p.variant % kBackward); }
bool is_backward(const Problem& p) { return p.variant >= kBackward; }

UnaryDescriptor descriptor(const Problem& p) {
  UnaryDescriptor d = UnaryDescriptor().with_kind(op_of(p)).with_element(p.dtype).with_shape(p.shape);
  // The catalog's parameter string: an item without "=default" is required; give it 0.
  std::string_view spec = unary_op_info(d.kind).params;
  while (!spec.empty()) {
    const size_t end = std::min(spec.find(' '), spec.size());
    const std::string_view item = spec.substr(0, end);
    spec.remove_prefix(std::min(end + 1, spec.size()));
    if (item.empty() || item.find('=') != std::string_view::npos) continue;
    const std::string_view name = item.substr(0, item.find_first_not_of("abcdefghijklmnopqrstuvwxyz_"));
    for (size_t i = 0; i < kNumUnaryParams; ++i)
      if (name == to_string(static_cast<UnaryParam>(i))) d.with_parameter(static_cast<UnaryParam>(i), 0.0);
  }
  return d;
}

ValueRange domain_of(const Problem& p) {
  const test::UnaryDomain d = test::unary_test_info(op_of(p)).domain;
  return ValueRange{d.lo, d.hi, false};
}

Result<KernelSku> select_sku(const Stream& s, const Problem& p) {
  if (is_backward(p)) return sku_of(dynamic::UnaryBackwardPlan::select(s, descriptor(p)));
  return sku_of(dynamic::UnaryPlan::select(s, descriptor(p)));
}

Result<std::unique_ptr<Instance>> prepare(const Stream& s, const Problem& p) {
  const OperandSpec out{p.dtype, p.shape, {}};
  if (is_backward(p)) {
    auto plan = dynamic::UnaryBackwardPlan::select(s, descriptor(p));
    if (!plan) return plan.error();
    const OperandSpec dy{p.dtype, p.shape, ValueRange{-2, 2, false}};
    const OperandSpec saved{p.dtype, p.shape, domain_of(p)};  // allocated even when the op reads nothing
    return PlanInstance<dynamic::UnaryBackwardPlan, 2, 1>::make(s, std::move(plan).value(), p, {dy, saved}, {out});
  }
  auto plan = dynamic::UnaryPlan::select(s, descriptor(p));
  if (!plan) return plan.error();
  return PlanInstance<dynamic::UnaryPlan, 1, 1>::make(s, std::move(plan).value(), p,
                                                      {OperandSpec{p.dtype, p.shape, domain_of(p)}}, {out});
}

/// The bytes the op must move: in and out; dy, the saved operand (if it reads one) and dx.
Traffic traffic(const Problem& p) {
  const double n = static_cast<double>(storage_bytes(p.dtype, p.shape.numel()));
  if (!is_backward(p)) return Traffic{2 * n, 0};
  return Traffic{(unary_op_info(op_of(p)).saved == UnarySaved::None ? 2 : 3) * n, 0};
}

std::vector<Problem> kinds(uint32_t variant) {
  return {{ElementKind::F32, ElementKind::F32, {}, false, variant},
          {ElementKind::Bf16, ElementKind::Bf16, {}, false, variant}};
}

/// One small odd shape on host/sim (112 scenarios: the CTest suites stay quick); the elementwise LLM
/// shapes on cuda. A large MLP activation: --op gelu_tanh --dtype bf16 --shape 8192x11008.
std::vector<Shape> shapes(DeviceKind device) {
  if (device == DeviceKind::Cuda) return elementwise_shapes(device);
  return {Shape{61, 67}};
}

constexpr ScenarioFamily kUnaryFamily{"unary", select_sku, prepare, traffic, kinds, shapes};

Scenario make(std::string_view name, std::string_view summary, uint32_t variant, bool exact) {
  Scenario s = kUnaryFamily.op(name, summary, variant);
  s.comparison = exact ? Comparison::Exact : Comparison::Tolerance;
  return s;
}

}  // namespace

void add_unary_scenarios(std::vector<Scenario>& out) {
  for (uint32_t i = 0; i < kNumUnaryKinds; ++i) {
    const UnaryOpInfo& info = kUnaryOps[i];
    out.push_back(make(info.name, info.doc, i, test::is_exact(test::unary_test_info(info.kind).fwd_tol)));
  }
  for (uint32_t i = 0; i < kNumUnaryKinds; ++i)
    out.push_back(make(kBackwardNames[i], "dx from dy and the saved operand the catalog names", kBackward + i,
                       test::is_exact(test::unary_test_info(kUnaryOps[i].kind).bwd_tol)));
}

}  // namespace baracuda::profiler
