// Internal: the norm family's launch record and its tables (forward and backward), by element kind.
#pragma once

#include <cstdint>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/workspace.hpp"
#include "baracuda/ops/norm.hpp"
#include "core/exec_context.hpp"
#include "device/dispatch_table.hpp"
#include "device/row_schedule.hpp"

namespace baracuda::detail {

/// What a norm function receives. Forward: x, weight and bias (empty when absent), y, and mean and rstd —
/// dense `[rows]` of the statistics' kind, the caller's or workspace memory (mean unused by RmsNorm).
/// Backward: dy, x, weight, mean (RmsNorm: unused) and rstd as the forward wrote them, the outputs dx,
/// dweight, dbias (each empty when not wanted), and `coefficients`: workspace for three statistics' values
/// per row. `partials` is workspace for the reductions' two-pass schedule.
/// The forward's fused quantized output, for the single-pass row kernel (the composed path runs the
/// quantize plan instead): the kind, the convention's range, and the operands of norm.hpp's NormArgs.
struct NormQuantLaunch {
  NormQuant kind = NormQuant::None;
  DynamicRangeMode mode = DynamicRangeMode::Symmetric;
  QuantConvention convention = QuantConvention::PyTorch;
  int32_t qmin = -128, qmax = 127;
  DynTensor q;
  ConstDynTensor scale, zero_point;   ///< Static (zero point optional), Fp8 (scale)
  DynTensor q_scale, q_zero_point;    ///< Dynamic (the zero point: the caller's or workspace)
  DynTensor amax;                     ///< Fp8
};

/// `residual` and `h` (forward, `has_residual`): y = norm(h), h = x + residual written. The row kernel
/// writes y only when `y.data` is set, and mean and rstd only when theirs are.
struct NormLaunch {
  NormOp op = NormOp::RmsNorm;
  double eps = 0;
  ConstDynTensor x, dy, weight, bias, residual;
  DynTensor y, dx, dweight, dbias, h;
  DynTensor mean, rstd;
  void* coefficients = nullptr;
  Workspace partials;
  NormQuantLaunch quant;
};

static_assert(kNormRowBytes == kRowKernelBytes, "norm.hpp documents the row kernel's limit");

using NormTable = KindTable<NormFn>;
using NormTypes = FloatTypes;

}  // namespace baracuda::detail

// reference: host.cpp; sim and cuda: the kernel unit device.cu
BARACUDA_DECLARE_DEVICE_TABLE(detail::NormTable, norm_forward_table)
BARACUDA_DECLARE_DEVICE_TABLE(detail::NormTable, norm_backward_table)
// sim and cuda only (the kernel unit device.cu): the single-pass row kernel of the forward.
BARACUDA_DECLARE_KERNEL_TABLE(detail::NormTable, norm_rows_table)
// sim and cuda only: the backward's single-pass dx kernel, then the column sums (backward_row_kernel.cuh).
BARACUDA_DECLARE_KERNEL_TABLE(detail::NormTable, norm_backward_rows_table)
