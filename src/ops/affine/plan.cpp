// AffinePlan: select (validate, resolve the backend, look the kind up in the device's table), can_implement
// (the shared tensor and aliasing checks), run (re-validate, one indirect call).
#include <string>

#include "baracuda/ops/affine.hpp"
#include "core/plan_core.hpp"
#include "core/validate.hpp"
#include "ops/affine/dispatch.hpp"

namespace baracuda {
namespace {

constexpr std::string_view kPlan = "AffinePlan";

#define BARACUDA_AFFINE_OP(name, types, tolerance, doc) constexpr std::string_view kOpName = #name;
#include "ops/affine/affine.def"
#undef BARACUDA_AFFINE_OP

}  // namespace

namespace dynamic {

Result<AffinePlan> AffinePlan::select(const Stream& stream, const AffineDescriptor& desc, PlanPreference pref) {
  auto dev = detail::select_elementwise(kPlan, stream, pref, desc.shape, {desc.element},
                                        BARACUDA_DEVICE_TABLES(affine_table));
  if (!dev) return dev.error();
  const auto fn = detail::kind_entry(kPlan, kOpName, *dev->table, desc.element);
  if (!fn) return fn.error();

  return AffinePlan(desc,
                    dev->bind(OpCategory::UnaryElementwise, kOpName, desc.element, std::nullopt,
                              detail::opmath_precision(desc.element), "elementwise"),
                    *fn);
}

Status AffinePlan::can_implement(const Args& args) const {
  return detail::check_map(kPlan, args.in, desc_.element, args.out, desc_.element, desc_.shape);
}

Status AffinePlan::run(const Stream& stream, Workspace, const Args& args) const {
  return detail::run_entry(kPlan, binding_, stream, [&] { return can_implement(args); }, args.out.numel() == 0, fn_,
                           detail::AffineLaunch{args.in, args.out, desc_.alpha, desc_.beta});
}

}  // namespace dynamic
}  // namespace baracuda
