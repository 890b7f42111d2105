// Reading and writing single elements of any `ElementKind` in host memory, as doubles.
#pragma once

#include <cstdint>

#include <baracuda/baracuda.hpp>

namespace baracuda::profiler {

/// The value of element `index` of an array of `kind` at `base` (packed 4-bit kinds: nibble `index`).
double load_element(ElementKind kind, const uint8_t* base, int64_t index);
/// Stores `v` at element `index`: rounded to nearest by a float kind's conversion; truncated and saturated to
/// an integer kind's range (NaN: 0).
void store_element(ElementKind kind, uint8_t* base, int64_t index, double v);
/// The raw bits of element `index` (for exact comparison).
uint64_t element_bits_at(ElementKind kind, const uint8_t* base, int64_t index);
/// Whether the bits of element `index` encode a NaN.
bool is_nan_at(ElementKind kind, const uint8_t* base, int64_t index);

constexpr bool is_unsigned(ElementKind k) {
  return k == ElementKind::U8 || k == ElementKind::U32 || k == ElementKind::U4 || k == ElementKind::Bool;
}
/// The largest finite value of a kind (as a double; s64 rounds).
double max_finite(ElementKind k);
/// The smallest finite value of a kind.
double min_finite(ElementKind k);

}  // namespace baracuda::profiler
