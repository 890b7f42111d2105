// Internal: the affine family's launch record, dispatch-table type and the three tables' accessors.
#pragma once

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/ops/affine.hpp"
#include "core/exec_context.hpp"
#include "device/dispatch_table.hpp"

namespace baracuda::detail {

/// What an affine function receives: validated, non-empty views and the descriptor's α, β (as given;
/// the function rounds them to the opmath type).
struct AffineLaunch {
  ConstDynTensor in;
  DynTensor out;
  double alpha = 1.0;
  double beta = 0.0;
};

/// Indexed by the element kind; nullptr = Unsupported.
using AffineTable = KindTable<AffineFn>;

/// The element types the catalog (affine.def) lists: the dispatch tables' keys on every device.
#define BARACUDA_AFFINE_OP(name, types, tolerance, doc) using AffineTypes = types;
#include "ops/affine/affine.def"
#undef BARACUDA_AFFINE_OP

}  // namespace baracuda::detail

// reference: host.cpp; sim and cuda: the kernel unit device.cu
BARACUDA_DECLARE_DEVICE_TABLE(detail::AffineTable, affine_table)
