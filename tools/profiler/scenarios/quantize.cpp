// QuantizePlan, every QuantizeOp of the family's catalog (baracuda/ops/quantize_ops.def: one scenario per
// line, named and described by it, its operands from the fields the line lists): the ops with a quantized
// operand (quantize, dequantize: the W8A8 activation step) per token, the others per channel (the backward
// ops, fake-quantize and the learnable fake-quantize of quantization-aware training). The default cuda shape is an LLM activation
// [8192, 4096]. Traffic: every data tensor read or written once; the parameter tensors (one value per row or
// channel) are counted too. Outputs compare bit for bit with the host device, but the learnable backward's
// dscale and dzero_point, sums whose order depends on the device's launch geometry.
#include <baracuda/ops/quantize.hpp>

#include "common.hpp"
#include "scenarios.hpp"

namespace baracuda::profiler {
namespace {

using detail::QuantizeForm;
namespace qo = detail::quantize_operand;

/// One scenario per catalog line: the variant is the op.
QuantizeOp op_of(const Problem& p) { return static_cast<QuantizeOp>(p.variant); }
const detail::QuantizeOpInfo& info_of(const Problem& p) { return detail::kQuantizeOps[p.variant]; }
ElementKind float_kind(const Problem& p) { return info_of(p).form == QuantizeForm::Dequantizes ? p.out_dtype : p.dtype; }
ElementKind quantized_kind(const Problem& p) {
  switch (info_of(p).form) {
    case QuantizeForm::Quantizes: return p.out_dtype;
    case QuantizeForm::Dequantizes: return p.dtype;
    default: return ElementKind::S8;
  }
}
ElementKind scale_kind(const Problem& p) { return float_kind(p) == ElementKind::F64 ? ElementKind::F64 : ElementKind::F32; }
bool per_token(const Problem& p) {
  return info_of(p).form == QuantizeForm::Quantizes || info_of(p).form == QuantizeForm::Dequantizes;
}

QuantizeDescriptor descriptor(const Problem& p) {
  return QuantizeDescriptor()
      .with_op(op_of(p))
      .with_element(float_kind(p))
      .with_quantized(quantized_kind(p))
      .with_shape(p.shape)
      .with_granularity(per_token(p) && p.shape.rank >= 2 ? QuantGranularity::per_token()
                                                           : QuantGranularity::per_channel(0));
}

/// Binds the profiler's positional operands (inputs, then outputs) to the fields the op's catalog line
/// lists, in `QuantizeArgs` order (whose dy precedes y: a forward op's operands are not its first fields).
struct BindQuantize {
  template <class... T>
  static dynamic::QuantizeArgs bind(const dynamic::QuantizePlan& plan, const T&... operands) {
    const DynTensor v[] = {operands...};
    const detail::QuantizeOpInfo& info = detail::kQuantizeOps[static_cast<size_t>(plan.op())];
    size_t k = 0;
    const auto next = [&](unsigned field) {
      return ((info.reads | info.writes) & field) != 0 && k < sizeof...(T) ? v[k++] : DynTensor{};
    };
    dynamic::QuantizeArgs a;
    a.x = next(qo::X), a.scale = next(qo::Scale), a.zero_point = next(qo::ZeroPoint), a.dy = next(qo::Dy);
    a.y = next(qo::Y), a.dx = next(qo::Dx), a.dscale = next(qo::DScale), a.dzero_point = next(qo::DZeroPoint);
    return a;
  }
};
using PositionalQuantizePlan = PositionalPlan<dynamic::QuantizePlan, BindQuantize>;

Result<KernelSku> select_sku(const Stream& s, const Problem& p) {
  return sku_of(dynamic::QuantizePlan::select(s, descriptor(p)));
}

template <size_t NIn, size_t NOut>
Result<std::unique_ptr<Instance>> instance(const Stream& s, PositionalQuantizePlan plan, const Problem& p,
                                           const std::vector<OperandSpec>& in, const std::vector<OperandSpec>& out) {
  std::array<OperandSpec, NIn> a;
  std::array<OperandSpec, NOut> b;
  std::copy(in.begin(), in.end(), a.begin());
  std::copy(out.begin(), out.end(), b.begin());
  return PlanInstance<PositionalQuantizePlan, NIn, NOut>::make(s, std::move(plan), p, a, b);
}

Result<std::unique_ptr<Instance>> prepare(const Stream& s, const Problem& p) {
  auto plan = dynamic::QuantizePlan::select(s, descriptor(p));
  if (!plan) return plan.error();
  const Shape ps = plan->param_shape();
  const detail::QuantizeOpInfo& info = info_of(p);
  const ElementKind f = float_kind(p), q = quantized_kind(p), sk = scale_kind(p);
  // The fields the catalog line lists, in QuantizeArgs order. The learnable ops' zero point is real-valued.
  std::vector<OperandSpec> in, out;
  if (info.reads & qo::X)
    in.push_back(info.form == QuantizeForm::Dequantizes ? OperandSpec{q, p.shape, ValueRange{-128, 127, true}}
                                                        : OperandSpec{f, p.shape, ValueRange{-12, 12, false}});
  if (info.reads & qo::Scale) in.push_back(OperandSpec{sk, ps, ValueRange{0.01, 0.1, false}});
  if (info.reads & qo::ZeroPoint)
    in.push_back(info.form == QuantizeForm::Learnable ? OperandSpec{sk, ps, ValueRange{-8, 8, false}}
                                                      : OperandSpec{ElementKind::S32, ps, ValueRange{-8, 8, true}});
  if (info.reads & qo::Dy) in.push_back(OperandSpec{f, p.shape, ValueRange{-1, 1, false}});
  if (info.writes & qo::Y) out.push_back(OperandSpec{info.form == QuantizeForm::Quantizes ? q : f, p.shape, {}});
  if (info.writes & qo::Dx) out.push_back(OperandSpec{f, p.shape, {}});
  if (info.writes & qo::DScale) out.push_back(OperandSpec{sk, ps, {}});
  if (info.writes & qo::DZeroPoint) out.push_back(OperandSpec{sk, ps, {}});
  PositionalQuantizePlan bound{std::move(plan).value()};
  if (in.size() == 2 && out.size() == 1) return instance<2, 1>(s, std::move(bound), p, in, out);
  if (in.size() == 3 && out.size() == 1) return instance<3, 1>(s, std::move(bound), p, in, out);
  if (in.size() == 4 && out.size() == 1) return instance<4, 1>(s, std::move(bound), p, in, out);
  if (in.size() == 4 && out.size() == 3) return instance<4, 3>(s, std::move(bound), p, in, out);
  return Error::unsupported("the profiler has no operand layout for " + std::string(to_string(op_of(p))));
}

/// Every data tensor the op reads or writes once, and each parameter tensor (scale and zero point, read or
/// written) once.
Traffic traffic(const Problem& p) {
  const int64_t n = p.shape.numel();
  auto plan = dynamic::QuantizePlan::select(Stream::host(), descriptor(p));
  const double np = plan ? static_cast<double>(plan->param_shape().numel()) : 0.0;
  const double param = np * (element_bits(scale_kind(p)) / 8);
  const double f = static_cast<double>(storage_bytes(float_kind(p), n));
  const double q = static_cast<double>(storage_bytes(quantized_kind(p), n));
  const detail::QuantizeOpInfo& info = info_of(p);
  const unsigned used = info.reads | info.writes;
  double bytes = 0;
  if (used & qo::X) bytes += info.form == QuantizeForm::Dequantizes ? q : f;
  if (used & qo::Y) bytes += info.form == QuantizeForm::Quantizes ? q : f;
  if (used & qo::Dy) bytes += f;
  if (used & qo::Dx) bytes += f;
  if (used & qo::Scale) bytes += param;
  if (used & qo::ZeroPoint) bytes += info.form == QuantizeForm::Learnable ? param : np * 4;
  if (used & qo::DScale) bytes += param;
  if (used & qo::DZeroPoint) bytes += param;
  return Traffic{bytes, 0};
}

std::vector<Shape> default_shapes(DeviceKind device) {
  if (device == DeviceKind::Cuda) return {Shape{8192, 4096}};
  return {Shape{257, 258}, Shape{64, 1024}};
}

/// The kinds a scenario runs: float → int8 (quantize), int8 → float (dequantize), float only (the others).
std::vector<Problem> kinds(uint32_t v) {
  std::vector<Problem> r;
  const QuantizeForm form = detail::kQuantizeOps[v].form;
  if (form == QuantizeForm::Quantizes || form == QuantizeForm::Dequantizes) {
    for (ElementKind k : {ElementKind::Bf16, ElementKind::F16, ElementKind::F32})
      r.push_back(form == QuantizeForm::Quantizes ? Problem{k, ElementKind::S8, {}, false, v}
                                                  : Problem{ElementKind::S8, k, {}, false, v});
    return r;
  }
  for (ElementKind k : {ElementKind::Bf16, ElementKind::F32}) r.push_back({k, k, {}, false, v});
  return r;
}

constexpr ScenarioFamily kQuantizeFamily{"quantize", select_sku, prepare, traffic, kinds, default_shapes};

}  // namespace

void add_quantize_scenarios(std::vector<Scenario>& out) {
  for (uint32_t v = 0; v < std::size(detail::kQuantizeOps); ++v) {
    const detail::QuantizeOpInfo& info = detail::kQuantizeOps[v];
    Scenario sc = kQuantizeFamily.op(info.name, info.doc, v);
    const bool converts = info.form == QuantizeForm::Quantizes || info.form == QuantizeForm::Dequantizes;
    sc.output = converts ? OutputKind::Chosen : OutputKind::SameAsInput;
    // dscale and dzero_point are sums in the device's order: compared within the tolerance table.
    if (info.writes & qo::DScale) sc.comparison = Comparison::Tolerance;
    out.push_back(sc);
  }
}

}  // namespace baracuda::profiler
