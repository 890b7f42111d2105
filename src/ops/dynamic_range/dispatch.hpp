// Internal: the dynamic-range family's first pass (range → scale, zero point): its launch record, its
// dispatch-table type and the three devices' tables. The second pass is the quantize family's function.
#pragma once

#include <cstdint>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/workspace.hpp"
#include "baracuda/ops/dynamic_range_quantize.hpp"
#include "core/exec_context.hpp"
#include "device/dispatch_table.hpp"
#include "ops/quantize/param_views.hpp"

namespace baracuda::detail {

/// What a parameter function receives: the layout, x (read, as given, of `layout.shape`), the scale and zero
/// point to write (of `layout.param_shape`; the zero point may be workspace memory), the mode, range and
/// convention, and the workspace for the reduction's partials.
struct DynamicRangeLaunch {
  QuantLayout layout;
  ConstDynTensor x;
  DynTensor scale;
  DynTensor zero_point;
  DynamicRangeMode mode = DynamicRangeMode::Symmetric;
  int32_t qmin = 0;
  int32_t qmax = 0;
  Workspace workspace;
  DynTensor y;  ///< the fused path only: the quantized output (of `layout.shape`)
  QuantConvention convention = QuantConvention::PyTorch;
  /// The two-pass path with the Vllm convention in symmetric mode: a dense f32 tensor of
  /// `layout.param_shape` (workspace memory) that the parameter pass fills with the multipliers
  /// `qmax / amax` the quantize pass multiplies by. Empty otherwise.
  DynTensor multiplier;
};

/// Whether the quantize step multiplies by a per-segment multiplier instead of using the scale: the Vllm
/// convention's symmetric mode (vLLM's `dynamic_scaled_int8_quant` multiplies by `127 / amax`).
inline bool uses_multiplier(QuantConvention c, DynamicRangeMode m) {
  return c == QuantConvention::Vllm && m == DynamicRangeMode::Symmetric;
}

/// The fused single-pass path (one kernel per row: read the row once into shared memory, reduce, write
/// scale/zero point, quantize from shared memory). It serves a layout whose segments are exactly the rows
/// of `iter`'s last dimension (per token; per group along the last axis; per channel of axis 0 on a
/// matrix; per tensor on a vector) when a row fits the on-chip buffer; `None` means the two-pass path.
enum class FusedRowSchedule : uint8_t { None, WarpPerRow, BlockPerRow };

inline constexpr int kFusedThreads = 256;                         ///< threads per block (8 warps)
inline constexpr int64_t kFusedWarpRowBytes = 4096;               ///< warp per row up to this many x bytes
inline constexpr int64_t kFusedWarpRowElements = 1024;            ///< … and elements (32 per lane)
inline constexpr int64_t kFusedSharedBytes = 48 * 1024;           ///< no opt-in attribute needed
inline constexpr int64_t kFusedBlockRowBytes = kFusedSharedBytes - 256;  ///< block per row up to this many

/// Shared-memory bytes of one row slot (16-byte multiple, so every slot is 16-byte aligned).
constexpr int64_t fused_row_slot_bytes(int64_t len, int64_t elem_bytes) { return (len * elem_bytes + 15) / 16 * 16; }

/// The schedule for a layout and x element size (bytes).
inline FusedRowSchedule fused_row_schedule(const QuantLayout& l, int64_t elem_bytes) {
  const int r = l.iter.rank;
  if (r < 1 || r > 8) return FusedRowSchedule::None;
  const uint32_t rows_mask = ((1u << r) - 1u) & ~(1u << (r - 1));  // every dimension but the last is kept
  if (l.param_dims_mask() != rows_mask) return FusedRowSchedule::None;
  const int64_t len = l.iter[r - 1];
  const int64_t bytes = len * elem_bytes;
  if (len <= kFusedWarpRowElements && bytes <= kFusedWarpRowBytes) return FusedRowSchedule::WarpPerRow;
  if (bytes <= kFusedBlockRowBytes) return FusedRowSchedule::BlockPerRow;
  return FusedRowSchedule::None;
}

using DynamicRangeFusedFn = Status (*)(const ExecContext&, const DynamicRangeLaunch&);
/// Indexed by [x kind][q kind]; nullptr = no fused path (host reference).
using DynamicRangeFusedTable = KindPairTable<DynamicRangeFusedFn>;

using DynamicRangeParamsFn = Status (*)(const ExecContext&, const DynamicRangeLaunch&);
/// Indexed by x's element kind; nullptr = Unsupported.
using DynamicRangeParamsTable = KindTable<DynamicRangeParamsFn>;

/// The element kinds of x.
using DynamicRangeTypes = FloatTypes;

}  // namespace baracuda::detail

// reference: host.cpp; sim and cuda: the kernel unit device.cu
BARACUDA_DECLARE_DEVICE_TABLE(detail::DynamicRangeParamsTable, dynamic_range_params_table)
// sim and cuda only (the kernel unit device.cu): the host reference is the two-pass definition.
BARACUDA_DECLARE_KERNEL_TABLE(detail::DynamicRangeFusedTable, dynamic_range_fused_table)
