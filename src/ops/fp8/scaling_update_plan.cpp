// Fp8ScalingUpdatePlan: select (validate the recipe's parameters, resolve the backend), can_implement
// (three distinct f32 operands of the described shapes), run (re-validate, one indirect call).
#include <cmath>
#include <string>

#include "baracuda/ops/fp8.hpp"
#include "core/plan_core.hpp"
#include "core/validate.hpp"
#include "ops/fp8/dispatch.hpp"
#include "ops/fp8/plan_common.hpp"

namespace baracuda {
namespace {
constexpr std::string_view kPlan = "Fp8ScalingUpdatePlan";
constexpr int kMaxMargin = 64;  // fp8_max · 2^±64 stays a normal f32, so scaled_max is exact
}  // namespace

namespace dynamic {

Result<Fp8ScalingUpdatePlan> Fp8ScalingUpdatePlan::select(const Stream& stream, const Fp8ScalingUpdateDescriptor& desc,
                                                          PlanPreference pref) {
  if (!detail::is_fp8(desc.fp8_kind))
    return Error::unsupported(std::string(kPlan) + ": fp8_kind " + std::string(to_string(desc.fp8_kind)) +
                              " is not an fp8 kind (fp8e4m3 or fp8e5m2)");
  if (desc.history_length < 1)
    return Error::invalid(std::string(kPlan) + ": history_length must be at least 1, got " +
                          std::to_string(desc.history_length));
  if (desc.amax_compute_algo != AmaxComputeAlgo::Max && desc.amax_compute_algo != AmaxComputeAlgo::MostRecent)
    return Error::invalid(std::string(kPlan) + ": amax_compute_algo is not a valid AmaxComputeAlgo");
  if (desc.margin < -kMaxMargin || desc.margin > kMaxMargin)
    return Error::invalid(std::string(kPlan) + ": margin must be in [-64, 64], got " + std::to_string(desc.margin));
  auto dev = detail::select_device(kPlan, stream, pref, BARACUDA_DEVICE_TABLES(fp8_functions));
  if (!dev) return dev.error();

  const bool max_algo = desc.amax_compute_algo == AmaxComputeAlgo::Max;
  return Fp8ScalingUpdatePlan(desc,
                              dev->bind(OpCategory::Quantization, "fp8_scaling_update", ElementKind::F32,
                                        desc.fp8_kind, MathPrecision::F32,
                                        max_algo ? "delayed_max" : "delayed_most_recent"),
                              dev->table->scaling_update);
}

Status Fp8ScalingUpdatePlan::can_implement(const Args& args) const {
  BARACUDA_TRY(detail::check_tensor(kPlan, "amax_history", args.amax_history, ElementKind::F32,
                                    Shape{desc_.history_length}, detail::Access::Write));
  BARACUDA_TRY(detail::check_f32_scalar(kPlan, "scale", args.scale, detail::Access::Write));
  BARACUDA_TRY(detail::check_f32_scalar(kPlan, "scale_inv", args.scale_inv, detail::Access::Write));
  BARACUDA_TRY(detail::check_distinct(kPlan, "amax_history", args.amax_history, "scale", args.scale));
  BARACUDA_TRY(detail::check_distinct(kPlan, "amax_history", args.amax_history, "scale_inv", args.scale_inv));
  return detail::check_distinct(kPlan, "scale", args.scale, "scale_inv", args.scale_inv);
}

Status Fp8ScalingUpdatePlan::run(const Stream& stream, Workspace, const Args& args) const {
  const auto ctx = detail::begin_run(kPlan, binding_, stream, [&] { return can_implement(args); });
  if (!ctx) return ctx.status();
  const float scaled_max = std::ldexp(fp8_max_finite(desc_.fp8_kind), -desc_.margin);  // exact
  return fn_(*ctx, detail::Fp8ScalingUpdateLaunch{args.amax_history, args.scale, args.scale_inv,
                                                  desc_.amax_compute_algo, scaled_max});
}

}  // namespace dynamic
}  // namespace baracuda
