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

/// table[kind_of<T>] = Entry::fn<T> for every T of `List`.
template <class Entry, class Fn, class List>
constexpr void add_ternary_entries(KindTable<Fn>& table, List list) {
  for_each_type(list, [&]<class T>() { table[kind_index(kind_of<T>)] = Entry::template fn<T>; });
}

/// A device's tables from the catalog, with that device's entries (each `Entry::fn<T>`): Forward<op> for the
/// op's kinds, Backward<op> and WhereBackward for the float kinds, Where for every byte-stored kind.
template <template <TernaryOp> class Forward, template <TernaryOp> class Backward, class Where, class WhereBackward>
constexpr TernaryTables make_ternary_tables() {
  TernaryTables t{};
#define BARACUDA_TERNARY_ENTRIES(Enum, name, types, doc)                                                       \
  add_ternary_entries<Forward<TernaryOp::Enum>>(t.forward[static_cast<size_t>(TernaryOp::Enum)], types{});     \
  add_ternary_entries<Backward<TernaryOp::Enum>>(t.backward[static_cast<size_t>(TernaryOp::Enum)], FloatTypes{});
  BARACUDA_TERNARY_OPS(BARACUDA_TERNARY_ENTRIES)
#undef BARACUDA_TERNARY_ENTRIES
  add_ternary_entries<Where>(t.where, ByteTypes{});
  add_ternary_entries<WhereBackward>(t.where_backward, FloatTypes{});
  return t;
}

}  // namespace baracuda::detail

// reference: host.cpp; sim and cuda: the kernel unit device.cu
BARACUDA_DECLARE_DEVICE_TABLE(detail::TernaryTables, ternary_tables)
