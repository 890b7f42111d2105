// GroupNormPlan, BatchNormPlan and their backward over [N, C, *] activations (on cuda: a Stable Diffusion
// U-Net's GroupNorm, [8, 512, 64, 64] with 32 groups, and a ResNet-50 BatchNorm, [64, 256, 56, 56]); groups is
// gcd(C, 32). GroupNorm with weight and bias writes y, mean and rstd; BatchNorm in training writes y, mean, rstd
// and updates the running statistics (input operands here, read and written in place: the outputs compared
// with the host's, y, mean and rstd, do not depend on them, however often a run repeats); BatchNorm inference
// reads the running statistics; the backward plans write dx, dweight and dbias from dy, x, w and the statistics. GB/s
// counts each full tensor once (the forward reads x twice: once for the statistics, once for y; the backward
// reads dy and x twice).
#include <array>
#include <baracuda/ops/channel_norm.hpp>
#include <numeric>
#include <type_traits>

#include "common.hpp"
#include "scenarios.hpp"

namespace baracuda::profiler {
namespace {

// Variants: 0 group_norm, 1 its backward, 2 batch_norm (training), 3 its backward, 4 batch_norm inference.
bool batch(const Problem& p) { return p.variant >= 2; }
bool backward(const Problem& p) { return p.variant == 1 || p.variant == 3; }

/// The problem's [N, C, *] shape (a rank-1 shape gets N = 2; none: [2, 8, 5, 7]).
Shape x_shape(const Problem& p) {
  if (p.shape.rank == 0) return Shape{2, 8, 5, 7};
  if (p.shape.rank >= 2) return p.shape;
  return Shape{2, p.shape.dims[0]};
}
int64_t groups(const Problem& p) { return std::gcd(x_shape(p).dims[1], int64_t{32}); }

GroupNormDescriptor group_descriptor(const Problem& p) {
  return GroupNormDescriptor().with_element(p.dtype).with_shape(x_shape(p)).with_groups(groups(p));
}
BatchNormDescriptor batch_descriptor(const Problem& p) {
  return BatchNormDescriptor().with_element(p.dtype).with_shape(x_shape(p)).with_training(p.variant != 4);
}

ElementKind stats_kind(const Problem& p) { return p.dtype == ElementKind::F64 ? ElementKind::F64 : ElementKind::F32; }

/// GroupNorm: (x, w, b; y, mean, rstd).
struct BindGroupNorm {
  static dynamic::GroupNormArgs bind(const dynamic::GroupNormPlan&, const DynTensor& x, const DynTensor& w,
                                     const DynTensor& b, const DynTensor& y, const DynTensor& mean,
                                     const DynTensor& rstd) {
    return {x, w, b, y, mean, rstd};
  }
};
/// Both backward plans: (dy, x, w, mean, rstd; dx, dweight, dbias).
struct BindGroupNormBackward {
  static dynamic::GroupNormBackwardArgs bind(const dynamic::GroupNormBackwardPlan&, const DynTensor& dy,
                                             const DynTensor& x, const DynTensor& w, const DynTensor& mean,
                                             const DynTensor& rstd, const DynTensor& dx, const DynTensor& dw,
                                             const DynTensor& db) {
    return {dy, x, w, mean, rstd, dx, dw, db};
  }
};
struct BindBatchNormBackward {
  static dynamic::BatchNormBackwardArgs bind(const dynamic::BatchNormBackwardPlan&, const DynTensor& dy,
                                             const DynTensor& x, const DynTensor& w, const DynTensor& mean,
                                             const DynTensor& rstd, const DynTensor& dx, const DynTensor& dw,
                                             const DynTensor& db) {
    return {dy, x, w, mean, rstd, {}, {}, dx, dw, db};
  }
};
/// Training: (x, w, b, running_mean, running_var; y, mean, rstd). Inference: (x, w, b, running_mean,
/// running_var; y).
struct BindBatchNorm {
  static dynamic::BatchNormArgs bind(const dynamic::BatchNormPlan&, const DynTensor& x, const DynTensor& w,
                                     const DynTensor& b, const DynTensor& rm, const DynTensor& rv, const DynTensor& y,
                                     const DynTensor& mean, const DynTensor& rstd) {
    return {x, w, b, y, mean, rstd, rm, rv};
  }
  static dynamic::BatchNormArgs bind(const dynamic::BatchNormPlan&, const DynTensor& x, const DynTensor& w,
                                     const DynTensor& b, const DynTensor& rm, const DynTensor& rv, const DynTensor& y) {
    return {x, w, b, y, {}, {}, rm, rv};
  }
};

Result<KernelSku> select_sku(const Stream& s, const Problem& p) {
  if (!batch(p)) {
    if (backward(p)) return sku_of(dynamic::GroupNormBackwardPlan::select(s, group_descriptor(p)));
    return sku_of(dynamic::GroupNormPlan::select(s, group_descriptor(p)));
  }
  if (backward(p)) return sku_of(dynamic::BatchNormBackwardPlan::select(s, batch_descriptor(p)));
  return sku_of(dynamic::BatchNormPlan::select(s, batch_descriptor(p)));
}

template <class Bind, size_t NIn, size_t NOut, class Select>
Result<std::unique_ptr<Instance>> make(const Stream& s, const Problem& p, Select select,
                                       const std::array<OperandSpec, NIn>& in,
                                       const std::array<OperandSpec, NOut>& out) {
  auto plan = select(s);
  if (!plan) return plan.error();
  using Plan = PositionalPlan<std::remove_cvref_t<decltype(*plan)>, Bind>;
  return PlanInstance<Plan, NIn, NOut>::make(s, Plan{std::move(plan).value()}, p, in, out);
}

Result<std::unique_ptr<Instance>> prepare(const Stream& s, const Problem& p) {
  const Shape x = x_shape(p), c{x.dims[1]};
  const Shape st = batch(p) ? c : Shape{x.dims[0], groups(p)};
  const ElementKind k = p.dtype, sk = stats_kind(p);
  const OperandSpec xs{k, x, ValueRange{-2, 3, false}}, ws{k, c, ValueRange{0.5, 1.5, false}},
      bs{k, c, ValueRange{-1, 1, false}}, dys{k, x, ValueRange{-1, 1, false}}, means{sk, st, ValueRange{0, 1, false}},
      rstds{sk, st, ValueRange{0.5, 2, false}}, rms{k, c, ValueRange{-0.5, 0.5, false}},
      rvs{k, c, ValueRange{0.5, 2, false}}, xo{k, x, {}}, co{k, c, {}}, so{sk, st, {}};
  const auto group_fwd = [&](const Stream& st2) { return dynamic::GroupNormPlan::select(st2, group_descriptor(p)); };
  const auto group_bwd = [&](const Stream& st2) {
    return dynamic::GroupNormBackwardPlan::select(st2, group_descriptor(p));
  };
  const auto batch_fwd = [&](const Stream& st2) { return dynamic::BatchNormPlan::select(st2, batch_descriptor(p)); };
  const auto batch_bwd = [&](const Stream& st2) {
    return dynamic::BatchNormBackwardPlan::select(st2, batch_descriptor(p));
  };
  switch (p.variant) {
    case 0:
      return make<BindGroupNorm, 3, 3>(s, p, group_fwd, {xs, ws, bs}, {xo, so, so});
    case 1:
      return make<BindGroupNormBackward, 5, 3>(s, p, group_bwd, {dys, xs, ws, means, rstds}, {xo, co, co});
    case 2:  // the running statistics are inputs, updated in place
      return make<BindBatchNorm, 5, 3>(s, p, batch_fwd, {xs, ws, bs, rms, rvs}, {xo, so, so});
    case 3:
      return make<BindBatchNormBackward, 5, 3>(s, p, batch_bwd, {dys, xs, ws, means, rstds}, {xo, co, co});
    default:
      return make<BindBatchNorm, 5, 1>(s, p, batch_fwd, {xs, ws, bs, rms, rvs}, std::array<OperandSpec, 1>{xo});
  }
}

Traffic traffic(const Problem& p) {
  const double x = static_cast<double>(storage_bytes(p.dtype, x_shape(p).numel()));
  return Traffic{backward(p) ? 3 * x : 2 * x, 0};  // x in, y out; dy and x in, dx out
}

/// The backward's sums: dx over its statistic's elements (a group's, or a channel's across the batch), the weight
/// and bias gradients over each channel's elements.
int64_t summed_terms(const Problem& p, size_t output) {
  if (!backward(p)) return 1;
  const Shape x = x_shape(p);
  const int64_t per_channel = x.numel() / x.dims[1];
  if (output != 0 || batch(p)) return per_channel;
  return x.numel() / (x.dims[0] * groups(p));
}

std::vector<Shape> default_shapes(DeviceKind device) {
  if (device == DeviceKind::Cuda) return {Shape{8, 512, 64, 64}, Shape{64, 256, 56, 56}};
  return {Shape{2, 8, 5, 7}, Shape{3, 6, 33}};
}

constexpr ScenarioFamily kChannelNorm{.family = "channel_norm",
                                      .select = select_sku,
                                      .prepare = prepare,
                                      .traffic = traffic,
                                      .default_kinds = float_kinds,
                                      .default_shapes = default_shapes,
                                      .output = OutputKind::SameAsInput,
                                      .comparison = Comparison::Tolerance,
                                      .summed_terms = summed_terms};

}  // namespace

void add_channel_norm_scenarios(std::vector<Scenario>& out) {
  out.push_back(kChannelNorm.op("group_norm", "GroupNorm of [N, C, *] (groups = gcd(C, 32)) with weight and bias", 0));
  out.push_back(kChannelNorm.op("group_norm_backward", "dx, dweight and dbias of GroupNorm", 1));
  out.push_back(kChannelNorm.op("batch_norm", "BatchNorm training: batch statistics, running statistics updated", 2));
  out.push_back(kChannelNorm.op("batch_norm_backward", "dx, dweight and dbias of BatchNorm in training", 3));
  out.push_back(kChannelNorm.op("batch_norm_inference", "BatchNorm inference with the running statistics", 4));
}

}  // namespace baracuda::profiler
