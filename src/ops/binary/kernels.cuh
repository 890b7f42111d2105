// Device code of the binary family: the catalog's functors (functors.cuh) wrapped for the elementwise
// engine (load to opmath, apply, round once), and the builder of a device's dispatch tables.
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <type_traits>

#include "device/convert.cuh"
#include "device/elementwise.cuh"
#include "ops/binary/dispatch.hpp"
#include "ops/binary/functors.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace binary {

/// out = Fn(a, b): floats in opmath rounded once to T; integers on T itself.
template <class Fn, class T>
struct ForwardElementOp {
  __host__ __device__ T operator()(T a, T b) const {
    if constexpr (convert::is_int_v<T>)
      return Fn::apply_int(a, b);
    else
      return convert::from_opmath<T>(Fn::apply(convert::to_opmath(a), convert::to_opmath(b)));
  }
};

/// out = Fn(a, b) as bool, on exact values.
template <class Fn, class T>
struct CompareElementOp {
  __host__ __device__ bool operator()(T a, T b) const {
    if constexpr (convert::is_int_v<T>)
      return Fn::apply(a, b);
    else
      return Fn::apply(convert::to_opmath(a), convert::to_opmath(b));
  }
};

/// (da, db) = Fn::grad(dy, a, b), each rounded once to T. With one wanted gradient both slots carry it
/// (the plan points both outputs at the same view).
template <class Fn, class T>
struct BackwardElementOp {
  ::baracuda::detail::GradOutputs outputs;
  __host__ __device__ elementwise::Results<T, 2> operator()(T dy, T a, T b) const {
    const auto g =
        Fn::template grad<T>(convert::to_opmath(dy), convert::to_opmath(a), convert::to_opmath(b));
    const T da = convert::from_opmath<T>(g.da);
    const T db = convert::from_opmath<T>(g.db);
    if (outputs == ::baracuda::detail::GradOutputs::OnlyA) return {{da, da}};
    if (outputs == ::baracuda::detail::GradOutputs::OnlyB) return {{db, db}};
    return {{da, db}};
  }
};

template <::baracuda::BinaryOp Op, class T>
Status forward_launch(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::BinaryLaunch& l) {
  using E = ForwardElementOp<typename BinaryFunctor<Op>::type, T>;
  return elementwise::launch_elementwise<E, T, T, T>("BinaryPlan", ctx, E{}, l.out, l.a, l.b);
}

template <::baracuda::CompareOp Op, class T>
Status compare_launch(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::BinaryLaunch& l) {
  using E = CompareElementOp<typename CompareFunctor<Op>::type, T>;
  return elementwise::launch_elementwise<E, bool, T, T>("ComparePlan", ctx, E{}, l.out, l.a, l.b);
}

template <::baracuda::BinaryOp Op, class T>
Status backward_launch(const ::baracuda::detail::ExecContext& ctx,
                       const ::baracuda::detail::BinaryBackwardLaunch& l) {
  using E = BackwardElementOp<typename BinaryFunctor<Op>::type, T>;
  return elementwise::launch_elementwise_multi<E, 2, T, T, T, T>("BinaryBackwardPlan", ctx, E{l.outputs},
                                                                 {l.da, l.db}, l.dy, l.a, l.b);
}

template <::baracuda::BinaryOp Op>
struct ForwardEntry {
  template <class T>
  static constexpr ::baracuda::detail::BinaryFn fn = &forward_launch<Op, T>;
};
template <::baracuda::CompareOp Op>
struct CompareEntry {
  template <class T>
  static constexpr ::baracuda::detail::CompareFn fn = &compare_launch<Op, T>;
};
template <::baracuda::BinaryOp Op>
struct BackwardEntry {
  template <class T>
  static constexpr ::baracuda::detail::BinaryBackwardFn fn = &backward_launch<Op, T>;
};

/// Sets table[kind_of<T>] = Entry::fn<T> for every T of `List` that `Part` also lists (and that is a
/// floating type, when `float_only`).
template <class Part, class Entry, bool float_only, class Fn, class List>
constexpr void add_entries(::baracuda::detail::KindTable<Fn>& table, List list) {
  for_each_type(list, [&]<class T>() {
    if constexpr (type_list_contains<Part, T>::value && (!float_only || convert::is_float_v<T>))
      table[::baracuda::detail::kind_index(kind_of<T>)] = Entry::template fn<T>;
  });
}

/// The device's tables for the element types of `Part`, from the catalog. A kernel translation unit
/// instantiates one part; `merge_binary_tables` joins them.
template <class Part>
constexpr ::baracuda::detail::BinaryTables make_binary_tables() {
  ::baracuda::detail::BinaryTables t{};
  using ::baracuda::BinaryOp;
  using ::baracuda::CompareOp;
#define BARACUDA_BINARY_OP(Enum, name, types, has_bwd, doc)                                                        \
  add_entries<Part, ForwardEntry<BinaryOp::Enum>, false>(t.forward[static_cast<size_t>(BinaryOp::Enum)], types{}); \
  if constexpr (has_bwd)                                                                                        \
    add_entries<Part, BackwardEntry<BinaryOp::Enum>, true>(t.backward[static_cast<size_t>(BinaryOp::Enum)], types{});
#define BARACUDA_COMPARE_OP(Enum, name, types, doc) \
  add_entries<Part, CompareEntry<CompareOp::Enum>, false>(t.compare[static_cast<size_t>(CompareOp::Enum)], types{});
#include "baracuda/ops/binary_ops.def"
#undef BARACUDA_BINARY_OP
#undef BARACUDA_COMPARE_OP
  return t;
}

/// The kernel units (device*.cu): each instantiates the tables of one group of element types, so that they
/// compile in parallel (device.cu also merges the parts into the device's tables).
using WideFloatPart = ::baracuda::type_list<float, double>;              // device.cu
using HalfPart = ::baracuda::type_list<__half, __nv_bfloat16>;           // device_16bit.cu
using IntegerPart = ::baracuda::type_list<int8_t, uint8_t, int32_t, int64_t>;  // device_int.cu
const ::baracuda::detail::BinaryTables& binary_tables_16bit();
const ::baracuda::detail::BinaryTables& binary_tables_int();

}  // namespace binary
BARACUDA_DEVICE_NAMESPACE_END
