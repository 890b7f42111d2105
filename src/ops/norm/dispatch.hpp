// Internal: the norm family's launch record and its tables (forward and backward), by element kind.
#pragma once

#include <cstdint>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/workspace.hpp"
#include "baracuda/ops/norm.hpp"
#include "core/exec_context.hpp"
#include "device/dispatch_table.hpp"

namespace baracuda::detail {

/// What a norm function receives. Forward: x, weight and bias (empty when absent), y, and mean and rstd —
/// dense `[rows]` of the statistics' kind, the caller's or workspace memory (mean unused by RmsNorm).
/// Backward: dy, x, weight, mean (RmsNorm: unused) and rstd as the forward wrote them, the outputs dx,
/// dweight, dbias (each empty when not wanted), and `coefficients`: workspace for three statistics' values
/// per row. `partials` is workspace for the reductions' two-pass schedule.
struct NormLaunch {
  NormOp op = NormOp::RmsNorm;
  double eps = 0;
  ConstDynTensor x, dy, weight, bias;
  DynTensor y, dx, dweight, dbias;
  DynTensor mean, rstd;
  void* coefficients = nullptr;
  Workspace partials;
};

using NormTable = KindTable<NormFn>;
using NormTypes = FloatTypes;

}  // namespace baracuda::detail

// reference: host.cpp; sim and cuda: the kernel unit device.cu
BARACUDA_DECLARE_DEVICE_TABLE(detail::NormTable, norm_forward_table)
BARACUDA_DECLARE_DEVICE_TABLE(detail::NormTable, norm_backward_table)
