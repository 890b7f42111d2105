// Test support: the per-dtype tolerance table (DESIGN.md §8, torch.testing's defaults) and the named
// tolerances a catalog line may give (`exact`, `dtype_default`).
#pragma once

#include "baracuda/core/element.hpp"

namespace baracuda::test {

struct Tolerance {
  double rtol = 0;
  double atol = 0;
  bool exact = true;  ///< compare bits (floats: NaN equals NaN)
};

/// The names catalog lines use in their `tolerance` field.
namespace tolerances {
/// Bit-exact on every device and against the expectation.
inline constexpr Tolerance exact{0, 0, true};
/// The element kind's default from `default_tolerance` (integer kinds are exact).
inline constexpr Tolerance dtype_default{-1, -1, false};
}  // namespace tolerances

/// torch.testing defaults: f16 (1e-3, 1e-5), bf16 (1.6e-2, 1e-5), f32 (1.3e-6, 1e-5), f64 (1e-7, 1e-7);
/// fp8 one unit in the last place relative (E4M3 0.125, E5M2 0.25) with atol of the smallest subnormal;
/// every integer kind and bool exact.
constexpr Tolerance default_tolerance(ElementKind k) {
  switch (k) {
    case ElementKind::F16:
      return {1e-3, 1e-5, false};
    case ElementKind::Bf16:
      return {1.6e-2, 1e-5, false};
    case ElementKind::F32:
      return {1.3e-6, 1e-5, false};
    case ElementKind::F64:
      return {1e-7, 1e-7, false};
    case ElementKind::Fp8E4M3:
      return {0.125, 0.001953125, false};
    case ElementKind::Fp8E5M2:
      return {0.25, 1.52587890625e-05, false};
    default:
      return tolerances::exact;
  }
}

/// A catalog tolerance resolved for one element kind.
constexpr Tolerance resolve(const Tolerance& catalog, ElementKind k) {
  return (catalog.rtol < 0) ? default_tolerance(k) : catalog;
}

}  // namespace baracuda::test
