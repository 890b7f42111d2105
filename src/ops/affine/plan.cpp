// AffinePlan: select (validate, resolve the backend, look the kind up in the device's table), can_implement
// (the shared tensor and aliasing checks), run (re-validate, one indirect call).
#include <string>

#include "baracuda/ops/affine.hpp"
#include "core/hashing.hpp"
#include "core/plan_core.hpp"
#include "core/validate.hpp"
#include "ops/affine/dispatch.hpp"

namespace baracuda {
namespace {

constexpr std::string_view kPlan = "AffinePlan";

#define BARACUDA_AFFINE_OP(name, types, tolerance, doc) constexpr std::string_view kOpName = #name;
#include "ops/affine/affine.def"
#undef BARACUDA_AFFINE_OP

MathPrecision opmath_precision(ElementKind k) {
  return k == ElementKind::F64 ? MathPrecision::F64 : MathPrecision::F32;
}

}  // namespace

size_t AffineDescriptor::hash() const {
  size_t h = std::hash<int>{}(static_cast<int>(element));
  detail::hash_combine(h, shape.hash());
  detail::hash_combine(h, alpha);
  detail::hash_combine(h, beta);
  return h;
}

namespace dynamic {

Result<AffinePlan> AffinePlan::select(const Stream& stream, const AffineDescriptor& desc, PlanPreference pref) {
  BARACUDA_TRY(detail::check_shape(kPlan, "the descriptor's shape", desc.shape));
  BARACUDA_TRY(detail::check_kinds(kPlan, {desc.element}));
  auto dev = detail::select_device(kPlan, stream, pref, BARACUDA_DEVICE_TABLES(affine_table));
  if (!dev) return dev.error();
  const auto fn = detail::kind_entry(kPlan, kOpName, *dev->table, desc.element);
  if (!fn) return fn.error();

  AffinePlan p;
  p.desc_ = desc;
  p.binding_ = dev->bind(OpCategory::UnaryElementwise, kOpName, desc.element, std::nullopt,
                         opmath_precision(desc.element), "elementwise");
  p.fn_ = *fn;
  return p;
}

Status AffinePlan::can_implement(const Args& args) const {
  BARACUDA_TRY(detail::check_tensor(kPlan, "in", args.in, desc_.element, desc_.shape, detail::Access::Read));
  BARACUDA_TRY(detail::check_tensor(kPlan, "out", args.out, desc_.element, desc_.shape, detail::Access::Write));
  return detail::check_alias(kPlan, args.in, args.out);
}

PrecisionGuarantee AffinePlan::precision_guarantee() const {
  const MathPrecision p = opmath_precision(desc_.element);
  return {p, p, true, true};
}

Status AffinePlan::run(const Stream& stream, Workspace, const Args& args) const {
  const auto ctx =
      detail::begin_run(kPlan, binding_, stream, [&] { return can_implement(args); }, args.out.numel() == 0);
  if (!ctx) return ctx.status();
  return fn_(*ctx, detail::AffineLaunch{args.in, args.out, desc_.alpha, desc_.beta});
}

}  // namespace dynamic
}  // namespace baracuda
