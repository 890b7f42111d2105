// NormPlan and NormBackwardPlan over the last dimension of [tokens, hidden] (LLM rows on cuda), RMSNorm with a
// weight and LayerNorm with weight and bias; forward writes y and rstd (and LayerNorm's mean), backward dx and
// dweight (and LayerNorm's dbias) from dy, x and the statistics; and the fused RMSNorm variants of the serving
// engines: the residual add (y, h), and the quantized outputs (static int8 after the residual add, dynamic
// per-token int8, FP8 with amax). GB/s counts each full tensor once (the backward reads dy and x twice for dx
// and again for dweight). The unfused chains are the rows of their parts (add, rms_norm, quantize,
// dynamic_range_quantize_symmetric, fp8_quantize) on the same shape.
#include <array>
#include <baracuda/ops/norm.hpp>
#include <type_traits>

#include "common.hpp"
#include "scenarios.hpp"

namespace baracuda::profiler {
namespace {

// Variants: 0 rms_norm, 1 layer_norm, 2 and 3 their backward; the fused RMSNorm: 4 residual add, 5 residual
// add and static int8, 6 dynamic per-token int8, 7 FP8.
bool layer(const Problem& p) { return p.variant == 1 || p.variant == 3; }
bool backward(const Problem& p) { return p.variant == 2 || p.variant == 3; }
bool residual(const Problem& p) { return p.variant == 4 || p.variant == 5; }
NormQuant quant(const Problem& p) {
  return p.variant == 5   ? NormQuant::Static
         : p.variant == 6 ? NormQuant::Dynamic
         : p.variant == 7 ? NormQuant::Fp8
                          : NormQuant::None;
}

NormDescriptor descriptor(const Problem& p) {
  return NormDescriptor()
      .with_op(layer(p) ? NormOp::LayerNorm : NormOp::RmsNorm)
      .with_element(p.dtype)
      .with_shape(p.shape.rank == 0 ? Shape{64} : p.shape)
      .with_bias(layer(p))
      .with_residual(residual(p))
      .with_quant(quant(p));
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
/// Fused add: (x, residual, w; y, h). With static int8: (x, residual, w, scale; h, q).
struct BindAddRmsNorm {
  static dynamic::NormArgs bind(const dynamic::NormPlan&, const DynTensor& x, const DynTensor& r, const DynTensor& w,
                                const DynTensor& y, const DynTensor& h) {
    dynamic::NormArgs a{x, w, {}, y, {}, {}};
    a.residual = r, a.h = h;
    return a;
  }
  static dynamic::NormArgs bind(const dynamic::NormPlan&, const DynTensor& x, const DynTensor& r, const DynTensor& w,
                                const DynTensor& scale, const DynTensor& h, const DynTensor& q) {
    dynamic::NormArgs a{x, w, {}, {}, {}, {}};
    a.residual = r, a.h = h, a.scale = scale, a.q = q;
    return a;
  }
};
/// Dynamic: (x, w; q, q_scale). FP8: (x, w, scale; q, amax).
struct BindRmsNormQuant {
  static dynamic::NormArgs bind(const dynamic::NormPlan&, const DynTensor& x, const DynTensor& w, const DynTensor& q,
                                const DynTensor& q_scale) {
    dynamic::NormArgs a{x, w, {}, {}, {}, {}};
    a.q = q, a.q_scale = q_scale;
    return a;
  }
  static dynamic::NormArgs bind(const dynamic::NormPlan&, const DynTensor& x, const DynTensor& w,
                                const DynTensor& scale, const DynTensor& q, const DynTensor& amax) {
    dynamic::NormArgs a{x, w, {}, {}, {}, {}};
    a.scale = scale, a.q = q, a.amax = amax;
    return a;
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
  const OperandSpec one_s{sk, Shape{1}, ValueRange{0.03, 0.04, false}},
      fp8_s{ElementKind::F32, Shape{1}, ValueRange{50, 100, false}};
  const OperandSpec q8{ElementKind::S8, x, {}}, qf8{ElementKind::Fp8E4M3, x, {}}, amax{ElementKind::F32, Shape{1}, {}};
  switch (p.variant) {
    case 4:
      return make<BindAddRmsNorm, 3, 2>(s, p, fwd, {xs, dys, ws}, {xo, xo});
    case 5:
      return make<BindAddRmsNorm, 4, 2>(s, p, fwd, {xs, dys, ws, one_s}, {xo, q8});
    case 6:
      return make<BindRmsNormQuant, 2, 2>(s, p, fwd, {xs, ws}, {q8, ro});
    case 7:
      return make<BindRmsNormQuant, 3, 2>(s, p, fwd, {xs, ws, fp8_s}, {qf8, amax});
    default:
      break;
  }
  if (!backward(p)) {
    if (layer(p)) return make<BindLayerNorm, 3, 3>(s, p, fwd, {xs, ws, bs}, {xo, ro, ro});
    return make<BindRmsNorm, 2, 2>(s, p, fwd, {xs, ws}, {xo, ro});
  }
  if (layer(p)) return make<BindLayerNormBackward, 5, 3>(s, p, bwd, {dys, xs, ws, means, rstds}, {xo, ho, ho});
  return make<BindRmsNormBackward, 4, 2>(s, p, bwd, {dys, xs, ws, rstds}, {xo, ho});
}

Traffic traffic(const Problem& p) {
  const double n = static_cast<double>(descriptor(p).shape.numel());
  const double x = static_cast<double>(storage_bytes(p.dtype, descriptor(p).shape.numel()));
  switch (p.variant) {
    case 4:
      return Traffic{4 * x, 0};  // x, residual in; y, h out
    case 5:
      return Traffic{3 * x + n, 0};  // x, residual in; h, q out
    case 6:
    case 7:
      return Traffic{x + n, 0};
    default:
      return Traffic{backward(p) ? 3 * x : 2 * x, 0};
  }
}

/// The backward's sums: dx over its row (the row's dot products), the weight and bias gradients over the rows.
int64_t summed_terms(const Problem& p, size_t output) {
  if (!backward(p)) return 1;
  return output == 0 ? hidden(p).numel() : rows(p).numel();
}

std::vector<Shape> default_shapes(DeviceKind device) {
  if (device == DeviceKind::Cuda) return {Shape{4096, 4096}, Shape{8192, 4096}, Shape{8192, 8192}};
  return {Shape{33, 259}, Shape{3, 1500}};
}

constexpr ScenarioFamily kNorm{.family = "norm",
                               .select = select_sku,
                               .prepare = prepare,
                               .traffic = traffic,
                               .default_kinds = float_kinds,
                               .default_shapes = default_shapes,
                               .output = OutputKind::SameAsInput,
                               .comparison = Comparison::Tolerance,
                               .summed_terms = summed_terms};
constexpr ScenarioFamily kNormQuant{"norm",
                                    select_sku,
                                    prepare,
                                    traffic,
                                    float_kinds,
                                    default_shapes,
                                    OutputKind::SameAsInput,
                                    Comparison::QuantizedStep};

}  // namespace

void add_norm_scenarios(std::vector<Scenario>& out) {
  out.push_back(kNorm.op("rms_norm", "RMSNorm over the last dimension with a weight (rstd saved)", 0));
  out.push_back(kNorm.op("layer_norm", "LayerNorm over the last dimension with weight and bias (mean, rstd saved)", 1));
  out.push_back(kNorm.op("rms_norm_backward", "dx and dweight of RMSNorm", 2));
  out.push_back(kNorm.op("layer_norm_backward", "dx, dweight and dbias of LayerNorm", 3));
  out.push_back(kNorm.op("fused_add_rms_norm", "h = x + residual and RMSNorm(h), one pass (y, h)", 4));
  out.push_back(kNormQuant.op("fused_add_rms_norm_static",
                              "h = x + residual, RMSNorm(h) quantized to s8 with a "
                              "static scale (h, q)",
                              5));
  out.push_back(kNormQuant.op("rms_norm_dynamic", "RMSNorm quantized to s8 per token (q, scale)", 6));
  out.push_back(kNormQuant.op("rms_norm_fp8", "RMSNorm quantized to FP8 E4M3 with a per-tensor scale (q, amax)", 7));
}

}  // namespace baracuda::profiler
