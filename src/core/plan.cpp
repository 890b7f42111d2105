#include "baracuda/core/plan.hpp"

#include <string>

namespace baracuda::detail {

Status check_typed_element(std::string_view plan, std::string_view operand, ElementKind descriptor_kind,
                           ElementKind template_kind) {
  if (descriptor_kind == template_kind) return {};
  return Error::invalid(std::string(plan) + ": the descriptor's " + std::string(operand) + " kind is " +
                        std::string(to_string(descriptor_kind)) + " but the plan's element type is " +
                        std::string(to_string(template_kind)));
}

Status check_typed_rank(std::string_view plan, int descriptor_rank, int template_rank) {
  if (descriptor_rank == template_rank) return {};
  return Error::invalid(std::string(plan) + ": the descriptor's shape has rank " + std::to_string(descriptor_rank) +
                        " but the plan's rank is " + std::to_string(template_rank));
}

}  // namespace baracuda::detail
