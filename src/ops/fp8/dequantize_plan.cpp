// Fp8DequantizePlan: select (validate, resolve the backend, look the (x, y) kinds up in the device's
// table), can_implement (x, y, scale_inv and their aliasing), run (re-validate, one indirect call).
#include <string>

#include "baracuda/ops/fp8.hpp"
#include "core/plan_core.hpp"
#include "core/validate.hpp"
#include "ops/fp8/dispatch.hpp"
#include "ops/fp8/plan_common.hpp"

namespace baracuda {
namespace {
constexpr std::string_view kPlan = "Fp8DequantizePlan";
}  // namespace

namespace dynamic {

Result<Fp8DequantizePlan> Fp8DequantizePlan::select(const Stream& stream, const Fp8DequantizeDescriptor& desc,
                                                    PlanPreference pref) {
  auto dev = detail::select_elementwise(kPlan, stream, pref, desc.shape, {desc.input, desc.output},
                                        BARACUDA_DEVICE_TABLES(fp8_functions));
  if (!dev) return dev.error();
  const auto fn = detail::pair_entry(kPlan, dev->table->dequantize, desc.input, desc.output,
                                     "x: fp8e4m3 or fp8e5m2; y: f16, bf16, f32 or f64");
  if (!fn) return fn.error();

  Fp8DequantizePlan p(desc, dev->bind(OpCategory::Quantization, detail::kFp8OpName<Fp8DequantizePlan>, desc.input,
                                      desc.output, detail::opmath_precision(desc.output), "elementwise"));
  p.fn_ = *fn;
  return p;
}

Status Fp8DequantizePlan::can_implement(const Args& args) const {
  BARACUDA_TRY(detail::check_tensor(kPlan, "x", args.x, desc_.input, desc_.shape, detail::Access::Read));
  BARACUDA_TRY(detail::check_f32_scalar(kPlan, "scale_inv", args.scale_inv, detail::Access::Read));
  BARACUDA_TRY(detail::check_tensor(kPlan, "y", args.y, desc_.output, desc_.shape, detail::Access::Write));
  BARACUDA_TRY(detail::check_alias(kPlan, args.x, args.y));  // different element sizes: never in place
  return detail::check_distinct(kPlan, "y", args.y, "scale_inv", args.scale_inv);
}

Status Fp8DequantizePlan::run(const Stream& stream, Workspace, const Args& args) const {
  const auto ctx =
      detail::begin_run(kPlan, binding_, stream, [&] { return can_implement(args); }, args.y.numel() == 0);
  if (!ctx) return ctx.status();
  return fn_(*ctx, detail::Fp8DequantizeLaunch{args.x, args.scale_inv, args.y});
}

}  // namespace dynamic
}  // namespace baracuda
