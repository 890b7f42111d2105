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
/// shape (stride 0 where they broadcast). TernaryPlan: in = {a, b, c}; WherePlan: in = {cond, a, b}. Inputs are
/// read-only views, the output writable.
struct TernaryLaunch {
  std::array<ConstDynTensor, 3> in;
  DynTensor out;
  double value = 1.0;  ///< addcmul's and addcdiv's scalar
};

/// What a backward function receives: dy and the inputs over the output shape, and one view per gradient
/// slot. A gradient the caller omitted is not given a view of its own: its slot holds the view of a wanted
/// gradient, `source[slot]` names that gradient, and the kernel writes it to both slots (the same memory,
/// the same value). TernaryBackwardPlan: in = {a, b, c}, grad = {da, db, dc}; WhereBackwardPlan: in = {cond},
/// grad = {da, db} (the third slot unused).
struct TernaryBackwardLaunch {
  ConstDynTensor dy;
  std::array<ConstDynTensor, 3> in;
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

/// A device's tables from the catalog, from that device's function templates named by generic lambdas
/// (add_kind_fns): `forward(EnumTag<op>{}, std::type_identity<T>{})` for the op's kinds, `backward` likewise for
/// the float kinds, `where(std::type_identity<T>{})` for every byte-stored kind, `where_backward` for the float
/// kinds.
template <class Forward, class Backward, class Where, class WhereBackward>
constexpr TernaryTables make_ternary_tables(Forward forward, Backward backward, Where where,
                                            WhereBackward where_backward) {
  TernaryTables t{};
#define BARACUDA_TERNARY_ENTRIES(Enum, name, types, doc)                                                 \
  add_kind_fns(t.forward[static_cast<size_t>(TernaryOp::Enum)], types{}, bind_tag<TernaryOp::Enum>(forward)); \
  add_kind_fns(t.backward[static_cast<size_t>(TernaryOp::Enum)], FloatTypes{}, bind_tag<TernaryOp::Enum>(backward));
  BARACUDA_TERNARY_OPS(BARACUDA_TERNARY_ENTRIES)
#undef BARACUDA_TERNARY_ENTRIES
  add_kind_fns(t.where, ByteTypes{}, where);
  add_kind_fns(t.where_backward, FloatTypes{}, where_backward);
  return t;
}

}  // namespace baracuda::detail

// reference: host.cpp; sim and cuda: the kernel unit device.cu
BARACUDA_DECLARE_DEVICE_TABLE(detail::TernaryTables, ternary_tables)
