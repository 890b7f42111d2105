// Fp8QuantizePlan: select (validate, the convention, resolve the backend, look the (x, y) kinds up in the
// device's table), can_implement (x, y, scale, amax, the optional scale_inv and their aliasing), run
// (re-validate, one indirect call).
#include <string>

#include "baracuda/ops/fp8.hpp"
#include "core/plan_core.hpp"
#include "core/validate.hpp"
#include "ops/fp8/dispatch.hpp"
#include "ops/fp8/plan_common.hpp"
#include "ops/quantize/convention.hpp"

namespace baracuda {
namespace {
constexpr std::string_view kPlan = "Fp8QuantizePlan";
}  // namespace

namespace dynamic {

Result<Fp8QuantizePlan> Fp8QuantizePlan::select(const Stream& stream, const Fp8QuantizeDescriptor& desc,
                                                PlanPreference pref) {
  BARACUDA_TRY(detail::check_shape(kPlan, "the descriptor's shape", desc.shape));
  BARACUDA_TRY(detail::check_kinds(kPlan, {desc.input, desc.output}));
  BARACUDA_TRY(detail::check_convention(kPlan, desc.convention, desc.input, /*fp8=*/true));
  auto dev = detail::select_device(kPlan, stream, pref, BARACUDA_DEVICE_TABLES(fp8_functions));
  if (!dev) return dev.error();
  const auto fn = detail::pair_entry(kPlan, dev->table->quantize, desc.input, desc.output,
                                     "x: f16, bf16, f32 or f64; y: fp8e4m3 or fp8e5m2");
  if (!fn) return fn.error();

  // TransformerEngine's NaN-skipping amax is another instantiation of the fused kernel.
  const bool skip_nan = desc.convention == QuantConvention::TransformerEngine;
  Fp8QuantizePlan p(desc, dev->bind(OpCategory::Quantization, detail::kFp8OpName<Fp8QuantizePlan>, desc.input,
                                    desc.output, detail::opmath_precision(desc.input),
                                    skip_nan ? "fused_amax_skip_nan" : "fused_amax"));
  p.fn_ = *fn;
  return p;
}

Status Fp8QuantizePlan::can_implement(const Args& args) const {
  BARACUDA_TRY(detail::check_tensor(kPlan, "x", args.x, desc_.input, desc_.shape, detail::Access::Read));
  BARACUDA_TRY(detail::check_f32_scalar(kPlan, "scale", args.scale, detail::Access::Read));
  BARACUDA_TRY(detail::check_tensor(kPlan, "y", args.y, desc_.output, desc_.shape, detail::Access::Write));
  BARACUDA_TRY(detail::check_f32_scalar(kPlan, "amax", args.amax, detail::Access::Write));
  BARACUDA_TRY(detail::check_alias(kPlan, args.x, args.y));  // different element sizes: never in place
  BARACUDA_TRY(detail::check_distinct(kPlan, "amax", args.amax, "scale", args.scale));
  if (args.scale_inv.data == nullptr) return {};  // omitted
  BARACUDA_TRY(detail::check_f32_scalar(kPlan, "scale_inv", args.scale_inv, detail::Access::Write));
  BARACUDA_TRY(detail::check_distinct(kPlan, "scale_inv", args.scale_inv, "scale", args.scale));
  return detail::check_distinct(kPlan, "scale_inv", args.scale_inv, "amax", args.amax);
}

Status Fp8QuantizePlan::run(const Stream& stream, Workspace, const Args& args) const {
  const auto ctx = detail::begin_run(kPlan, binding_, stream, [&] { return can_implement(args); });
  if (!ctx) return ctx.status();
  // An empty x still defines amax (0) and scale_inv, so the function runs; it touches neither x nor y then.
  return fn_(*ctx, detail::Fp8QuantizeLaunch{args.x, args.scale, args.y, args.amax, desc_.accumulate_amax,
                                             args.scale_inv, desc_.convention == QuantConvention::TransformerEngine});
}

}  // namespace dynamic
}  // namespace baracuda
