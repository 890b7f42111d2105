// Internal: the unary family's launch records, its dispatch tables and their accessors.
//
// The device tables are built per element type, one kernel unit per type (device_f32.cu, …, each compiled
// for both devices; so that nvcc compiles them in parallel): each defines a `UnarySlice`, the functions of
// every op for its type. plan.cpp assembles the slices into `UnaryTables` indexed [op][element kind].
// The host reference builds its `UnaryTables` directly (host.cpp).
#pragma once

#include <array>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/ops/unary.hpp"
#include "core/exec_context.hpp"
#include "device/dispatch_table.hpp"

namespace baracuda::detail {

/// What a forward function receives: validated, non-empty views and the resolved parameters (as given;
/// the function rounds them to its compute type).
struct UnaryLaunch {
  ConstDynTensor in;
  DynTensor out;
  UnaryParamValues params{};
};

/// What a backward function receives; `saved` is unset (and not read) when the op saves nothing.
struct UnaryBackwardLaunch {
  ConstDynTensor dy;
  ConstDynTensor saved;
  DynTensor dx;
  UnaryParamValues params{};
};

constexpr size_t unary_index(UnaryKind k) { return static_cast<size_t>(k); }

/// One element type's functions, indexed by op (nullptr: the op is not built for the type).
struct UnarySlice {
  std::array<UnaryFn, kNumUnaryKinds> forward{};
  std::array<UnaryBackwardFn, kNumUnaryKinds> backward{};
};

/// A device's functions, indexed [op][element kind]; nullptr = Unsupported.
struct UnaryTables {
  std::array<KindTable<UnaryFn>, kNumUnaryKinds> forward{};
  std::array<KindTable<UnaryBackwardFn>, kNumUnaryKinds> backward{};
};

}  // namespace baracuda::detail

namespace baracuda::reference {
const detail::UnaryTables& unary_tables();  // host.cpp
}
// One slice per element type and device, from the kernel unit device_<type>.cu. plan.cpp lists them.
BARACUDA_DECLARE_KERNEL_TABLE(detail::UnarySlice, unary_slice_f16)
BARACUDA_DECLARE_KERNEL_TABLE(detail::UnarySlice, unary_slice_bf16)
BARACUDA_DECLARE_KERNEL_TABLE(detail::UnarySlice, unary_slice_f32)
BARACUDA_DECLARE_KERNEL_TABLE(detail::UnarySlice, unary_slice_f64)
