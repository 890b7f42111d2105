// NormPlan and NormBackwardPlan: select (op, kind, shape, eps, which of weight and bias; the workspace: the
// statistics the caller does not keep, the backward's per-row coefficients, the reductions' partials),
// can_implement (operands, no overlap), run.
#include <algorithm>
#include <cmath>
#include <string>

#include "baracuda/ops/norm.hpp"
#include "core/plan_core.hpp"
#include "core/validate.hpp"
#include "device/segment_reduce_geometry.hpp"
#include "ops/norm/dispatch.hpp"

namespace baracuda {
namespace {

constexpr std::string_view kForward = "NormPlan";
constexpr std::string_view kBackward = "NormBackwardPlan";
constexpr size_t kAlign = 256;

std::string s(std::string_view v) { return std::string(v); }
size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }
size_t opmath_bytes(ElementKind k) { return k == ElementKind::F64 ? 8 : 4; }

Shape rows_shape(const Shape& x) {
  Shape r = x;
  --r.rank;
  return r;
}

Status check_descriptor(std::string_view plan, const NormDescriptor& d) {
  if (d.op != NormOp::RmsNorm && d.op != NormOp::LayerNorm) return Error::invalid(s(plan) + ": invalid NormOp");
  BARACUDA_TRY(detail::check_shape(plan, "the descriptor's shape", d.shape));
  BARACUDA_TRY(detail::check_kinds(plan, {d.element}));
  if (!is_floating(d.element))
    return Error::unsupported(s(plan) + ": takes f16, bf16, f32 and f64, not " + s(to_string(d.element)));
  if (d.shape.rank == 0) return Error::invalid(s(plan) + ": x needs a dimension to normalize (rank >= 1)");
  if (!(d.eps >= 0) || !std::isfinite(d.eps))
    return Error::invalid(s(plan) + ": eps must be finite and >= 0, got " + std::to_string(d.eps));
  if (d.op == NormOp::RmsNorm && d.has_bias) return Error::invalid(s(plan) + ": RmsNorm takes no bias");
  return {};
}

/// Bytes the reductions' two-pass schedule needs on `stream` (the largest of the family's reductions).
Result<size_t> partials_bytes(const Stream& stream, const NormDescriptor& d) {
  if (stream.device() == DeviceKind::Host) return size_t{0};
  auto ctx = detail::make_exec_context(stream);
  if (!ctx) return ctx.error();
  const size_t m = opmath_bytes(d.element);
  const uint32_t all = (1u << d.shape.rank) - 1u, columns = 1u << (d.shape.rank - 1);
  const size_t rows = detail::segment_reduce_workspace_bytes(*ctx, d.shape, all & ~columns, 2 * m + 8);
  const size_t cols = detail::segment_reduce_workspace_bytes(*ctx, d.shape, columns, m);
  return align_up(std::max(rows, cols));
}

/// Either direction's select: the descriptor, the device's table and kernel, and the binding.
template <class Plan, class Tables>
Result<Plan> select_direction(std::string_view plan, const Stream& stream, const NormDescriptor& desc,
                              PlanPreference pref, Tables&& tables, std::string_view op) {
  BARACUDA_TRY(check_descriptor(plan, desc));
  auto dev = detail::select_device(plan, stream, pref, tables);
  if (!dev) return dev.error();
  const auto fn = detail::kind_entry(plan, to_string(desc.op), *dev->table, desc.element);
  if (!fn) return fn.error();
  return detail::PlanAccess::make<Plan>(desc,
                                        dev->bind(OpCategory::Normalization, op, desc.element, std::nullopt,
                                                  detail::opmath_precision(desc.element), "segment_reduce+elementwise"),
                                        *fn);
}

/// A tensor the descriptor says is present (checked as `expected`), or absent (must be empty).
Status check_optional(std::string_view plan, std::string_view name, const ConstDynTensor& t, bool present,
                      ElementKind kind, const Shape& expected, detail::Access access, std::string_view why) {
  if (!present) return detail::check_absent(plan, name, t, why);
  return detail::check_tensor(plan, name, t, kind, expected, access);
}

bool wanted(const ConstDynTensor& t) { return t.data != nullptr; }

}  // namespace

std::string_view to_string(NormOp op) {
  return op == NormOp::RmsNorm ? "rms_norm" : op == NormOp::LayerNorm ? "layer_norm" : "?";
}

