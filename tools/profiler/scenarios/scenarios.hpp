// One function per op family, appending the family's scenarios (one per op); registry.cpp calls them in
// the order the profiler shows them. Adding a family: write scenarios/<family>.cpp defining
// `add_<family>_scenarios`, declare it here, call it in registry.cpp and add the file to
// tools/profiler/CMakeLists.txt.
#pragma once

#include <vector>

#include "../scenario.hpp"

namespace baracuda::profiler {

void add_fill_scenarios(std::vector<Scenario>& out);
void add_cast_scenarios(std::vector<Scenario>& out);
void add_affine_scenarios(std::vector<Scenario>& out);
void add_unary_scenarios(std::vector<Scenario>& out);
void add_binary_scenarios(std::vector<Scenario>& out);
void add_ternary_scenarios(std::vector<Scenario>& out);
void add_gated_activation_scenarios(std::vector<Scenario>& out);
void add_quantize_scenarios(std::vector<Scenario>& out);
void add_fp8_scenarios(std::vector<Scenario>& out);
void add_dynamic_range_quantize_scenarios(std::vector<Scenario>& out);
void add_int_gemm_scenarios(std::vector<Scenario>& out);
void add_int4_gemm_scenarios(std::vector<Scenario>& out);
void add_int4_marlin_repack_scenarios(std::vector<Scenario>& out);

}  // namespace baracuda::profiler
