// Names of the quantization enumerations that several families' bindings share.
#pragma once

#include <array>
#include <string_view>

#include "baracuda/ops/dynamic_range_quantize.hpp"
#include "baracuda/ops/quant_convention.hpp"
#include "baracuda/ops/quant_granularity.hpp"
#include "common.hpp"

namespace baracuda::python {

BARACUDA_PY_NAMED_BY_TO_STRING(QuantConvention, 4, "quantization convention");

template <>
struct EnumNames<QuantGranularity::Kind> {
  static constexpr std::size_t count = 4;
  static constexpr const char* what = "granularity";
  static std::string_view name(QuantGranularity::Kind k) {
    constexpr std::array<std::string_view, 4> names = {"per_tensor", "per_channel", "per_token", "per_group"};
    return names[static_cast<std::size_t>(k)];
  }
};

/// Named by the family's catalog, dynamic_range_modes.def.
template <>
struct EnumNames<DynamicRangeMode> {
  static constexpr std::size_t count = kNumDynamicRangeModes;
  static constexpr const char* what = "dynamic range mode";
  static std::string_view name(DynamicRangeMode m) {
    return detail::kDynamicRangeModes[static_cast<std::size_t>(m)].name;
  }
};

/// A granularity from its name and parameters.
inline QuantGranularity granularity_of(std::string_view name, int axis, int64_t group_size) {
  return QuantGranularity{parse_name<QuantGranularity::Kind>(name), axis, group_size};
}

}  // namespace baracuda::python
