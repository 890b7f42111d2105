// The gated activations' test metadata, keyed by `GatedActivationKind`: the tolerances of each kind's forward
// and backward results against the host reference. It is test data, so it is not in the family's catalog
// (src/ops/gated_activation/gated_activation.def). The devices compute in f32 (f64 for f64 data) and the host
// reference in double, so no entry is `exact`.
//
//   {GatedActivationKind::Kind, fwd_tol, bwd_tol}   (names from tests/support/tolerance.hpp)
//
// Every kind has exactly one entry (a static_assert below): a new kind without test metadata does not build.
#pragma once

#include <array>
#include <cstddef>

#include "baracuda/ops/gated_activation.hpp"
#include "support/keyed_table.hpp"
#include "support/tolerance.hpp"

namespace baracuda::test {

/// One kind's test metadata.
struct GatedTestInfo {
  GatedActivationKind kind;
  Tolerance fwd;  ///< forward tolerance (a catalog name, unresolved: see `resolve`)
  Tolerance bwd;  ///< backward tolerance
};

namespace gated_test_catalog_detail {
using namespace ::baracuda::test::tolerances;  // NOLINT: the entries name dtype_default, ...
using K = GatedActivationKind;

inline constexpr GatedTestInfo kEntries[] = {
    {K::Glu,           dtype_default, dtype_default},
    {K::ReGlu,         dtype_default, dtype_default},
    {K::SwiGlu,        dtype_default, dtype_default},
    {K::GeGlu,         dtype_default, dtype_default},
    {K::GeGluTanh,     dtype_default, dtype_default},
    {K::SwiGluClamped, dtype_default, dtype_default},
};

// One entry per GatedActivationKind, indexed by it: compiling fails otherwise.
inline constexpr auto kByKind =
    ::baracuda::test::keyed_table<kNumGatedActivationKinds>(kEntries, &GatedTestInfo::kind);
}  // namespace gated_test_catalog_detail

/// The test metadata of `kind` (a valid kind).
constexpr const GatedTestInfo& gated_test_info(GatedActivationKind kind) {
  return gated_test_catalog_detail::kByKind[kind];
}

}  // namespace baracuda::test
