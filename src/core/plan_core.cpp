#include "core/plan_core.hpp"

#include <string>

namespace baracuda::detail {

Status check_bound(std::string_view plan, const PlanBinding& binding, const Stream& stream) {
  if (!binding.selected) return Error::invalid(std::string(plan) + ": run on a plan that select did not produce");
  return check_same_device(plan, binding.device, binding.device_index, stream);
}

}  // namespace baracuda::detail
