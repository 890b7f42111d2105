// Internal: the names of a public enum's values as a table indexed by the value, instead of a switch per enum.
#pragma once

#include <cstddef>
#include <string_view>

namespace baracuda::detail {

/// `names[e]`, or "?" for a value past the table. Each table's definition static_asserts that it has one
/// name per enumerator (its size against the last enumerator).
template <class E, size_t N>
constexpr std::string_view enum_name(E e, const std::string_view (&names)[N]) {
  const auto i = static_cast<size_t>(e);
  return i < N ? names[i] : std::string_view("?");
}

}  // namespace baracuda::detail
