// The binary ops' test metadata, keyed by `BinaryOp`: for every arithmetic op of the catalog
// (include/baracuda/ops/binary_ops.def) how the sim and cuda kernels agree with the host reference and the
// tolerances of its forward and backward results. It is test data, so it is not in the installed catalog;
// the tests, docs/ops/binary.md's table (checked by binary_test) and the profiler's binary scenarios read it.
// (The comparisons need no entry: they are exact on every device.)
//
//   {BinaryOp::Enum, agreement, tol, grad_tol}
//
//   agreement  `Bitwise`: correctly rounded or exact, so every device gives the same bits as the host
//              reference (the profiler checks it too); `WithinTolerance`: a libm-style function whose last
//              bit may differ between CUDA's math library, the host's libm and the reference
//   tol        the forward's tolerance against the reference, a name from tests/support/tolerance.hpp
//              (`dtype_default`, `rounded_intermediate`, `exact`)
//   grad_tol   the same for the backward outputs
//
// Every `BinaryOp` has exactly one entry (a static_assert below): a new op without test metadata does not
// build. Keep the entries in `BinaryOp` order.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "baracuda/ops/binary.hpp"
#include "support/keyed_table.hpp"
#include "support/tolerance.hpp"

namespace baracuda::test {

/// How the sim/cuda kernels of an op relate to the host reference.
enum class BinaryAgreement : uint8_t {
  Bitwise,          ///< the same bits on every device
  WithinTolerance,  ///< within the op's tolerance
};

/// One op's test metadata.
struct BinaryTestInfo {
  BinaryOp op;
  BinaryAgreement agreement;
  Tolerance tol;       ///< forward tolerance (a catalog name, unresolved: see `resolve`)
  Tolerance grad_tol;  ///< backward tolerance
};

namespace binary_test_catalog_detail {
using enum BinaryAgreement;
using namespace ::baracuda::test::tolerances;  // NOLINT: the entries name exact, dtype_default, ...

inline constexpr BinaryTestInfo kEntries[] = {
    {BinaryOp::Add,       Bitwise, dtype_default, dtype_default},
    {BinaryOp::Sub,       Bitwise, dtype_default, dtype_default},
    {BinaryOp::Mul,       Bitwise, dtype_default, dtype_default},
    {BinaryOp::Div,       Bitwise, dtype_default, dtype_default},
    {BinaryOp::Pow,       WithinTolerance, dtype_default, rounded_intermediate},
    {BinaryOp::Maximum,   Bitwise, dtype_default, dtype_default},
    {BinaryOp::Minimum,   Bitwise, dtype_default, dtype_default},
    {BinaryOp::Atan2,     WithinTolerance, dtype_default, dtype_default},
    {BinaryOp::Fmod,      Bitwise, dtype_default, dtype_default},
    {BinaryOp::Remainder, Bitwise, dtype_default, dtype_default},
    {BinaryOp::Copysign,  Bitwise, dtype_default, dtype_default},
    {BinaryOp::Hypot,     WithinTolerance, dtype_default, dtype_default},
};

// One entry per BinaryOp (the ops of binary_ops.def), indexed by it: compiling fails otherwise.
inline constexpr auto kByOp = ::baracuda::test::keyed_table<kNumBinaryOps>(kEntries, &BinaryTestInfo::op);
}  // namespace binary_test_catalog_detail

/// The test metadata of `op` (a valid op).
constexpr const BinaryTestInfo& binary_test_info(BinaryOp op) {
  return binary_test_catalog_detail::kByOp[op];
}

}  // namespace baracuda::test
