// dynamic::QuantizePlan: select (the descriptor rules of include/baracuda/ops/quantize.hpp, the backend, the
// device's function), can_implement (the operands each QuantizeOp reads and writes), run (one or two device
// functions).
#include <array>
#include <cmath>
#include <limits>
#include <string>

#include "baracuda/ops/quantize.hpp"
#include "core/data_checks.hpp"
#include "core/plan_core.hpp"
#include "core/validate.hpp"
#include "device/segment_reduce_geometry.hpp"
#include "ops/quantize/convention.hpp"
#include "ops/quantize/kinds.hpp"
#include "ops/quantize/tables.hpp"

namespace baracuda {
namespace {

constexpr std::string_view kPlan = "QuantizePlan";
std::string s(std::string_view v) { return std::string(v); }

/// A static name (KernelSku holds string_views).
std::string_view granularity_name(QuantGranularity::Kind k) {
  switch (k) {
    case QuantGranularity::Kind::PerTensor: return "per_tensor";
    case QuantGranularity::Kind::PerChannel: return "per_channel";
    case QuantGranularity::Kind::PerToken: return "per_token";
    case QuantGranularity::Kind::PerGroup: return "per_group";
  }
  return "?";
}

detail::QuantizeForm form_of(QuantizeOp op) { return detail::kQuantizeOps[static_cast<size_t>(op)].form; }
bool has_quantized_operand(QuantizeOp op) {
  return form_of(op) == detail::QuantizeForm::Quantizes || form_of(op) == detail::QuantizeForm::Dequantizes;
}
bool is_learnable(QuantizeOp op) { return form_of(op) == detail::QuantizeForm::Learnable; }
/// The op whose sums over each parameter's elements (dscale, dzero_point) make it f64 and per-device.
bool sums_per_parameter(QuantizeOp op) {
  return (detail::kQuantizeOps[static_cast<size_t>(op)].writes & detail::quantize_operand::DScale) != 0;
}

template <class Fn>
Fn entry(const detail::KindPairTable<Fn>& t, size_t i, size_t j) { return t[i][j]; }
template <class Fn>
Fn entry(const detail::KindTable<Fn>& t, size_t i, size_t) { return t[i]; }

/// The device function of `op`, from its catalog line's table (the learnable backward's: its first pass, dx).
detail::QuantizeFn function_of(const detail::QuantizeTables& t, QuantizeOp op, ElementKind e, ElementKind q) {
  const size_t i = detail::kind_index(e), j = detail::kind_index(q);
  switch (op) {
#define BARACUDA_QUANTIZE_OP(name, Enum, table, reads, writes, form, doc) \
  case QuantizeOp::Enum: return entry(t.table, i, j);
#include "baracuda/ops/quantize_ops.def"
#undef BARACUDA_QUANTIZE_OP
  }
  return nullptr;
}

const detail::QuantizeTables* tables_for(DeviceKind d) {
  return detail::table_for_device(d, reference::quantize_tables(), device_sim::quantize_tables(),
                                  BARACUDA_CUDA_TABLE(quantize_tables));
}

}  // namespace

std::string_view to_string(QuantizeOp op) {
  return detail::is_quantize_op(op) ? detail::kQuantizeOps[static_cast<size_t>(op)].name : "?";
}

namespace dynamic {

ElementKind QuantizePlan::scale_kind() const {
  return desc_.element == ElementKind::F64 ? ElementKind::F64 : ElementKind::F32;
}

Result<QuantizePlan> QuantizePlan::select(const Stream& stream, const QuantizeDescriptor& desc, PlanPreference pref) {
  const QuantizeOp op = desc.op;
  if (!detail::is_quantize_op(op)) return Error::invalid(s(kPlan) + ": invalid QuantizeOp");
  BARACUDA_TRY(detail::check_shape(kPlan, "the descriptor's shape", desc.shape));
  if (desc.shape.rank < 1)
    return Error::invalid(s(kPlan) + ": the shape must have rank >= 1 (a scalar is a [1] tensor)");
  if (!detail::is_quant_float_kind(desc.element))
    return Error::unsupported(s(kPlan) + ": element kind " + s(to_string(desc.element)) +
                              " is not supported (f16, bf16, f32 and f64 are)");
  if (!detail::quantized_range(desc.quantized))
    return Error::unsupported(s(kPlan) + ": quantized kind " + s(to_string(desc.quantized)) +
                              " is not supported (s8, u8, s4 and u4 are)");
  const bool vllm_op = has_quantized_operand(op);  // vLLM's static int8 kernels quantize and dequantize
  BARACUDA_TRY(detail::check_convention(
      kPlan, desc.convention, desc.element, /*fp8=*/false,
      vllm_op ? "" : "covers quantize and dequantize (vLLM has no " + s(to_string(op)) + ")"));
  auto layout = detail::quant_layout(kPlan, desc.granularity, desc.shape);
  if (!layout) return layout.error();

  const auto [lo, hi] = *detail::quantized_range(desc.quantized);
  const int32_t qmin = desc.quant_min.value_or(lo), qmax = desc.quant_max.value_or(hi);
  if (qmin > qmax)
    return Error::invalid(s(kPlan) + ": quant_min " + std::to_string(qmin) + " > quant_max " + std::to_string(qmax));
  if (qmin < lo || qmax > hi)
    return Error::invalid(s(kPlan) + ": the range [" + std::to_string(qmin) + ", " + std::to_string(qmax) +
                          "] exceeds what " + s(to_string(desc.quantized)) + " stores ([" + std::to_string(lo) +
                          ", " + std::to_string(hi) + "])");
  if (is_learnable(op) && (qmin > 0 || qmax < 0))
    return Error::invalid(s(kPlan) + ": the learnable fake-quantize range must include 0 (quant_min <= 0 <= quant_max)");
  if (sums_per_parameter(op) && !std::isfinite(desc.grad_factor))
    return Error::invalid(s(kPlan) + ": grad_factor must be finite");
  if (has_quantized_operand(op)) BARACUDA_TRY(detail::check_packed_pairs(kPlan, *layout, desc.quantized));

  auto dev = detail::select_device(kPlan, stream, pref, tables_for);
  if (!dev) return dev.error();
  const detail::QuantizeTables* tables = dev->table;
  const detail::QuantizeFn fn = function_of(*tables, op, desc.element, desc.quantized);
  if (fn == nullptr ||
      (sums_per_parameter(op) && tables->learnable_backward_grads[detail::kind_index(desc.element)] == nullptr))
    return Error::unsupported(s(kPlan) + ": " + s(to_string(op)) + " is not available on this device for " +
                              s(to_string(desc.element)));

  QuantizePlan p(desc, dev->bind(OpCategory::Quantization, to_string(op), desc.element, desc.quantized,
                                 detail::opmath_precision(desc.element), granularity_name(desc.granularity.kind)),
                 fn);
  p.qmin_ = qmin;
  p.qmax_ = qmax;
  p.param_shape_ = layout->param_shape;
  if (sums_per_parameter(op) && stream.device() != DeviceKind::Host) {
    // The two-pass reduction's partials: (Σ ds, Σ dzp) in f64 per (parameter, chunk).
    auto ctx = detail::make_exec_context(stream);
    if (!ctx) return ctx.error();
    p.workspace_bytes_ =
        detail::segment_reduce_workspace_bytes(*ctx, layout->iter, layout->param_dims_mask(), 2 * sizeof(double));
  }
  return p;
}

Status QuantizePlan::can_implement(const Args& args) const {
  using detail::Access;
  const QuantizeOp op = desc_.op;
  const ElementKind e = desc_.element, sk = scale_kind();
  const ElementKind zk = is_learnable(op) ? sk : ElementKind::S32;
  const Shape& shape = desc_.shape;
  const auto uses = [op](std::string_view field) { return detail::quantize_op_uses(op, field); };

  struct Operand {
    std::string_view name;
    ConstDynTensor t;
    bool used;
    bool written;
    ElementKind kind;
    const Shape* shape;
  };
  const std::array<Operand, 8> operands{{
      {"x", args.x, uses("x"), false, form_of(op) == detail::QuantizeForm::Dequantizes ? desc_.quantized : e, &shape},
      {"scale", args.scale, uses("scale"), false, sk, &param_shape_},
      {"zero_point", args.zero_point, uses("zero_point"), false, zk, &param_shape_},
      {"dy", args.dy, uses("dy"), false, e, &shape},
      {"y", args.y, uses("y"), true, form_of(op) == detail::QuantizeForm::Quantizes ? desc_.quantized : e, &shape},
      {"dx", args.dx, uses("dx"), true, e, &shape},
      {"dscale", args.dscale, uses("dscale"), true, sk, &param_shape_},
      {"dzero_point", args.dzero_point, uses("dzero_point"), true, sk, &param_shape_},
  }};
  for (const Operand& o : operands) {
    if (!o.used) {
      if (o.t.data != nullptr || o.t.shape.rank != 0)
        return Error::invalid(s(kPlan) + ": " + s(to_string(op)) + " does not use operand '" + s(o.name) +
                              "'; leave it empty");
      continue;
    }
    BARACUDA_TRY(detail::check_tensor(kPlan, o.name, o.t, o.kind, *o.shape, o.written ? Access::Write : Access::Read));
  }
  // In place only as an exact alias (check_alias); any output over a parameter tensor is rejected.
  for (const Operand& out : operands) {
    if (!out.used || !out.written) continue;
    for (const Operand& in : operands) {
      if (!in.used || &in == &out) continue;
      if (in.written) {
        if (in.t.data != nullptr && in.t.data == out.t.data)
          return Error::invalid(s(kPlan) + ": outputs '" + s(in.name) + "' and '" + s(out.name) + "' share memory");
        continue;
      }
      const bool param = in.shape == &param_shape_ || out.shape == &param_shape_;
      if (param && in.t.data != nullptr && in.t.data == out.t.data)
        return Error::invalid(s(kPlan) + ": output '" + s(out.name) + "' may not overwrite '" + s(in.name) + "'");
      BARACUDA_TRY(detail::check_alias(kPlan, in.t, out.t));
    }
  }
  return {};
}

PrecisionGuarantee QuantizePlan::precision_guarantee() const {
  const MathPrecision p = detail::opmath_precision(desc_.element);
  const bool sums = sums_per_parameter(desc_.op);  // in f64, in an order that depends on the device
  return {p, sums ? MathPrecision::F64 : p, true, !sums};
}

Status QuantizePlan::run(const Stream& stream, Workspace workspace, const Args& args) const {
  // Its own workspace rule and message (a size only), not check_workspace's.
  const auto ctx = detail::begin_run(kPlan, binding_, stream, [&]() -> Status {
    BARACUDA_TRY(can_implement(args));
    if (workspace.size < workspace_bytes_)
      return Error::workspace_too_small(s(kPlan) + ": workspace too small", workspace_bytes_, workspace.size);
    return {};
  });
  if (!ctx) return ctx.status();
  // A data check the cuda device cannot make without a synchronisation (core/data_checks.hpp). PyTorch rejects a
  // zero point outside [qmin, qmax]; vLLM's kernels add any.
  if (detail::data_readable(stream) && desc_.convention != QuantConvention::Vllm &&
      args.zero_point.data != nullptr && args.zero_point.kind == ElementKind::S32)
    BARACUDA_TRY(detail::check_s32_range(kPlan, "zero_point", args.zero_point, qmin_, qmax_,
                                         "a zero point lies in [qmin, qmax]; checked on the host and sim devices"));
  auto layout = detail::quant_layout(kPlan, desc_.granularity, desc_.shape);
  if (!layout) return layout.error();
  const detail::QuantizeLaunch launch{*layout, args, qmin_, qmax_, desc_.grad_factor, workspace, desc_.convention};
  if (sums_per_parameter(desc_.op)) {
    // dscale and dzp (sums over each parameter's elements; zero for an empty input) first: dx may
    // overwrite dy in place.
    const detail::QuantizeFn grads =
        tables_for(binding_.device)->learnable_backward_grads[detail::kind_index(desc_.element)];
    BARACUDA_TRY(grads(*ctx, launch));
  }
  if (desc_.shape.numel() > 0) BARACUDA_TRY(fn_(*ctx, launch));
  return {};
}

}  // namespace dynamic

namespace detail {

QuantizeFn quantize_fn(DeviceKind device, QuantizeOp op, ElementKind element, ElementKind quantized) {
  const QuantizeTables* t = tables_for(device);
  if (t == nullptr || detail::kind_index(element) >= kNumElementKinds ||
      detail::kind_index(quantized) >= kNumElementKinds)
    return nullptr;
  return function_of(*t, op, element, quantized);
}

}  // namespace detail
}  // namespace baracuda
