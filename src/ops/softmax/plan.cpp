// SoftmaxPlan and SoftmaxBackwardPlan: select (op, kind, dim, temperature, the mask's shape; the workspace:
// the per-slice statistics, then the reduction's partials), can_implement (operands, no overlap), run.
#include <cmath>
#include <string>

#include "baracuda/ops/softmax.hpp"
#include "core/elementwise_plan.hpp"
#include "core/plan_core.hpp"
#include "core/validate.hpp"
#include "device/row_schedule.hpp"
#include "device/segment_reduce_geometry.hpp"
#include "ops/softmax/dispatch.hpp"

namespace baracuda {
namespace {

constexpr std::string_view kForward = "SoftmaxPlan";
constexpr std::string_view kBackward = "SoftmaxBackwardPlan";
constexpr size_t kAlign = 256;

std::string s(std::string_view v) { return std::string(v); }

/// The descriptor's rules common to both directions, and its dimension normalized.
Result<int> check_descriptor(std::string_view plan, const SoftmaxDescriptor& d, bool forward) {
  if (d.op != SoftmaxOp::Softmax && d.op != SoftmaxOp::LogSoftmax)
    return Error::invalid(s(plan) + ": invalid SoftmaxOp");
  BARACUDA_TRY(detail::check_shape(plan, "the descriptor's shape", d.shape));
  BARACUDA_TRY(detail::check_kinds(plan, {d.element}));
  if (!is_floating(d.element))
    return Error::unsupported(s(plan) + ": takes f16, bf16, f32 and f64, not " + s(to_string(d.element)));
  const int r = d.shape.rank;
  if (r == 0 || d.dim < -r || d.dim >= r)
    return Error::invalid(s(plan) + ": dim " + std::to_string(d.dim) + " is out of range for rank " +
                          std::to_string(r));
  if (!(d.temperature > 0) || !std::isfinite(d.temperature))
    return Error::invalid(s(plan) + ": the temperature must be finite and > 0, got " + std::to_string(d.temperature));
  if (forward && d.has_mask) {
    BARACUDA_TRY(detail::check_shape(plan, "the mask's shape", d.mask_shape));
    bool ok = d.mask_shape.rank <= r;
    for (int i = 0; ok && i < d.mask_shape.rank; ++i) {
      const int64_t m = d.mask_shape.dims[d.mask_shape.rank - 1 - i], x = d.shape.dims[r - 1 - i];
      ok = m == x || m == 1;
    }
    if (!ok)
      return Error::invalid(s(plan) + ": the mask's shape " + to_string(d.mask_shape) + " does not broadcast to " +
                            to_string(d.shape));
  }
  return d.dim < 0 ? d.dim + r : d.dim;
}

/// The workspace of either direction on `stream`: the statistics, then the reduction's partials.
Result<size_t> workspace_for(const Stream& stream, const SoftmaxDescriptor& d, int dim, size_t acc_bytes) {
  size_t bytes = detail::softmax_stats_bytes(d.element, d.shape, dim);
  if (stream.device() == DeviceKind::Host) return bytes;
  auto ctx = detail::make_exec_context(stream);
  if (!ctx) return ctx.error();
  const uint32_t kept = ((1u << d.shape.rank) - 1u) & ~(1u << dim);
  return bytes + detail::segment_reduce_workspace_bytes(*ctx, d.shape, kept, acc_bytes);
}

size_t opmath_bytes(ElementKind k) { return k == ElementKind::F64 ? 8 : 4; }

const detail::SoftmaxTable* rows_table(DeviceKind d, bool forward) {
  switch (d) {
    case DeviceKind::Sim:
      return forward ? &device_sim::softmax_rows_table() : &device_sim::softmax_backward_rows_table();
#if BARACUDA_HAVE_CUDA_KERNELS
    case DeviceKind::Cuda:
      return forward ? &device_cuda::softmax_rows_table() : &device_cuda::softmax_backward_rows_table();
#endif
    default: return nullptr;  // the host runs the composed path
  }
}

/// What either direction's select finds: its binding, its kernel and its workspace.
struct Selection {
  detail::PlanBinding binding;
  detail::SoftmaxFn fn;
  size_t workspace;
};

Result<Selection> select_direction(std::string_view plan, const Stream& stream, const SoftmaxDescriptor& desc,
                                   PlanPreference pref, bool forward) {
  auto dim = check_descriptor(plan, desc, forward);
  if (!dim) return dim.error();
  auto dev = forward ? detail::select_device(plan, stream, pref, BARACUDA_DEVICE_TABLES(softmax_forward_table))
                     : detail::select_device(plan, stream, pref, BARACUDA_DEVICE_TABLES(softmax_backward_table));
  if (!dev) return dev.error();
  // Slices of up to kRowKernelBytes in shared memory (forward: x, or z in opmath with a mask; backward: dy
  // and y) on sim and cuda: the row kernel, no workspace.
  const auto element = static_cast<int64_t>(element_bits(desc.element) / 8);
  const int64_t slot_element =
      !forward ? 2 * element : desc.has_mask ? static_cast<int64_t>(opmath_bytes(desc.element)) : element;
  const detail::RowSchedule sched = detail::row_schedule(desc.shape.dims[*dim], slot_element);
  const detail::SoftmaxTable* rows =
      sched != detail::RowSchedule::None ? rows_table(stream.device(), forward) : nullptr;
  const auto fn = detail::kind_entry(plan, to_string(desc.op), rows != nullptr ? *rows : *dev->table, desc.element);
  if (!fn) return fn.error();
  const std::string_view op = forward ? to_string(desc.op)
                              : desc.op == SoftmaxOp::Softmax ? "softmax_backward"
                                                              : "log_softmax_backward";
  const std::string_view variant = rows == nullptr                               ? "segment_reduce+elementwise"
                                   : sched == detail::RowSchedule::WarpPerRow ? "rows_warp"
                                                                              : "rows_block";
  const auto binding = dev->bind(OpCategory::Softmax, op, desc.element, std::nullopt,
                                 detail::opmath_precision(desc.element), variant);
  if (rows != nullptr) return Selection{binding, *fn, 0};
  // The forward reduces (max, sum) pairs, the backward one sum.
  auto ws = workspace_for(stream, desc, *dim, (forward ? 2 : 1) * opmath_bytes(desc.element));
  if (!ws) return ws.error();
  return Selection{binding, *fn, *ws};
}

/// run's shared part: the workspace check, then the launch with the statistics and partials carved out.
template <class Plan>
Status run_with_workspace(std::string_view plan, const detail::PlanBinding& binding, const Stream& stream, Workspace ws,
                          size_t bytes, const SoftmaxDescriptor& d, detail::SoftmaxFn fn, detail::SoftmaxLaunch launch,
                          const Plan& self, const typename Plan::Args& args,
                          std::initializer_list<detail::NamedTensor> tensors) {
  const detail::WorkspaceNeed need{ws, bytes, kAlign, "the per-slice statistics and partials", tensors};
  const auto ctx = detail::begin_run(
      plan, binding, stream, [&] { return self.can_implement(args); }, need, d.shape.numel() == 0);
  if (!ctx) return ctx.status();
  const size_t stats = bytes == 0 ? 0 : detail::softmax_stats_bytes(d.element, d.shape, launch.dim);  // 0: rows
  launch.stats = ws.data;
  launch.partials = Workspace(static_cast<char*>(ws.data) + stats, bytes - stats);
  return fn(*ctx, launch);
}

}  // namespace

std::string_view to_string(SoftmaxOp op) {
  return op == SoftmaxOp::Softmax ? "softmax" : op == SoftmaxOp::LogSoftmax ? "log_softmax" : "?";
}

namespace dynamic {

Result<SoftmaxPlan> SoftmaxPlan::select(const Stream& stream, const SoftmaxDescriptor& desc, PlanPreference pref) {
  auto sel = select_direction(kForward, stream, desc, pref, true);
  if (!sel) return sel.error();
  SoftmaxPlan p(desc, sel->binding, sel->fn);
  p.workspace_bytes_ = sel->workspace;
  return p;
}

Status SoftmaxPlan::can_implement(const Args& args) const {
  using detail::Access;
  BARACUDA_TRY(detail::check_tensor(kForward, "x", args.x, desc_.element, desc_.shape, Access::Read));
  if (desc_.has_mask)
    BARACUDA_TRY(detail::check_tensor(kForward, "mask", args.mask, desc_.element, desc_.mask_shape, Access::Read));
  else
    BARACUDA_TRY(detail::check_absent(kForward, "mask", args.mask, "the descriptor has no mask"));
  BARACUDA_TRY(detail::check_tensor(kForward, "y", args.y, desc_.element, desc_.shape, Access::Write));
  BARACUDA_TRY(detail::check_no_overlap(kForward, "y", args.y, "x", args.x));
  return detail::check_no_overlap(kForward, "y", args.y, "mask", args.mask);
}

Status SoftmaxPlan::run(const Stream& stream, Workspace workspace, const Args& args) const {
  const int dim = desc_.dim < 0 ? desc_.dim + desc_.shape.rank : desc_.dim;
  const ConstDynTensor mask = desc_.has_mask ? detail::broadcast_view(args.mask, desc_.shape) : ConstDynTensor{};
  return run_with_workspace(
      kForward, binding_, stream, workspace, workspace_bytes_, desc_, fn_,
      detail::SoftmaxLaunch{desc_.op, args.x, mask, args.y, dim, 1.0 / desc_.temperature, nullptr, {}}, *this, args,
      {{"x", args.x}, {"mask", args.mask}, {"y", args.y}});
}

Result<SoftmaxBackwardPlan> SoftmaxBackwardPlan::select(const Stream& stream, const SoftmaxDescriptor& desc,
                                                        PlanPreference pref) {
  auto sel = select_direction(kBackward, stream, desc, pref, false);
  if (!sel) return sel.error();
  SoftmaxBackwardPlan p(desc, sel->binding, sel->fn);
  p.workspace_bytes_ = sel->workspace;
  return p;
}

Status SoftmaxBackwardPlan::can_implement(const Args& args) const {
  using detail::Access;
  BARACUDA_TRY(detail::check_tensor(kBackward, "dy", args.dy, desc_.element, desc_.shape, Access::Read));
  BARACUDA_TRY(detail::check_tensor(kBackward, "y", args.y, desc_.element, desc_.shape, Access::Read));
  BARACUDA_TRY(detail::check_tensor(kBackward, "dx", args.dx, desc_.element, desc_.shape, Access::Write));
  BARACUDA_TRY(detail::check_no_overlap(kBackward, "dx", args.dx, "dy", args.dy));
  return detail::check_no_overlap(kBackward, "dx", args.dx, "y", args.y);
}

Status SoftmaxBackwardPlan::run(const Stream& stream, Workspace workspace, const Args& args) const {
  const int dim = desc_.dim < 0 ? desc_.dim + desc_.shape.rank : desc_.dim;
  return run_with_workspace(
      kBackward, binding_, stream, workspace, workspace_bytes_, desc_, fn_,
      detail::SoftmaxLaunch{desc_.op, args.dy, args.y, args.dx, dim, 1.0 / desc_.temperature, nullptr, {}}, *this, args,
      {{"dy", args.dy}, {"y", args.y}, {"dx", args.dx}});
}

}  // namespace dynamic
}  // namespace baracuda
