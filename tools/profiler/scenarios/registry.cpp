// The explicit list of op families the profiler knows.
#include <array>
#include <functional>

#include "scenarios.hpp"

namespace baracuda::profiler {

std::span<const Family> families() {
  static const std::array<Family, 3> list = {
      fill_family(),
      cast_family(),
      affine_family(),
  };
  return list;
}

const Family* find_family(std::string_view name) {
  for (const Family& f : families())
    if (f.name == name) return &f;
  return nullptr;
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
