// UnaryPlan and UnaryBackwardPlan: select (validate the descriptor and its parameters against the catalog,
// resolve the backend, look the (op, kind) up in the device's table), can_implement (the shared tensor and
// aliasing checks), run (re-validate, one indirect call). The device tables are assembled here from the
// per-element-type slices.
#include <cmath>
#include <string>

#include "baracuda/ops/unary.hpp"
#include "core/plan_core.hpp"
#include "core/validate.hpp"
#include "ops/unary/dispatch.hpp"
#include "ops/unary/param_spec.hpp"

namespace baracuda {
namespace {

constexpr std::string_view kPlan = "UnaryPlan";
constexpr std::string_view kBackwardPlan = "UnaryBackwardPlan";

/// SKU names of the backward ops ("exp_backward"), static text like the forward names.
constexpr std::array<std::string_view, kNumUnaryKinds> kBackwardNames = {{
#define BARACUDA_UNARY_OP(name, Enum, params, saved, types, doc) #name "_backward",
#include "baracuda/ops/unary_ops.def"
#undef BARACUDA_UNARY_OP
}};

// The slices exist for these types only (one kernel unit device_<type>.cu each); a catalog line naming
// another type needs a new slice file (and its UNITS entry in CMakeLists.txt) and a line below.
using SliceTypes = FloatTypes;
constexpr bool catalog_types_have_slices() {
  bool ok = true;
#define BARACUDA_UNARY_OP(name, Enum, params, saved, types, doc) \
  for_each_type(types{}, [&]<class T>() { ok = ok && type_list_contains<SliceTypes, T>::value; });
#include "baracuda/ops/unary_ops.def"
#undef BARACUDA_UNARY_OP
  return ok;
}
static_assert(catalog_types_have_slices(), "unary_ops.def names an element type without a slice file");

struct SliceRef {
  ElementKind kind;
  const detail::UnarySlice* slice;
};

detail::UnaryTables assemble(std::initializer_list<SliceRef> slices) {
  detail::UnaryTables t{};
  for (const SliceRef& s : slices)
    for (size_t op = 0; op < kNumUnaryKinds; ++op) {
      t.forward[op][detail::kind_index(s.kind)] = s.slice->forward[op];
      t.backward[op][detail::kind_index(s.kind)] = s.slice->backward[op];
    }
  return t;
}

const detail::UnaryTables& sim_tables() {
  static const detail::UnaryTables t = assemble({{ElementKind::F16, &device_sim::unary_slice_f16()},
                                                 {ElementKind::Bf16, &device_sim::unary_slice_bf16()},
                                                 {ElementKind::F32, &device_sim::unary_slice_f32()},
                                                 {ElementKind::F64, &device_sim::unary_slice_f64()}});
  return t;
}

const detail::UnaryTables* cuda_tables() {
#if BARACUDA_HAVE_CUDA_KERNELS
  static const detail::UnaryTables t = assemble({{ElementKind::F16, &device_cuda::unary_slice_f16()},
                                                 {ElementKind::Bf16, &device_cuda::unary_slice_bf16()},
                                                 {ElementKind::F32, &device_cuda::unary_slice_f32()},
                                                 {ElementKind::F64, &device_cuda::unary_slice_f64()}});
  return &t;
#else
  return nullptr;
#endif
}

std::string number_text(double v) {
  std::string s = std::to_string(v);
  while (s.size() > 1 && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

/// The descriptor's parameters with the op's defaults applied, or why they are invalid.
Result<detail::UnaryParamValues> resolve_parameters(std::string_view plan, const UnaryDescriptor& desc) {
  const detail::ParamSpec& spec = detail::kUnaryParamSpecs[detail::unary_index(desc.kind)];
  const std::string op(to_string(desc.kind));
  auto fail = [&](const std::string& why) {
    return Error::invalid(std::string(plan) + ": " + op + ": " + why + " (its parameters: \"" +
                          std::string(unary_op_info(desc.kind).params) + "\")");
  };
  detail::UnaryParamValues v{};
  for (size_t i = 0; i < kNumUnaryParams; ++i) {
    const detail::ParamRule& r = spec.rules[i];
    const std::string name(to_string(static_cast<UnaryParam>(i)));
    const std::optional<double>& given = desc.params[i];
    if (!r.applies) {
      if (given) return fail("takes no parameter " + name);
      continue;
    }
    if (!given && r.required) return fail("parameter " + name + " is required");
    v[i] = given ? *given : r.default_value;
    if (!std::isfinite(v[i])) return fail("parameter " + name + " must be finite, got " + number_text(v[i]));
  }
  for (size_t i = 0; i < kNumUnaryParams; ++i) {
    const detail::ParamRule& r = spec.rules[i];
    if (!r.applies || r.compare == detail::ParamCompare::None) continue;
    const double bound = r.bound_is_param ? v[static_cast<size_t>(r.bound_param)] : r.bound_value;
    if (!detail::satisfies(r.compare, v[i], bound))
      return fail(std::string(to_string(static_cast<UnaryParam>(i))) + " = " + number_text(v[i]) + " must be " +
                  std::string(detail::to_string(r.compare)) + " " +
                  (r.bound_is_param ? std::string(to_string(r.bound_param)) + " = " : std::string()) +
                  number_text(bound));
  }
  return v;
}

const detail::UnaryTables* tables_for(DeviceKind d) {
  return detail::table_for_device(d, reference::unary_tables(), sim_tables(), cuda_tables());
}

/// What select does for both plans: the descriptor, its parameters, the backend, the table.
struct Selected {
  detail::UnaryParamValues params;
  detail::DeviceSelection<detail::UnaryTables> dev;
};

Result<Selected> select_common(std::string_view plan, const Stream& stream, const UnaryDescriptor& desc,
                               const PlanPreference& pref) {
  BARACUDA_TRY(detail::check_shape(plan, "the descriptor's shape", desc.shape));
  if (detail::unary_index(desc.kind) >= kNumUnaryKinds)
    return Error::invalid(std::string(plan) + ": the descriptor's kind is not a valid UnaryKind");
  BARACUDA_TRY(detail::check_kinds(plan, {desc.element}));
  auto params = resolve_parameters(plan, desc);
  if (!params) return params.error();
  auto dev = detail::select_device(plan, stream, pref, tables_for);
  if (!dev) return dev.error();
  return Selected{*params, *dev};
}

Error unsupported_kind(std::string_view plan, const UnaryDescriptor& desc) {
  return Error::unsupported(std::string(plan) + ": element kind " + std::string(to_string(desc.element)) +
                            " is not supported by " + std::string(to_string(desc.kind)) +
                            " (f16, bf16, f32 and f64 are)");
}

detail::PlanBinding bind_unary(const Selected& s, std::string_view op, const UnaryDescriptor& desc) {
  return s.dev.bind(OpCategory::UnaryElementwise, op, desc.element, std::nullopt,
                    detail::opmath_precision(desc.element),
                    "elementwise");
}

}  // namespace

namespace dynamic {

// ---------------------------------------------------------------------------------------------------
// UnaryPlan
// ---------------------------------------------------------------------------------------------------

Result<UnaryPlan> UnaryPlan::select(const Stream& stream, const UnaryDescriptor& desc, PlanPreference pref) {
  auto s = select_common(kPlan, stream, desc, pref);
  if (!s) return s.error();
  const detail::UnaryFn fn = s->dev.table->forward[detail::unary_index(desc.kind)][detail::kind_index(desc.element)];
  if (fn == nullptr) return unsupported_kind(kPlan, desc);
  UnaryPlan p(desc, bind_unary(*s, to_string(desc.kind), desc), fn);
  p.params_ = s->params;
  return p;
}

Status UnaryPlan::can_implement(const Args& args) const {
  return detail::check_map(kPlan, args.in, desc_.element, args.out, desc_.element, desc_.shape);
}

Status UnaryPlan::run(const Stream& stream, Workspace, const Args& args) const {
  return detail::run_entry(kPlan, binding_, stream, [&] { return can_implement(args); }, args.out.numel() == 0, fn_,
                           detail::UnaryLaunch{args.in, args.out, params_});
}

// ---------------------------------------------------------------------------------------------------
// UnaryBackwardPlan
// ---------------------------------------------------------------------------------------------------

Result<UnaryBackwardPlan> UnaryBackwardPlan::select(const Stream& stream, const UnaryDescriptor& desc,
                                                    PlanPreference pref) {
  auto s = select_common(kBackwardPlan, stream, desc, pref);
  if (!s) return s.error();
  const detail::UnaryBackwardFn fn =
      s->dev.table->backward[detail::unary_index(desc.kind)][detail::kind_index(desc.element)];
  if (fn == nullptr) {
    if (s->dev.table->forward[detail::unary_index(desc.kind)][detail::kind_index(desc.element)] != nullptr)
      return Error::unsupported(std::string(kBackwardPlan) + ": " + std::string(to_string(desc.kind)) +
                                " has no backward");
    return unsupported_kind(kBackwardPlan, desc);
  }
  UnaryBackwardPlan p(desc, bind_unary(*s, kBackwardNames[detail::unary_index(desc.kind)], desc), fn);
  p.params_ = s->params;
  return p;
}

Status UnaryBackwardPlan::can_implement(const Args& args) const {
  BARACUDA_TRY(detail::check_tensor(kBackwardPlan, "dy", args.dy, desc_.element, desc_.shape, detail::Access::Read));
  // An op that saves nothing ignores `saved`; one given anyway (with data) must still be a valid operand.
  const bool reads_saved = saved_operand() != UnarySaved::None;
  if (reads_saved || args.saved.data != nullptr)
    BARACUDA_TRY(detail::check_tensor(kBackwardPlan,
                                      saved_operand() == UnarySaved::Input    ? "saved (x)"
                                      : saved_operand() == UnarySaved::Output ? "saved (y)"
                                                                              : "saved",
                                      args.saved, desc_.element, desc_.shape, detail::Access::Read));
  BARACUDA_TRY(detail::check_tensor(kBackwardPlan, "dx", args.dx, desc_.element, desc_.shape, detail::Access::Write));
  BARACUDA_TRY(detail::check_alias(kBackwardPlan, args.dy, args.dx));
  if (reads_saved) BARACUDA_TRY(detail::check_alias(kBackwardPlan, args.saved, args.dx));
  return {};
}

Status UnaryBackwardPlan::run(const Stream& stream, Workspace, const Args& args) const {
  const auto ctx = detail::begin_run(kBackwardPlan, binding_, stream, [&] { return can_implement(args); },
                                     args.dx.numel() == 0);
  if (!ctx) return ctx.status();
  const ConstDynTensor unused{};
  return fn_(*ctx, detail::UnaryBackwardLaunch{args.dy, saved_operand() == UnarySaved::None ? unused : args.saved,
                                               args.dx, params_});
}

}  // namespace dynamic
}  // namespace baracuda
