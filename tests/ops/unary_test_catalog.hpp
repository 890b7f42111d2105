// The unary ops' test metadata, keyed by `UnaryKind`: for every op of the catalog
// (include/baracuda/ops/unary_ops.def) the input domain its random inputs are drawn from and the tolerances
// of its forward and backward results. It is test data, so it is not in the installed catalog; the tests,
// the golden-data script (tests/data/gen_unary_golden.py) and the profiler's unary scenarios read it.
//
//   {UnaryKind::Enum, {lo, hi}, fwd_tol, bwd_tol}
//
//   {lo, hi}         where the op is smooth and well conditioned; tests and the profiler draw random inputs
//                    from it (special values and edges are tested separately)
//   fwd_tol, bwd_tol the tolerances of the forward and backward ops against the host reference and the
//                    golden data: a name in unary_tolerances.hpp (`dtype_default` = the per-dtype table of
//                    tests/support/tolerance.hpp; `exact` = bit-exact, which the profiler checks too)
//
// Every `UnaryKind` has exactly one entry (a static_assert below): a new op without test metadata does not
// build. Keep the entries in `UnaryKind` order.
#pragma once

#include <array>
#include <cstddef>

#include "baracuda/ops/unary.hpp"
#include "support/keyed_table.hpp"
#include "unary_tolerances.hpp"

namespace baracuda::test {

/// An input range, [lo, hi].
struct UnaryDomain {
  double lo = 0;
  double hi = 0;
};

/// One op's test metadata.
struct UnaryTestInfo {
  UnaryKind kind;
  UnaryDomain domain;
  unary_tolerances::UnaryTolerance fwd_tol;
  unary_tolerances::UnaryTolerance bwd_tol;
};

namespace unary_test_catalog_detail {
using namespace ::baracuda::test::unary_tolerances;  // NOLINT: the entries name exact, dtype_default

inline constexpr UnaryTestInfo kEntries[] = {
    {UnaryKind::Neg,         {-4, 4}, exact, exact},
    {UnaryKind::Abs,         {-4, 4}, exact, exact},
    {UnaryKind::Sign,        {-4, 4}, exact, exact},
    {UnaryKind::Reciprocal,  {0.125, 4}, dtype_default, dtype_default},
    {UnaryKind::Square,      {-4, 4}, dtype_default, dtype_default},
    {UnaryKind::Sqrt,        {0.01, 8}, dtype_default, dtype_default},
    {UnaryKind::Rsqrt,       {0.05, 8}, dtype_default, dtype_default},
    {UnaryKind::Cbrt,        {-8, 8}, dtype_default, dtype_default},
    {UnaryKind::Exp,         {-6, 6}, dtype_default, dtype_default},
    {UnaryKind::Exp2,        {-6, 6}, dtype_default, dtype_default},
    {UnaryKind::Expm1,       {-4, 4}, dtype_default, dtype_default},
    {UnaryKind::Log,         {0.05, 8}, dtype_default, dtype_default},
    {UnaryKind::Log2,        {0.05, 8}, dtype_default, dtype_default},
    {UnaryKind::Log10,       {0.05, 8}, dtype_default, dtype_default},
    {UnaryKind::Log1p,       {-0.9, 8}, dtype_default, dtype_default},
    {UnaryKind::Sin,         {-4, 4}, dtype_default, dtype_default},
    {UnaryKind::Cos,         {-4, 4}, dtype_default, dtype_default},
    {UnaryKind::Tan,         {-1.4, 1.4}, dtype_default, dtype_default},
    {UnaryKind::Asin,        {-0.95, 0.95}, dtype_default, dtype_default},
    {UnaryKind::Acos,        {-0.95, 0.95}, dtype_default, dtype_default},
    {UnaryKind::Atan,        {-4, 4}, dtype_default, dtype_default},
    {UnaryKind::Sinh,        {-4, 4}, dtype_default, dtype_default},
    {UnaryKind::Cosh,        {-4, 4}, dtype_default, dtype_default},
    {UnaryKind::Tanh,        {-4, 4}, dtype_default, dtype_default},
    {UnaryKind::Asinh,       {-4, 4}, dtype_default, dtype_default},
    {UnaryKind::Acosh,       {1.05, 8}, dtype_default, dtype_default},
    {UnaryKind::Atanh,       {-0.95, 0.95}, dtype_default, dtype_default},
    {UnaryKind::Floor,       {-4, 4}, exact, exact},
    {UnaryKind::Ceil,        {-4, 4}, exact, exact},
    {UnaryKind::Round,       {-4, 4}, exact, exact},
    {UnaryKind::Trunc,       {-4, 4}, exact, exact},
    {UnaryKind::Frac,        {-4, 4}, exact, exact},
    {UnaryKind::Erf,         {-3, 3}, dtype_default, dtype_default},
    {UnaryKind::Erfc,        {-3, 4}, dtype_default, dtype_default},
    {UnaryKind::Lgamma,      {0.1, 8}, dtype_default, dtype_default},
    {UnaryKind::Relu,        {-6, 6}, exact, exact},
    {UnaryKind::Relu6,       {-8, 8}, exact, exact},
    {UnaryKind::LeakyRelu,   {-6, 6}, dtype_default, dtype_default},
    {UnaryKind::Elu,         {-6, 6}, dtype_default, dtype_default},
    {UnaryKind::Selu,        {-6, 6}, dtype_default, dtype_default},
    {UnaryKind::Celu,        {-6, 6}, dtype_default, dtype_default},
    {UnaryKind::Gelu,        {-6, 6}, dtype_default, dtype_default},
    {UnaryKind::GeluTanh,    {-6, 6}, dtype_default, dtype_default},
    {UnaryKind::Silu,        {-8, 8}, dtype_default, dtype_default},
    {UnaryKind::Mish,        {-8, 8}, dtype_default, dtype_default},
    {UnaryKind::Sigmoid,     {-8, 8}, dtype_default, dtype_default},
    {UnaryKind::Logit,       {0.02, 0.98}, dtype_default, dtype_default},
    {UnaryKind::Softplus,    {-8, 8}, dtype_default, dtype_default},
    {UnaryKind::Softsign,    {-6, 6}, dtype_default, dtype_default},
    {UnaryKind::Tanhshrink,  {-4, 4}, dtype_default, dtype_default},
    {UnaryKind::Hardswish,   {-6, 6}, dtype_default, dtype_default},
    {UnaryKind::Hardsigmoid, {-6, 6}, dtype_default, dtype_default},
    {UnaryKind::Hardtanh,    {-3, 3}, exact, exact},
    {UnaryKind::Hardshrink,  {-3, 3}, exact, exact},
    {UnaryKind::Softshrink,  {-3, 3}, dtype_default, exact},
    {UnaryKind::Threshold,   {-6, 6}, exact, exact},
};

// One entry per UnaryKind (the ops of unary_ops.def), indexed by it: compiling fails otherwise.
inline constexpr auto kByKind = ::baracuda::test::keyed_table<kNumUnaryKinds>(kEntries, &UnaryTestInfo::kind);
}  // namespace unary_test_catalog_detail

/// The test metadata of `k` (a valid kind).
constexpr const UnaryTestInfo& unary_test_info(UnaryKind k) {
  return unary_test_catalog_detail::kByKind[k];
}

/// Whether a tolerance of the table is `exact` (bit for bit).
constexpr bool is_exact(unary_tolerances::UnaryTolerance t) { return t == &unary_tolerances::exact; }

}  // namespace baracuda::test
