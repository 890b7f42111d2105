// AffinePlan: select (validate, resolve the backend, look the kind up in the device's table), can_implement
// (the shared tensor and aliasing checks), run (re-validate, one indirect call).
#include <string>

#include "baracuda/ops/affine.hpp"
#include "core/exec_context.hpp"
#include "core/hashing.hpp"
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
  if (detail::kind_index(desc.element) >= kNumElementKinds)
    return Error::invalid(std::string(kPlan) + ": the descriptor's element kind is not a valid ElementKind");
  auto backend = detail::resolve_bespoke_backend(kPlan, stream, pref);
  if (!backend) return backend.error();
  const detail::AffineTable* table = detail::table_for_device(
      stream.device(), reference::affine_table(), device_sim::affine_table(), BARACUDA_CUDA_TABLE(affine_table));
  if (table == nullptr)
    return detail::no_cuda_kernels(kPlan);
  const detail::AffineFn fn = (*table)[detail::kind_index(desc.element)];
  if (fn == nullptr)
    return Error::unsupported(std::string(kPlan) + ": element kind " + std::string(to_string(desc.element)) +
                              " is not supported (f16, bf16, f32 and f64 are)");

  AffinePlan p;
  p.desc_ = desc;
  p.sku_.category = OpCategory::UnaryElementwise;
  p.sku_.op = kOpName;
  p.sku_.element = desc.element;
  p.sku_.sm = stream.sm();
  p.sku_.backend = *backend;
  p.sku_.precision = opmath_precision(desc.element);
  p.sku_.variant = "elementwise";
  p.device_ = stream.device();
  p.device_index_ = stream.device_index();
  p.fn_ = fn;
  return p;
}

Status AffinePlan::can_implement(const DynTensor& in, const DynTensor& out) const {
  BARACUDA_TRY(detail::check_tensor(kPlan, "in", in, desc_.element, desc_.shape, detail::Access::Read));
  BARACUDA_TRY(detail::check_tensor(kPlan, "out", out, desc_.element, desc_.shape, detail::Access::Write));
  return detail::check_alias(kPlan, in, out);
}

PrecisionGuarantee AffinePlan::precision_guarantee() const {
  const MathPrecision p = opmath_precision(desc_.element);
  return {p, p, true, true};
}

Status AffinePlan::run(const Stream& stream, Workspace, const DynTensor& in, const DynTensor& out) const {
  if (fn_ == nullptr) return Error::invalid(std::string(kPlan) + ": run on a plan that select did not produce");
  BARACUDA_TRY(detail::check_same_device(kPlan, device_, device_index_, stream));
  BARACUDA_TRY(can_implement(in, out));
  if (out.numel() == 0) return {};
  auto ctx = detail::make_exec_context(stream);
  if (!ctx) return ctx.error();
  return fn_(*ctx, detail::AffineLaunch{in, out, desc_.alpha, desc_.beta});
}

}  // namespace dynamic
}  // namespace baracuda
