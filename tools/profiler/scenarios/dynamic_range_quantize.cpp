// DynamicRangeQuantizePlan: per-token dynamic quantization of an activation (the W8A8 activation step with
// the scale measured from the data), symmetric and asymmetric, bf16/f16/f32 → s8. The default cuda shape is
// an LLM activation [8192, 4096]. Traffic: the bytes the op must move — x read once, y written once, one
// scale and one zero point written per token — whatever the number of passes the chosen path makes.
// Outputs (y, scale, zero point) compare bit for bit with the host device. The plan's Args are its operands
// in the profiler's order (x, then y, scale, zero point), so it needs no binder.
#include <string>

#include <baracuda/ops/dynamic_range_quantize.hpp>

#include "common.hpp"
#include "scenarios.hpp"

namespace baracuda::profiler {
namespace {

DynamicRangeQuantizeDescriptor descriptor(const Problem& p) {
  // Per token needs rank >= 2; a rank-1 --shape is one token.
  const Shape shape = p.shape.rank == 1 ? Shape{1, p.shape[0]} : p.shape;
  return DynamicRangeQuantizeDescriptor()
      .with_element(p.dtype)
      .with_quantized(p.out_dtype)
      .with_shape(shape)
      .with_granularity(QuantGranularity::per_token())
      .with_mode(static_cast<DynamicRangeMode>(p.variant));
}

ElementKind scale_kind(const Problem& p) { return p.dtype == ElementKind::F64 ? ElementKind::F64 : ElementKind::F32; }

Result<KernelSku> select_sku(const Stream& s, const Problem& p) {
  return sku_of(dynamic::DynamicRangeQuantizePlan::select(s, descriptor(p)));
}

Result<std::unique_ptr<Instance>> prepare(const Stream& s, const Problem& p) {
  const DynamicRangeQuantizeDescriptor d = descriptor(p);
  auto plan = dynamic::DynamicRangeQuantizePlan::select(s, d);
  if (!plan) return plan.error();
  const Shape ps = plan->param_shape();
  return PlanInstance<dynamic::DynamicRangeQuantizePlan, 1, 3>::make(
      s, std::move(plan).value(), p, {OperandSpec{p.dtype, d.shape, ValueRange{-12, 9, false}}},
      {OperandSpec{p.out_dtype, d.shape, {}}, OperandSpec{scale_kind(p), ps, {}}, OperandSpec{ElementKind::S32, ps, {}}});
}

Traffic traffic(const Problem& p) {
  const DynamicRangeQuantizeDescriptor d = descriptor(p);
  const int64_t n = d.shape.numel();
  const int64_t tokens = n == 0 ? 0 : n / d.shape[d.shape.rank - 1];
  const double params = static_cast<double>(tokens) * (element_bits(scale_kind(p)) / 8 + 4);
  return Traffic{static_cast<double>(storage_bytes(p.dtype, n) + storage_bytes(p.out_dtype, n)) + params, 0};
}

std::vector<Shape> default_shapes(DeviceKind device) {
  if (device == DeviceKind::Cuda) return {Shape{8192, 4096}};
  return {Shape{257, 258}, Shape{16, 4096}, Shape{3, 9000}};
}

std::vector<Problem> float_to_int8(uint32_t v) {
  std::vector<Problem> r;
  for (ElementKind k : {ElementKind::Bf16, ElementKind::F16, ElementKind::F32}) r.push_back({k, ElementKind::S8, {}, false, v});
  return r;
}

constexpr ScenarioFamily kDynamicRangeQuantizeFamily{"dynamic_range_quantize", select_sku, prepare, traffic,
                                                     float_to_int8, default_shapes, OutputKind::Chosen};

}  // namespace

// One scenario per mode of the catalog (baracuda/ops/dynamic_range_modes.def), named as its SKU's op.
void add_dynamic_range_quantize_scenarios(std::vector<Scenario>& out) {
  static std::string summaries[kNumDynamicRangeModes];  // the catalog's line, and the scope
  for (size_t m = 0; m < kNumDynamicRangeModes; ++m) {
    const detail::DynamicRangeModeInfo& mode = detail::kDynamicRangeModes[m];
    summaries[m] = std::string(mode.doc) + ", per token";
    out.push_back(kDynamicRangeQuantizeFamily.op(mode.op, summaries[m], static_cast<uint32_t>(m)));
  }
}

}  // namespace baracuda::profiler
