// QuantizePlan, every QuantizeOp: per-token quantize (float → int8, the W8A8 activation step) and dequantize,
// and per channel the backward of both, fake-quantize forward and backward, and the learnable fake-quantize
// (LSQ) forward and backward (quantization-aware training). The default cuda shape is an LLM activation
// [8192, 4096]. Traffic: every data tensor read or written once; the parameter tensors (one value per row or
// channel) are counted too. Outputs compare bit for bit with the host device, but the learnable backward's
// dscale and dzero_point, sums whose order depends on the device's launch geometry.
#include <baracuda/ops/quantize.hpp>

#include "common.hpp"
#include "scenarios.hpp"

namespace baracuda::profiler {
namespace {

/// One profiled op per scenario variant.
constexpr QuantizeOp kOps[] = {QuantizeOp::Quantize,
                               QuantizeOp::Dequantize,
                               QuantizeOp::FakeQuantize,
                               QuantizeOp::FakeQuantizeBackward,
                               QuantizeOp::QuantizeBackward,
                               QuantizeOp::DequantizeBackward,
                               QuantizeOp::FakeQuantizeLearnable,
                               QuantizeOp::FakeQuantizeLearnableBackward};
bool learnable(QuantizeOp op) {
  return op == QuantizeOp::FakeQuantizeLearnable || op == QuantizeOp::FakeQuantizeLearnableBackward;
}

QuantizeOp op_of(const Problem& p) { return kOps[p.variant]; }
ElementKind float_kind(const Problem& p) { return op_of(p) == QuantizeOp::Dequantize ? p.out_dtype : p.dtype; }
ElementKind quantized_kind(const Problem& p) {
  return op_of(p) == QuantizeOp::Quantize ? p.out_dtype : op_of(p) == QuantizeOp::Dequantize ? p.dtype : ElementKind::S8;
}
ElementKind scale_kind(const Problem& p) { return float_kind(p) == ElementKind::F64 ? ElementKind::F64 : ElementKind::F32; }

QuantizeDescriptor descriptor(const Problem& p) {
  const bool per_token = op_of(p) == QuantizeOp::Quantize || op_of(p) == QuantizeOp::Dequantize;
  const int rank = p.shape.rank;
  return QuantizeDescriptor()
      .with_op(op_of(p))
      .with_element(float_kind(p))
      .with_quantized(quantized_kind(p))
      .with_shape(p.shape)
      .with_granularity(per_token && rank >= 2 ? QuantGranularity::per_token() : QuantGranularity::per_channel(0));
}

/// Binds the profiler's positional operands (inputs, then outputs) to the plan's fields: a forward op's
/// (x, scale, zero_point) then y, a backward op's (x, scale, zero_point, dy) then dx, dequantize's backward
/// (scale, dy) then dx, the learnable backward's (x, scale, zero_point, dy) then dx, dscale, dzero_point.
/// (`QuantizeArgs` lists dy before y, so a forward op's operands are not its first fields in order.)
struct BindQuantize {
  static dynamic::QuantizeArgs bind(const dynamic::QuantizePlan&, const DynTensor& x, const DynTensor& s,
                                    const DynTensor& z, const DynTensor& y) {
    dynamic::QuantizeArgs t;
    t.x = x, t.scale = s, t.zero_point = z, t.y = y;
    return t;
  }
  static dynamic::QuantizeArgs bind(const dynamic::QuantizePlan&, const DynTensor& x, const DynTensor& s,
                                    const DynTensor& z, const DynTensor& dy, const DynTensor& dx) {
    dynamic::QuantizeArgs t;
    t.x = x, t.scale = s, t.zero_point = z, t.dy = dy, t.dx = dx;
    return t;
  }
  static dynamic::QuantizeArgs bind(const dynamic::QuantizePlan&, const DynTensor& s, const DynTensor& dy,
                                    const DynTensor& dx) {
    dynamic::QuantizeArgs t;
    t.scale = s, t.dy = dy, t.dx = dx;
    return t;
  }
  static dynamic::QuantizeArgs bind(const dynamic::QuantizePlan&, const DynTensor& x, const DynTensor& s,
                                    const DynTensor& z, const DynTensor& dy, const DynTensor& dx,
                                    const DynTensor& ds, const DynTensor& dz) {
    dynamic::QuantizeArgs t;
    t.x = x, t.scale = s, t.zero_point = z, t.dy = dy, t.dx = dx, t.dscale = ds, t.dzero_point = dz;
    return t;
  }
};
using PositionalQuantizePlan = PositionalPlan<dynamic::QuantizePlan, BindQuantize>;

Result<KernelSku> select_sku(const Stream& s, const Problem& p) {
  return sku_of(dynamic::QuantizePlan::select(s, descriptor(p)));
}

Result<std::unique_ptr<Instance>> prepare(const Stream& s, const Problem& p) {
  auto plan = dynamic::QuantizePlan::select(s, descriptor(p));
  if (!plan) return plan.error();
  const Shape ps = plan->param_shape();
  const OperandSpec scale{scale_kind(p), ps, ValueRange{0.01, 0.1, false}};
  // The learnable ops' zero point is real-valued, of the scale's kind.
  const OperandSpec zp = learnable(op_of(p)) ? OperandSpec{scale_kind(p), ps, ValueRange{-8, 8, false}}
                                             : OperandSpec{ElementKind::S32, ps, ValueRange{-8, 8, true}};
  const ElementKind f = float_kind(p), q = quantized_kind(p);
  const OperandSpec x{f, p.shape, ValueRange{-12, 12, false}};
  const OperandSpec dy{f, p.shape, ValueRange{-1, 1, false}};
  const OperandSpec out{f, p.shape, {}};
  PositionalQuantizePlan bound{std::move(plan).value()};
  switch (op_of(p)) {
    case QuantizeOp::Quantize:
      return PlanInstance<PositionalQuantizePlan, 3, 1>::make(s, std::move(bound), p, {x, scale, zp},
                                                              {OperandSpec{q, p.shape, {}}});
    case QuantizeOp::Dequantize:
      return PlanInstance<PositionalQuantizePlan, 3, 1>::make(
          s, std::move(bound), p, {OperandSpec{q, p.shape, ValueRange{-128, 127, true}}, scale, zp},
          {OperandSpec{f, p.shape, {}}});
    case QuantizeOp::FakeQuantize:
    case QuantizeOp::FakeQuantizeLearnable:
      return PlanInstance<PositionalQuantizePlan, 3, 1>::make(s, std::move(bound), p, {x, scale, zp}, {out});
    case QuantizeOp::DequantizeBackward:
      return PlanInstance<PositionalQuantizePlan, 2, 1>::make(s, std::move(bound), p, {scale, dy}, {out});
    case QuantizeOp::FakeQuantizeLearnableBackward:
      return PlanInstance<PositionalQuantizePlan, 4, 3>::make(
          s, std::move(bound), p, {x, scale, zp, dy},
          {out, OperandSpec{scale_kind(p), ps, {}}, OperandSpec{scale_kind(p), ps, {}}});
    default:  // QuantizeBackward, FakeQuantizeBackward
      return PlanInstance<PositionalQuantizePlan, 4, 1>::make(s, std::move(bound), p, {x, scale, zp, dy}, {out});
  }
}

Traffic traffic(const Problem& p) {
  const int64_t n = p.shape.numel();
  auto plan = dynamic::QuantizePlan::select(Stream::host(), descriptor(p));
  const int64_t np = plan ? plan->param_shape().numel() : 0;
  const double params = static_cast<double>(np) * (element_bits(scale_kind(p)) / 8 + 4);
  const double f = static_cast<double>(storage_bytes(float_kind(p), n));
  const double q = static_cast<double>(storage_bytes(quantized_kind(p), n));
  switch (op_of(p)) {
    case QuantizeOp::Quantize:
    case QuantizeOp::Dequantize: return Traffic{f + q + params, 0};
    case QuantizeOp::FakeQuantize:
    case QuantizeOp::FakeQuantizeLearnable:
    case QuantizeOp::DequantizeBackward: return Traffic{2 * f + params, 0};
    case QuantizeOp::FakeQuantizeLearnableBackward: return Traffic{3 * f + 2 * params, 0};
    default: return Traffic{3 * f + params, 0};
  }
}

std::vector<Shape> default_shapes(DeviceKind device) {
  if (device == DeviceKind::Cuda) return {Shape{8192, 4096}};
  return {Shape{257, 258}, Shape{64, 1024}};
}

std::vector<Problem> float_to_int8(uint32_t v) {
  std::vector<Problem> r;
  for (ElementKind k : {ElementKind::Bf16, ElementKind::F16, ElementKind::F32}) r.push_back({k, ElementKind::S8, {}, false, v});
  return r;
}
std::vector<Problem> int8_to_float(uint32_t v) {
  std::vector<Problem> r;
  for (ElementKind k : {ElementKind::Bf16, ElementKind::F16, ElementKind::F32}) r.push_back({ElementKind::S8, k, {}, false, v});
  return r;
}
std::vector<Problem> float_only(uint32_t v) {
  std::vector<Problem> r;
  for (ElementKind k : {ElementKind::Bf16, ElementKind::F32}) r.push_back({k, k, {}, false, v});
  return r;
}

constexpr ScenarioFamily kQuantizeFamily{"quantize", select_sku, prepare, traffic, nullptr, default_shapes};

Scenario make(uint32_t variant, std::string_view name, std::string_view summary, OutputKind out,
              std::vector<Problem> (*kinds)(uint32_t)) {
  Scenario s = kQuantizeFamily.op(name, summary, variant);
  s.default_kinds = kinds, s.output = out;
  return s;
}

}  // namespace

void add_quantize_scenarios(std::vector<Scenario>& out) {
  out.push_back(make(0, "quantize", "y = clamp(rint(x * (1/s[token])) + zp[token]) to int8, per token",
                     OutputKind::Chosen, float_to_int8));
  out.push_back(make(1, "dequantize", "y = (x - zp[token]) * s[token] from int8, per token", OutputKind::Chosen,
                     int8_to_float));
  out.push_back(make(2, "fake_quantize", "y = (clamp(rint(x * (1/s[c])) + zp[c]) - zp[c]) * s[c], per channel",
                     OutputKind::SameAsInput, float_only));
  out.push_back(make(3, "fake_quantize_backward",
                     "dx = dy * [qmin <= rint(x * (1/s[c])) + zp[c] <= qmax], per channel",
                     OutputKind::SameAsInput, float_only));
  out.push_back(make(4, "quantize_backward",
                     "dx = dy / s[c] * [qmin <= rint(x * (1/s[c])) + zp[c] <= qmax], per channel",
                     OutputKind::SameAsInput, float_only));
  out.push_back(make(5, "dequantize_backward", "dx = dy * s[c] (the gradient of dequantize), per channel",
                     OutputKind::SameAsInput, float_only));
  out.push_back(make(6, "fake_quantize_learnable",
                     "y = (clamp(rint(x * (1/s[c])) + zp'[c]) - zp'[c]) * s[c], zp real-valued (LSQ), per channel",
                     OutputKind::SameAsInput, float_only));
  Scenario lsq_backward = make(7, "fake_quantize_learnable_backward",
                               "dx, dscale[c], dzero_point[c] of the learnable fake-quantize (LSQ), per channel",
                               OutputKind::SameAsInput, float_only);
  lsq_backward.comparison = Comparison::Tolerance;  // dscale, dzero_point: sums in the device's order
  out.push_back(lsq_backward);
}

}  // namespace baracuda::profiler
