// NormPlan and NormBackwardPlan: select (op, kind, shape, eps, which of weight and bias, the fused residual
// and quantized output; the path: the row kernel or the composed one; the workspace), can_implement
// (operands, no overlap but the forward's exact in-place aliases), run.
#include <algorithm>
#include <cmath>
#include <string>

#include "baracuda/ops/norm.hpp"
#include "core/plan_core.hpp"
#include "core/validate.hpp"
#include "device/segment_reduce_geometry.hpp"
#include "ops/norm/dispatch.hpp"
#include "ops/norm/gradient_checks.hpp"
#include "ops/norm/quant_chain.hpp"

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
  if (static_cast<uint8_t>(d.quant) > static_cast<uint8_t>(NormQuant::Fp8))
    return Error::invalid(s(plan) + ": invalid NormQuant");
  if (plan == kBackward && (d.has_residual || d.quant != NormQuant::None))
    return Error::invalid(s(plan) + ": the residual and the quantized output are the forward's (the backward of "
                                    "the fused norm is the backward on h)");
  return {};
}

/// The SKU's op name of a forward: the norm, with the fused parts.
std::string_view forward_op_name(const NormDescriptor& d) {
  static constexpr std::string_view kNames[2][2][4] = {
      {{"rms_norm", "rms_norm_static", "rms_norm_dynamic", "rms_norm_fp8"},
       {"add_rms_norm", "add_rms_norm_static", "add_rms_norm_dynamic", "add_rms_norm_fp8"}},
      {{"layer_norm", "layer_norm_static", "layer_norm_dynamic", "layer_norm_fp8"},
       {"add_layer_norm", "add_layer_norm_static", "add_layer_norm_dynamic", "add_layer_norm_fp8"}}};
  return kNames[d.op == NormOp::LayerNorm][d.has_residual][static_cast<size_t>(d.quant) % 4];
}

/// The row kernels' table of a direction on a device (none on the host, which runs the composed path).
const detail::NormTable* rows_table(DeviceKind d, bool backward) {
  switch (d) {
    case DeviceKind::Sim: return backward ? &device_sim::norm_backward_rows_table() : &device_sim::norm_rows_table();
#if BARACUDA_HAVE_CUDA_KERNELS
    case DeviceKind::Cuda:
      return backward ? &device_cuda::norm_backward_rows_table() : &device_cuda::norm_rows_table();
#endif
    default: return nullptr;  // the host runs the composed path
  }
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
/// `rows`: the row kernel's table when the forward's rows take it (its entry replaces the composed one).
template <class Plan, class Tables>
Result<Plan> select_direction(std::string_view plan, const Stream& stream, const NormDescriptor& desc,
                              PlanPreference pref, Tables&& tables, std::string_view op,
                              const detail::NormTable* rows = nullptr, std::string_view variant = {}) {
  BARACUDA_TRY(check_descriptor(plan, desc));
  auto dev = detail::select_device(plan, stream, pref, tables);
  if (!dev) return dev.error();
  const auto fn = detail::kind_entry(plan, to_string(desc.op), rows != nullptr ? *rows : *dev->table, desc.element);
  if (!fn) return fn.error();
  return detail::PlanAccess::make<Plan>(
      desc,
      dev->bind(OpCategory::Normalization, op, desc.element, std::nullopt, detail::opmath_precision(desc.element),
                rows != nullptr ? variant : "segment_reduce+elementwise"),
      *fn);
}

/// A tensor the descriptor says is present (checked as `expected`), or absent (must be empty).
Status check_optional(std::string_view plan, std::string_view name, const ConstDynTensor& t, bool present,
                      ElementKind kind, const Shape& expected, detail::Access access, std::string_view why) {
  if (!present) return detail::check_absent(plan, name, t, why);
  return detail::check_tensor(plan, name, t, kind, expected, access);
}

bool wanted(const ConstDynTensor& t) { return t.data != nullptr; }

/// The backward's workspace for the composed path's three coefficients per row (the row kernel needs none).
size_t coefficients_bytes(bool row_kernel, const Shape& stats, ElementKind element) {
  return row_kernel ? 0 : align_up(3 * static_cast<size_t>(stats.numel()) * opmath_bytes(element));
}

/// The forward's workspace, in order: mean and rstd (the composed path, when the caller keeps neither), y
/// (the composed path with a quantized output and no y), the dynamic zero point (symmetric, when the caller
/// passes none), the quantize plan's, then the reductions' partials (the rest). Byte offsets.
struct ForwardParts {
  size_t mean, rstd, y, zp, chain, partials, end;
};
ForwardParts forward_parts(const NormDescriptor& d, const Shape& rows, bool row_kernel,
                           const detail::NormQuantChain* chain) {
  const auto nrows = static_cast<size_t>(rows.numel());
  ForwardParts p{};
  const size_t stats = row_kernel ? 0 : align_up(nrows * opmath_bytes(d.element));
  p.rstd = p.mean + stats;
  p.y = p.rstd + stats;
  const auto elements = static_cast<size_t>(d.shape.numel());
  const auto element_bytes = static_cast<size_t>(element_bits(d.element) / 8);
  const size_t y = row_kernel || chain == nullptr ? 0 : align_up(elements * element_bytes);
  p.zp = p.y + y;
  const bool zp = chain != nullptr && d.quant == NormQuant::Dynamic && d.dynamic_mode == DynamicRangeMode::Symmetric;
  p.chain = p.zp + (zp ? align_up(nrows * sizeof(int32_t)) : 0);
  p.partials = p.chain + (chain != nullptr ? chain->workspace_size() : 0);
  p.end = p.partials;
  return p;
}

}  // namespace

