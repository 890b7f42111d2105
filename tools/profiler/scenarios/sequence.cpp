// SequencePlan: arange(0, n) and linspace(-1, 1, n) with n the problem's element count (y is [n] whatever the
// --shape's rank). GB/s counts y written.
#include "common.hpp"
#include "scenarios.hpp"

namespace baracuda::profiler {
namespace {

SequenceDescriptor descriptor(const Problem& p) {
  const int64_t n = p.shape.numel();
  const SequenceDescriptor d = p.variant == 0 ? SequenceDescriptor().arange(0, static_cast<double>(n))
                                              : SequenceDescriptor().linspace(-1, 1, n);
  return SequenceDescriptor(d).with_element(p.dtype);
}

Result<dynamic::SequencePlan> select_plan(const Stream& s, const Problem& p) {
  return dynamic::SequencePlan::select(s, descriptor(p));
}

OperandSpecs<0, 1> operands(const Problem& p) { return {{}, {OperandSpec{p.dtype, Shape{p.shape.numel()}, {}}}}; }

Traffic traffic(const Problem& p) { return Traffic{static_cast<double>(storage_bytes(p.dtype, p.shape.numel())), 0}; }

std::vector<Problem> kinds(uint32_t variant) {
  using K = ElementKind;
  return variant == 0 ? same_kinds({K::S32, K::S64, K::F32}, variant) : same_kinds({K::F32, K::Bf16, K::F16}, variant);
}

constexpr ScenarioFamily kSequence{"sequence", select_with<select_plan>, prepare_with<select_plan, operands>, traffic,
                                   kinds, elementwise_shapes};

}  // namespace

void add_sequence_scenarios(std::vector<Scenario>& out) {
  out.push_back(kSequence.op("arange", "y = start + i * step (torch.arange), here arange(0, n)", 0));
  out.push_back(kSequence.op("linspace", "n values from start to end inclusive (torch.linspace), here (-1, 1, n)", 1));
}

}  // namespace baracuda::profiler
