#include "core/plan_core.hpp"

#include <string>

namespace baracuda::detail {

Status check_kinds(std::string_view plan, std::initializer_list<ElementKind> kinds) {
  for (ElementKind k : kinds)
    if (kind_index(k) >= kNumElementKinds)
      return Error::invalid(std::string(plan) + (kinds.size() == 1
                                                     ? ": the descriptor's element kind is not a valid ElementKind"
                                                     : ": the descriptor's element kinds are not valid ElementKinds"));
  return {};
}

Error unsupported_pair(std::string_view plan, ElementKind in, ElementKind out, std::string_view supported) {
  return Error::unsupported(std::string(plan) + ": " + std::string(to_string(in)) + " -> " +
                            std::string(to_string(out)) + " is not supported (" + std::string(supported) + ")");
}

Status check_bound(std::string_view plan, const PlanBinding& binding, const Stream& stream) {
  if (!binding.selected) return Error::invalid(std::string(plan) + ": run on a plan that select did not produce");
  return check_same_device(plan, binding.device, binding.device_index, stream);
}

}  // namespace baracuda::detail
