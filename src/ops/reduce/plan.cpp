// ReducePlan: select (the op and kind pair, the dimensions, the empty-reduction rule, the output's shape and
// kind, the two-pass workspace from the engine's schedule), can_implement (x, y, no overlap), run.
#include <cmath>
#include <string>

#include "baracuda/ops/reduce.hpp"
#include "core/plan_core.hpp"
#include "core/validate.hpp"
#include "device/segment_reduce_geometry.hpp"
#include "ops/reduce/dispatch.hpp"

namespace baracuda {
namespace {

constexpr std::string_view kPlan = "ReducePlan";
constexpr size_t kAlign = 256;

std::string s(std::string_view v) { return std::string(v); }
Error invalid(const std::string& why) { return Error::invalid(s(kPlan) + ": " + why); }

constexpr std::string_view kNames[kNumReduceOps] = {"sum",    "mean",      "prod", "max",     "min",     "argmax",
                                                    "argmin", "var",       "std",  "norm_l1", "norm_l2", "norm_linf",
                                                    "norm_p", "logsumexp", "any",  "all"};

bool float_only(ReduceOp op) {
  switch (op) {
    case ReduceOp::Mean:
    case ReduceOp::Var:
    case ReduceOp::Std:
    case ReduceOp::NormL1:
    case ReduceOp::NormL2:
    case ReduceOp::NormLinf:
    case ReduceOp::NormP:
    case ReduceOp::LogSumExp:
      return true;
    default:
      return false;
  }
}

bool has_identity(ReduceOp op) {
  return op != ReduceOp::Max && op != ReduceOp::Min && op != ReduceOp::Argmax && op != ReduceOp::Argmin &&
         op != ReduceOp::NormLinf;
}

/// PyTorch's result kind of `op` over `x` (the file comment's table).
ElementKind output_kind_of(ReduceOp op, ElementKind x) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Prod:
      return is_floating(x) ? x : ElementKind::S64;
    case ReduceOp::Argmax:
    case ReduceOp::Argmin:
      return ElementKind::S64;
    case ReduceOp::Any:
    case ReduceOp::All:
      return ElementKind::Bool;
    default:
      return x;
  }
}

/// The kind rule: `Unsupported` naming the op and the kinds it takes.
Status check_op_kind(ReduceOp op, ElementKind x) {
  const bool fl = x == ElementKind::F16 || x == ElementKind::Bf16 || x == ElementKind::F32 || x == ElementKind::F64;
  const bool in = x == ElementKind::S8 || x == ElementKind::U8 || x == ElementKind::S32 || x == ElementKind::S64;
  const bool arg = op == ReduceOp::Argmax || op == ReduceOp::Argmin;
  if (fl || (in && !float_only(op)) || (x == ElementKind::Bool && !float_only(op) && !arg)) return {};
  const char* takes = float_only(op) ? "f16, bf16, f32 and f64"
                      : arg          ? "f16, bf16, f32, f64, s8, u8, s32 and s64"
                                     : "f16, bf16, f32, f64, s8, u8, s32, s64 and bool";
  return Error::unsupported(s(kPlan) + ": " + s(kNames[static_cast<int>(op)]) + " takes " + takes + ", not " +
                            s(to_string(x)));
}

}  // namespace

std::string_view to_string(ReduceOp op) {
  const auto i = static_cast<size_t>(op);
  return i < kNumReduceOps ? kNames[i] : "?";
}

