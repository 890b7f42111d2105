// The fp8 conversion plans, Fp8QuantizePlan and Fp8DequantizePlan: select (validate, the quantize
// convention, resolve the backend, look the (x, y) kinds up in the plan's table of the device), can_implement
// (the tensors and their aliasing), run (re-validate, one indirect call).
#include <string>

#include "baracuda/ops/fp8.hpp"
#include "core/plan_core.hpp"
#include "core/validate.hpp"
#include "ops/fp8/dispatch.hpp"
#include "ops/fp8/plan_common.hpp"
#include "ops/quantize/convention.hpp"

namespace baracuda::dynamic {
namespace {

constexpr std::string_view kQuantize = detail::Fp8PlanInfo<Fp8QuantizePlan>::plan;
constexpr std::string_view kDequantize = detail::Fp8PlanInfo<Fp8DequantizePlan>::plan;

/// select of the quantize and dequantize plans: a valid shape and kinds, `check()` (the plan's own rules), the
/// device, and the function for (x, y) in the plan's table of the catalog (`expected` names the kinds it has,
/// for the message when there is none); the plan, bound for `precision` and `variant`.
template <class Plan, class Descriptor, class Check>
Result<Plan> select_fp8_conversion(const Stream& stream, const PlanPreference& pref, const Descriptor& desc,
                                   std::string_view expected, Check&& check, MathPrecision precision,
                                   std::string_view variant) {
  using Info = detail::Fp8PlanInfo<Plan>;
  BARACUDA_TRY(detail::check_shape(Info::plan, "the descriptor's shape", desc.shape));
  BARACUDA_TRY(detail::check_kinds(Info::plan, {desc.input, desc.output}));
  BARACUDA_TRY(check());
  auto dev = detail::select_device(Info::plan, stream, pref, BARACUDA_DEVICE_TABLES(fp8_functions));
  if (!dev) return dev.error();
  const auto fn = detail::pair_entry(Info::plan, (*dev->table).*Info::member, desc.input, desc.output, expected);
  if (!fn) return fn.error();
  return detail::PlanAccess::make<Plan>(
      desc, dev->bind(OpCategory::Quantization, Info::op, desc.input, desc.output, precision, variant), *fn);
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// Fp8QuantizePlan
// ---------------------------------------------------------------------------------------------------

Result<Fp8QuantizePlan> Fp8QuantizePlan::select(const Stream& stream, const Fp8QuantizeDescriptor& desc,
                                                PlanPreference pref) {
  // TransformerEngine's NaN-skipping amax is another instantiation of the fused kernel.
  const bool skip_nan = desc.convention == QuantConvention::TransformerEngine;
  return select_fp8_conversion<Fp8QuantizePlan>(
      stream, pref, desc, "x: f16, bf16, f32 or f64; y: fp8e4m3 or fp8e5m2",
      [&] { return detail::check_convention(kQuantize, desc.convention, desc.input, /*fp8=*/true); },
      detail::opmath_precision(desc.input), skip_nan ? "fused_amax_skip_nan" : "fused_amax");
}

Status Fp8QuantizePlan::can_implement(const Args& args) const {
  BARACUDA_TRY(detail::check_tensor(kQuantize, "x", args.x, desc_.input, desc_.shape, detail::Access::Read));
  BARACUDA_TRY(detail::check_f32_scalar(kQuantize, "scale", args.scale, detail::Access::Read));
  BARACUDA_TRY(detail::check_tensor(kQuantize, "y", args.y, desc_.output, desc_.shape, detail::Access::Write));
  BARACUDA_TRY(detail::check_f32_scalar(kQuantize, "amax", args.amax, detail::Access::Write));
  BARACUDA_TRY(detail::check_alias(kQuantize, args.x, args.y));  // different element sizes: never in place
  BARACUDA_TRY(detail::check_distinct(kQuantize, "amax", args.amax, "scale", args.scale));
  if (args.scale_inv.data == nullptr) return {};  // omitted
  BARACUDA_TRY(detail::check_f32_scalar(kQuantize, "scale_inv", args.scale_inv, detail::Access::Write));
  BARACUDA_TRY(detail::check_distinct(kQuantize, "scale_inv", args.scale_inv, "scale", args.scale));
  return detail::check_distinct(kQuantize, "scale_inv", args.scale_inv, "amax", args.amax);
}

Status Fp8QuantizePlan::run(const Stream& stream, Workspace, const Args& args) const {
  const auto ctx = detail::begin_run(kQuantize, binding_, stream, [&] { return can_implement(args); });
  if (!ctx) return ctx.status();
  // An empty x still defines amax (0) and scale_inv, so the function runs; it touches neither x nor y then.
  return fn_(*ctx, detail::Fp8QuantizeLaunch{args.x, args.scale, args.y, args.amax, desc_.accumulate_amax,
                                             args.scale_inv, desc_.convention == QuantConvention::TransformerEngine});
}

// ---------------------------------------------------------------------------------------------------
// Fp8DequantizePlan
// ---------------------------------------------------------------------------------------------------

Result<Fp8DequantizePlan> Fp8DequantizePlan::select(const Stream& stream, const Fp8DequantizeDescriptor& desc,
                                                    PlanPreference pref) {
  return select_fp8_conversion<Fp8DequantizePlan>(
      stream, pref, desc, "x: fp8e4m3 or fp8e5m2; y: f16, bf16, f32 or f64", [] { return Status{}; },
      detail::opmath_precision(desc.output), "elementwise");
}

Status Fp8DequantizePlan::can_implement(const Args& args) const {
  BARACUDA_TRY(detail::check_tensor(kDequantize, "x", args.x, desc_.input, desc_.shape, detail::Access::Read));
  BARACUDA_TRY(detail::check_f32_scalar(kDequantize, "scale_inv", args.scale_inv, detail::Access::Read));
  BARACUDA_TRY(detail::check_tensor(kDequantize, "y", args.y, desc_.output, desc_.shape, detail::Access::Write));
  BARACUDA_TRY(detail::check_alias(kDequantize, args.x, args.y));  // different element sizes: never in place
  return detail::check_distinct(kDequantize, "y", args.y, "scale_inv", args.scale_inv);
}

Status Fp8DequantizePlan::run(const Stream& stream, Workspace, const Args& args) const {
  const auto ctx =
      detail::begin_run(kDequantize, binding_, stream, [&] { return can_implement(args); }, args.y.numel() == 0);
  if (!ctx) return ctx.status();
  return fn_(*ctx, detail::Fp8DequantizeLaunch{args.x, args.scale_inv, args.y});
}

}  // namespace baracuda::dynamic
