// Internal: the ternary family's launch records, dispatch-table types and the tables' accessors.
#pragma once

#include <array>
#include <cstdint>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/ops/ternary.hpp"
#include "core/exec_context.hpp"
#include "device/dispatch_table.hpp"

namespace baracuda::detail {

/// What a forward function receives: validated, non-empty views, the inputs already viewed over the output
/// shape (stride 0 where they broadcast). TernaryPlan: in = {a, b, c}; WherePlan: in = {cond, a, b}.
struct TernaryLaunch {
  std::array<DynTensor, 3> in;
  DynTensor out;
  double value = 1.0;  ///< addcmul's and addcdiv's scalar
};

/// What a backward function receives: dy and the inputs over the output shape, and one view per gradient
/// slot. A gradient the caller omitted is not given a view of its own: its slot holds the view of a wanted
/// gradient, `source[slot]` names that gradient, and the kernel writes it to both slots (the same memory,
/// the same value). TernaryBackwardPlan: in = {a, b, c}, grad = {da, db, dc}; WhereBackwardPlan: in = {cond},
/// grad = {da, db} (the third slot unused).
struct TernaryBackwardLaunch {
  DynTensor dy;
  std::array<DynTensor, 3> in;
  std::array<DynTensor, 3> grad;
  std::array<uint8_t, 3> source{0, 1, 2};
  double value = 1.0;
};

/// One device's tables: [op][kind] and [kind]; nullptr = Unsupported.
struct TernaryTables {
  std::array<KindTable<TernaryFn>, kNumTernaryOps> forward{};
  std::array<KindTable<TernaryBackwardFn>, kNumTernaryOps> backward{};
  KindTable<TernaryFn> where{};
  KindTable<TernaryBackwardFn> where_backward{};
};

}  // namespace baracuda::detail

// reference: host.cpp; sim and cuda: the kernel unit device.cu
BARACUDA_DECLARE_DEVICE_TABLE(detail::TernaryTables, ternary_tables)
