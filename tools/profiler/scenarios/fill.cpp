// FillPlan: every element kind; the default suite covers one of each storage width.
#include "common.hpp"
#include "scenarios.hpp"

namespace baracuda::profiler {
namespace {

/// A value every kind can hold exactly.
Scalar fill_value(ElementKind k) {
  if (k == ElementKind::Bool) return Scalar(true);
  if (k == ElementKind::S4) return Scalar(-3);
  if (is_integral(k)) return Scalar(7);
  return Scalar(1.5);
}

Result<dynamic::FillPlan> select_plan(const Stream& s, const Problem& p) {
  return dynamic::FillPlan::select(
      s, FillDescriptor().with_element(p.dtype).with_shape(p.shape).with_value(fill_value(p.dtype)));
}

OperandSpecs<0, 1> operands(const Problem& p) { return {{}, {OperandSpec{p.dtype, p.shape, {}}}}; }

Traffic traffic(const Problem& p) { return Traffic{static_cast<double>(storage_bytes(p.dtype, p.shape.numel())), 0}; }

std::vector<Problem> kinds(uint32_t) {
  using K = ElementKind;
  return same_kinds({K::F32, K::Bf16, K::Fp8E4M3, K::S8, K::S64, K::U4});
}

constexpr ScenarioFamily kFill{"fill", select_with<select_plan>, prepare_with<select_plan, operands>, traffic, kinds,
                               elementwise_shapes};

}  // namespace

void add_fill_scenarios(std::vector<Scenario>& out) { out.push_back(kFill.op("fill", "out = value (Tensor.fill_)")); }

}  // namespace baracuda::profiler
