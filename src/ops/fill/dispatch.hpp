// Internal: the fill family's launch record, dispatch-table type and the three tables' accessors.
#pragma once

#include <cstdint>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/ops/fill.hpp"
#include "core/exec_context.hpp"
#include "device/dispatch_table.hpp"

namespace baracuda::detail {

/// What a fill function receives: the validated, non-empty output and the value's storage bits (for
/// S4/U4 one whole byte holding the nibble twice).
struct FillLaunch {
  DynTensor out;
  uint64_t bits = 0;
};

/// Indexed by the output's ElementKind; nullptr = Unsupported.
using FillTable = KindTable<FillFn>;

/// The element types the catalog (fill.def) lists: the dispatch tables' keys on every device.
#define BARACUDA_FILL_OP(name, types, tolerance, doc) using FillTypes = types;
#include "ops/fill/fill.def"
#undef BARACUDA_FILL_OP

}  // namespace baracuda::detail

// reference: host.cpp; sim and cuda: the kernel unit device.cu
BARACUDA_DECLARE_DEVICE_TABLE(detail::FillTable, fill_table)
