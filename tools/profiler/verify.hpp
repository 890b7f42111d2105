// Comparing an op's output on the profiled device with the same plan's output on the host device.
#pragma once

#include <cstdint>
#include <string>

#include "operands.hpp"
#include "scenario.hpp"
#include "support/tolerance.hpp"

namespace baracuda::profiler {

/// The tests' per-kind table (tests/support/tolerance.hpp: torch.testing's defaults, fp8 one ulp), so a
/// profiler verdict and a test verdict never disagree on what "within tolerance" means.
using test::default_tolerance;
using test::Tolerance;

struct Verification {
  double max_abs_error = 0;  ///< max |out - ref| over elements (NaN vs non-NaN counts as inf)
  double max_rel_error = 0;  ///< max |out - ref| / |ref| over elements with ref != 0
  int64_t mismatches = 0;    ///< elements that differ (Exact) or fall outside the tolerance (Tolerance)
  int64_t checked = 0;       ///< elements compared
  std::string problem;       ///< non-empty when the outputs could not be compared at all
  bool passed() const { return problem.empty() && mismatches == 0; }
  /// Accumulates another output's comparison (max of the errors, sum of the counts).
  void merge(const Verification& o);
};

/// Compares the logical elements of `out` with `ref` (same kind and shape; strides may differ). `summed_terms`:
/// how many terms each element of `out` sums (Scenario::summed_terms); the Tolerance bound's absolute part grows
/// with its square root (a sum's rounding errors add up like a random walk), so a long reduction is held to what
/// f32 sums can give rather than to one element's tolerance.
Verification compare(const HostTensor& out, const HostTensor& ref, Comparison how, int64_t summed_terms = 1);

}  // namespace baracuda::profiler
