/// \file
/// \brief The one template a typed plan is made of: `TypedPlan<Erased, Args>` forwards to the erased plan,
/// converting the typed arguments; a family's typed plan derives from it and adds its `select`, which checks
/// T and N against the descriptor (check_typed_element, check_typed_ranks).
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string_view>
#include <utility>

#include "baracuda/core/plan.hpp"
#include "baracuda/core/tensor.hpp"
#include "baracuda/core/workspace.hpp"

namespace baracuda::detail {

/// check_typed_rank for each of a descriptor's shapes.
inline Status check_typed_ranks(std::string_view plan, std::initializer_list<Shape> descriptor_shapes,
                                size_t template_rank) {
  for (const Shape& s : descriptor_shapes)
    BARACUDA_TRY(check_typed_rank(plan, s.rank, static_cast<int>(template_rank)));
  return {};
}

/// The body of a typed plan over the erased plan `Erased`. `Args::erased()` returns the typed arguments as
/// the erased plan's argument struct (`dynamic::XxxArgs`, whose fields have the same names).
template <class Erased, class Args>
class TypedPlan {
 public:
  Status can_implement(const Args& x) const {
    return plan_.can_implement(x.erased());
  }
  size_t workspace_size() const { return plan_.workspace_size(); }
  KernelSku sku() const { return plan_.sku(); }
  PrecisionGuarantee precision_guarantee() const { return plan_.precision_guarantee(); }
  Status run(const Stream& stream, Workspace ws, const Args& x) const {
    return plan_.run(stream, ws, x.erased());
  }
  const Shape& output_shape() const { return plan_.output_shape(); }
  const Erased& erased() const { return plan_; }

 protected:
  explicit TypedPlan(Erased p) : plan_(std::move(p)) {}

  /// A typed plan's select: T is the descriptor's `element`, every shape of `shapes` has rank N (both
  /// `InvalidProblem` naming `plan` otherwise), then `select_erased()`. `Typed` befriends its base.
  template <class Typed, class T, size_t N, class SelectErased>
  static Result<Typed> checked_select(std::string_view plan, std::string_view operands, ElementKind element,
                                      std::initializer_list<Shape> shapes, SelectErased&& select_erased) {
    BARACUDA_TRY(check_typed_element(plan, operands, element, kind_of<T>));
    BARACUDA_TRY(check_typed_ranks(plan, shapes, N));
    auto p = select_erased();
    if (!p) return p.error();
    return Typed(std::move(p).value());
  }

 private:
  Erased plan_;
};

}  // namespace baracuda::detail
