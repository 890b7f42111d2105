// Internal: the quantize family's launch record and its lookup of device functions by (op, kinds).
#pragma once

#include <cstdint>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/ops/quantize.hpp"
#include "core/exec_context.hpp"
#include "ops/quantize/param_views.hpp"

namespace baracuda::detail {

/// What a quantize-family function receives: the layout and the caller's validated, non-empty operands
/// (as given, inputs read-only: the function builds the iteration views itself), and the resolved range.
struct QuantizeLaunch {
  QuantLayout layout;
  dynamic::QuantizeArgs t;
  int32_t qmin = 0;
  int32_t qmax = 0;
  double grad_factor = 1.0;
  Workspace workspace;
  QuantConvention convention = QuantConvention::PyTorch;
  /// The scale operand holds multipliers m (x · m, not x / s): the dynamic-range plan's vLLM symmetric
  /// two-pass path, whose first pass writes qmax / amax beside the scale.
  bool scale_is_multiplier = false;
};

/// The function of `device` for `op` over float kind `element` and quantized kind `quantized` (ignored by
/// the ops without a quantized operand), or nullptr when unsupported or not built.
QuantizeFn quantize_fn(DeviceKind device, QuantizeOp op, ElementKind element, ElementKind quantized);

}  // namespace baracuda::detail
