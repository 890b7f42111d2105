// Internal: the cast family's launch record, dispatch-table type and the three tables' accessors.
#pragma once

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/ops/cast.hpp"
#include "core/exec_context.hpp"
#include "device/dispatch_table.hpp"

namespace baracuda::detail {

/// What a cast function receives: validated, non-empty views and the fp8 saturation flag.
struct CastLaunch {
  ConstDynTensor in;
  DynTensor out;
  bool saturate_fp8 = false;
};

/// Indexed by [input kind][output kind]; nullptr = Unsupported.
using CastTable = KindPairTable<CastFn>;

}  // namespace baracuda::detail

// reference: host.cpp; sim and cuda: the kernel unit device.cu
BARACUDA_DECLARE_DEVICE_TABLE(detail::CastTable, cast_table)
