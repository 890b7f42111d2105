// CastPlan: select (validate, resolve the backend, look the (in, out) pair up in the device's table),
// can_implement (the shared tensor and aliasing checks), run (re-validate, one indirect call).
#include <string>

#include "baracuda/ops/cast.hpp"
#include "core/exec_context.hpp"
#include "core/hashing.hpp"
#include "core/validate.hpp"
#include "ops/cast/dispatch.hpp"

namespace baracuda {
namespace {

constexpr std::string_view kPlan = "CastPlan";

#define BARACUDA_CAST_OP(name, in_types, out_types, tolerance, doc) constexpr std::string_view kOpName = #name;
#include "ops/cast/cast.def"
#undef BARACUDA_CAST_OP

}  // namespace

size_t CastDescriptor::hash() const {
  size_t h = std::hash<int>{}(static_cast<int>(input));
  detail::hash_combine(h, static_cast<int>(output));
  detail::hash_combine(h, shape.hash());
  detail::hash_combine(h, saturate_fp8);
  return h;
}

namespace dynamic {

Result<CastPlan> CastPlan::select(const Stream& stream, const CastDescriptor& desc, PlanPreference pref) {
  BARACUDA_TRY(detail::check_shape(kPlan, "the descriptor's shape", desc.shape));
  if (detail::kind_index(desc.input) >= kNumElementKinds || detail::kind_index(desc.output) >= kNumElementKinds)
    return Error::invalid(std::string(kPlan) + ": the descriptor's element kinds are not valid ElementKinds");
  auto backend = detail::resolve_bespoke_backend(kPlan, stream, pref);
  if (!backend) return backend.error();
  const detail::CastTable* table =
      detail::table_for_device(stream.device(), reference::cast_table(), device_sim::cast_table(),
                               BARACUDA_CUDA_TABLE(cast_table));
  if (table == nullptr)
    return detail::no_cuda_kernels(kPlan);
  const detail::CastFn fn = (*table)[detail::kind_index(desc.input)][detail::kind_index(desc.output)];
  if (fn == nullptr)
    return Error::unsupported(std::string(kPlan) + ": " + std::string(to_string(desc.input)) + " -> " +
                              std::string(to_string(desc.output)) +
                              " is not supported (packed 4-bit kinds are converted by the quantization family)");

  CastPlan p;
  p.desc_ = desc;
  p.sku_.category = OpCategory::Cast;
  p.sku_.op = kOpName;
  p.sku_.element = desc.input;
  p.sku_.aux_element = desc.output;
  p.sku_.sm = stream.sm();
  p.sku_.backend = *backend;
  p.sku_.precision = MathPrecision::Exact;
  p.sku_.variant = "elementwise";
  p.device_ = stream.device();
  p.device_index_ = stream.device_index();
  p.fn_ = fn;
  return p;
}

Status CastPlan::can_implement(const DynTensor& in, const DynTensor& out) const {
  BARACUDA_TRY(detail::check_tensor(kPlan, "in", in, desc_.input, desc_.shape, detail::Access::Read));
  BARACUDA_TRY(detail::check_tensor(kPlan, "out", out, desc_.output, desc_.shape, detail::Access::Write));
  return detail::check_alias(kPlan, in, out);
}

PrecisionGuarantee CastPlan::precision_guarantee() const {
  return {MathPrecision::Exact, MathPrecision::Exact, true, true};
}

Status CastPlan::run(const Stream& stream, Workspace, const DynTensor& in, const DynTensor& out) const {
  if (fn_ == nullptr) return Error::invalid(std::string(kPlan) + ": run on a plan that select did not produce");
  BARACUDA_TRY(detail::check_same_device(kPlan, device_, device_index_, stream));
  BARACUDA_TRY(can_implement(in, out));
  if (out.numel() == 0) return {};
  auto ctx = detail::make_exec_context(stream);
  if (!ctx) return ctx.error();
  return fn_(*ctx, detail::CastLaunch{in, out, desc_.saturate_fp8});
}

}  // namespace dynamic
}  // namespace baracuda
