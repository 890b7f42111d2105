// The tolerance names the unary test catalog (tests/ops/unary_test_catalog.hpp) uses in its fwd_tol and bwd_tol
// fields: each is a function of the element kind, so a name can loosen one dtype only. They apply to a
// device against the host reference and to every device against the PyTorch golden data.
#pragma once

#include "support/tolerance.hpp"

namespace baracuda::test::unary_tolerances {

using UnaryTolerance = Tolerance (*)(ElementKind);

/// Bit-exact (NaN equals NaN; the sign of a zero must match against the host reference).
constexpr Tolerance exact(ElementKind) { return tolerances::exact; }
/// The per-dtype table of tests/support/tolerance.hpp (torch.testing's defaults).
constexpr Tolerance dtype_default(ElementKind k) { return default_tolerance(k); }

}  // namespace baracuda::test::unary_tolerances
