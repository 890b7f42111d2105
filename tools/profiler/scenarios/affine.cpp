// AffinePlan: y = alpha * x + beta over the floating-point kinds.
#include "common.hpp"
#include "scenarios.hpp"

namespace baracuda::profiler {
namespace {

Result<dynamic::AffinePlan> select_plan(const Stream& s, const Problem& p) {
  return dynamic::AffinePlan::select(
      s, AffineDescriptor().with_element(p.dtype).with_shape(p.shape).with_alpha(1.5).with_beta(-0.25));
}

OperandSpecs<1, 1> operands(const Problem& p) {
  return {{OperandSpec{p.dtype, p.shape, input_range(p.dtype, p.dtype)}}, {OperandSpec{p.dtype, p.shape, {}}}};
}

Traffic traffic(const Problem& p) {
  return Traffic{2.0 * static_cast<double>(storage_bytes(p.dtype, p.shape.numel())), 0};
}

std::vector<Problem> kinds(uint32_t) {
  return same_kinds({ElementKind::F32, ElementKind::F16, ElementKind::Bf16, ElementKind::F64});
}

constexpr ScenarioFamily kAffine{"affine", select_with<select_plan>, prepare_with<select_plan, operands>, traffic,
                                 kinds, elementwise_shapes, OutputKind::SameAsInput, Comparison::Tolerance};

}  // namespace

void add_affine_scenarios(std::vector<Scenario>& out) {
  out.push_back(kAffine.op("affine", "out = alpha * in + beta"));
}

}  // namespace baracuda::profiler
