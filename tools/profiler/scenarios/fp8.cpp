// The fp8 family: Fp8QuantizePlan (x · scale saturated to fp8, with the amax of x in the same pass) and
// Fp8DequantizePlan. GB/s counts the bytes moved: x read and y written (the [1] scale/amax are noise).
// Fp8ScalingUpdatePlan has no scenario: it rewrites its own inputs (the history roll), so repeated timing
// runs would not compute the same thing; it is one block over a history of ~1k floats.
#include "common.hpp"
#include "scenarios.hpp"

namespace baracuda::profiler {
namespace {

Result<dynamic::Fp8QuantizePlan> select_quantize(const Stream& s, const Problem& p) {
  return dynamic::Fp8QuantizePlan::select(
      s, Fp8QuantizeDescriptor().with_input(p.dtype).with_output(p.out_dtype).with_shape(p.shape));
}

Result<dynamic::Fp8DequantizePlan> select_dequantize(const Stream& s, const Problem& p) {
  return dynamic::Fp8DequantizePlan::select(
      s, Fp8DequantizeDescriptor().with_input(p.dtype).with_output(p.out_dtype).with_shape(p.shape));
}

Traffic bytes_moved(const Problem& p) {
  const int64_t n = p.shape.numel();
  return Traffic{static_cast<double>(storage_bytes(p.dtype, n) + storage_bytes(p.out_dtype, n)), 0};
}

// x in ±1000 with scale in [0.5, 1): values beyond the fp8 maximum saturate.
OperandSpecs<2, 2> quantize_operands(const Problem& p) {
  return {{OperandSpec{p.dtype, p.shape, ValueRange{-1000, 1000, false}},
           OperandSpec{ElementKind::F32, Shape{1}, ValueRange{0.5, 1.0, false}}},
          {OperandSpec{p.out_dtype, p.shape, {}}, OperandSpec{ElementKind::F32, Shape{1}, {}}}};
}

OperandSpecs<2, 1> dequantize_operands(const Problem& p) {
  return {{OperandSpec{p.dtype, p.shape, input_range(p.dtype, p.out_dtype)},
           OperandSpec{ElementKind::F32, Shape{1}, ValueRange{0.5, 4.0, false}}},
          {OperandSpec{p.out_dtype, p.shape, {}}}};
}

std::vector<Problem> quantize_kinds(uint32_t) {
  using K = ElementKind;
  return kind_pairs({{K::Bf16, K::Fp8E4M3}, {K::F16, K::Fp8E4M3}, {K::F32, K::Fp8E4M3}, {K::Bf16, K::Fp8E5M2}});
}

std::vector<Problem> dequantize_kinds(uint32_t) {
  using K = ElementKind;
  return kind_pairs({{K::Fp8E4M3, K::Bf16}, {K::Fp8E4M3, K::F32}, {K::Fp8E5M2, K::F16}});
}

constexpr ScenarioFamily kFp8Quantize{"fp8", select_with<select_quantize>,
                                      prepare_with<select_quantize, quantize_operands>, bytes_moved, quantize_kinds,
                                      elementwise_shapes, OutputKind::Chosen};
constexpr ScenarioFamily kFp8Dequantize{"fp8", select_with<select_dequantize>,
                                        prepare_with<select_dequantize, dequantize_operands>, bytes_moved,
                                        dequantize_kinds, elementwise_shapes, OutputKind::Chosen};

}  // namespace

void add_fp8_scenarios(std::vector<Scenario>& out) {
  out.push_back(
      kFp8Quantize.op("fp8_quantize", "y = saturate_to_fp8(x * scale), amax = max|x| fused (per-tensor scale)"));
  out.push_back(kFp8Dequantize.op("fp8_dequantize", "y = x * scale_inv, fp8 to a wider float"));
}

}  // namespace baracuda::profiler
