// NormPlan and NormBackwardPlan over the last dimension of [tokens, hidden] (LLM rows on cuda), RMSNorm with a
// weight and LayerNorm with weight and bias; forward writes y and rstd (and LayerNorm's mean), backward dx and
// dweight (and LayerNorm's dbias) from dy, x and the statistics. GB/s counts each full tensor once (the
// forward reads x twice, the backward dy and x twice for dx and again for dweight).
#include <array>
#include <baracuda/ops/norm.hpp>
#include <type_traits>

#include "common.hpp"
#include "scenarios.hpp"

namespace baracuda::profiler {
namespace {

bool layer(const Problem& p) { return p.variant % 2 == 1; }
bool backward(const Problem& p) { return p.variant >= 2; }

NormDescriptor descriptor(const Problem& p) {
  return NormDescriptor()
      .with_op(layer(p) ? NormOp::LayerNorm : NormOp::RmsNorm)
      .with_element(p.dtype)
      .with_shape(p.shape.rank == 0 ? Shape{64} : p.shape)
      .with_bias(layer(p));
}

Shape hidden(const Problem& p) {
  const Shape s = descriptor(p).shape;
  return Shape{s.dims[s.rank - 1]};
}
Shape rows(const Problem& p) {
  Shape r = descriptor(p).shape;
  --r.rank;
  return r;
}
ElementKind stats_kind(const Problem& p) { return p.dtype == ElementKind::F64 ? ElementKind::F64 : ElementKind::F32; }

/// LayerNorm: (x, w, b; y, mean, rstd). RmsNorm: (x, w; y, rstd).
struct BindLayerNorm {
  static dynamic::NormArgs bind(const dynamic::NormPlan&, const DynTensor& x, const DynTensor& w, const DynTensor& b,
                                const DynTensor& y, const DynTensor& mean, const DynTensor& rstd) {
    return {x, w, b, y, mean, rstd};
  }
};
struct BindRmsNorm {
  static dynamic::NormArgs bind(const dynamic::NormPlan&, const DynTensor& x, const DynTensor& w, const DynTensor& y,
                                const DynTensor& rstd) {
    return {x, w, {}, y, {}, rstd};
  }
};
/// LayerNorm: (dy, x, w, mean, rstd; dx, dweight, dbias). RmsNorm: (dy, x, w, rstd; dx, dweight).
struct BindLayerNormBackward {
  static dynamic::NormBackwardArgs bind(const dynamic::NormBackwardPlan&, const DynTensor& dy, const DynTensor& x,
                                        const DynTensor& w, const DynTensor& mean, const DynTensor& rstd,
                                        const DynTensor& dx, const DynTensor& dw, const DynTensor& db) {
    return {dy, x, w, mean, rstd, dx, dw, db};
  }
};
struct BindRmsNormBackward {
  static dynamic::NormBackwardArgs bind(const dynamic::NormBackwardPlan&, const DynTensor& dy, const DynTensor& x,
                                        const DynTensor& w, const DynTensor& rstd, const DynTensor& dx,
                                        const DynTensor& dw) {
    return {dy, x, w, {}, rstd, dx, dw, {}};
  }
};

Result<KernelSku> select_sku(const Stream& s, const Problem& p) {
  if (backward(p)) return sku_of(dynamic::NormBackwardPlan::select(s, descriptor(p)));
  return sku_of(dynamic::NormPlan::select(s, descriptor(p)));
}

template <class Bind, size_t NIn, size_t NOut, class Select>
Result<std::unique_ptr<Instance>> make(const Stream& s, const Problem& p, Select select,
                                       const std::array<OperandSpec, NIn>& in,
                                       const std::array<OperandSpec, NOut>& out) {
  auto plan = select(s, descriptor(p));
  if (!plan) return plan.error();
  using Plan = PositionalPlan<std::remove_cvref_t<decltype(*plan)>, Bind>;
  return PlanInstance<Plan, NIn, NOut>::make(s, Plan{std::move(plan).value()}, p, in, out);
}

Result<std::unique_ptr<Instance>> prepare(const Stream& s, const Problem& p) {
  const Shape x = descriptor(p).shape, h = hidden(p), r = rows(p);
  const ElementKind k = p.dtype, sk = stats_kind(p);
  const OperandSpec xs{k, x, ValueRange{-2, 3, false}}, ws{k, h, ValueRange{0.5, 1.5, false}},
      bs{k, h, ValueRange{-1, 1, false}}, dys{k, x, ValueRange{-1, 1, false}}, means{sk, r, ValueRange{0, 1, false}},
      rstds{sk, r, ValueRange{0.5, 2, false}}, xo{k, x, {}}, ho{k, h, {}}, ro{sk, r, {}};
  const auto fwd = [](const Stream& st, const NormDescriptor& d) { return dynamic::NormPlan::select(st, d); };
  const auto bwd = [](const Stream& st, const NormDescriptor& d) { return dynamic::NormBackwardPlan::select(st, d); };
  if (!backward(p)) {
    if (layer(p)) return make<BindLayerNorm, 3, 3>(s, p, fwd, {xs, ws, bs}, {xo, ro, ro});
    return make<BindRmsNorm, 2, 2>(s, p, fwd, {xs, ws}, {xo, ro});
  }
  if (layer(p)) return make<BindLayerNormBackward, 5, 3>(s, p, bwd, {dys, xs, ws, means, rstds}, {xo, ho, ho});
  return make<BindRmsNormBackward, 4, 2>(s, p, bwd, {dys, xs, ws, rstds}, {xo, ho});
}

Traffic traffic(const Problem& p) {
  const double x = static_cast<double>(storage_bytes(p.dtype, descriptor(p).shape.numel()));
  return Traffic{backward(p) ? 3 * x : 2 * x, 0};
}

std::vector<Shape> default_shapes(DeviceKind device) {
  if (device == DeviceKind::Cuda) return {Shape{4096, 4096}, Shape{8192, 4096}, Shape{8192, 8192}};
  return {Shape{33, 259}, Shape{3, 1500}};
}

constexpr ScenarioFamily kNorm{
    "norm", select_sku, prepare, traffic, float_kinds, default_shapes, OutputKind::SameAsInput, Comparison::Tolerance};

}  // namespace

void add_norm_scenarios(std::vector<Scenario>& out) {
  out.push_back(kNorm.op("rms_norm", "RMSNorm over the last dimension with a weight (rstd saved)", 0));
  out.push_back(kNorm.op("layer_norm", "LayerNorm over the last dimension with weight and bias (mean, rstd saved)", 1));
  out.push_back(kNorm.op("rms_norm_backward", "dx and dweight of RMSNorm", 2));
  out.push_back(kNorm.op("layer_norm_backward", "dx, dweight and dbias of LayerNorm", 3));
}

}  // namespace baracuda::profiler
