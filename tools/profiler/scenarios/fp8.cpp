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

constexpr Scenario kFp8Quantize{
    .name = "fp8_quantize",
    .family = "fp8",
    .summary = "y = saturate_to_fp8(x * scale), amax = max|x| fused (per-tensor scale)",
    .output = OutputKind::Chosen,
    .comparison = Comparison::Exact,
    .default_kinds =
        [](uint32_t) {
          using K = ElementKind;
          const std::pair<K, K> pairs[] = {{K::Bf16, K::Fp8E4M3}, {K::F16, K::Fp8E4M3}, {K::F32, K::Fp8E4M3},
                                           {K::Bf16, K::Fp8E5M2}};
          std::vector<Problem> r;
          for (auto [in, out] : pairs) r.push_back({in, out, {}, false, 0});
          return r;
        },
    .default_shapes = elementwise_shapes,
    .select = [](const Stream& s, const Problem& p) { return sku_of(select_quantize(s, p)); },
    .prepare = [](const Stream& s, const Problem& p) -> Result<std::unique_ptr<Instance>> {
      auto plan = select_quantize(s, p);
      if (!plan) return plan.error();
      // x in ±1000 with scale in [0.5, 1): values beyond the fp8 maximum saturate.
      return PlanInstance<dynamic::Fp8QuantizePlan, 2, 2>::make(
          s, std::move(plan).value(), p,
          {OperandSpec{p.dtype, p.shape, ValueRange{-1000, 1000, false}},
           OperandSpec{ElementKind::F32, Shape{1}, ValueRange{0.5, 1.0, false}}},
          {OperandSpec{p.out_dtype, p.shape, {}}, OperandSpec{ElementKind::F32, Shape{1}, {}}});
    },
    .traffic = bytes_moved,
};

constexpr Scenario kFp8Dequantize{
    .name = "fp8_dequantize",
    .family = "fp8",
    .summary = "y = x * scale_inv, fp8 to a wider float",
    .output = OutputKind::Chosen,
    .comparison = Comparison::Exact,
    .default_kinds =
        [](uint32_t) {
          using K = ElementKind;
          const std::pair<K, K> pairs[] = {{K::Fp8E4M3, K::Bf16}, {K::Fp8E4M3, K::F32}, {K::Fp8E5M2, K::F16}};
          std::vector<Problem> r;
          for (auto [in, out] : pairs) r.push_back({in, out, {}, false, 0});
          return r;
        },
    .default_shapes = elementwise_shapes,
    .select = [](const Stream& s, const Problem& p) { return sku_of(select_dequantize(s, p)); },
    .prepare = [](const Stream& s, const Problem& p) -> Result<std::unique_ptr<Instance>> {
      auto plan = select_dequantize(s, p);
      if (!plan) return plan.error();
      return PlanInstance<dynamic::Fp8DequantizePlan, 2, 1>::make(
          s, std::move(plan).value(), p,
          {OperandSpec{p.dtype, p.shape, input_range(p.dtype, p.out_dtype)},
           OperandSpec{ElementKind::F32, Shape{1}, ValueRange{0.5, 4.0, false}}},
          {OperandSpec{p.out_dtype, p.shape, {}}});
    },
    .traffic = bytes_moved,
};

}  // namespace

void add_fp8_scenarios(std::vector<Scenario>& out) {
  out.push_back(kFp8Quantize);
  out.push_back(kFp8Dequantize);
}

}  // namespace baracuda::profiler
