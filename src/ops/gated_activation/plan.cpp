// GatedActivationPlan and GatedActivationBackwardPlan: select (validate the descriptor, resolve the backend,
// look (kind, element) up in the device's table), can_implement (the shared tensor and aliasing checks),
// run (re-validate, derive the half views of x and dx from the layout, one indirect call).
#include <cmath>
#include <string>
#include <type_traits>

#include "baracuda/ops/gated_activation.hpp"
#include "core/plan_core.hpp"
#include "core/validate.hpp"
#include "ops/gated_activation/dispatch.hpp"

namespace baracuda {
namespace {

constexpr std::string_view kForward = "GatedActivationPlan";
constexpr std::string_view kBackward = "GatedActivationBackwardPlan";

// The catalog, in enum order: the kinds, their names and their backward names.
constexpr GatedActivationKind kCatalogKinds[] = {
#define BARACUDA_GATED_OP(Kind, name, Gate, types, act_doc, grad_doc) GatedActivationKind::Kind,
#include "ops/gated_activation/gated_activation.def"
#undef BARACUDA_GATED_OP
};
constexpr std::string_view kForwardNames[] = {
#define BARACUDA_GATED_OP(Kind, name, Gate, types, act_doc, grad_doc) #name,
#include "ops/gated_activation/gated_activation.def"
#undef BARACUDA_GATED_OP
};
constexpr std::string_view kBackwardNames[] = {
#define BARACUDA_GATED_OP(Kind, name, Gate, types, act_doc, grad_doc) #name "_backward",
#include "ops/gated_activation/gated_activation.def"
#undef BARACUDA_GATED_OP
};
constexpr bool catalog_in_enum_order() {
  for (size_t i = 0; i < std::size(kCatalogKinds); ++i)
    if (detail::gated_kind_index(kCatalogKinds[i]) != i) return false;
  return true;
}
static_assert(std::size(kCatalogKinds) == kNumGatedActivationKinds, "one catalog line per GatedActivationKind");
static_assert(catalog_in_enum_order(), "gated_activation.def lists the kinds in GatedActivationKind order");

bool valid_kind(GatedActivationKind k) { return detail::gated_kind_index(k) < kNumGatedActivationKinds; }
bool valid_layout(GateLayout l) { return static_cast<int>(l) <= static_cast<int>(GateLayout::Interleaved); }

std::string s(std::string_view v) { return std::string(v); }

/// The descriptor rules both plans share.
Status check_descriptor(std::string_view plan, const GatedActivationDescriptor& d) {
  BARACUDA_TRY(detail::check_shape(plan, "the descriptor's input shape", d.input_shape));
  BARACUDA_TRY(detail::check_kinds(plan, {d.element}));
  if (!valid_kind(d.kind))
    return Error::invalid(s(plan) + ": the descriptor's kind (" + std::to_string(static_cast<int>(d.kind)) +
                          ") is not a valid GatedActivationKind");
  if (!valid_layout(d.layout))
    return Error::invalid(s(plan) + ": the descriptor's layout (" + std::to_string(static_cast<int>(d.layout)) +
                          ") is not a valid GateLayout");
  const int rank = d.input_shape.rank;
  if (rank == 0) return Error::invalid(s(plan) + ": a rank-0 input has no dimension to split");
  if (d.split_dim < -rank || d.split_dim >= rank)
    return Error::invalid(s(plan) + ": split_dim " + std::to_string(d.split_dim) + " is out of range for rank " +
                          std::to_string(rank) + " (valid: " + std::to_string(-rank) + ".." +
                          std::to_string(rank - 1) + ")");
  const int sd = d.normalized_split_dim();
  if (d.input_shape.dims[sd] % 2 != 0)
    return Error::invalid(s(plan) + ": the input's extent along split_dim " + std::to_string(sd) + " is " +
                          std::to_string(d.input_shape.dims[sd]) + ", which is odd; it must be even (two halves)");
  if (!std::isfinite(d.alpha) || !(d.alpha > 0))
    return Error::invalid(s(plan) + ": alpha must be finite and > 0 (got " + std::to_string(d.alpha) + ")");
  if (!(d.limit > 0))
    return Error::invalid(s(plan) + ": limit must be > 0 and not NaN (got " + std::to_string(d.limit) +
                          "; +inf disables the clamps)");
  return {};
}

/// The function of (kind, element) and the binding with the SKU `op` (`names`, by kind): the backend, then the
/// device's table (`tables_for`); `Unsupported` for an empty slot or a build without cuda.
template <class Fn>
struct Bound {
  Fn fn;
  detail::PlanBinding binding;
};
template <class TablesFor>
auto select_function(std::string_view plan, const Stream& stream, const GatedActivationDescriptor& d,
                     const PlanPreference& pref, TablesFor tables_for, const std::string_view* names)
    -> Result<Bound<std::remove_cvref_t<decltype((*tables_for(DeviceKind::Host))[0][0])>>> {
  auto dev = detail::select_device(plan, stream, pref, tables_for);
  if (!dev) return dev.error();
  const auto fn = (*dev->table)[detail::gated_kind_index(d.kind)][detail::kind_index(d.element)];
  if (fn == nullptr)
    return Error::unsupported(s(plan) + ": element kind " + s(to_string(d.element)) + " is not supported by " +
                              s(to_string(d.kind)) + " (f16, bf16, f32 and f64 are)");
  return Bound<std::remove_cv_t<decltype(fn)>>{
      fn, dev->bind(OpCategory::GatedActivation, names[detail::gated_kind_index(d.kind)], d.element, std::nullopt,
                    detail::opmath_precision(d.element), "elementwise")};
}

/// The view of `t` (of the input's shape) at the gate (`gate` = true) or linear positions of `layout`, over
/// the output's shape: offset H·stride[sd] for the second half, or stride·2 with offset 0 / 1 interleaved.
template <class V>
BasicDynTensor<V> half_view(const BasicDynTensor<V>& t, const Shape& out_shape, int sd, GateLayout layout, bool gate) {
  using Byte = std::conditional_t<std::is_const_v<V>, const char, char>;
  BasicDynTensor<V> v = t;
  v.shape = out_shape;
  int64_t offset = 0;
  if (layout == GateLayout::Interleaved) {
    v.stride[sd] = 2 * t.stride[sd];
    offset = gate ? 0 : t.stride[sd];
  } else {
    const bool first_half = gate == (layout == GateLayout::FirstHalf);
    offset = first_half ? 0 : out_shape.dims[sd] * t.stride[sd];
  }
  v.data = static_cast<Byte*>(t.data) + offset * (element_bits(t.kind) / 8);
  return v;
}

detail::GatedParams params_of(const GatedActivationDescriptor& d) { return {d.alpha, d.limit}; }

}  // namespace

std::string_view to_string(GatedActivationKind k) {
  return valid_kind(k) ? kForwardNames[detail::gated_kind_index(k)] : std::string_view("?");
}

std::string_view to_string(GateLayout l) {
  switch (l) {
    case GateLayout::SecondHalf: return "second_half";
    case GateLayout::FirstHalf: return "first_half";
    case GateLayout::Interleaved: return "interleaved";
  }
  return "?";
}

Shape GatedActivationDescriptor::output_shape() const {
  Shape out = input_shape;
  const int d = normalized_split_dim();
  if (d >= 0 && d < std::min(out.rank, kMaxRank)) out.dims[d] /= 2;  // else: an invalid descriptor, select rejects it
  return out;
}

namespace dynamic {

// ---------------------------------------------------------------------------------------------------
// Forward
// ---------------------------------------------------------------------------------------------------

Result<GatedActivationPlan> GatedActivationPlan::select(const Stream& stream, const GatedActivationDescriptor& desc,
                                                        PlanPreference pref) {
  BARACUDA_TRY(check_descriptor(kForward, desc));
  auto b = select_function(kForward, stream, desc, pref, BARACUDA_DEVICE_TABLES(gated_forward_table), kForwardNames);
  if (!b) return b.error();
  return GatedActivationPlan(desc, b->binding, b->fn);
}

Status GatedActivationPlan::can_implement(const Args& args) const {
  BARACUDA_TRY(detail::check_tensor(kForward, "x", args.x, desc_.element, desc_.input_shape, detail::Access::Read));
  return detail::check_tensor(kForward, "y", args.y, desc_.element, desc_.output_shape(), detail::Access::Write);
}

Status GatedActivationPlan::run(const Stream& stream, Workspace, const Args& args) const {
  const auto ctx =
      detail::begin_run(kForward, binding_, stream, [&] { return can_implement(args); }, args.y.numel() == 0);
  if (!ctx) return ctx.status();
  const int sd = desc_.normalized_split_dim();
  const Shape out = desc_.output_shape();
  detail::GatedForwardLaunch l;
  l.x = args.x;
  l.y = args.y;
  l.gate = half_view(args.x, out, sd, desc_.layout, true);
  l.linear = half_view(args.x, out, sd, desc_.layout, false);
  l.split_dim = sd;
  l.layout = desc_.layout;
  l.params = params_of(desc_);
  return fn_(*ctx, l);
}

// ---------------------------------------------------------------------------------------------------
// Backward
// ---------------------------------------------------------------------------------------------------

Result<GatedActivationBackwardPlan> GatedActivationBackwardPlan::select(const Stream& stream,
                                                                        const GatedActivationDescriptor& desc,
                                                                        PlanPreference pref) {
  BARACUDA_TRY(check_descriptor(kBackward, desc));
  auto b =
      select_function(kBackward, stream, desc, pref, BARACUDA_DEVICE_TABLES(gated_backward_table), kBackwardNames);
  if (!b) return b.error();
  return GatedActivationBackwardPlan(desc, b->binding, b->fn);
}

Status GatedActivationBackwardPlan::can_implement(const Args& args) const {
  const auto& [dy, x, dx] = args;
  BARACUDA_TRY(detail::check_tensor(kBackward, "dy", dy, desc_.element, desc_.output_shape(), detail::Access::Read));
  BARACUDA_TRY(detail::check_tensor(kBackward, "x", x, desc_.element, desc_.input_shape, detail::Access::Read));
  BARACUDA_TRY(detail::check_tensor(kBackward, "dx", dx, desc_.element, desc_.input_shape, detail::Access::Write));
  BARACUDA_TRY(detail::check_alias(kBackward, x, dx));
  if (dy.data != nullptr && dy.data == dx.data && dx.numel() != 0)
    return Error::invalid(s(kBackward) + ": dy and dx share storage; only x may be overwritten by dx (in place)");
  return {};
}

Status GatedActivationBackwardPlan::run(const Stream& stream, Workspace, const Args& args) const {
  const auto& [dy, x, dx] = args;
  const auto ctx =
      detail::begin_run(kBackward, binding_, stream, [&] { return can_implement(args); }, dy.numel() == 0);
  if (!ctx) return ctx.status();
  const int sd = desc_.normalized_split_dim();
  const Shape out = desc_.output_shape();
  detail::GatedBackwardLaunch l;
  l.dy = dy;
  l.x = x;
  l.dx = dx;
  l.gate = half_view(x, out, sd, desc_.layout, true);
  l.linear = half_view(x, out, sd, desc_.layout, false);
  l.dgate = half_view(dx, out, sd, desc_.layout, true);
  l.dlinear = half_view(dx, out, sd, desc_.layout, false);
  l.split_dim = sd;
  l.layout = desc_.layout;
  l.params = params_of(desc_);
  return fn_(*ctx, l);
}

}  // namespace dynamic
}  // namespace baracuda
