// NormQuantChain: the descriptor's fused quantization as the quantize plan it equals, selected and run.
#include "ops/norm/quant_chain.hpp"

#include <string>

namespace baracuda::detail {
namespace {

constexpr size_t kAlign = 256;
size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

/// A one-element statistics tensor of rank 0 (the rows of a vector x) as the `[1]` a per-tensor
/// parameter has; others unchanged.
template <class Tensor>
Tensor as_params(Tensor t) {
  if (t.shape.rank == 0 && t.data != nullptr) t.shape = Shape{1}, t.stride[0] = 1;
  return t;
}

}  // namespace

Result<NormQuantChain> NormQuantChain::select(const Stream& stream, const NormDescriptor& d, PlanPreference pref) {
  NormQuantChain c;
  c.kind = d.quant;
  const auto wrap = [](const Error& e) { return Error{e.code, "NormPlan: the fused quantization: " + e.message}; };
  switch (d.quant) {
    case NormQuant::Static: {
      auto p = dynamic::QuantizePlan::select(stream,
                                             QuantizeDescriptor{}
                                                 .with_op(QuantizeOp::Quantize)
                                                 .with_element(d.element)
                                                 .with_quantized(ElementKind::S8)
                                                 .with_shape(d.shape)
                                                 .with_granularity(QuantGranularity::per_tensor())
                                                 .with_convention(d.convention),
                                             pref);
      if (!p) return wrap(p.error());
      auto fill = dynamic::FillPlan::select(
          stream, FillDescriptor{}.with_element(ElementKind::S32).with_shape(Shape{1}).with_value(Scalar(int64_t{0})),
          pref);
      if (!fill) return wrap(fill.error());
      c.qmin = p->quant_min(), c.qmax = p->quant_max();
      c.static_plan = std::move(p).value();
      c.zero_fill = std::move(fill).value();
      return c;
    }
    case NormQuant::Dynamic: {
      const QuantGranularity g = d.shape.rank >= 2 ? QuantGranularity::per_token() : QuantGranularity::per_tensor();
      auto p = dynamic::DynamicRangeQuantizePlan::select(stream,
                                                         DynamicRangeQuantizeDescriptor{}
                                                             .with_element(d.element)
                                                             .with_quantized(ElementKind::S8)
                                                             .with_shape(d.shape)
                                                             .with_granularity(g)
                                                             .with_mode(d.dynamic_mode)
                                                             .with_convention(d.convention),
                                                         pref);
      if (!p) return wrap(p.error());
      c.qmin = p->quant_min(), c.qmax = p->quant_max();
      c.dynamic_plan = std::move(p).value();
      return c;
    }
    case NormQuant::Fp8: {
      auto p = dynamic::Fp8QuantizePlan::select(stream,
                                                Fp8QuantizeDescriptor{}
                                                    .with_input(d.element)
                                                    .with_output(ElementKind::Fp8E4M3)
                                                    .with_shape(d.shape)
                                                    .with_convention(d.convention),
                                                pref);
      if (!p) return wrap(p.error());
      c.q_kind = ElementKind::Fp8E4M3;
      c.fp8_plan = std::move(p).value();
      return c;
    }
    default:
      return Error::invalid("NormPlan: invalid NormQuant");
  }
}

size_t NormQuantChain::workspace_size() const {
  if (static_plan) return align_up(static_plan->workspace_size()) + kAlign;
  if (dynamic_plan) return align_up(dynamic_plan->workspace_size());
  return 0;
}

Status NormQuantChain::run(const Stream& stream, Workspace ws, const ConstDynTensor& y,
                           const dynamic::NormArgs& a) const {
  if (static_plan) {
    ConstDynTensor zp = a.zero_point;
    const size_t own = align_up(static_plan->workspace_size());
    if (zp.data == nullptr) {  // the caller's zero point, or a 0 written into the workspace
      const DynTensor zero = DynTensor::dense(static_cast<char*>(ws.data) + own, ElementKind::S32, Shape{1});
      BARACUDA_TRY(zero_fill->run(stream, Workspace{}, {zero}));
      zp = zero;
    }
    dynamic::QuantizeArgs q;
    q.x = y, q.scale = a.scale, q.zero_point = zp, q.y = a.q;
    return static_plan->run(stream, Workspace(ws.data, own), q);
  }
  if (dynamic_plan) return dynamic_plan->run(stream, ws, {y, a.q, as_params(a.q_scale), as_params(a.q_zero_point)});
  if (fp8_plan) return fp8_plan->run(stream, Workspace{}, {y, a.scale, a.q, a.amax});
  return Error::internal("NormPlan: no fused quantization to run");
}

}  // namespace baracuda::detail
