// CastPlan: every pair of byte-sized kinds; the default suite covers the conversions LLM inference uses.
#include "common.hpp"
#include "scenarios.hpp"

namespace baracuda::profiler {
namespace {

Result<dynamic::CastPlan> select_plan(const Stream& s, const Problem& p) {
  return dynamic::CastPlan::select(s, CastDescriptor().with_input(p.dtype).with_output(p.out_dtype).with_shape(p.shape));
}

OperandSpecs<1, 1> operands(const Problem& p) {
  return {{OperandSpec{p.dtype, p.shape, input_range(p.dtype, p.out_dtype)}}, {OperandSpec{p.out_dtype, p.shape, {}}}};
}

Traffic traffic(const Problem& p) {
  const int64_t n = p.shape.numel();
  return Traffic{static_cast<double>(storage_bytes(p.dtype, n) + storage_bytes(p.out_dtype, n)), 0};
}

std::vector<Problem> kinds(uint32_t) {
  using K = ElementKind;
  return kind_pairs({{K::F32, K::Bf16}, {K::Bf16, K::F32}, {K::F32, K::F16}, {K::F16, K::F32}, {K::Bf16, K::Fp8E4M3},
                     {K::Fp8E4M3, K::Bf16}, {K::F32, K::S8}, {K::S32, K::F32}, {K::F32, K::F32}});
}

constexpr ScenarioFamily kCast{"cast", select_with<select_plan>, prepare_with<select_plan, operands>, traffic, kinds,
                               elementwise_shapes, OutputKind::Chosen};

}  // namespace

void add_cast_scenarios(std::vector<Scenario>& out) {
  out.push_back(kCast.op("cast", "out = in converted to another kind (Tensor.to(dtype))"));
}

}  // namespace baracuda::profiler
