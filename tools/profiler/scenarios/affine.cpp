// AffinePlan: y = alpha * x + beta over the floating-point kinds.
#include "common.hpp"
#include "scenarios.hpp"

namespace baracuda::profiler {
namespace {

Result<dynamic::AffinePlan> select_plan(const Stream& s, const Problem& p) {
  return dynamic::AffinePlan::select(
      s, AffineDescriptor().with_element(p.dtype).with_shape(p.shape).with_alpha(1.5).with_beta(-0.25));
}

constexpr Scenario kAffine{
    .name = "affine",
    .family = "affine",
    .summary = "out = alpha * in + beta",
    .output = OutputKind::SameAsInput,
    .comparison = Comparison::Tolerance,
    .default_kinds =
        [](uint32_t) {
          std::vector<Problem> r;
          for (ElementKind k : {ElementKind::F32, ElementKind::F16, ElementKind::Bf16, ElementKind::F64})
            r.push_back({k, k, {}, false, 0});
          return r;
        },
    .default_shapes = elementwise_shapes,
    .select = [](const Stream& s, const Problem& p) { return sku_of(select_plan(s, p)); },
    .prepare = [](const Stream& s, const Problem& p) -> Result<std::unique_ptr<Instance>> {
      auto plan = select_plan(s, p);
      if (!plan) return plan.error();
      return PlanInstance<dynamic::AffinePlan, 1, 1>::make(
          s, std::move(plan).value(), p, {OperandSpec{p.dtype, p.shape, input_range(p.dtype, p.dtype)}},
          {OperandSpec{p.dtype, p.shape, {}}});
    },
    .traffic = [](const Problem& p) { return Traffic{2.0 * static_cast<double>(storage_bytes(p.dtype, p.shape.numel())), 0}; },
};

}  // namespace

void add_affine_scenarios(std::vector<Scenario>& out) { out.push_back(kAffine); }

}  // namespace baracuda::profiler