std::string_view to_string(NormOp op) {
  return op == NormOp::RmsNorm ? "rms_norm" : op == NormOp::LayerNorm ? "layer_norm" : "?";
}

std::string_view to_string(NormQuant q) {
  switch (q) {
    case NormQuant::None: return "none";
    case NormQuant::Static: return "static";
    case NormQuant::Dynamic: return "dynamic";
    case NormQuant::Fp8: return "fp8";
  }
  return "?";
}

namespace dynamic {

Result<NormPlan> NormPlan::select(const Stream& stream, const NormDescriptor& desc, PlanPreference pref) {
  const bool device = stream.device() != DeviceKind::Host;
  const int64_t h = desc.shape.rank > 0 ? desc.shape.dims[desc.shape.rank - 1] : 0;
  const detail::RowSchedule sched =
      detail::row_schedule(h, is_floating(desc.element) ? element_bits(desc.element) / 8 : 1);
  const detail::NormTable* rows =
      device && sched != detail::RowSchedule::None ? rows_table(stream.device(), false) : nullptr;
  auto p = select_direction<NormPlan>(kForward, stream, desc, pref, BARACUDA_DEVICE_TABLES(norm_forward_table),
                                      forward_op_name(desc), rows,
                                      sched == detail::RowSchedule::WarpPerRow ? "rows_warp" : "rows_block");
  if (!p) return p.error();
  p->row_kernel_ = rows != nullptr;
  if (desc.quant != NormQuant::None) {
    auto chain = detail::NormQuantChain::select(stream, desc, pref);
    if (!chain) return chain.error();
    p->chain_ = std::make_shared<const detail::NormQuantChain>(std::move(chain).value());
  }
  size_t partials = 0;
  if (!p->row_kernel_) {
    auto bytes = partials_bytes(stream, desc);
    if (!bytes) return bytes.error();
    partials = *bytes;
  }
  p->stats_shape_ = rows_shape(desc.shape);
  p->workspace_bytes_ = forward_parts(desc, p->stats_shape_, p->row_kernel_, p->chain_.get()).end + partials;
  return p;
}

std::optional<ElementKind> NormPlan::quant_kind() const {
  if (!chain_) return std::nullopt;
  return chain_->q_kind;
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
  if (desc_.quant == NormQuant::None || wanted(args.y))
    BARACUDA_TRY(detail::check_tensor(kForward, "y", args.y, k, desc_.shape, Access::Write));
  if (wanted(args.mean)) {
    if (desc_.op != NormOp::LayerNorm) return Error::invalid(s(kForward) + ": mean must be empty: RmsNorm has no mean");
    BARACUDA_TRY(detail::check_tensor(kForward, "mean", args.mean, stats_kind(), stats_shape_, Access::Write));
  }
  if (wanted(args.rstd))
    BARACUDA_TRY(detail::check_tensor(kForward, "rstd", args.rstd, stats_kind(), stats_shape_, Access::Write));
  BARACUDA_TRY(check_fused(args));
  // No overlap, but y and h may be exactly x or residual (every path reads an element before writing it).
  const std::pair<const char*, ConstDynTensor> outs[] = {{"y", args.y},         {"mean", args.mean},
                                                         {"rstd", args.rstd},   {"h", args.h},
                                                         {"q", args.q},         {"q_scale", args.q_scale},
                                                         {"q_zero_point", args.q_zero_point}, {"amax", args.amax}};
  const std::pair<const char*, ConstDynTensor> ins[] = {{"x", args.x},         {"weight", args.weight},
                                                        {"bias", args.bias},   {"residual", args.residual},
                                                        {"scale", args.scale}, {"zero_point", args.zero_point}};
  for (const auto& [name, out] : outs) {
    const bool may_alias = std::string_view(name) == "y" || std::string_view(name) == "h";
    for (const auto& [in_name, in] : ins) {
      const std::string_view n(in_name);
      const bool alias_ok = may_alias && (n == "x" || n == "residual");
      if (alias_ok && out.data != nullptr && out.data == in.data && out.stride == in.stride) continue;
      const Status st = detail::check_no_overlap(kForward, name, out, in_name, in);
      if (!st && alias_ok)
        return Error::invalid(s(kForward) + ": " + name + " overlaps " + in_name + " other than exactly (in place, " +
                              name + " may be " + in_name + " itself: the same data and strides)");
      BARACUDA_TRY(st);
    }
    for (const auto& [other_name, other] : outs)
      if (std::string_view(other_name) < std::string_view(name))
        BARACUDA_TRY(detail::check_no_overlap(kForward, name, out, other_name, other));
  }
  return {};
}

Status NormPlan::check_fused(const Args& a) const {
  using detail::Access;
  const ElementKind k = desc_.element, sk = stats_kind();
  const NormQuant qk = desc_.quant;
  const bool dynamic = qk == NormQuant::Dynamic;
  const bool asym = dynamic && desc_.dynamic_mode == DynamicRangeMode::Asymmetric;
  BARACUDA_TRY(check_optional(kForward, "residual", a.residual, desc_.has_residual, k, desc_.shape, Access::Read,
                              "the descriptor has no residual"));
  BARACUDA_TRY(check_optional(kForward, "h", a.h, desc_.has_residual, k, desc_.shape, Access::Write,
                              "the descriptor has no residual"));
  const std::string none = "the descriptor's quantized output is " + s(to_string(qk));
  const Shape one{1};
  BARACUDA_TRY(check_optional(kForward, "q", a.q, qk != NormQuant::None,
                              quant_kind().value_or(ElementKind::S8), desc_.shape, Access::Write, none));
  BARACUDA_TRY(check_optional(kForward, "scale", a.scale, qk == NormQuant::Static || qk == NormQuant::Fp8,
                              qk == NormQuant::Fp8 ? ElementKind::F32 : sk, one, Access::Read, none));
  if (qk == NormQuant::Static && wanted(a.zero_point))
    BARACUDA_TRY(detail::check_tensor(kForward, "zero_point", a.zero_point, ElementKind::S32, one, Access::Read));
  else if (qk != NormQuant::Static)
    BARACUDA_TRY(detail::check_absent(kForward, "zero_point", a.zero_point, none));
  BARACUDA_TRY(check_optional(kForward, "q_scale", a.q_scale, dynamic, sk, stats_shape_, Access::Write, none));
  if (dynamic && (asym || wanted(a.q_zero_point)))
    BARACUDA_TRY(
        detail::check_tensor(kForward, "q_zero_point", a.q_zero_point, ElementKind::S32, stats_shape_, Access::Write));
  else if (!dynamic)
    BARACUDA_TRY(detail::check_absent(kForward, "q_zero_point", a.q_zero_point, none));
  return check_optional(kForward, "amax", a.amax, qk == NormQuant::Fp8, ElementKind::F32, one, Access::Write, none);
}

Status NormPlan::run(const Stream& stream, Workspace workspace, const Args& args) const {
  const detail::WorkspaceNeed need{workspace,
                                   workspace_bytes_,
                                   kAlign,
                                   "the statistics, y, the zero point, the quantize plan's and the partials",
                                   {{"x", args.x},
                                    {"y", args.y},
                                    {"residual", args.residual},
                                    {"h", args.h},
                                    {"q", args.q},
                                    {"mean", args.mean},
                                    {"rstd", args.rstd}}};
  const bool empty = desc_.shape.numel() == 0;
  const auto ctx = detail::begin_run(
      kForward, binding_, stream, [&] { return can_implement(args); }, need, empty && !chain_);
  if (!ctx) return ctx.status();
  const ForwardParts parts = forward_parts(desc_, stats_shape_, row_kernel_, chain_.get());
  char* const ws = static_cast<char*>(workspace.data);
  const Workspace chain_ws(ws + parts.chain, parts.partials - parts.chain);
  Args a = args;  // the caller's operands, with workspace standing in for the outputs they do not keep
  if (chain_ && desc_.quant == NormQuant::Dynamic && !wanted(a.q_zero_point))
    a.q_zero_point = DynTensor::dense(ws + parts.zp, ElementKind::S32, stats_shape_);
  // y where the caller keeps none: the composed path's workspace (an empty problem's y has no elements).
  if ((empty || !row_kernel_) && !wanted(a.y)) a.y = DynTensor::dense(ws + parts.y, desc_.element, desc_.shape);
  if (empty) return chain_->run(stream, chain_ws, ConstDynTensor(a.y), a);  // the quantize plan's empty rules
  detail::NormLaunch l;
  l.op = desc_.op, l.eps = desc_.eps, l.x = a.x, l.weight = a.weight, l.bias = a.bias, l.y = a.y;
  l.residual = a.residual, l.h = a.h;
  l.mean = a.mean, l.rstd = a.rstd;
  if (!row_kernel_) {
    if (!wanted(a.mean)) l.mean = DynTensor::dense(ws + parts.mean, stats_kind(), stats_shape_);
    if (!wanted(a.rstd)) l.rstd = DynTensor::dense(ws + parts.rstd, stats_kind(), stats_shape_);
    l.partials = Workspace(ws + parts.partials, workspace_bytes_ - parts.partials);
  }
  if (row_kernel_ && chain_) {
    detail::NormQuantLaunch& q = l.quant;
    q.kind = desc_.quant, q.mode = desc_.dynamic_mode, q.convention = desc_.convention;
    q.qmin = chain_->qmin, q.qmax = chain_->qmax;
    q.q = a.q, q.scale = a.scale, q.zero_point = a.zero_point;
    q.q_scale = a.q_scale, q.q_zero_point = a.q_zero_point, q.amax = a.amax;
  }
  BARACUDA_TRY(fn_(*ctx, l));
  if (row_kernel_ || !chain_) return {};
  return chain_->run(stream, chain_ws, ConstDynTensor(a.y), a);
}

Result<NormBackwardPlan> NormBackwardPlan::select(const Stream& stream, const NormDescriptor& desc,
                                                  PlanPreference pref) {
  const std::string_view op = desc.op == NormOp::RmsNorm ? "rms_norm_backward" : "layer_norm_backward";
  const bool device = stream.device() != DeviceKind::Host;
  const int64_t h = desc.shape.rank > 0 ? desc.shape.dims[desc.shape.rank - 1] : 0;
  const detail::RowSchedule sched =
      detail::norm_backward_row_schedule(h, is_floating(desc.element) ? element_bits(desc.element) / 8 : 1);
  const detail::NormTable* rows =
      device && sched != detail::RowSchedule::None ? rows_table(stream.device(), true) : nullptr;
  auto p =
      select_direction<NormBackwardPlan>(kBackward, stream, desc, pref, BARACUDA_DEVICE_TABLES(norm_backward_table), op,
                                         rows, sched == detail::RowSchedule::WarpPerRow ? "rows_warp" : "rows_block");
  if (!p) return p.error();
  p->row_kernel_ = rows != nullptr;
  auto partials = partials_bytes(stream, desc);
  if (!partials) return partials.error();
  p->stats_shape_ = rows_shape(desc.shape);
  // Three coefficients per row (the composed path's), then the partials (the column sums' on both paths).
  p->workspace_bytes_ = coefficients_bytes(p->row_kernel_, p->stats_shape_, desc.element) + *partials;
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
  BARACUDA_TRY(detail::check_norm_gradients(kBackward, args.dx, args.dweight, args.dbias, k, desc_.shape, h,
                                            desc_.has_weight, desc_.has_bias));
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
  const size_t coeffs = coefficients_bytes(row_kernel_, stats_shape_, desc_.element);
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
