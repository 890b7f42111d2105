// The op families the profiler knows: one per file of scenarios/ (scenario_families.inc).
#include <array>

#include "scenarios.hpp"

namespace baracuda::profiler {

std::span<const Scenario> scenarios() {
  static const std::vector<Scenario> list = [] {
    std::vector<Scenario> v;
#define BARACUDA_SCENARIO_FAMILY(family) add_##family##_scenarios(v);
#include "scenario_families.inc"
#undef BARACUDA_SCENARIO_FAMILY
    return v;
  }();
  return list;
}

std::span<const ElementKind> all_kinds() {
  static const std::array<ElementKind, kNumElementKinds> kinds = [] {
    std::array<ElementKind, kNumElementKinds> k{};
    for (size_t i = 0; i < kNumElementKinds; ++i) k[i] = static_cast<ElementKind>(i);
    return k;
  }();
  return kinds;
}

}  // namespace baracuda::profiler
