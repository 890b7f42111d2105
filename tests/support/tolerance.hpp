// Test support: the per-dtype tolerance table (DESIGN.md §8, torch.testing's defaults) and the named
// tolerances a catalog line may give (`exact`, `dtype_default`). The profiler's verification uses the same
// table (tools/profiler/verify.hpp); header only, so it needs nothing else of the tests.
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
/// Twice the default: a result computed from an intermediate that is itself rounded to the element kind
/// (PyTorch's saved output, e.g. pow's backward uses y = a^b rounded to f16), after a libm-style function
/// whose last f32 bit may differ between devices; a 1-ulp difference in the intermediate can then move the
/// result by 2 ulps of a 16-bit kind.
inline constexpr Tolerance rounded_intermediate{-2, -2, false};
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

/// A catalog tolerance resolved for one element kind (a negative entry scales the kind's default by −entry).
constexpr Tolerance resolve(const Tolerance& catalog, ElementKind k) {
  if (catalog.rtol >= 0) return catalog;
  const Tolerance d = default_tolerance(k);
  return d.exact ? d : Tolerance{d.rtol * -catalog.rtol, d.atol * -catalog.atol, false};
}

}  // namespace baracuda::test
