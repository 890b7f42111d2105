// One accessor per op family; registry.cpp lists them in the order the profiler shows them.
// Adding a family: write scenarios/<family>.cpp defining `<family>_family()`, declare it here, add it to
// the list in registry.cpp and to tools/profiler/CMakeLists.txt.
#pragma once

#include "../family.hpp"

namespace baracuda::profiler {

const Family& fill_family();
const Family& cast_family();
const Family& affine_family();

}  // namespace baracuda::profiler
