// Running one case: prepare on the device, time, run the same plan on the host device, compare.
#pragma once

#include "scenario.hpp"
#include "report.hpp"

namespace baracuda::profiler {

struct RunSettings {
  int warmup = 1;
  int repeat = 1;
  /// Cases whose Traffic::flops exceed this are timed but not run by the host reference (which does those
  /// flops one at a time on a CPU core); 0 for no limit.
  double verify_limit_flops = 0;
};

/// The device half of a case: select, can_implement, time, download the outputs.
struct Measured {
  Row row;                           ///< complete unless `ran` (then verify_case fills in the errors)
  std::vector<HostTensor> outputs;   ///< the device's outputs
  bool ran = false;
};
Measured measure_case(const Scenario& scenario, const Problem& problem, const Stream& stream,
                      const RunSettings& settings);
/// The host half: runs the same plan on the host device over the same inputs and compares. Touches no
/// device, so it may run on another thread while the next case is timed on a GPU.
/// Cases over `settings.verify_limit_flops` come back `Unverified`.
Row verify_case(const Scenario& scenario, const Problem& problem, Measured measured, const RunSettings& settings);
/// How many host threads may verify cases while the GPU times the next ones: hardware threads − 2 (one
/// launches kernels), at least 1, at most 8 (each holds a case's outputs and reference in memory).
unsigned verification_workers();
/// Both halves, one after the other.
Row run_case(const Scenario& scenario, const Problem& problem, const Stream& stream, const RunSettings& settings);

/// "4096x4096" ("scalar" for rank 0).
std::string shape_text(const Shape& s);

}  // namespace baracuda::profiler
