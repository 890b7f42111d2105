// TernaryPlan, TernaryBackwardPlan, WherePlan, WhereBackwardPlan: select (validate, broadcast the three
// shapes, resolve the backend, look (op, kind) up in the device's table), can_implement (the shared tensor
// and aliasing checks on the broadcast views), run (re-validate, one indirect call).
#include <array>
#include <initializer_list>
#include <string>
#include <type_traits>

#include "baracuda/ops/binary.hpp"  // broadcast_shapes
#include "baracuda/ops/ternary.hpp"
#include "core/elementwise_plan.hpp"
#include "core/plan_core.hpp"
#include "core/validate.hpp"
#include "ops/ternary/dispatch.hpp"

namespace baracuda {
namespace {

constexpr std::string_view kTernary = "TernaryPlan";
constexpr std::string_view kTernaryBackward = "TernaryBackwardPlan";
constexpr std::string_view kWhere = "WherePlan";
constexpr std::string_view kWhereBackward = "WhereBackwardPlan";

struct TernaryOpInfo {
  std::string_view name;
  std::string_view backward_name;
  bool takes_value;  ///< addcmul, addcdiv: the descriptor's value is used
};
constexpr std::array<TernaryOpInfo, kNumTernaryOps> kInfo = {{
#define BARACUDA_TERNARY_INFO(Enum, name, types, doc) \
  {#name, #name "_backward", TernaryOp::Enum == TernaryOp::Addcmul || TernaryOp::Enum == TernaryOp::Addcdiv},
    BARACUDA_TERNARY_OPS(BARACUDA_TERNARY_INFO)
#undef BARACUDA_TERNARY_INFO
}};

std::string str(std::string_view v) { return std::string(v); }

/// What every plan of the family checks in select: three valid shapes that broadcast, a valid kind, the
/// backend, and the device's tables. `names` are the operands' names in the messages.
struct Selected {
  Shape out_shape;
  detail::DeviceSelection<detail::TernaryTables> dev;
};
Result<Selected> select_common(std::string_view plan, const Stream& stream, ElementKind element,
                               const std::array<Shape, 3>& shapes, const std::array<std::string_view, 3>& names,
                               const PlanPreference& pref) {
  for (size_t i = 0; i < 3; ++i)
    BARACUDA_TRY(detail::check_shape(plan, "the descriptor's " + str(names[i]) + " shape", shapes[i]));
  BARACUDA_TRY(detail::check_kinds(plan, {element}));
  auto ab = broadcast_shapes(shapes[0], shapes[1]);
  auto out = ab ? broadcast_shapes(*ab, shapes[2]) : ab;
  if (!out)
    return Error::invalid(str(plan) + ": the shapes of " + str(names[0]) + " " + to_string(shapes[0]) + ", " +
                          str(names[1]) + " " + to_string(shapes[1]) + " and " + str(names[2]) + " " +
                          to_string(shapes[2]) + " do not broadcast");
  BARACUDA_TRY(detail::check_shape(plan, "the broadcast output shape", *out));  // valid shapes, too many elements
  auto dev = detail::select_device(plan, stream, pref, BARACUDA_DEVICE_TABLES(ternary_tables));
  if (!dev) return dev.error();
  return Selected{*out, *dev};
}

/// The inputs' checks and views: each of its kind and descriptor shape, viewed over the output shape.
struct Input {
  std::string_view name;
  const ConstDynTensor& t;
  ElementKind kind;
  const Shape& shape;
};
Result<std::array<ConstDynTensor, 3>> check_inputs(std::string_view plan, const std::array<Input, 3>& in,
                                                   const Shape& out_shape) {
  std::array<ConstDynTensor, 3> views;
  for (size_t i = 0; i < 3; ++i) {
    BARACUDA_TRY(detail::check_tensor(plan, in[i].name, in[i].t, in[i].kind, in[i].shape, detail::Access::Read));
    views[i] = detail::broadcast_view(in[i].t, out_shape);
  }
  return views;
}

/// An output: checked against every input view (in place only as the same view) when it is given.
Status check_output(std::string_view plan, std::string_view name, const DynTensor& out, ElementKind kind,
                    const Shape& out_shape, std::initializer_list<ConstDynTensor> inputs) {
  BARACUDA_TRY(detail::check_tensor(plan, name, out, kind, out_shape, detail::Access::Write));
  for (const ConstDynTensor& in : inputs) BARACUDA_TRY(detail::check_alias(plan, in, out));
  return {};
}

bool wanted(const DynTensor& t) { return t.data != nullptr; }

/// The gradients' checks: at least one wanted (unless empty), each wanted one a valid output, no two of them
/// the same memory.
Status check_gradients(std::string_view plan, const std::array<std::string_view, 3>& names,
                       const std::array<const DynTensor*, 3>& grads, size_t count, ElementKind kind,
                       const Shape& out_shape, std::initializer_list<ConstDynTensor> inputs) {
  bool any = false;
  for (size_t i = 0; i < count; ++i) any = any || wanted(*grads[i]);
  if (!any && out_shape.numel() > 0)
    return Error::invalid(str(plan) + (count == 2 ? ": neither da nor db is requested (both have null data)"
                                                  : ": none of da, db, dc is requested (all have null data)"));
  for (size_t i = 0; i < count; ++i)
    if (wanted(*grads[i])) BARACUDA_TRY(check_output(plan, names[i], *grads[i], kind, out_shape, inputs));
  for (size_t i = 0; i < count; ++i)
    for (size_t j = i + 1; j < count; ++j)
      if (wanted(*grads[i]) && wanted(*grads[j]))
        BARACUDA_TRY(detail::check_no_overlap(plan, names[i], *grads[i], names[j], *grads[j]));
  return {};
}

/// The launch's gradient slots: a wanted gradient's own view, or an omitted one pointed at the first wanted.
void assign_gradients(detail::TernaryBackwardLaunch& l, const std::array<const DynTensor*, 3>& grads, size_t count) {
  size_t first = 0;
  while (first + 1 < count && !wanted(*grads[first])) ++first;
  for (size_t i = 0; i < count; ++i) {
    const bool own = wanted(*grads[i]);
    l.grad[i] = own ? *grads[i] : *grads[first];
    l.source[i] = static_cast<uint8_t>(own ? i : first);
  }
}

}  // namespace

std::string_view to_string(TernaryOp op) {
  const auto i = static_cast<size_t>(op);
  return i < kNumTernaryOps ? kInfo[i].name : "?";
}

bool parse_ternary_op(std::string_view name, TernaryOp* out) {
  for (size_t i = 0; i < kNumTernaryOps; ++i)
    if (kInfo[i].name == name) {
      *out = static_cast<TernaryOp>(i);
      return true;
    }
  return false;
}

namespace dynamic {
namespace {

/// What a select finds: the output shape, the binding and the function.
template <class Fn>
struct Bound {
  Shape out_shape;
  detail::PlanBinding binding;
  Fn fn;
};

/// The row's function for `element`, bound to the stream's device; `Unsupported` when the row has none.
template <class Fn>
Result<Bound<Fn>> bind_row(std::string_view plan, const Selected& s, const detail::KindTable<Fn>& row,
                           std::string_view op, ElementKind element, MathPrecision precision) {
  const Fn fn = row[detail::kind_index(element)];
  if (fn == nullptr) return detail::unsupported_kind(plan, op, element, row);
  return Bound<Fn>{s.out_shape,
                   s.dev.bind(OpCategory::TernaryElementwise, op, element, std::nullopt, precision, "elementwise"),
                   fn};
}

Status check_has_gradient(std::string_view plan, ElementKind element) {
  if (is_floating(element)) return {};
  return Error::unsupported(str(plan) + ": element kind " + str(to_string(element)) +
                            " has no gradient (the backward is defined for floating-point kinds)");
}

/// TernaryPlan's and TernaryBackwardPlan's select (Fn tells which): the descriptor's rules, then the op's row.
template <class Fn>
Result<Bound<Fn>> select_ternary(std::string_view plan, const Stream& stream, const TernaryDescriptor& desc,
                                 const PlanPreference& pref) {
  constexpr bool backward = std::is_same_v<Fn, detail::TernaryBackwardFn>;
  if (static_cast<size_t>(desc.op) >= kNumTernaryOps)
    return Error::invalid(str(plan) + ": the descriptor's op is not a valid TernaryOp");
  const TernaryOpInfo& info = kInfo[static_cast<size_t>(desc.op)];
  if (!info.takes_value && desc.value != 1.0)
    return Error::invalid(str(plan) + ": the descriptor's value is " + std::to_string(desc.value) +
                          ", but only addcmul and addcdiv take a value (it must be 1 for " + str(info.name) + ")");
  auto s = select_common(plan, stream, desc.element, {desc.a_shape, desc.b_shape, desc.c_shape}, {"a", "b", "c"}, pref);
  if (!s) return s.error();
  if constexpr (backward) {
    BARACUDA_TRY(check_has_gradient(plan, desc.element));
    return bind_row(plan, *s, s->dev.table->backward[static_cast<size_t>(desc.op)], info.backward_name, desc.element,
                    detail::elementwise_precision(desc.element));
  } else {
    return bind_row(plan, *s, s->dev.table->forward[static_cast<size_t>(desc.op)], info.name, desc.element,
                    detail::elementwise_precision(desc.element));
  }
}

/// WherePlan's and WhereBackwardPlan's select.
template <class Fn>
Result<Bound<Fn>> select_where(std::string_view plan, const Stream& stream, const WhereDescriptor& desc,
                               const PlanPreference& pref) {
  auto s = select_common(plan, stream, desc.element, {desc.cond_shape, desc.a_shape, desc.b_shape},
                         {"cond", "a", "b"}, pref);
  if (!s) return s.error();
  if constexpr (std::is_same_v<Fn, detail::TernaryBackwardFn>) {
    BARACUDA_TRY(check_has_gradient(plan, desc.element));
    return bind_row(plan, *s, s->dev.table->where_backward, "where_backward", desc.element, MathPrecision::Exact);
  } else {
    return bind_row(plan, *s, s->dev.table->where, "where", desc.element, MathPrecision::Exact);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// TernaryPlan
// ---------------------------------------------------------------------------------------------------

Result<TernaryPlan> TernaryPlan::select(const Stream& stream, const TernaryDescriptor& desc, PlanPreference pref) {
  auto b = select_ternary<detail::TernaryFn>(kTernary, stream, desc, pref);
  if (!b) return b.error();
  return TernaryPlan(desc, b->out_shape, b->binding, b->fn);
}

Status TernaryPlan::can_implement(const Args& args) const {
  const ElementKind k = desc_.element;
  auto in = check_inputs(
      kTernary,
      {{{"a", args.a, k, desc_.a_shape}, {"b", args.b, k, desc_.b_shape}, {"c", args.c, k, desc_.c_shape}}},
      out_shape_);
  if (!in) return in.error();
  return check_output(kTernary, "out", args.out, k, out_shape_, {(*in)[0], (*in)[1], (*in)[2]});
}

Status TernaryPlan::run(const Stream& stream, Workspace, const Args& args) const {
  const auto ctx =
      detail::begin_run(kTernary, binding_, stream, [&] { return can_implement(args); }, out_shape_.numel() == 0);
  if (!ctx) return ctx.status();
  const detail::TernaryLaunch l{{detail::broadcast_view(args.a, out_shape_), detail::broadcast_view(args.b, out_shape_),
                                 detail::broadcast_view(args.c, out_shape_)},
                                args.out,
                                desc_.value};
  return fn_(*ctx, l);
}

// ---------------------------------------------------------------------------------------------------
// TernaryBackwardPlan
// ---------------------------------------------------------------------------------------------------

Result<TernaryBackwardPlan> TernaryBackwardPlan::select(const Stream& stream, const TernaryDescriptor& desc,
                                                        PlanPreference pref) {
  auto b = select_ternary<detail::TernaryBackwardFn>(kTernaryBackward, stream, desc, pref);
  if (!b) return b.error();
  return TernaryBackwardPlan(desc, b->out_shape, b->binding, b->fn);
}

Status TernaryBackwardPlan::can_implement(const Args& args) const {
  const ElementKind k = desc_.element;
  BARACUDA_TRY(detail::check_tensor(kTernaryBackward, "dy", args.dy, k, out_shape_, detail::Access::Read));
  auto in = check_inputs(
      kTernaryBackward,
      {{{"a", args.a, k, desc_.a_shape}, {"b", args.b, k, desc_.b_shape}, {"c", args.c, k, desc_.c_shape}}},
      out_shape_);
  if (!in) return in.error();
  return check_gradients(kTernaryBackward, {"da", "db", "dc"}, {&args.da, &args.db, &args.dc}, 3, k, out_shape_,
                         {args.dy, (*in)[0], (*in)[1], (*in)[2]});
}

Status TernaryBackwardPlan::run(const Stream& stream, Workspace, const Args& args) const {
  const auto ctx = detail::begin_run(kTernaryBackward, binding_, stream, [&] { return can_implement(args); },
                                     out_shape_.numel() == 0);
  if (!ctx) return ctx.status();
  detail::TernaryBackwardLaunch l;
  l.dy = args.dy;
  l.in = {detail::broadcast_view(args.a, out_shape_), detail::broadcast_view(args.b, out_shape_),
          detail::broadcast_view(args.c, out_shape_)};
  l.value = desc_.value;
  assign_gradients(l, {&args.da, &args.db, &args.dc}, 3);
  return fn_(*ctx, l);
}

// ---------------------------------------------------------------------------------------------------
// WherePlan
// ---------------------------------------------------------------------------------------------------

Result<WherePlan> WherePlan::select(const Stream& stream, const WhereDescriptor& desc, PlanPreference pref) {
  auto b = select_where<detail::TernaryFn>(kWhere, stream, desc, pref);
  if (!b) return b.error();
  return WherePlan(desc, b->out_shape, b->binding, b->fn);
}

Status WherePlan::can_implement(const Args& args) const {
  const ElementKind k = desc_.element;
  auto in = check_inputs(kWhere,
                         {{{"cond", args.cond, ElementKind::Bool, desc_.cond_shape},
                           {"a", args.a, k, desc_.a_shape},
                           {"b", args.b, k, desc_.b_shape}}},
                         out_shape_);
  if (!in) return in.error();
  return check_output(kWhere, "out", args.out, k, out_shape_, {(*in)[0], (*in)[1], (*in)[2]});
}

Status WherePlan::run(const Stream& stream, Workspace, const Args& args) const {
  const auto ctx = detail::begin_run(kWhere, binding_, stream, [&] { return can_implement(args); },
                                     out_shape_.numel() == 0);
  if (!ctx) return ctx.status();
  const detail::TernaryLaunch l{{detail::broadcast_view(args.cond, out_shape_),
                                 detail::broadcast_view(args.a, out_shape_),
                                 detail::broadcast_view(args.b, out_shape_)},
                                args.out};
  return fn_(*ctx, l);
}

// ---------------------------------------------------------------------------------------------------
// WhereBackwardPlan
// ---------------------------------------------------------------------------------------------------

Result<WhereBackwardPlan> WhereBackwardPlan::select(const Stream& stream, const WhereDescriptor& desc,
                                                    PlanPreference pref) {
  auto b = select_where<detail::TernaryBackwardFn>(kWhereBackward, stream, desc, pref);
  if (!b) return b.error();
  return WhereBackwardPlan(desc, b->out_shape, b->binding, b->fn);
}

Status WhereBackwardPlan::can_implement(const Args& args) const {
  const ElementKind k = desc_.element;
  BARACUDA_TRY(detail::check_tensor(kWhereBackward, "cond", args.cond, ElementKind::Bool, desc_.cond_shape,
                                    detail::Access::Read));
  BARACUDA_TRY(detail::check_tensor(kWhereBackward, "dy", args.dy, k, out_shape_, detail::Access::Read));
  const DynTensor none;
  return check_gradients(kWhereBackward, {"da", "db", ""}, {&args.da, &args.db, &none}, 2, k, out_shape_,
                         {detail::broadcast_view(args.cond, out_shape_), args.dy});
}

Status WhereBackwardPlan::run(const Stream& stream, Workspace, const Args& args) const {
  const auto ctx = detail::begin_run(kWhereBackward, binding_, stream, [&] { return can_implement(args); },
                                     out_shape_.numel() == 0);
  if (!ctx) return ctx.status();
  detail::TernaryBackwardLaunch l;
  l.dy = args.dy;
  l.in[0] = detail::broadcast_view(args.cond, out_shape_);
  const DynTensor none;
  assign_gradients(l, {&args.da, &args.db, &none}, 2);
  return fn_(*ctx, l);
}

}  // namespace dynamic
}  // namespace baracuda
