/// \file
/// \brief Device code of the unary family: each op of functors.cuh wrapped as an elementwise functor
/// (load to the compute type, compute, round once), its launch functions, and the per-element-type slice
/// of the dispatch table built from the catalog. Compiled once per element type and device
/// (cuda_<type>.cu, sim_<type>.cu) so that the instantiations spread over translation units.
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <type_traits>

#include "device/convert.cuh"
#include "device/elementwise.cuh"
#include "ops/unary/dispatch.hpp"
#include "ops/unary/functors.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace unary {

template <class T>
UnaryParams<convert::opmath_t<T>> params_for(const ::baracuda::detail::UnaryParamValues& v) {
  using M = convert::opmath_t<T>;
  auto at = [&](UnaryParam p) { return static_cast<M>(v[static_cast<size_t>(p)]); };
  return {at(UnaryParam::NegativeSlope), at(UnaryParam::Alpha), at(UnaryParam::Beta),
          at(UnaryParam::Threshold),     at(UnaryParam::Value), at(UnaryParam::Lambd),
          at(UnaryParam::MinVal),        at(UnaryParam::MaxVal), at(UnaryParam::Eps)};
}

/// out = Op::forward(in).
template <class Op, class T>
struct ForwardFn {
  UnaryParams<convert::opmath_t<T>> p;
  __host__ __device__ T operator()(T x) const {
    return convert::from_opmath<T>(Op::forward(convert::to_opmath(x), p));
  }
};

/// dx = Op::backward(dy, saved).
template <class Op, class T>
struct BackwardFn {
  UnaryParams<convert::opmath_t<T>> p;
  __host__ __device__ T operator()(T dy, T saved) const {
    return convert::from_opmath<T>(Op::backward(convert::to_opmath(dy), convert::to_opmath(saved), p));
  }
};

/// dx = Op::backward(dy) (the op saves nothing).
template <class Op, class T>
struct BackwardFromDyFn {
  UnaryParams<convert::opmath_t<T>> p;
  __host__ __device__ T operator()(T dy) const {
    return convert::from_opmath<T>(Op::backward(convert::to_opmath(dy), p));
  }
};

/// dx = 0, for every op with `zero_gradient` (one instantiation per type, shared by those ops).
template <class T>
struct ZeroFn {
  __host__ __device__ T operator()() const { return convert::from_opmath<T>(convert::opmath_t<T>(0)); }
};

template <class Op>
concept HasZeroGradient = Op::zero_gradient;

template <class Op, class T>
Status forward_launch(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::UnaryLaunch& a) {
  const ForwardFn<Op, T> fn{params_for<T>(a.params)};
  return elementwise::launch_elementwise<ForwardFn<Op, T>, T, T>("UnaryPlan", ctx, fn, a.out, a.in);
}

template <class Op, class T, UnarySaved S>
Status backward_launch(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::UnaryBackwardLaunch& a) {
  constexpr std::string_view plan = "UnaryBackwardPlan";
  if constexpr (HasZeroGradient<Op>) {
    static_assert(S == UnarySaved::None, "a zero gradient reads nothing: catalog it with saved None");
    return elementwise::launch_elementwise<ZeroFn<T>, T>(plan, ctx, ZeroFn<T>{}, a.dx);
  } else if constexpr (S == UnarySaved::None) {
    const BackwardFromDyFn<Op, T> fn{params_for<T>(a.params)};
    return elementwise::launch_elementwise<BackwardFromDyFn<Op, T>, T, T>(plan, ctx, fn, a.dx, a.dy);
  } else {
    const BackwardFn<Op, T> fn{params_for<T>(a.params)};
    return elementwise::launch_elementwise<BackwardFn<Op, T>, T, T, T>(plan, ctx, fn, a.dx, a.dy, a.saved);
  }
}

/// The functions of every catalog op built for T (the others stay nullptr).
template <class T>
constexpr ::baracuda::detail::UnarySlice make_slice() {
  ::baracuda::detail::UnarySlice s{};
#define BARACUDA_UNARY_OP(name, Enum, params, saved, types, doc)                                        \
  if constexpr (::baracuda::type_list_contains<types, T>::value) {                                      \
    s.forward[::baracuda::detail::unary_index(UnaryKind::Enum)] = &forward_launch<Enum, T>;             \
    s.backward[::baracuda::detail::unary_index(UnaryKind::Enum)] =                                      \
        &backward_launch<Enum, T, UnarySaved::saved>;                                                   \
  }
#include "baracuda/ops/unary_ops.def"
#undef BARACUDA_UNARY_OP
  return s;
}

}  // namespace unary
BARACUDA_DEVICE_NAMESPACE_END

/// Defines `const detail::UnarySlice& unary_slice_<SUFFIX>()` for element type T in the current device
/// namespace: the whole body of a cuda_<type>.cu / sim_<type>.cu file.
#define BARACUDA_UNARY_SLICE(T, SUFFIX)                                                   \
  BARACUDA_DEVICE_NAMESPACE_BEGIN                                                         \
  const ::baracuda::detail::UnarySlice& unary_slice_##SUFFIX() {                          \
    static constexpr ::baracuda::detail::UnarySlice slice = unary::make_slice<T>();       \
    return slice;                                                                         \
  }                                                                                       \
  BARACUDA_DEVICE_NAMESPACE_END
