// CastPlan: select (validate, resolve the backend, look the (in, out) pair up in the device's table),
// can_implement (the shared tensor and aliasing checks), run (re-validate, one indirect call).
#include <string>

#include "baracuda/ops/cast.hpp"
#include "core/plan_core.hpp"
#include "core/validate.hpp"
#include "ops/cast/dispatch.hpp"

namespace baracuda {
namespace {

constexpr std::string_view kPlan = "CastPlan";

#define BARACUDA_CAST_OP(name, in_types, out_types, tolerance, doc) constexpr std::string_view kOpName = #name;
#include "ops/cast/cast.def"
#undef BARACUDA_CAST_OP

}  // namespace

namespace dynamic {

Result<CastPlan> CastPlan::select(const Stream& stream, const CastDescriptor& desc, PlanPreference pref) {
  auto dev = detail::select_elementwise(kPlan, stream, pref, desc.shape, {desc.input, desc.output},
                                        BARACUDA_DEVICE_TABLES(cast_table));
  if (!dev) return dev.error();
  const auto fn = detail::pair_entry(kPlan, *dev->table, desc.input, desc.output,
                                     "packed 4-bit kinds are converted by the quantization family");
  if (!fn) return fn.error();

  return CastPlan(desc,
                  dev->bind(OpCategory::Cast, kOpName, desc.input, desc.output, MathPrecision::Exact, "elementwise"),
                  *fn);
}

Status CastPlan::can_implement(const Args& args) const {
  return detail::check_map(kPlan, args.in, desc_.input, args.out, desc_.output, desc_.shape);
}

Status CastPlan::run(const Stream& stream, Workspace, const Args& args) const {
  return detail::run_entry(kPlan, binding_, stream, [&] { return can_implement(args); }, args.out.numel() == 0, fn_,
                           detail::CastLaunch{args.in, args.out, desc_.saturate_fp8});
}

}  // namespace dynamic
}  // namespace baracuda
