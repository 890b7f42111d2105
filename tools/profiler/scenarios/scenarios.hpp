// The function of each op family's file under scenarios/, appending the family's scenarios (one per op):
// `add_<family>_scenarios`. The families are the files that are there (scenario_families.inc, written by
// tools/profiler/CMakeLists.txt); registry.cpp calls them in that (alphabetical) order.
#pragma once

#include <vector>

#include "../scenario.hpp"

namespace baracuda::profiler {

#define BARACUDA_SCENARIO_FAMILY(family) void add_##family##_scenarios(std::vector<Scenario>& out);
#include "scenario_families.inc"
#undef BARACUDA_SCENARIO_FAMILY

}  // namespace baracuda::profiler
