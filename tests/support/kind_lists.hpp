// Test support: a catalog's type lists as element kinds, and kinds as the docs' tables print them.
#pragma once

#include <string>
#include <vector>

#include "baracuda/core/element.hpp"

namespace baracuda::test {

/// The kinds of a type list, in its order.
template <class List>
std::vector<ElementKind> kinds_of_list(List list) {
  std::vector<ElementKind> v;
  for_each_type(list, [&]<class T>() { v.push_back(kind_of<T>); });
  return v;
}

/// "f16, bf16, f32".
inline std::string kinds_text(const std::vector<ElementKind>& kinds) {
  std::string r;
  for (ElementKind k : kinds) r += (r.empty() ? "" : ", ") + std::string(to_string(k));
  return r;
}

}  // namespace baracuda::test
