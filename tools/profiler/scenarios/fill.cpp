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

constexpr Scenario kFill{
    .name = "fill",
    .family = "fill",
    .summary = "out = value (Tensor.fill_)",
    .output = OutputKind::SameAsInput,
    .comparison = Comparison::Exact,
    .default_kinds =
        [](uint32_t) {
          std::vector<Problem> r;
          for (ElementKind k : {ElementKind::F32, ElementKind::Bf16, ElementKind::Fp8E4M3, ElementKind::S8,
                                ElementKind::S64, ElementKind::U4})
            r.push_back({k, k, {}, false, 0});
          return r;
        },
    .default_shapes = elementwise_shapes,
    .select = [](const Stream& s, const Problem& p) { return sku_of(select_plan(s, p)); },
    .prepare = [](const Stream& s, const Problem& p) -> Result<std::unique_ptr<Instance>> {
      auto plan = select_plan(s, p);
      if (!plan) return plan.error();
      return PlanInstance<dynamic::FillPlan, 0, 1>::make(s, std::move(plan).value(), p, {},
                                                         {OperandSpec{p.dtype, p.shape, {}}});
    },
    .traffic = [](const Problem& p) { return Traffic{static_cast<double>(storage_bytes(p.dtype, p.shape.numel())), 0}; },
};

}  // namespace

void add_fill_scenarios(std::vector<Scenario>& out) { out.push_back(kFill); }

}  // namespace baracuda::profiler
