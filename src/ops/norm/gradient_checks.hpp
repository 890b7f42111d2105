// Internal: the backward operands every normalization plan checks alike (NormBackwardPlan, GroupNorm and
// BatchNorm's backward): dx of x's shape, dweight and dbias of the parameters' shape, each optional (empty)
// but not all, and dweight / dbias only where the descriptor has a weight / bias.
#pragma once

#include <string>
#include <string_view>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/status.hpp"
#include "core/validate.hpp"

namespace baracuda::detail {

inline Status check_norm_gradients(std::string_view plan, const DynTensor& dx, const DynTensor& dweight,
                                   const DynTensor& dbias, ElementKind kind, const Shape& x_shape,
                                   const Shape& param_shape, bool has_weight, bool has_bias) {
  const std::string p(plan);
  if (dx.data != nullptr) BARACUDA_TRY(check_tensor(plan, "dx", dx, kind, x_shape, Access::Write));
  if (dweight.data != nullptr) {
    if (!has_weight) return Error::invalid(p + ": dweight must be empty: the descriptor has no weight");
    BARACUDA_TRY(check_tensor(plan, "dweight", dweight, kind, param_shape, Access::Write));
  }
  if (dbias.data != nullptr) {
    if (!has_bias) return Error::invalid(p + ": dbias must be empty: the descriptor has no bias");
    BARACUDA_TRY(check_tensor(plan, "dbias", dbias, kind, param_shape, Access::Write));
  }
  if (dx.data == nullptr && dweight.data == nullptr && dbias.data == nullptr)
    return Error::invalid(p + ": none of dx, dweight and dbias is requested");
  return {};
}

}  // namespace baracuda::detail
