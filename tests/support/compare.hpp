// Test support: comparisons that report the first mismatches with their indices and values. Floating
// elements compare bit for bit except that any NaN equals any NaN; integers and bool compare exactly.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "baracuda/core/element.hpp"
#include "tolerance.hpp"

namespace baracuda::test {

/// `n` elements of kind k (packed kinds: `n` bytes) in `actual` and `expected` are the same bits, or both NaN.
::testing::AssertionResult same_elements(ElementKind k, const std::vector<uint8_t>& actual,
                                         const std::vector<uint8_t>& expected, int64_t n);

/// The elements of `actual` equal `expected` values within `tol` (exact: equal values, NaN equals NaN,
/// and the sign of a zero must match).
::testing::AssertionResult close_elements(ElementKind k, const std::vector<uint8_t>& actual,
                                          const std::vector<double>& expected, const Tolerance& tol);

}  // namespace baracuda::test
