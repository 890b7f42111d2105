// Internal: what the fp8 family's three plans share: the checks of the [1] f32 operands (scale, scale_inv,
// amax).
#pragma once

#include <string>
#include <string_view>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/status.hpp"
#include "core/validate.hpp"
#include "ops/fp8/dispatch.hpp"

namespace baracuda::detail {

/// An f32 tensor of shape [1].
inline Status check_f32_scalar(std::string_view plan, std::string_view name, const ConstDynTensor& t,
                               Access access) {
  return check_tensor(plan, name, t, ElementKind::F32, Shape{1}, access);
}

/// `InvalidProblem` when two operands that must be distinct share a data pointer.
inline Status check_distinct(std::string_view plan, std::string_view a_name, const ConstDynTensor& a,
                             std::string_view b_name, const ConstDynTensor& b) {
  if (a.data != nullptr && a.data == b.data)
    return Error::invalid(std::string(plan) + ": " + std::string(a_name) + " and " + std::string(b_name) +
                          " must not be the same memory");
  return {};
}

constexpr bool is_fp8(ElementKind k) { return k == ElementKind::Fp8E4M3 || k == ElementKind::Fp8E5M2; }

}  // namespace baracuda::detail
