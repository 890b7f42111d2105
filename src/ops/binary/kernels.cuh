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

/// The device's tables for the element types of `Part`, from the catalog. A kernel translation unit
/// instantiates one part; `merge_binary_tables` joins them.
template <class Part>
constexpr ::baracuda::detail::BinaryTables make_binary_tables() {
  using ::baracuda::BinaryOp, ::baracuda::CompareOp, ::baracuda::detail::EnumTag;
  return ::baracuda::detail::make_binary_tables<Part>(
      []<BinaryOp Op, class T>(EnumTag<Op>, std::type_identity<T>) { return &forward_launch<Op, T>; },
      []<CompareOp Op, class T>(EnumTag<Op>, std::type_identity<T>) { return &compare_launch<Op, T>; },
      []<BinaryOp Op, class T>(EnumTag<Op>, std::type_identity<T>) { return &backward_launch<Op, T>; });
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
