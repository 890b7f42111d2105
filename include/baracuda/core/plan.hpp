/// \file
/// \brief Pieces every plan shares: the typed-wrapper checks, the state select binds an erased plan to, and
/// the forward declaration of the internal launch context.
///
/// Every op family exposes the same contract (see docs/plan-api.md):
///   `select(stream, descriptor, preference)` → `can_implement(args)` → `workspace_size()` → `run(...)`.
/// Each family has a rank/dtype-erased plan in `baracuda::dynamic` taking `DynTensor`s, and (all but the GEMM
/// families: int_gemm, int4_gemm, int4_marlin_repack) a typed `XxxPlan<T..., N>` wrapper taking
/// `TensorRef`/`TensorMut` views that checks T and N against the descriptor at `select` time and forwards
/// to it.
#pragma once

#include <string_view>
#include <utility>

#include "baracuda/core/element.hpp"
#include "baracuda/core/sku.hpp"
#include "baracuda/core/status.hpp"
#include "baracuda/core/stream.hpp"

namespace baracuda::detail {

/// Where a kernel launches: the device kind, the CUDA stream and device properties (internal).
struct ExecContext;

/// What `select` binds an erased plan to (each holds one, privately): the kernel it runs, and the device and
/// CUDA device index `run` must be given a stream of. `selected` is false in a plan select did not produce.
struct PlanBinding {
  KernelSku sku;
  DeviceKind device = DeviceKind::Host;
  int device_index = 0;
  bool selected = false;

  /// The guarantee of a plan whose arithmetic runs in its SKU's precision and that accumulates nothing
  /// across elements (or only a maximum, which no order changes): the same bits on every run.
  PrecisionGuarantee uniform_guarantee() const { return {sku.precision, sku.precision, true, true}; }
};

/// What every erased plan keeps from select, and the accessors over it: the descriptor it was selected
/// for and its binding (a plan derives from this; select constructs it with both, then sets its own state).
/// A default-constructed plan is one select did not produce: its `run` fails with `InvalidProblem`.
template <class Descriptor>
class BoundPlan {
 public:
  /// The kernel the plan runs: its catalog name, kinds, backend, sm, precision and variant.
  KernelSku sku() const { return binding_.sku; }
  /// The descriptor select was given.
  const Descriptor& descriptor() const { return desc_; }

 protected:
  friend struct PlanAccess;
  BoundPlan() = default;
  BoundPlan(const Descriptor& desc, const PlanBinding& binding) : desc_(desc), binding_(binding) {}

  Descriptor desc_{};
  PlanBinding binding_;
};

/// A BoundPlan whose run calls one function of its family's dispatch table: select binds it with the
/// function as well.
template <class Descriptor, class Fn>
class BoundFnPlan : public BoundPlan<Descriptor> {
 protected:
  friend struct PlanAccess;
  BoundFnPlan() = default;
  BoundFnPlan(const Descriptor& desc, const PlanBinding& binding, Fn fn)
      : BoundPlan<Descriptor>(desc, binding), fn_(fn) {}

  Fn fn_ = nullptr;
};

/// Lets the library's select helpers construct a plan through the constructors it inherits from BoundPlan or
/// BoundFnPlan (which are not public: a bound plan comes from select).
struct PlanAccess {
  template <class Plan, class... Args>
  static Plan make(Args&&... args) {
    return Plan(std::forward<Args>(args)...);
  }
};

/// `InvalidProblem` unless the descriptor's kind equals the typed plan's element type T.
Status check_typed_element(std::string_view plan, std::string_view operand, ElementKind descriptor_kind,
                           ElementKind template_kind);
/// `InvalidProblem` unless the descriptor's rank equals the typed plan's rank N.
Status check_typed_rank(std::string_view plan, int descriptor_rank, int template_rank);

}  // namespace baracuda::detail
