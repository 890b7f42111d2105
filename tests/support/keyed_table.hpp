// Test support: a catalog's test-side table, written as a list of entries each naming its op, checked at
// compile time to hold exactly one entry per op and indexed by op (tests/ops/*_test_catalog.hpp).
#pragma once

#include <array>
#include <cstddef>

namespace baracuda::test {

/// True when `entries` names every key 0..N-1 exactly once (`key` is the entry's enum member).
template <size_t N, class Entry, size_t M, class Key>
constexpr bool each_key_once(const Entry (&entries)[M], Key Entry::*key) {
  for (size_t k = 0; k < N; ++k) {
    size_t n = 0;
    for (const Entry& e : entries) n += static_cast<size_t>(e.*key) == k ? 1 : 0;
    if (n != 1) return false;
  }
  return M == N;
}

/// `entries` reordered so that entry k is the one whose key is k.
template <size_t N, class Entry, size_t M, class Key>
constexpr std::array<Entry, N> index_by_key(const Entry (&entries)[M], Key Entry::*key) {
  std::array<Entry, N> a{};
  for (const Entry& e : entries) a[static_cast<size_t>(e.*key)] = e;
  return a;
}

/// Not defined and not constexpr: a table_by_key that reaches it does not compile, and the error names it.
void a_catalog_entry_is_missing_or_repeated();

/// `entries` indexed by key (index_by_key); compiling fails unless they name every key 0..N-1 exactly once.
template <size_t N, class Entry, size_t M, class Key>
consteval std::array<Entry, N> table_by_key(const Entry (&entries)[M], Key Entry::*key) {
  if (!each_key_once<N>(entries, key)) a_catalog_entry_is_missing_or_repeated();
  return index_by_key<N>(entries, key);
}

/// A catalog's test table looked up by its key.
template <class Key, class Entry, size_t N>
struct KeyedTable {
  std::array<Entry, N> by_key;
  constexpr const Entry& operator[](Key k) const { return by_key[static_cast<size_t>(k)]; }
};

/// table_by_key's table (same compile-time check), looked up by key.
template <size_t N, class Entry, size_t M, class Key>
consteval KeyedTable<Key, Entry, N> keyed_table(const Entry (&entries)[M], Key Entry::*key) {
  return {table_by_key<N>(entries, key)};
}

}  // namespace baracuda::test
