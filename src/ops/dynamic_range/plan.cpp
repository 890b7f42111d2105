// DynamicRangeQuantizePlan: select (validate the descriptor and convention, resolve the two passes' functions
// and the workspace), can_implement (operands), run (the fused kernel, or the parameter pass then the quantize
// family's kernel with the convention's quantize step).
#include <algorithm>
#include <limits>
#include <string>

#include "baracuda/ops/dynamic_range_quantize.hpp"
#include "core/plan_core.hpp"
#include "core/validate.hpp"
#include "device/segment_reduce_geometry.hpp"
#include "ops/dynamic_range/dispatch.hpp"
#include "ops/quantize/convention.hpp"
#include "ops/quantize/dispatch.hpp"
#include "ops/quantize/kinds.hpp"

namespace baracuda {
namespace {

constexpr std::string_view kPlan = "DynamicRangeQuantizePlan";
constexpr size_t kAlign = 256;  // workspace sub-buffers start 256-byte aligned

std::string s(std::string_view v) { return std::string(v); }

const detail::DynamicRangeFusedTable* fused_table(DeviceKind d) {
  switch (d) {
    case DeviceKind::Sim: return &device_sim::dynamic_range_fused_table();
#if BARACUDA_HAVE_CUDA_KERNELS
    case DeviceKind::Cuda: return &device_cuda::dynamic_range_fused_table();
#endif
    default: return nullptr;  // the host reference is the two-pass definition
  }
}


size_t round_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// Byte interval [first, last] a non-empty view touches (negative strides included).
std::pair<int64_t, int64_t> byte_extent(const ConstDynTensor& t) {
  int64_t lo = 0, hi = 0;
  for (int d = 0; d < t.shape.rank; ++d) {
    const int64_t reach = (t.shape.dims[d] - 1) * t.stride[d];
    (reach < 0 ? lo : hi) += reach;
  }
  const auto base = reinterpret_cast<int64_t>(t.data);
  return {base - (lo < 0 ? storage_bytes(t.kind, -lo) : 0), base + storage_bytes(t.kind, hi + 1) - 1};
}

}  // namespace

namespace dynamic {

Result<DynamicRangeQuantizePlan> DynamicRangeQuantizePlan::select(const Stream& stream,
                                                                  const DynamicRangeQuantizeDescriptor& desc,
                                                                  PlanPreference pref) {
  BARACUDA_TRY(detail::check_shape(kPlan, "the descriptor's shape", desc.shape));
  if (desc.shape.rank < 1) return Error::invalid(s(kPlan) + ": the shape must have rank >= 1 (a scalar is a [1] tensor)");
  if (!detail::is_quant_float_kind(desc.element))
    return Error::unsupported(s(kPlan) + ": element kind " + s(to_string(desc.element)) +
                              " is not supported (f16, bf16, f32 and f64 are)");
  const auto stored = detail::quantized_range(desc.quantized);
  if (!stored)
    return Error::unsupported(s(kPlan) + ": quantized kind " + s(to_string(desc.quantized)) +
                              " is not supported (s8, u8, s4 and u4 are)");
  const auto [lo, hi] = *stored;
  if (static_cast<size_t>(desc.mode) >= kNumDynamicRangeModes)
    return Error::invalid(s(kPlan) + ": invalid DynamicRangeMode");
  BARACUDA_TRY(detail::check_convention(kPlan, desc.convention, desc.element, /*fp8=*/false));
  const int32_t qmin = desc.quant_min.value_or(lo), qmax = desc.quant_max.value_or(hi);
  const std::string range = "[" + std::to_string(qmin) + ", " + std::to_string(qmax) + "]";
  if (qmin > qmax) return Error::invalid(s(kPlan) + ": quant_min > quant_max in the range " + range);
  if (qmin < lo || qmax > hi)
    return Error::invalid(s(kPlan) + ": the range " + range + " exceeds what " + s(to_string(desc.quantized)) +
                          " stores ([" + std::to_string(lo) + ", " + std::to_string(hi) + "])");
  if (qmin > 0 || qmax < 0)
    return Error::invalid(s(kPlan) + ": the range " + range + " must include 0 (quant_min <= 0 <= quant_max)");
  if (desc.mode == DynamicRangeMode::Symmetric && qmax == 0)
    return Error::invalid(s(kPlan) + ": symmetric mode needs quant_max > 0 (s = max|x| / quant_max); got " + range);
  if (desc.mode == DynamicRangeMode::Asymmetric && qmin == qmax)
    return Error::invalid(s(kPlan) + ": asymmetric mode needs quant_min < quant_max; got " + range);
  auto layout = detail::quant_layout(kPlan, desc.granularity, desc.shape);
  if (!layout) return layout.error();
  BARACUDA_TRY(detail::check_packed_pairs(kPlan, *layout, desc.quantized));

  auto dev = detail::select_device(kPlan, stream, pref, BARACUDA_DEVICE_TABLES(dynamic_range_params_table));
  if (!dev) return dev.error();
  const detail::DynamicRangeParamsFn params_fn = (*dev->table)[detail::kind_index(desc.element)];
  const detail::QuantizeFn quantize_fn =
      detail::quantize_fn(stream.device(), QuantizeOp::Quantize, desc.element, desc.quantized);
  if (params_fn == nullptr || quantize_fn == nullptr)
    return Error::unsupported(s(kPlan) + ": " + s(to_string(desc.element)) + " → " + s(to_string(desc.quantized)) +
                              " is not available on this device");

  // The fused single-pass path where the segments are the rows of the last dimension and a row fits on chip
  // (ops/dynamic_range/dispatch.hpp); otherwise the two passes.
  const detail::FusedRowSchedule sched =
      detail::fused_row_schedule(*layout, desc.element == ElementKind::F64 ? 8 : element_bits(desc.element) / 8);
  const detail::DynamicRangeFusedTable* fused = fused_table(stream.device());
  const detail::DynamicRangeFusedFn fused_fn =
      sched == detail::FusedRowSchedule::None || fused == nullptr
          ? nullptr
          : (*fused)[detail::kind_index(desc.element)][detail::kind_index(desc.quantized)];
  const std::string_view variant = fused_fn == nullptr                                 ? "segment_reduce+quantize"
                                   : sched == detail::FusedRowSchedule::WarpPerRow ? "fused_rows_warp"
                                                                                   : "fused_rows_block";
  DynamicRangeQuantizePlan p(desc, dev->bind(OpCategory::Quantization,
                                             detail::kDynamicRangeModes[static_cast<size_t>(desc.mode)].op,
                                             desc.element, desc.quantized, detail::opmath_precision(desc.element),
                                             variant));
  p.qmin_ = qmin;
  p.qmax_ = qmax;
  p.param_shape_ = layout->param_shape;
  p.params_fn_ = params_fn;
  p.quantize_fn_ = quantize_fn;
  p.fused_fn_ = fused_fn;
  const auto segments = static_cast<size_t>(layout->param_shape.numel());
  if (desc.mode == DynamicRangeMode::Symmetric) p.zp_scratch_bytes_ = round_up(segments * sizeof(int32_t));
  // Vllm symmetric on two passes: the parameter pass hands the quantize pass vLLM's multipliers.
  if (fused_fn == nullptr && detail::uses_multiplier(desc.convention, desc.mode))
    p.multiplier_bytes_ = round_up(segments * sizeof(float));
  size_t partials = 0;
  if (stream.device() != DeviceKind::Host && fused_fn == nullptr) {
    auto ctx = detail::make_exec_context(stream);
    if (!ctx) return ctx.error();
    const size_t acc = 2 * (desc.element == ElementKind::F64 ? sizeof(double) : sizeof(float));
    partials = detail::segment_reduce_workspace_bytes(*ctx, layout->iter, layout->param_dims_mask(), acc);
  }
  p.workspace_bytes_ = p.zp_scratch_bytes_ + p.multiplier_bytes_ + partials;
  return p;
}

Status DynamicRangeQuantizePlan::can_implement(const Args& args) const {
  using detail::Access;
  BARACUDA_TRY(detail::check_tensor(kPlan, "x", args.x, desc_.element, desc_.shape, Access::Read));
  BARACUDA_TRY(detail::check_tensor(kPlan, "y", args.y, desc_.quantized, desc_.shape, Access::Write));
  BARACUDA_TRY(detail::check_tensor(kPlan, "scale", args.scale, scale_kind(), param_shape_, Access::Write));
  const bool has_zp = args.zero_point.data != nullptr || args.zero_point.shape.rank != 0;
  const detail::DynamicRangeModeInfo& mode = detail::kDynamicRangeModes[static_cast<size_t>(desc_.mode)];
  if (!has_zp && mode.zero_point_required)
    return Error::invalid(s(kPlan) + ": zero_point is missing: " + s(mode.name) + " mode writes a zero point");
  if (has_zp)
    BARACUDA_TRY(
        detail::check_tensor(kPlan, "zero_point", args.zero_point, ElementKind::S32, param_shape_, Access::Write));
  // No two operands may share memory (outputs are written while x is still read by the other pass).
  const std::array<std::pair<std::string_view, ConstDynTensor>, 4> ops{
      {{"x", args.x}, {"y", args.y}, {"scale", args.scale}, {"zero_point", args.zero_point}}};
  for (size_t i = 0; i < ops.size(); ++i) {
    for (size_t j = i + 1; j < ops.size(); ++j) {
      const ConstDynTensor& a = ops[i].second;
      const ConstDynTensor& b = ops[j].second;
      if (a.data == nullptr || b.data == nullptr || a.numel() == 0 || b.numel() == 0) continue;
      const auto [a0, a1] = byte_extent(a);
      const auto [b0, b1] = byte_extent(b);
      if (a0 <= b1 && b0 <= a1)
        return Error::invalid(s(kPlan) + ": '" + s(ops[i].first) + "' and '" + s(ops[j].first) + "' overlap in memory");
    }
  }
  return {};
}

Status DynamicRangeQuantizePlan::run(const Stream& stream, Workspace workspace, const Args& args) const {
  // The workspace rule is the plan's own (its messages), and an empty problem skips it.
  const auto ctx = detail::begin_run(kPlan, binding_, stream, [&]() -> Status {
    BARACUDA_TRY(can_implement(args));
    if (param_shape_.numel() == 0) return {};
    if (workspace.size < workspace_bytes_ || (workspace_bytes_ > 0 && workspace.data == nullptr))
      return Error::workspace_too_small(s(kPlan) + ": workspace too small", workspace_bytes_,
                                        workspace.data == nullptr ? 0 : workspace.size);
    if (workspace_bytes_ > 0 && reinterpret_cast<uintptr_t>(workspace.data) % kAlign != 0)
      return Error::misaligned(s(kPlan) + ": the workspace must be 256-byte aligned");
    return {};
  }, param_shape_.numel() == 0);
  if (!ctx) return ctx.status();
  auto layout = detail::quant_layout(kPlan, desc_.granularity, desc_.shape);
  if (!layout) return layout.error();

  DynTensor zp = args.zero_point;
  if (zp.data == nullptr) zp = DynTensor::dense(workspace.data, ElementKind::S32, param_shape_);
  // The workspace: [zero-point scratch][multipliers][the reduction's partials].
  char* const ws = static_cast<char*>(workspace.data);
  const size_t before_partials = zp_scratch_bytes_ + multiplier_bytes_;
  const Workspace partials(workspace_bytes_ > before_partials ? ws + before_partials : nullptr,
                           workspace_bytes_ - before_partials);
  const DynTensor multiplier = multiplier_bytes_ > 0
                                   ? DynTensor::dense(ws + zp_scratch_bytes_, ElementKind::F32, param_shape_)
                                   : DynTensor{};
  detail::DynamicRangeLaunch launch{*layout, args.x, args.scale, zp, desc_.mode, qmin_, qmax_,
                                    Workspace{}, args.y, desc_.convention, DynTensor{}};
  if (fused_fn_ != nullptr)  // one kernel: range, parameters and y per row
    return fused_fn_(*ctx, launch);
  // Pass 1: (min, max) per segment → scale, zero point (and vLLM's multipliers). Segments without elements
  // get the parameters of an empty range (dynamic_range_quantize.hpp).
  launch.workspace = partials;
  launch.y = DynTensor{};
  launch.multiplier = multiplier;
  BARACUDA_TRY(params_fn_(*ctx, launch));
  if (desc_.shape.numel() == 0) return {};
  // Pass 2: the quantize family's kernel with those parameters and the convention's quantize step (Vllm
  // symmetric: x times the multiplier).
  dynamic::QuantizeArgs qt;
  qt.x = args.x;
  qt.y = args.y;
  qt.scale = multiplier_bytes_ > 0 ? multiplier : args.scale;
  qt.zero_point = zp;
  const detail::QuantizeLaunch quantize{*layout, qt, qmin_, qmax_, 1.0, Workspace{}, desc_.convention,
                                        multiplier_bytes_ > 0};
  return quantize_fn_(*ctx, quantize);
}

}  // namespace dynamic
}  // namespace baracuda
