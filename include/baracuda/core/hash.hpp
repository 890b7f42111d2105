/// \file
/// \brief Hash combining for descriptor and SKU hashes: a descriptor's `hash()` is `detail::hash_fields` over
/// the fields its `operator==` compares, written next to them.
#pragma once

#include <concepts>
#include <cstddef>
#include <functional>
#include <iterator>
#include <type_traits>

namespace baracuda::detail {

/// Mixes `v`'s std::hash into `seed` (boost::hash_combine's recipe, 64-bit constant).
template <class T>
void hash_combine(size_t& seed, const T& v) {
  seed ^= std::hash<T>{}(v) + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2);
}

/// The hash of one descriptor field: an enum by its value, a type with `hash()` (Shape, Scalar, …) by it, an
/// optional by whether it is set and its value, a range by its elements, anything else by std::hash.
template <class T>
size_t hash_field(const T& v) {
  if constexpr (std::is_enum_v<T>) {
    return std::hash<std::underlying_type_t<T>>{}(static_cast<std::underlying_type_t<T>>(v));
  } else if constexpr (requires { { v.hash() } -> std::convertible_to<size_t>; }) {
    return v.hash();
  } else if constexpr (requires { v.has_value(); *v; }) {
    size_t h = v.has_value();
    if (v) hash_combine(h, hash_field(*v));
    return h;
  } else if constexpr (requires { std::begin(v); std::end(v); }) {
    size_t h = 0;
    for (const auto& e : v) hash_combine(h, hash_field(e));
    return h;
  } else {
    return std::hash<T>{}(v);
  }
}

/// A descriptor's hash: its fields' hashes combined in order. Equal descriptors hash alike (±0 alike too).
template <class... Fields>
size_t hash_fields(const Fields&... fields) {
  size_t h = 0;
  (hash_combine(h, hash_field(fields)), ...);
  return h;
}

}  // namespace baracuda::detail
