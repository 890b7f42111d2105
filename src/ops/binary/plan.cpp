// BinaryPlan, ComparePlan, BinaryBackwardPlan: select (validate, broadcast the shapes, resolve the backend,
// look (op, kind) up in the device's table), can_implement (the shared tensor and aliasing checks on the
// broadcast views), run (re-validate, one indirect call).
#include <algorithm>
#include <array>
#include <string>

#include "baracuda/ops/binary.hpp"
#include "core/elementwise_plan.hpp"
#include "core/plan_core.hpp"
#include "core/validate.hpp"
#include "ops/binary/dispatch.hpp"

namespace baracuda {
namespace {

constexpr std::string_view kBinary = "BinaryPlan";
constexpr std::string_view kCompare = "ComparePlan";
constexpr std::string_view kBackward = "BinaryBackwardPlan";

/// Catalog facts the plans need at run time.
struct BinaryOpInfo {
  std::string_view name;
  std::string_view backward_name;
  bool has_backward;
};
constexpr std::array<BinaryOpInfo, kNumBinaryOps> kBinaryInfo = {{
#define BARACUDA_BINARY_OP(Enum, name, types, backward, doc) \
  {#name, #name "_backward", backward},
#include "baracuda/ops/binary_ops.def"
#undef BARACUDA_BINARY_OP
}};

std::string str(std::string_view v) { return std::string(v); }

/// What every plan of the family checks in select: valid shapes and kind, the broadcast output shape,
/// the backend, and the device's tables.
struct Selected {
  Shape out_shape;
  detail::DeviceSelection<detail::BinaryTables> dev;
};
Result<Selected> select_common(std::string_view plan, const Stream& stream, ElementKind element, const Shape& a,
                               const Shape& b, const PlanPreference& pref) {
  BARACUDA_TRY(detail::check_shape(plan, "the descriptor's a shape", a));
  BARACUDA_TRY(detail::check_shape(plan, "the descriptor's b shape", b));
  BARACUDA_TRY(detail::check_kinds(plan, {element}));
  auto out = broadcast_shapes(a, b);
  if (!out) return Error::invalid(str(plan) + ": " + out.error().message);
  // Two valid shapes can broadcast to one with more elements than sizes address ([2^30, 1] and [1, 2^30]).
  BARACUDA_TRY(detail::check_shape(plan, "the broadcast output shape", *out));
  auto dev = detail::select_device(plan, stream, pref, BARACUDA_DEVICE_TABLES(binary_tables));
  if (!dev) return dev.error();
  return Selected{*out, *dev};
}

bool valid_op(BinaryOp op) { return static_cast<size_t>(op) < kNumBinaryOps; }
bool valid_op(CompareOp op) { return static_cast<size_t>(op) < kNumCompareOps; }

/// The forward and compare plans' argument checks (they differ in the output kind only).
Status check_forward_args(std::string_view plan, ElementKind in_kind, ElementKind out_kind, const Shape& a_shape,
                          const Shape& b_shape, const Shape& out_shape, const ConstDynTensor& a,
                          const ConstDynTensor& b, const DynTensor& out) {
  BARACUDA_TRY(detail::check_tensor(plan, "a", a, in_kind, a_shape, detail::Access::Read));
  BARACUDA_TRY(detail::check_tensor(plan, "b", b, in_kind, b_shape, detail::Access::Read));
  BARACUDA_TRY(detail::check_tensor(plan, "out", out, out_kind, out_shape, detail::Access::Write));
  BARACUDA_TRY(detail::check_alias(plan, detail::broadcast_view(a, out_shape), out));
  return detail::check_alias(plan, detail::broadcast_view(b, out_shape), out);
}

bool wanted(const DynTensor& t) { return t.data != nullptr; }
/// Workspace parts start 256-byte aligned.
size_t align_up(size_t n) { return (n + 255) / 256 * 256; }

/// What BinaryPlan's and ComparePlan's select bind: the output shape, the binding and the function.
template <class Fn>
struct Bound {
  Shape out_shape;
  detail::PlanBinding binding;
  Fn fn;
};

/// BinaryPlan's and ComparePlan's select: the op's row of the device's tables (`row_of(tables)`), bound
/// under the SKU op `op_name(op)` with the output kind `aux` (none: the input kind) and `precision`.
template <class Fn, class Desc, class RowOf, class OpName>
Result<Bound<Fn>> select_forward(std::string_view plan, std::string_view op_type, const Stream& stream,
                                 const Desc& desc, const PlanPreference& pref, RowOf row_of, OpName op_name_of,
                                 std::optional<ElementKind> aux, MathPrecision precision) {
  if (!valid_op(desc.op))
    return Error::invalid(str(plan) + ": the descriptor's op is not a valid " + str(op_type));
  auto s = select_common(plan, stream, desc.element, desc.a_shape, desc.b_shape, pref);
  if (!s) return s.error();
  const std::string_view op_name = op_name_of(desc.op);
  const auto fn = detail::kind_entry(plan, op_name, row_of(*s->dev.table), desc.element);
  if (!fn) return fn.error();
  return Bound<Fn>{s->out_shape,
                   s->dev.bind(OpCategory::BinaryElementwise, op_name, desc.element, aux, precision, "elementwise"),
                   *fn};
}

/// BinaryPlan's and ComparePlan's launch record: a and b viewed over the output shape (after the checks).
template <class Args>
auto forward_launch(const Args& args, const Shape& out_shape) {
  return [&args, &out_shape] {
    return detail::BinaryLaunch{detail::broadcast_view(args.a, out_shape), detail::broadcast_view(args.b, out_shape),
                                args.out};
  };
}

}  // namespace

bool parse_binary_op(std::string_view name, BinaryOp* out) {
  for (size_t i = 0; i < kNumBinaryOps; ++i)
    if (kBinaryInfo[i].name == name) {
      *out = static_cast<BinaryOp>(i);
      return true;
    }
  return false;
}

bool parse_compare_op(std::string_view name, CompareOp* out) {
  for (size_t i = 0; i < kNumCompareOps; ++i)
    if (to_string(static_cast<CompareOp>(i)) == name) {
      *out = static_cast<CompareOp>(i);
      return true;
    }
  return false;
}

Result<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  if (!a.valid() || !b.valid())
    return Error::invalid("broadcast_shapes: " + to_string(a.valid() ? b : a) +
                          " is not a valid shape (rank 0.." + std::to_string(kMaxRank) + ", extents >= 0)");
  Shape out;
  out.rank = std::max(a.rank, b.rank);
  for (int i = 1; i <= out.rank; ++i) {  // i-th dimension from the right
    const int64_t da = i <= a.rank ? a.dims[a.rank - i] : 1;
    const int64_t db = i <= b.rank ? b.dims[b.rank - i] : 1;
    if (da != db && da != 1 && db != 1)
      return Error::invalid("shapes " + to_string(a) + " and " + to_string(b) + " do not broadcast (extents " +
                            std::to_string(da) + " and " + std::to_string(db) + " in dimension -" + std::to_string(i) +
                            ")");
    out.dims[out.rank - i] = da == 1 ? db : da;
  }
  return out;
}

namespace dynamic {

// ---------------------------------------------------------------------------------------------------
// BinaryPlan
// ---------------------------------------------------------------------------------------------------

Result<BinaryPlan> BinaryPlan::select(const Stream& stream, const BinaryDescriptor& desc, PlanPreference pref) {
  const auto b = select_forward<detail::BinaryFn>(
      kBinary, "BinaryOp", stream, desc, pref,
      [&](const detail::BinaryTables& t) -> const auto& { return t.forward[static_cast<size_t>(desc.op)]; },
      [](BinaryOp op) { return kBinaryInfo[static_cast<size_t>(op)].name; }, std::nullopt,
      detail::elementwise_precision(desc.element));
  if (!b) return b.error();
  return BinaryPlan(desc, b->binding, b->out_shape, b->fn);
}

Status BinaryPlan::can_implement(const Args& args) const {
  return check_forward_args(kBinary, desc_.element, desc_.element, desc_.a_shape, desc_.b_shape, out_shape_, args.a,
                            args.b, args.out);
}

Status BinaryPlan::run(const Stream& stream, Workspace, const Args& args) const {
  return detail::run_entry(kBinary, binding_, stream, [&] { return can_implement(args); }, args.out.numel() == 0, fn_,
                           forward_launch(args, out_shape_));
}

// ---------------------------------------------------------------------------------------------------
// ComparePlan
// ---------------------------------------------------------------------------------------------------

Result<ComparePlan> ComparePlan::select(const Stream& stream, const CompareDescriptor& desc, PlanPreference pref) {
  const auto b = select_forward<detail::CompareFn>(
      kCompare, "CompareOp", stream, desc, pref,
      [&](const detail::BinaryTables& t) -> const auto& { return t.compare[static_cast<size_t>(desc.op)]; },
      [](CompareOp op) { return to_string(op); }, ElementKind::Bool, MathPrecision::Exact);
  if (!b) return b.error();
  return ComparePlan(desc, b->binding, b->out_shape, b->fn);
}

Status ComparePlan::can_implement(const Args& args) const {
  return check_forward_args(kCompare, desc_.element, ElementKind::Bool, desc_.a_shape, desc_.b_shape, out_shape_,
                            args.a, args.b, args.out);
}

Status ComparePlan::run(const Stream& stream, Workspace, const Args& args) const {
  return detail::run_entry(kCompare, binding_, stream, [&] { return can_implement(args); }, args.out.numel() == 0,
                           fn_, forward_launch(args, out_shape_));
}

// ---------------------------------------------------------------------------------------------------
// BinaryBackwardPlan
// ---------------------------------------------------------------------------------------------------

Result<BinaryBackwardPlan> BinaryBackwardPlan::select(const Stream& stream, const BinaryDescriptor& desc,
                                                      PlanPreference pref) {
  if (!valid_op(desc.op)) return Error::invalid(str(kBackward) + ": the descriptor's op is not a valid BinaryOp");
  auto s = select_common(kBackward, stream, desc.element, desc.a_shape, desc.b_shape, pref);
  if (!s) return s.error();
  const BinaryOpInfo& info = kBinaryInfo[static_cast<size_t>(desc.op)];
  if (!info.has_backward) return Error::unsupported(str(kBackward) + ": " + str(info.name) + " has no backward");
  if (!is_floating(desc.element))
    return Error::unsupported(str(kBackward) + ": element kind " + str(to_string(desc.element)) +
                              " has no gradient (the backward is defined for floating-point kinds)");
  const auto& row = s->dev.table->backward[static_cast<size_t>(desc.op)];
  const detail::BinaryBackwardFn fn = row[detail::kind_index(desc.element)];
  if (fn == nullptr)
    return detail::unsupported_kind(kBackward, str(info.name), desc.element, row);
  BinaryBackwardPlan p(desc, s->dev.bind(OpCategory::BinaryElementwise, info.backward_name, desc.element, std::nullopt,
                                         detail::elementwise_precision(desc.element), "elementwise"),
                       fn);
  p.out_shape_ = s->out_shape;
  // Gradients at the inputs' shapes: the full gradient in the workspace, then a sum down to the input's shape.
  const size_t full = align_up(static_cast<size_t>(storage_bytes(desc.element, s->out_shape.numel())));
  for (auto [shape, to] : {std::pair{&desc.a_shape, &p.to_a_}, std::pair{&desc.b_shape, &p.to_b_}}) {
    if (*shape == s->out_shape) continue;
    auto plan = ReduceToPlan::select(stream, ReduceToDescriptor{desc.element, s->out_shape, *shape}, pref);
    if (!plan) return plan.error();
    p.workspace_bytes_ += full + align_up(plan->workspace_size());
    *to = std::move(plan).value();
  }
  return p;
}

Status BinaryBackwardPlan::can_implement(const Args& args) const {
  const ConstDynTensor &dy = args.dy, &a = args.a, &b = args.b;
  const DynTensor &da = args.da, &db = args.db;
  const ElementKind k = desc_.element;
  BARACUDA_TRY(detail::check_tensor(kBackward, "dy", dy, k, out_shape_, detail::Access::Read));
  BARACUDA_TRY(detail::check_tensor(kBackward, "a", a, k, desc_.a_shape, detail::Access::Read));
  BARACUDA_TRY(detail::check_tensor(kBackward, "b", b, k, desc_.b_shape, detail::Access::Read));
  if (!wanted(da) && !wanted(db) && out_shape_.numel() > 0)
    return Error::invalid(str(kBackward) + ": neither da nor db is requested (both have null data)");
  const ConstDynTensor av = detail::broadcast_view(a, out_shape_);
  const ConstDynTensor bv = detail::broadcast_view(b, out_shape_);
  auto check_output = [&](std::string_view name, const DynTensor& g) -> Status {
    if (!wanted(g)) return {};
    const Shape& input = name == "da" ? desc_.a_shape : desc_.b_shape;
    if (g.shape == input && !(input == out_shape_))  // summed to the input's shape through the workspace
      return detail::check_tensor(kBackward, name, g, k, input, detail::Access::Write);
    BARACUDA_TRY(detail::check_tensor(kBackward, name, g, k, out_shape_, detail::Access::Write));
    BARACUDA_TRY(detail::check_alias(kBackward, dy, g));
    BARACUDA_TRY(detail::check_alias(kBackward, av, g));
    return detail::check_alias(kBackward, bv, g);
  };
  BARACUDA_TRY(check_output("da", da));
  BARACUDA_TRY(check_output("db", db));
  if (wanted(da) && wanted(db) && da.data == db.data && out_shape_.numel() > 0)
    return Error::invalid(str(kBackward) + ": da and db are the same memory; they must not overlap");
  return {};
}

Status BinaryBackwardPlan::run(const Stream& stream, Workspace workspace, const Args& args) const {
  // A gradient at its input's shape goes through the workspace: [full da][da's sum][full db][db's sum].
  const auto summed = [&](const DynTensor& g, const std::optional<ReduceToPlan>& to) {
    return to.has_value() && wanted(g) && !(g.shape == out_shape_);
  };
  const bool sum_a = summed(args.da, to_a_), sum_b = summed(args.db, to_b_);
  const size_t full = align_up(static_cast<size_t>(storage_bytes(desc_.element, out_shape_.numel())));
  const auto part = [&](const std::optional<ReduceToPlan>& to) { return full + align_up(to->workspace_size()); };
  const size_t needed = (sum_a ? part(to_a_) : 0) + (sum_b ? part(to_b_) : 0);
  const detail::WorkspaceNeed ws{workspace, needed, 256, "the gradients before they are summed to the inputs' shapes",
                                 {{"dy", args.dy}, {"a", args.a}, {"b", args.b}, {"da", args.da}, {"db", args.db}}};
  const auto ctx = detail::begin_run(kBackward, binding_, stream, [&] { return can_implement(args); }, ws,
                                     out_shape_.numel() == 0);
  if (!ctx) {
    // An empty output: a summed gradient is all zeros (a sum over nothing), written by its ReduceToPlan.
    if (!ctx.status() || out_shape_.numel() != 0) return ctx.status();
  }
  char* const base = static_cast<char*>(workspace.data);
  Args full_args = args;
  size_t at = 0;
  if (sum_a) {
    full_args.da = DynTensor::dense(base + at, desc_.element, out_shape_);
    at += part(to_a_);
  }
  if (sum_b) full_args.db = DynTensor::dense(base + at, desc_.element, out_shape_);
  if (ctx) BARACUDA_TRY(launch(*ctx, full_args));
  at = 0;
  if (sum_a) {
    BARACUDA_TRY(to_a_->run(stream, Workspace(base + at + full, to_a_->workspace_size()),
                            {full_args.da, args.da}));
    at += part(to_a_);
  }
  if (sum_b)
    BARACUDA_TRY(to_b_->run(stream, Workspace(base + at + full, to_b_->workspace_size()), {full_args.db, args.db}));
  return {};
}

Status BinaryBackwardPlan::launch(const detail::ExecContext& ctx, const Args& args) const {
  detail::BinaryBackwardLaunch l{args.dy, detail::broadcast_view(args.a, out_shape_),
                                 detail::broadcast_view(args.b, out_shape_), args.da, args.db,
                                 detail::GradOutputs::Both};
  if (!wanted(args.db)) {
    l.db = args.da;
    l.outputs = detail::GradOutputs::OnlyA;
  } else if (!wanted(args.da)) {
    l.da = args.db;
    l.outputs = detail::GradOutputs::OnlyB;
  }
  return fn_(ctx, l);
}

}  // namespace dynamic
}  // namespace baracuda
