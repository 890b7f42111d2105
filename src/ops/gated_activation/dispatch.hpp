// Internal: the gated-activation family's launch records, dispatch-table types and the tables' accessors.
#pragma once

#include <array>
#include <type_traits>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/ops/gated_activation.hpp"
#include "core/exec_context.hpp"
#include "device/dispatch_table.hpp"

namespace baracuda::detail {

/// The kind's parameters as the descriptor gives them (each device function rounds them to its opmath).
struct GatedParams {
  double alpha = 1.702;
  double limit = 7.0;
};

/// What a forward function receives: validated, non-empty tensors. `gate` and `linear` are the two
/// strided views of `x` over `y`'s shape that the plan derived from the layout (the device kernels use
/// them); the host reference ignores them and splits `x` itself from `split_dim` and `layout`.
struct GatedForwardLaunch {
  ConstDynTensor x;
  DynTensor y;
  ConstDynTensor gate;
  ConstDynTensor linear;
  int split_dim = 0;  ///< normalized, in [0, rank)
  GateLayout layout = GateLayout::SecondHalf;
  GatedParams params;
};

/// What a backward function receives: as the forward, plus `dy` and `dx` with `dgate` / `dlinear`, the
/// views of `dx` at the positions of `gate` / `linear` in `x`.
struct GatedBackwardLaunch {
  ConstDynTensor dy;
  ConstDynTensor x;
  DynTensor dx;
  ConstDynTensor gate;
  ConstDynTensor linear;
  DynTensor dgate;
  DynTensor dlinear;
  int split_dim = 0;
  GateLayout layout = GateLayout::SecondHalf;
  GatedParams params;
};

/// Indexed by [GatedActivationKind][ElementKind]; nullptr = Unsupported.
using GatedForwardTable = std::array<KindTable<GatedForwardFn>, kNumGatedActivationKinds>;
using GatedBackwardTable = std::array<KindTable<GatedBackwardFn>, kNumGatedActivationKinds>;

constexpr size_t gated_kind_index(GatedActivationKind k) { return static_cast<size_t>(k); }

/// A forward or backward table (`Table`) from the catalog: for each kind and each of its element types T,
/// `make(EnumTag<kind>{}, std::type_identity<T>{})`, a generic lambda that names the device's function
/// template for the kind's gate functor (functors.cuh's GateOf).
template <class Table, class Make>
constexpr Table make_gated_table(Make make) {
  Table t{};
#define BARACUDA_GATED_OP(Kind, name, Gate, types, act_doc, grad_doc) \
  add_kind_fns(t[gated_kind_index(GatedActivationKind::Kind)], types{}, bind_tag<GatedActivationKind::Kind>(make));
#include "ops/gated_activation/gated_activation.def"
#undef BARACUDA_GATED_OP
  return t;
}

}  // namespace baracuda::detail

// reference: host.cpp; sim and cuda: the kernel unit device_forward.cu
BARACUDA_DECLARE_DEVICE_TABLE(detail::GatedForwardTable, gated_forward_table)
// reference: host.cpp; sim and cuda: the kernel unit device_backward.cu
BARACUDA_DECLARE_DEVICE_TABLE(detail::GatedBackwardTable, gated_backward_table)
