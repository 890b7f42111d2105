#include "baracuda/core/element.hpp"

namespace baracuda {

bool parse_element_kind(std::string_view name, ElementKind* out) {
  for (size_t i = 0; i < kNumElementKinds; ++i) {
    auto k = static_cast<ElementKind>(i);
    if (to_string(k) == name) {
      *out = k;
      return true;
    }
  }
  return false;
}

}  // namespace baracuda