namespace dynamic {

Result<ReducePlan> ReducePlan::select(const Stream& stream, const ReduceDescriptor& desc, PlanPreference pref) {
  if (static_cast<int>(desc.op) >= kNumReduceOps) return invalid("invalid ReduceOp");
  BARACUDA_TRY(detail::check_shape(kPlan, "the descriptor's shape", desc.shape));
  BARACUDA_TRY(detail::check_kinds(kPlan, {desc.element}));
  const int rank = desc.shape.rank;
  const uint32_t all = rank == 0 ? 0u : static_cast<uint32_t>((uint64_t{1} << rank) - 1);
  if ((desc.dims & ~all) != 0)
    return invalid("dims " + std::to_string(desc.dims) + " names a dimension past the shape's rank " +
                   std::to_string(rank));
  const uint32_t mask = desc.dims == 0 ? all : desc.dims;
  const bool arg = desc.op == ReduceOp::Argmax || desc.op == ReduceOp::Argmin;
  if (arg && mask != all && (mask & (mask - 1)) != 0)
    return invalid(s(to_string(desc.op)) + " takes one dimension or all of them, not the mask " +
                   std::to_string(desc.dims));
  if ((desc.op == ReduceOp::Var || desc.op == ReduceOp::Std) &&
      !(desc.correction >= 0 && std::isfinite(desc.correction)))
    return invalid("var/std's correction must be finite and >= 0, got " + std::to_string(desc.correction));
  if (desc.op == ReduceOp::NormP && !(desc.p >= 0 && std::isfinite(desc.p)))
    return invalid("norm_p's order must be finite and >= 0 (norm_linf is the infinity norm), got " +
                   std::to_string(desc.p));
  BARACUDA_TRY(check_op_kind(desc.op, desc.element));

  Shape out;
  int64_t n = 1, segments = 1;
  for (int d = 0; d < rank; ++d) {
    const bool reduced = (mask >> d) & 1u;
    (reduced ? n : segments) *= desc.shape.dims[d];
    if (!reduced)
      out.dims[out.rank++] = desc.shape.dims[d];
    else if (desc.keepdim)
      out.dims[out.rank++] = 1;
  }
  if (n == 0 && segments > 0 && !has_identity(desc.op))
    return invalid("cannot " + s(to_string(desc.op)) + " over an empty dimension: the op has no identity");

  auto dev = detail::select_device(kPlan, stream, pref, BARACUDA_DEVICE_TABLES(reduce_table));
  if (!dev) return dev.error();
  const auto fn = detail::kind_entry(kPlan, to_string(desc.op), *dev->table, desc.element);
  if (!fn) return fn.error();

  const ElementKind out_kind = output_kind_of(desc.op, desc.element);
  const MathPrecision precision =
      is_floating(desc.element) ? detail::opmath_precision(desc.element) : MathPrecision::Exact;
  ReducePlan p(
      desc, dev->bind(OpCategory::Reduction, to_string(desc.op), desc.element, out_kind, precision, "segment_reduce"),
      *fn);
  p.out_shape_ = out;
  p.out_kind_ = out_kind;
  p.mask_ = mask;
  if (stream.device() != DeviceKind::Host && segments > 0) {
    auto ctx = detail::make_exec_context(stream);
    if (!ctx) return ctx.error();
    const uint32_t kept = all & ~mask;
    p.workspace_bytes_ =
        detail::segment_reduce_workspace_bytes(*ctx, desc.shape, kept, detail::reduce_acc_bytes(desc.op, desc.element));
  }
  return p;
}

PrecisionGuarantee ReducePlan::precision_guarantee() const {
  const MathPrecision m = binding_.sku.precision;
  return {m, m, true, true};
}

Status ReducePlan::can_implement(const Args& args) const {
  using detail::Access;
  BARACUDA_TRY(detail::check_tensor(kPlan, "x", args.x, desc_.element, desc_.shape, Access::Read));
  BARACUDA_TRY(detail::check_tensor(kPlan, "y", args.y, out_kind_, out_shape_, Access::Write));
  return detail::check_no_overlap(kPlan, "y", args.y, "x", args.x);
}

Status ReducePlan::run(const Stream& stream, Workspace workspace, const Args& args) const {
  const detail::WorkspaceNeed ws{
      workspace, workspace_bytes_, kAlign, "the partials of split segments", {{"x", args.x}, {"y", args.y}}};
  const auto ctx = detail::begin_run(
      kPlan, binding_, stream, [&] { return can_implement(args); }, ws, out_shape_.numel() == 0);
  if (!ctx) return ctx.status();
  return fn_(*ctx, detail::ReduceLaunch{desc_.op, args.x, args.y, mask_, desc_.correction, desc_.p, workspace});
}

}  // namespace dynamic
}  // namespace baracuda
