// The explicit list of op families the profiler knows.
#include <array>

#include "scenarios.hpp"

namespace baracuda::profiler {

std::span<const Scenario> scenarios() {
  static const std::vector<Scenario> list = [] {
    std::vector<Scenario> v;
    add_fill_scenarios(v);
    add_cast_scenarios(v);
    add_affine_scenarios(v);
    add_unary_scenarios(v);
    add_binary_scenarios(v);
    add_ternary_scenarios(v);
    add_gated_activation_scenarios(v);
    add_quantize_scenarios(v);
    add_fp8_scenarios(v);
    add_dynamic_range_quantize_scenarios(v);
    add_int_gemm_scenarios(v);
    add_int4_gemm_scenarios(v);
    add_int4_marlin_repack_scenarios(v);
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
