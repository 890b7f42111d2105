// Internal: the sequence family's launch record, its dispatch-table type and the three tables' accessors.
#pragma once

#include <cstdint>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/ops/sequence.hpp"
#include "core/exec_context.hpp"
#include "device/dispatch_table.hpp"

namespace baracuda::detail {

/// What a sequence function receives: the validated, non-empty y and the values' formula, fixed at select.
/// Value i: `exact_int` (integer Arange) `int_start + i · int_step` in s64; otherwise, in f64,
/// `fma(step, i, start)` for i < `half` and `fma(−step, last − i, end)` from there (Arange: half = count),
/// rounded once to y's kind (integers: truncated toward zero).
struct SequenceLaunch : SequenceFormula {
  DynTensor y;
};

/// Indexed by y's ElementKind; nullptr = Unsupported.
using SequenceTable = KindTable<SequenceFn>;

/// y's kinds.
using SequenceTypes = type_list<__half, __nv_bfloat16, float, double, int8_t, uint8_t, int32_t, int64_t>;

}  // namespace baracuda::detail

// reference: host.cpp; sim and cuda: the kernel unit device.cu
BARACUDA_DECLARE_DEVICE_TABLE(detail::SequenceTable, sequence_table)
