// Internal: a NormPlan's fused quantized output as the plan it equals (norm.hpp): QuantizePlan per tensor
// (Static), DynamicRangeQuantizePlan per token (Dynamic) or Fp8QuantizePlan (Fp8). The composed path (the
// host, and rows too long for the row kernel) runs it over y; `select` also validates the descriptor's
// quantization through it, so both paths accept and reject the same problems.
#pragma once

#include <cstdint>
#include <optional>

#include "baracuda/ops/dynamic_range_quantize.hpp"
#include "baracuda/ops/fill.hpp"
#include "baracuda/ops/fp8.hpp"
#include "baracuda/ops/norm.hpp"
#include "baracuda/ops/quantize.hpp"

namespace baracuda::detail {

struct NormQuantChain {
  NormQuant kind = NormQuant::None;
  ElementKind q_kind = ElementKind::S8;
  int32_t qmin = -128, qmax = 127;
  std::optional<dynamic::QuantizePlan> static_plan;
  std::optional<dynamic::DynamicRangeQuantizePlan> dynamic_plan;
  std::optional<dynamic::Fp8QuantizePlan> fp8_plan;
  std::optional<dynamic::FillPlan> zero_fill;  ///< Static without a zero point: a 0 in the workspace

  /// The plan for `desc.quant` (not None) on `stream`; its errors name NormPlan.
  static Result<NormQuantChain> select(const Stream& stream, const NormDescriptor& desc, PlanPreference pref);
  /// The quantize plan's workspace and the zero point's (256-byte aligned).
  size_t workspace_size() const;
  /// Quantizes `y` (x's shape and kind) into args' outputs, with args' scale and zero point.
  Status run(const Stream& stream, Workspace workspace, const ConstDynTensor& y, const dynamic::NormArgs& args) const;
};

}  // namespace baracuda::detail
