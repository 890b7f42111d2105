// Internal: the binary family's launch records, dispatch-table types and the tables' accessors.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <type_traits>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/ops/binary.hpp"
#include "core/exec_context.hpp"
#include "device/dispatch_table.hpp"

namespace baracuda::detail {

/// What a forward or compare function receives: validated, non-empty views, with a and b already viewed
/// over the output shape (stride 0 where they broadcast). Inputs are read-only views, the output writable.
struct BinaryLaunch {
  ConstDynTensor a;
  ConstDynTensor b;
  DynTensor out;
};

/// Which gradients a backward launch writes.
enum class GradOutputs : uint8_t {
  Both,   ///< da and db
  OnlyA,  ///< da only: the launch's `da` and `db` are both the da view, and both slots receive dA
  OnlyB,  ///< db only: both views are db, and both slots receive dB
};

/// What a backward function receives: dy, and a and b viewed over the output shape; two output views
/// (see GradOutputs for the case of one wanted gradient).
struct BinaryBackwardLaunch {
  ConstDynTensor dy;
  ConstDynTensor a;
  ConstDynTensor b;
  DynTensor da;
  DynTensor db;
  GradOutputs outputs = GradOutputs::Both;
};

/// [op][kind]; nullptr = Unsupported.
using BinaryForwardTable = std::array<KindTable<BinaryFn>, kNumBinaryOps>;
using CompareTable = std::array<KindTable<CompareFn>, kNumCompareOps>;
using BinaryBackwardTable = std::array<KindTable<BinaryBackwardFn>, kNumBinaryOps>;

/// One device's three tables.
struct BinaryTables {
  BinaryForwardTable forward{};
  CompareTable compare{};
  BinaryBackwardTable backward{};
};

/// The union of partial tables (each kernel translation unit instantiates some element kinds).
inline BinaryTables merge_binary_tables(std::initializer_list<const BinaryTables*> parts) {
  BinaryTables t{};
  auto take = [](auto& dst, const auto& src) {
    for (size_t op = 0; op < dst.size(); ++op)
      for (size_t k = 0; k < kNumElementKinds; ++k)
        if (src[op][k] != nullptr) dst[op][k] = src[op][k];
  };
  for (const BinaryTables* p : parts) {
    take(t.forward, p->forward);
    take(t.compare, p->compare);
    take(t.backward, p->backward);
  }
  return t;
}

/// row[kind_of<T>] = make(std::type_identity<T>{}) for every T of `list` that `Part` lists (every T when
/// `Part` is void) and, when `kFloatOnly`, that is a floating-point type.
template <class Part, bool kFloatOnly, class Fn, class List, class Make>
constexpr void add_binary_fns(KindTable<Fn>& row, List list, Make make) {
  for_each_type(list, [&]<class T>() {
    constexpr bool in_part = [] {
      if constexpr (std::is_void_v<Part>) return true;
      else return type_list_contains<Part, T>::value;
    }();
    if constexpr (in_part && (!kFloatOnly || is_floating(kind_of<T>)))
      row[kind_index(kind_of<T>)] = make(std::type_identity<T>{});
  });
}

/// A device's tables from the catalog (baracuda/ops/binary_ops.def) for the element types of `Part` (all when
/// void), from its function templates named by generic lambdas: `forward(EnumTag<op>{}, std::type_identity<T>{})`
/// for each op's kinds, `compare` likewise, `backward` for the floating kinds of the ops with a backward.
template <class Part, class Forward, class Compare, class Backward>
constexpr BinaryTables make_binary_tables(Forward forward, Compare compare, Backward backward) {
  BinaryTables t{};
#define BARACUDA_BINARY_OP(Enum, name, types, has_bwd, doc)                                                   \
  add_binary_fns<Part, false>(t.forward[static_cast<size_t>(BinaryOp::Enum)], types{},                        \
                              bind_tag<BinaryOp::Enum>(forward));                                             \
  if constexpr (has_bwd)                                                                                      \
    add_binary_fns<Part, true>(t.backward[static_cast<size_t>(BinaryOp::Enum)], types{},                      \
                               bind_tag<BinaryOp::Enum>(backward));
#define BARACUDA_COMPARE_OP(Enum, name, types, doc)                                                           \
  add_binary_fns<Part, false>(t.compare[static_cast<size_t>(CompareOp::Enum)], types{},                       \
                              bind_tag<CompareOp::Enum>(compare));
#include "baracuda/ops/binary_ops.def"
#undef BARACUDA_BINARY_OP
#undef BARACUDA_COMPARE_OP
  return t;
}

}  // namespace baracuda::detail

// reference: host.cpp; sim and cuda: the kernel unit device.cu, which merges the parts of device_16bit.cu and
// device_int.cu
BARACUDA_DECLARE_DEVICE_TABLE(detail::BinaryTables, binary_tables)
