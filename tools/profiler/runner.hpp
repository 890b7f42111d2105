// Running one case: prepare on the device, time, run the same plan on the host device, compare.
#pragma once

#include "scenario.hpp"
#include "report.hpp"

namespace baracuda::profiler {

struct RunSettings {
  int warmup = 1;
  int repeat = 1;
};

Row run_case(const Scenario& scenario, const Problem& problem, const Stream& stream, const RunSettings& settings);

/// "4096x4096" ("scalar" for rank 0).
std::string shape_text(const Shape& s);

}  // namespace baracuda::profiler