namespace dynamic {

Result<NormPlan> NormPlan::select(const Stream& stream, const NormDescriptor& desc, PlanPreference pref) {
  auto p = select_direction<NormPlan>(kForward, stream, desc, pref, BARACUDA_DEVICE_TABLES(norm_forward_table),
                                      to_string(desc.op));
  if (!p) return p.error();
  auto partials = partials_bytes(stream, desc);
  if (!partials) return partials.error();
  p->stats_shape_ = rows_shape(desc.shape);
  // Room for mean and rstd when the caller keeps neither, then the partials.
  p->workspace_bytes_ =
      2 * align_up(static_cast<size_t>(p->stats_shape_.numel()) * opmath_bytes(desc.element)) + *partials;
  return p;
}

Status NormPlan::can_implement(const Args& args) const {
  using detail::Access;
  const Shape h{desc_.shape.dims[desc_.shape.rank - 1]};
  const ElementKind k = desc_.element;
  BARACUDA_TRY(detail::check_tensor(kForward, "x", args.x, k, desc_.shape, Access::Read));
  BARACUDA_TRY(check_optional(kForward, "weight", args.weight, desc_.has_weight, k, h, Access::Read,
                              "the descriptor has no weight"));
  BARACUDA_TRY(
      check_optional(kForward, "bias", args.bias, desc_.has_bias, k, h, Access::Read, "the descriptor has no bias"));
  BARACUDA_TRY(detail::check_tensor(kForward, "y", args.y, k, desc_.shape, Access::Write));
  if (wanted(args.mean)) {
    if (desc_.op != NormOp::LayerNorm) return Error::invalid(s(kForward) + ": mean must be empty: RmsNorm has no mean");
    BARACUDA_TRY(detail::check_tensor(kForward, "mean", args.mean, stats_kind(), stats_shape_, Access::Write));
  }
  if (wanted(args.rstd))
    BARACUDA_TRY(detail::check_tensor(kForward, "rstd", args.rstd, stats_kind(), stats_shape_, Access::Write));
  for (const auto& [name, out] : {std::pair{"y", args.y}, std::pair{"mean", args.mean}, std::pair{"rstd", args.rstd}})
    for (const auto& [in_name, in] :
         {std::pair{"x", args.x}, std::pair{"weight", args.weight}, std::pair{"bias", args.bias}})
      BARACUDA_TRY(detail::check_no_overlap(kForward, name, out, in_name, in));
  return {};
}

Status NormPlan::run(const Stream& stream, Workspace workspace, const Args& args) const {
  const detail::WorkspaceNeed need{workspace,
                                   workspace_bytes_,
                                   kAlign,
                                   "the statistics and partials",
                                   {{"x", args.x}, {"y", args.y}, {"mean", args.mean}, {"rstd", args.rstd}}};
  const auto ctx = detail::begin_run(
      kForward, binding_, stream, [&] { return can_implement(args); }, need, desc_.shape.numel() == 0);
  if (!ctx) return ctx.status();
  char* const ws = static_cast<char*>(workspace.data);
  const size_t part = align_up(static_cast<size_t>(stats_shape_.numel()) * opmath_bytes(desc_.element));
  detail::NormLaunch l;
  l.op = desc_.op, l.eps = desc_.eps, l.x = args.x, l.weight = args.weight, l.bias = args.bias, l.y = args.y;
  l.mean = wanted(args.mean) ? args.mean : DynTensor::dense(ws, stats_kind(), stats_shape_);
  l.rstd = wanted(args.rstd) ? args.rstd : DynTensor::dense(ws + part, stats_kind(), stats_shape_);
  l.partials = Workspace(ws + 2 * part, workspace_bytes_ - 2 * part);
  return fn_(*ctx, l);
}

Result<NormBackwardPlan> NormBackwardPlan::select(const Stream& stream, const NormDescriptor& desc,
                                                  PlanPreference pref) {
  const std::string_view op = desc.op == NormOp::RmsNorm ? "rms_norm_backward" : "layer_norm_backward";
  auto p = select_direction<NormBackwardPlan>(kBackward, stream, desc, pref,
                                              BARACUDA_DEVICE_TABLES(norm_backward_table), op);
  if (!p) return p.error();
  auto partials = partials_bytes(stream, desc);
  if (!partials) return partials.error();
  p->stats_shape_ = rows_shape(desc.shape);
  // Three coefficients per row, then the partials.
  p->workspace_bytes_ =
      align_up(3 * static_cast<size_t>(p->stats_shape_.numel()) * opmath_bytes(desc.element)) + *partials;
  return p;
}

Status NormBackwardPlan::can_implement(const Args& args) const {
  using detail::Access;
  const Shape h{desc_.shape.dims[desc_.shape.rank - 1]};
  const ElementKind k = desc_.element;
  const bool layer = desc_.op == NormOp::LayerNorm;
  BARACUDA_TRY(detail::check_tensor(kBackward, "dy", args.dy, k, desc_.shape, Access::Read));
  BARACUDA_TRY(detail::check_tensor(kBackward, "x", args.x, k, desc_.shape, Access::Read));
  BARACUDA_TRY(check_optional(kBackward, "weight", args.weight, desc_.has_weight, k, h, Access::Read,
                              "the descriptor has no weight"));
  if (layer)
    BARACUDA_TRY(detail::check_tensor(kBackward, "mean", args.mean, stats_kind(), stats_shape_, Access::Read));
  else
    BARACUDA_TRY(detail::check_absent(kBackward, "mean", args.mean, "RmsNorm has no mean"));
  BARACUDA_TRY(detail::check_tensor(kBackward, "rstd", args.rstd, stats_kind(), stats_shape_, Access::Read));
  if (wanted(args.dx)) BARACUDA_TRY(detail::check_tensor(kBackward, "dx", args.dx, k, desc_.shape, Access::Write));
  if (wanted(args.dweight)) {
    if (!desc_.has_weight)
      return Error::invalid(s(kBackward) + ": dweight must be empty: the descriptor has no weight");
    BARACUDA_TRY(detail::check_tensor(kBackward, "dweight", args.dweight, k, h, Access::Write));
  }
  if (wanted(args.dbias)) {
    if (!desc_.has_bias) return Error::invalid(s(kBackward) + ": dbias must be empty: the descriptor has no bias");
    BARACUDA_TRY(detail::check_tensor(kBackward, "dbias", args.dbias, k, h, Access::Write));
  }
  if (!wanted(args.dx) && !wanted(args.dweight) && !wanted(args.dbias))
    return Error::invalid(s(kBackward) + ": none of dx, dweight and dbias is requested");
  for (const auto& [name, out] :
       {std::pair{"dx", args.dx}, std::pair{"dweight", args.dweight}, std::pair{"dbias", args.dbias}})
    for (const auto& [in_name, in] :
         {std::pair{"dy", args.dy}, std::pair{"x", args.x}, std::pair{"weight", args.weight},
          std::pair{"mean", args.mean}, std::pair{"rstd", args.rstd}})
      BARACUDA_TRY(detail::check_no_overlap(kBackward, name, out, in_name, in));
  return {};
}

Status NormBackwardPlan::run(const Stream& stream, Workspace workspace, const Args& args) const {
  const detail::WorkspaceNeed need{workspace,
                                   workspace_bytes_,
                                   kAlign,
                                   "the per-row coefficients and partials",
                                   {{"dy", args.dy}, {"x", args.x}, {"dx", args.dx}}};
  const auto ctx = detail::begin_run(
      kBackward, binding_, stream, [&] { return can_implement(args); }, need, desc_.shape.numel() == 0);
  if (!ctx) return ctx.status();
  char* const ws = static_cast<char*>(workspace.data);
  const size_t coeffs = align_up(3 * static_cast<size_t>(stats_shape_.numel()) * opmath_bytes(desc_.element));
  detail::NormLaunch l;
  l.op = desc_.op, l.eps = desc_.eps, l.dy = args.dy, l.x = args.x, l.weight = args.weight;
  // The launch record holds the statistics as DynTensor (the forward writes them); the backward only reads.
  const auto as_record = [](const ConstDynTensor& t) {
    DynTensor d;
    static_cast<detail::DynTensorLayout&>(d) = t;
    d.data = const_cast<void*>(t.data);
    return d;
  };
  l.mean = as_record(args.mean);
  l.rstd = as_record(args.rstd);
  l.dx = args.dx, l.dweight = args.dweight, l.dbias = args.dbias;
  l.coefficients = ws;
  l.partials = Workspace(ws + coeffs, workspace_bytes_ - coeffs);
  return fn_(*ctx, l);
}

}  // namespace dynamic
}  // namespace baracuda
