// Internal: hash combining for descriptor and SKU hashes.
#pragma once

#include <cstddef>
#include <functional>

namespace baracuda::detail {

template <class T>
void hash_combine(size_t& seed, const T& v) {
  seed ^= std::hash<T>{}(v) + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2);
}

}  // namespace baracuda::detail
