// BatchNormPlan and BatchNormBackwardPlan: select (kind, shape, eps, momentum, training or inference, the
// running statistics, which of weight and bias; the workspace), can_implement (operands, no overlap but y
// exactly x; the running statistics are read-write in a training forward), run.
#include <string>

#include "baracuda/ops/channel_norm.hpp"
#include "ops/channel_norm/plan_common.hpp"
#include "ops/norm/gradient_checks.hpp"

namespace baracuda {
namespace {

using namespace detail::channel_norm_plan;  // NOLINT(google-build-using-namespace): the family's helpers

constexpr std::string_view kForward = "BatchNormPlan";
constexpr std::string_view kBackward = "BatchNormBackwardPlan";

Status check_descriptor(std::string_view plan, const BatchNormDescriptor& d) {
  BARACUDA_TRY(check_common(plan, d.element, d.shape, d.eps, kMaxRank));
  if (!(d.momentum >= 0 && d.momentum <= 1))
    return Error::invalid(s(plan) + ": momentum must be in [0, 1], got " + std::to_string(d.momentum));
  if (!d.training && !d.has_running_stats)
    return Error::invalid(s(plan) +
                          ": inference (training = false) normalizes with the running statistics: "
                          "has_running_stats is required");
  if (d.training && d.shape.numel() > 0 && d.shape.numel() / d.shape.dims[1] < 2)
    return Error::invalid(s(plan) + ": training needs more than 1 value per channel, got " +
                          std::to_string(d.shape.numel() / d.shape.dims[1]));
  return {};
}

size_t stats_bytes(const BatchNormDescriptor& d) {
  return align_up(static_cast<size_t>(d.shape.dims[1]) * opmath_bytes(d.element));
}

}  // namespace

namespace dynamic {

Result<BatchNormPlan> BatchNormPlan::select(const Stream& stream, const BatchNormDescriptor& desc,
                                            PlanPreference pref) {
  BARACUDA_TRY(check_descriptor(kForward, desc));
  auto p = select_plan<BatchNormPlan>(kForward, stream, desc, pref, BARACUDA_DEVICE_TABLES(channel_norm_forward_table),
                                      desc.training ? "batch_norm" : "batch_norm_inference");
  if (!p) return p.error();
  size_t partials = 0;
  if (desc.training) {
    auto bytes =
        partials_bytes(stream, desc.shape, {{detail::channel_norm_stats_mask(true), moments_bytes(desc.element)}});
    if (!bytes) return bytes.error();
    partials = *bytes;
  }
  // Training: mean and rstd (when the caller keeps neither), then the partials. Inference: none.
  p->workspace_bytes_ = desc.training ? 2 * stats_bytes(desc) + partials : 0;
  return p;
}

Status BatchNormPlan::can_implement(const Args& args) const {
  using detail::Access;
  const Shape c{desc_.shape.dims[1]};
  const ElementKind k = desc_.element;
  const bool train = desc_.training, running = desc_.has_running_stats;
  BARACUDA_TRY(detail::check_tensor(kForward, "x", args.x, k, desc_.shape, Access::Read));
  BARACUDA_TRY(check_optional(kForward, "weight", args.weight, desc_.has_weight, k, c, Access::Read,
                              "the descriptor has no weight"));
  BARACUDA_TRY(
      check_optional(kForward, "bias", args.bias, desc_.has_bias, k, c, Access::Read, "the descriptor has no bias"));
  BARACUDA_TRY(detail::check_tensor(kForward, "y", args.y, k, desc_.shape, Access::Write));
  const char* inference = "inference writes no statistics";
  for (const auto& [name, t] : {std::pair{"mean", args.mean}, std::pair{"rstd", args.rstd}}) {
    if (!train)
      BARACUDA_TRY(detail::check_absent(kForward, name, t, inference));
    else if (wanted(t))
      BARACUDA_TRY(detail::check_tensor(kForward, name, t, stats_kind(), stats_shape(), Access::Write));
  }
  const Access stats_access = train ? Access::Write : Access::Read;
  const char* none = "the descriptor has no running statistics";
  BARACUDA_TRY(check_optional(kForward, "running_mean", args.running_mean, running, k, c, stats_access, none));
  BARACUDA_TRY(check_optional(kForward, "running_var", args.running_var, running, k, c, stats_access, none));
  if (train)  // the running statistics are read and written: they overlap nothing
    return check_overlaps(kForward,
                          {{"y", args.y},
                           {"mean", args.mean},
                           {"rstd", args.rstd},
                           {"running_mean", args.running_mean},
                           {"running_var", args.running_var}},
                          {{"x", args.x}, {"weight", args.weight}, {"bias", args.bias}});
  return check_overlaps(kForward, {{"y", args.y}},
                        {{"x", args.x},
                         {"weight", args.weight},
                         {"bias", args.bias},
                         {"running_mean", args.running_mean},
                         {"running_var", args.running_var}});
}

Status BatchNormPlan::run(const Stream& stream, Workspace workspace, const Args& args) const {
  const detail::WorkspaceNeed need{workspace,
                                   workspace_bytes_,
                                   kAlign,
                                   "the statistics and the partials",
                                   {{"x", args.x}, {"y", args.y}, {"mean", args.mean}, {"rstd", args.rstd}}};
  const auto ctx = detail::begin_run(
      kForward, binding_, stream, [&] { return can_implement(args); }, need, desc_.shape.numel() == 0);
  if (!ctx) return ctx.status();
  char* const ws = static_cast<char*>(workspace.data);
  const size_t stats = stats_bytes(desc_);
  detail::ChannelNormLaunch l;
  l.batch = true, l.training = desc_.training, l.eps = desc_.eps, l.momentum = desc_.momentum;
  l.x = args.x, l.weight = args.weight, l.bias = args.bias, l.y = args.y;
  l.running_mean = args.running_mean, l.running_var = args.running_var;
  if (desc_.training) {
    l.mean = wanted(args.mean) ? args.mean : DynTensor::dense(ws, stats_kind(), stats_shape());
    l.rstd = wanted(args.rstd) ? args.rstd : DynTensor::dense(ws + stats, stats_kind(), stats_shape());
    l.partials = Workspace(ws + 2 * stats, workspace_bytes_ - 2 * stats);
  }
  return fn_(*ctx, l);
}

Result<BatchNormBackwardPlan> BatchNormBackwardPlan::select(const Stream& stream, const BatchNormDescriptor& desc,
                                                            PlanPreference pref) {
  BARACUDA_TRY(check_descriptor(kBackward, desc));
  auto p = select_plan<BatchNormBackwardPlan>(kBackward, stream, desc, pref,
                                              BARACUDA_DEVICE_TABLES(channel_norm_backward_table),
                                              desc.training ? "batch_norm_backward" : "batch_norm_inference_backward");
  if (!p) return p.error();
  const auto partials =
      partials_bytes(stream, desc.shape, {{detail::channel_norm_stats_mask(true), sums_bytes(desc.element)}});
  if (!partials) return partials.error();
  // Three coefficients per channel, then the partials.
  p->workspace_bytes_ = 3 * stats_bytes(desc) + *partials;
  return p;
}

Status BatchNormBackwardPlan::can_implement(const Args& args) const {
  using detail::Access;
  const Shape c{desc_.shape.dims[1]};
  const ElementKind k = desc_.element;
  const bool train = desc_.training;
  BARACUDA_TRY(detail::check_tensor(kBackward, "dy", args.dy, k, desc_.shape, Access::Read));
  BARACUDA_TRY(detail::check_tensor(kBackward, "x", args.x, k, desc_.shape, Access::Read));
  BARACUDA_TRY(check_optional(kBackward, "weight", args.weight, desc_.has_weight, k, c, Access::Read,
                              "the descriptor has no weight"));
  const char* train_why = "training's backward reads the saved mean and rstd";
  const char* eval_why = "inference's backward reads the running statistics";
  BARACUDA_TRY(check_optional(kBackward, "mean", args.mean, train, stats_kind(), c, Access::Read, eval_why));
  BARACUDA_TRY(check_optional(kBackward, "rstd", args.rstd, train, stats_kind(), c, Access::Read, eval_why));
  BARACUDA_TRY(check_optional(kBackward, "running_mean", args.running_mean, !train, k, c, Access::Read, train_why));
  BARACUDA_TRY(check_optional(kBackward, "running_var", args.running_var, !train, k, c, Access::Read, train_why));
  BARACUDA_TRY(detail::check_norm_gradients(kBackward, args.dx, args.dweight, args.dbias, k, desc_.shape, c,
                                            desc_.has_weight, desc_.has_bias));
  return check_overlaps(kBackward, {{"dx", args.dx}, {"dweight", args.dweight}, {"dbias", args.dbias}},
                        {{"dy", args.dy},
                         {"x", args.x},
                         {"weight", args.weight},
                         {"mean", args.mean},
                         {"rstd", args.rstd},
                         {"running_mean", args.running_mean},
                         {"running_var", args.running_var}});
}

Status BatchNormBackwardPlan::run(const Stream& stream, Workspace workspace, const Args& args) const {
  const detail::WorkspaceNeed need{workspace,
                                   workspace_bytes_,
                                   kAlign,
                                   "the per-channel coefficients and partials",
                                   {{"dy", args.dy}, {"x", args.x}, {"dx", args.dx}}};
  const auto ctx = detail::begin_run(
      kBackward, binding_, stream, [&] { return can_implement(args); }, need, desc_.shape.numel() == 0);
  if (!ctx) return ctx.status();
  char* const ws = static_cast<char*>(workspace.data);
  const size_t coeffs = 3 * stats_bytes(desc_);
  detail::ChannelNormLaunch l;
  l.batch = true, l.training = desc_.training, l.eps = desc_.eps;
  l.dy = args.dy, l.x = args.x, l.weight = args.weight;
  l.mean = as_record(args.mean), l.rstd = as_record(args.rstd);
  l.running_mean = as_record(args.running_mean), l.running_var = as_record(args.running_var);
  l.dx = args.dx, l.dweight = args.dweight, l.dbias = args.dbias;
  l.coefficients = ws;
  l.partials = Workspace(ws + coeffs, workspace_bytes_ - coeffs);
  return fn_(*ctx, l);
}

}  // namespace dynamic
}  // namespace baracuda
