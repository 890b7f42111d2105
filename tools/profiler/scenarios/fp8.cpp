// The fp8 family: one scenario per plan of its catalog (baracuda/ops/fp8_ops.def), Fp8QuantizePlan (x · scale
// saturated to fp8, with the amax of x in the same pass) and Fp8DequantizePlan. GB/s counts the bytes moved:
// x read and y written (the [1] scale/amax are noise).
// Fp8ScalingUpdatePlan has no scenario: it rewrites its own inputs (the history roll), so repeated timing
// runs would not compute the same thing; it is one block over a history of ~1k floats.
#include <type_traits>

#include "common.hpp"
#include "scenarios.hpp"

namespace baracuda::profiler {
namespace {

// What differs between the catalog's plans: the descriptor, and the operands (inputs then outputs).
OperandSpecs<2, 2> operands(std::type_identity<dynamic::Fp8QuantizePlan>, const Problem& p) {
  // x in ±1000 with scale in [0.5, 1): values beyond the fp8 maximum saturate.
  return {{OperandSpec{p.dtype, p.shape, ValueRange{-1000, 1000, false}},
           OperandSpec{ElementKind::F32, Shape{1}, ValueRange{0.5, 1.0, false}}},
          {OperandSpec{p.out_dtype, p.shape, {}}, OperandSpec{ElementKind::F32, Shape{1}, {}}}};
}
OperandSpecs<2, 1> operands(std::type_identity<dynamic::Fp8DequantizePlan>, const Problem& p) {
  return {{OperandSpec{p.dtype, p.shape, input_range(p.dtype, p.out_dtype)},
           OperandSpec{ElementKind::F32, Shape{1}, ValueRange{0.5, 4.0, false}}},
          {OperandSpec{p.out_dtype, p.shape, {}}}};
}
Fp8QuantizeDescriptor descriptor(std::type_identity<dynamic::Fp8QuantizePlan>) { return {}; }
Fp8DequantizeDescriptor descriptor(std::type_identity<dynamic::Fp8DequantizePlan>) { return {}; }

template <class Plan>
Result<Plan> select_plan(const Stream& s, const Problem& p) {
  return Plan::select(
      s, descriptor(std::type_identity<Plan>{}).with_input(p.dtype).with_output(p.out_dtype).with_shape(p.shape));
}
template <class Plan>
auto plan_operands(const Problem& p) {
  return operands(std::type_identity<Plan>{}, p);
}

Traffic bytes_moved(const Problem& p) {
  const int64_t n = p.shape.numel();
  return Traffic{static_cast<double>(storage_bytes(p.dtype, n) + storage_bytes(p.out_dtype, n)), 0};
}

}  // namespace

void add_fp8_scenarios(std::vector<Scenario>& out) {
  // One scenario per line of the catalog, every kind pair of the line a default problem.
#define BARACUDA_FP8_PLAN(name, Plan, table, inputs, outputs, doc)                                              \
  out.push_back(ScenarioFamily{"fp8", select_with<select_plan<dynamic::Plan>>,                                  \
                               prepare_with<select_plan<dynamic::Plan>, plan_operands<dynamic::Plan>>, bytes_moved, \
                               every_kind_pair<inputs, outputs>, elementwise_shapes, OutputKind::Chosen}          \
                    .op(#name, doc));
#include "baracuda/ops/fp8_ops.def"
#undef BARACUDA_FP8_PLAN
}

}  // namespace baracuda::profiler
