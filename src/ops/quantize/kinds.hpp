// Internal: the element kinds of the quantization families (quantize, dynamic range, the W8A8 linears).
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "baracuda/core/element.hpp"

namespace baracuda::detail {

/// The float kinds quantized data comes from and goes back to: f16, bf16, f32, f64 (not fp8).
constexpr bool is_quant_float_kind(ElementKind k) { return is_floating(k) && !is_fp8(k); }

/// The values a quantized storage kind holds, [min, max]: s8, u8 and packed s4, u4; nullopt for other kinds.
constexpr std::optional<std::array<int32_t, 2>> quantized_range(ElementKind k) {
  switch (k) {
    case ElementKind::S8: return std::array<int32_t, 2>{-128, 127};
    case ElementKind::U8: return std::array<int32_t, 2>{0, 255};
    case ElementKind::S4: return std::array<int32_t, 2>{-8, 7};
    case ElementKind::U4: return std::array<int32_t, 2>{0, 15};
    default: return std::nullopt;
  }
}

}  // namespace baracuda::detail
