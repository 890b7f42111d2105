// GroupNormPlan and GroupNormBackwardPlan: select (kind, shape, groups, eps, which of weight and bias; the
// workspace), can_implement (operands, no overlap but y exactly x), run.
#include <algorithm>
#include <string>

#include "baracuda/ops/channel_norm.hpp"
#include "device/row_schedule.hpp"
#include "ops/channel_norm/plan_common.hpp"
#include "ops/norm/gradient_checks.hpp"

namespace baracuda {
namespace {

using namespace detail::channel_norm_plan;  // NOLINT(google-build-using-namespace): the family's helpers

constexpr std::string_view kForward = "GroupNormPlan";
constexpr std::string_view kBackward = "GroupNormBackwardPlan";

Status check_descriptor(std::string_view plan, const GroupNormDescriptor& d) {
  // One dimension more for the view [N, G, C/G, S...]: rank ≤ kMaxRank − 1.
  BARACUDA_TRY(check_common(plan, d.element, d.shape, d.eps, kMaxRank - 1));
  const int64_t c = d.shape.dims[1];
  if (d.groups < 1 || d.groups > std::max<int64_t>(c, 1))
    return Error::invalid(s(plan) + ": groups must be in [1, max(C, 1)] (C = " + std::to_string(c) + "), got " +
                          std::to_string(d.groups));
  if (c % d.groups != 0)
    return Error::invalid(s(plan) + ": the channels (" + std::to_string(c) + ") are not divisible by groups (" +
                          std::to_string(d.groups) + ")");
  return {};
}

/// The row kernel's table on a device (none on the host, which runs the composed path).
const detail::ChannelNormTable* group_rows_table(DeviceKind d) {
  switch (d) {
    case DeviceKind::Sim:
      return &device_sim::group_norm_rows_table();
#if BARACUDA_HAVE_CUDA_KERNELS
    case DeviceKind::Cuda:
      return &device_cuda::group_norm_rows_table();
#endif
    default:
      return nullptr;
  }
}

Shape view(const GroupNormDescriptor& d) { return detail::channel_norm_view_shape(d.shape, false, d.groups); }
size_t stats_bytes(const GroupNormDescriptor& d) {
  return align_up(static_cast<size_t>(d.shape.dims[0] * d.groups) * opmath_bytes(d.element));
}

}  // namespace

namespace dynamic {

Result<GroupNormPlan> GroupNormPlan::select(const Stream& stream, const GroupNormDescriptor& desc,
                                            PlanPreference pref) {
  BARACUDA_TRY(check_descriptor(kForward, desc));
  const detail::RowSchedule sched = detail::row_schedule(
      desc.shape.numel() / std::max<int64_t>(desc.shape.dims[0] * desc.groups, 1), element_bits(desc.element) / 8);
  const detail::ChannelNormTable* rows =
      sched != detail::RowSchedule::None ? group_rows_table(stream.device()) : nullptr;
  auto p = select_plan<GroupNormPlan>(kForward, stream, desc, pref, BARACUDA_DEVICE_TABLES(channel_norm_forward_table),
                                      "group_norm", rows,
                                      sched == detail::RowSchedule::WarpPerRow ? "rows_warp" : "rows_block");
  if (!p) return p.error();
  size_t partials = 0;
  if (rows == nullptr) {
    const auto bytes =
        partials_bytes(stream, view(desc), {{detail::channel_norm_stats_mask(false), moments_bytes(desc.element)}});
    if (!bytes) return bytes.error();
    partials = *bytes;
  }
  // mean and rstd (when the caller keeps neither), then the partials (the composed path's).
  p->workspace_bytes_ = 2 * stats_bytes(desc) + partials;
  return p;
}

Status GroupNormPlan::can_implement(const Args& args) const {
  using detail::Access;
  const Shape c{desc_.shape.dims[1]};
  const ElementKind k = desc_.element;
  BARACUDA_TRY(detail::check_tensor(kForward, "x", args.x, k, desc_.shape, Access::Read));
  BARACUDA_TRY(check_optional(kForward, "weight", args.weight, desc_.has_weight, k, c, Access::Read,
                              "the descriptor has no weight"));
  BARACUDA_TRY(
      check_optional(kForward, "bias", args.bias, desc_.has_bias, k, c, Access::Read, "the descriptor has no bias"));
  BARACUDA_TRY(detail::check_tensor(kForward, "y", args.y, k, desc_.shape, Access::Write));
  if (wanted(args.mean))
    BARACUDA_TRY(detail::check_tensor(kForward, "mean", args.mean, stats_kind(), stats_shape(), Access::Write));
  if (wanted(args.rstd))
    BARACUDA_TRY(detail::check_tensor(kForward, "rstd", args.rstd, stats_kind(), stats_shape(), Access::Write));
  return check_overlaps(kForward, {{"y", args.y}, {"mean", args.mean}, {"rstd", args.rstd}},
                        {{"x", args.x}, {"weight", args.weight}, {"bias", args.bias}});
}

Status GroupNormPlan::run(const Stream& stream, Workspace workspace, const Args& args) const {
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
  l.batch = false, l.groups = desc_.groups, l.eps = desc_.eps;
  l.x = args.x, l.weight = args.weight, l.bias = args.bias, l.y = args.y;
  l.mean = wanted(args.mean) ? args.mean : DynTensor::dense(ws, stats_kind(), stats_shape());
  l.rstd = wanted(args.rstd) ? args.rstd : DynTensor::dense(ws + stats, stats_kind(), stats_shape());
  l.partials = Workspace(ws + 2 * stats, workspace_bytes_ - 2 * stats);
  return fn_(*ctx, l);
}

Result<GroupNormBackwardPlan> GroupNormBackwardPlan::select(const Stream& stream, const GroupNormDescriptor& desc,
                                                            PlanPreference pref) {
  BARACUDA_TRY(check_descriptor(kBackward, desc));
  auto p = select_plan<GroupNormBackwardPlan>(
      kBackward, stream, desc, pref, BARACUDA_DEVICE_TABLES(channel_norm_backward_table), "group_norm_backward");
  if (!p) return p.error();
  const auto partials = partials_bytes(stream, view(desc),
                                       {{detail::channel_norm_stats_mask(false), sums_bytes(desc.element)},
                                        {detail::channel_norm_channel_mask(false), sums_bytes(desc.element)}});
  if (!partials) return partials.error();
  // Three coefficients per (n, g), then the partials.
  p->workspace_bytes_ = 3 * stats_bytes(desc) + *partials;
  return p;
}

Status GroupNormBackwardPlan::can_implement(const Args& args) const {
  using detail::Access;
  const Shape c{desc_.shape.dims[1]};
  const ElementKind k = desc_.element;
  BARACUDA_TRY(detail::check_tensor(kBackward, "dy", args.dy, k, desc_.shape, Access::Read));
  BARACUDA_TRY(detail::check_tensor(kBackward, "x", args.x, k, desc_.shape, Access::Read));
  BARACUDA_TRY(check_optional(kBackward, "weight", args.weight, desc_.has_weight, k, c, Access::Read,
                              "the descriptor has no weight"));
  BARACUDA_TRY(detail::check_tensor(kBackward, "mean", args.mean, stats_kind(), stats_shape(), Access::Read));
  BARACUDA_TRY(detail::check_tensor(kBackward, "rstd", args.rstd, stats_kind(), stats_shape(), Access::Read));
  BARACUDA_TRY(detail::check_norm_gradients(kBackward, args.dx, args.dweight, args.dbias, k, desc_.shape, c,
                                            desc_.has_weight, desc_.has_bias));
  return check_overlaps(
      kBackward, {{"dx", args.dx}, {"dweight", args.dweight}, {"dbias", args.dbias}},
      {{"dy", args.dy}, {"x", args.x}, {"weight", args.weight}, {"mean", args.mean}, {"rstd", args.rstd}});
}

Status GroupNormBackwardPlan::run(const Stream& stream, Workspace workspace, const Args& args) const {
  const detail::WorkspaceNeed need{workspace,
                                   workspace_bytes_,
                                   kAlign,
                                   "the per-group coefficients and partials",
                                   {{"dy", args.dy}, {"x", args.x}, {"dx", args.dx}}};
  const auto ctx = detail::begin_run(
      kBackward, binding_, stream, [&] { return can_implement(args); }, need, desc_.shape.numel() == 0);
  if (!ctx) return ctx.status();
  char* const ws = static_cast<char*>(workspace.data);
  const size_t coeffs = 3 * stats_bytes(desc_);
  detail::ChannelNormLaunch l;
  l.batch = false, l.groups = desc_.groups, l.eps = desc_.eps;
  l.dy = args.dy, l.x = args.x, l.weight = args.weight;
  l.mean = as_record(args.mean), l.rstd = as_record(args.rstd);
  l.dx = args.dx, l.dweight = args.dweight, l.dbias = args.dbias;
  l.coefficients = ws;
  l.partials = Workspace(ws + coeffs, workspace_bytes_ - coeffs);
  return fn_(*ctx, l);
}

}  // namespace dynamic
}  // namespace baracuda
