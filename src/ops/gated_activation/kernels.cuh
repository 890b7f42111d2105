// Device code of the gated-activation family, on the elementwise engine (no kernel of its own):
// - forward: `y = Gate::forward(g, l)` as a 2-input map over y's shape, the inputs being the two strided
//   views of x the plan derived from the layout (offset H·stride[split_dim], or stride·2 and offset 1);
// - backward: one `launch_elementwise_multi` pass with 3 inputs (g, l, dy) and 2 outputs (the views of dx
//   at g's and l's positions). When dx is x (in place) every element's inputs are loaded before its
//   outputs are stored, by the same thread, so the pass may overwrite the saved input with its gradient.
// Both load to opmath (f32, or f64 for f64), compute once and round each output once.
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <array>

#include "device/convert.cuh"
#include "device/elementwise.cuh"
#include "ops/gated_activation/dispatch.hpp"
#include "ops/gated_activation/functors.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace gated {

template <class Gate, class T>
struct ForwardOp {
  using M = convert::opmath_t<T>;
  Params<M> p;
  __host__ __device__ T operator()(T g, T l) const {
    return convert::from_opmath<T>(Gate::forward(convert::to_opmath(g), convert::to_opmath(l), p));
  }
};

template <class Gate, class T>
struct BackwardOp {
  using M = convert::opmath_t<T>;
  Params<M> p;
  __host__ __device__ elementwise::Results<T, 2> operator()(T g, T l, T dy) const {
    M dg, dl;
    Gate::backward(convert::to_opmath(g), convert::to_opmath(l), convert::to_opmath(dy), p, dg, dl);
    return {{convert::from_opmath<T>(dg), convert::from_opmath<T>(dl)}};
  }
};

/// α and limit rounded once to the opmath type.
template <class T>
Params<convert::opmath_t<T>> params_of(const ::baracuda::detail::GatedParams& p) {
  using M = convert::opmath_t<T>;
  return {static_cast<M>(p.alpha), static_cast<M>(p.limit)};
}

template <class Gate, class T>
Status forward_launch(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::GatedForwardLaunch& a) {
  const ForwardOp<Gate, T> op{params_of<T>(a.params)};
  return elementwise::launch_elementwise<ForwardOp<Gate, T>, T, T, T>("GatedActivationPlan", ctx, op, a.y, a.gate,
                                                                     a.linear);
}

template <class Gate, class T>
Status backward_launch(const ::baracuda::detail::ExecContext& ctx,
                       const ::baracuda::detail::GatedBackwardLaunch& a) {
  const BackwardOp<Gate, T> op{params_of<T>(a.params)};
  return elementwise::launch_elementwise_multi<BackwardOp<Gate, T>, 2, T, T, T, T>(
      "GatedActivationBackwardPlan", ctx, op, std::array<DynTensor, 2>{a.dgate, a.dlinear}, a.gate, a.linear, a.dy);
}

/// The device's functions of kind K for T: the entries of its tables (make_gated_table).
constexpr auto kForward = []<::baracuda::GatedActivationKind K, class T>(::baracuda::detail::EnumTag<K>,
                                                                        std::type_identity<T>) {
  return &forward_launch<typename GateOf<K>::type, T>;
};
constexpr auto kBackward = []<::baracuda::GatedActivationKind K, class T>(::baracuda::detail::EnumTag<K>,
                                                                         std::type_identity<T>) {
  return &backward_launch<typename GateOf<K>::type, T>;
};

/// The device's forward or backward table (`Table`): each is defined in its own kernel unit
/// (device_forward.cu, device_backward.cu), so that the two compile in parallel.
template <class Table>
const Table& device_gated_table() {
  if constexpr (std::is_same_v<Table, ::baracuda::detail::GatedForwardTable>) {
    static constexpr Table table = ::baracuda::detail::make_gated_table<Table>(kForward);
    return table;
  } else {
    static constexpr Table table = ::baracuda::detail::make_gated_table<Table>(kBackward);
    return table;
  }
}

}  // namespace gated
BARACUDA_DEVICE_NAMESPACE_END
