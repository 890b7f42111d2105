// Test support: reading and writing element values from raw bytes, written here from the format
// definitions (sign / exponent / mantissa), independent of the library and of the CUDA headers' functions.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "baracuda/core/element.hpp"

namespace baracuda::test {

/// Bytes one element occupies (1 for the packed kinds' bytes, which hold two).
int element_bytes(ElementKind k);

/// The value of the element at `p` (floats exactly, integers exactly up to 2^53; bool 0/1).
double decode_value(ElementKind k, const void* p);
/// The raw bits of the element at `p` (zero-extended).
uint64_t load_bits(ElementKind k, const void* p);
void store_bits(ElementKind k, void* p, uint64_t bits);
/// The significand bits after the point and the smallest normal exponent of a floating kind k (f16: 10, -14);
/// false, leaving them alone, for other kinds.
bool float_precision(ElementKind k, int* mantissa_bits, int* min_exponent);
/// True when the element at `p` is a floating NaN.
bool is_nan(ElementKind k, const void* p);

/// Encodes v, which must be exactly representable in kind k (floats: -0.0 kept; integers: in range),
/// into `p`. Returns false when it is not.
bool encode_exact(ElementKind k, double v, void* p);

/// "3.5 (0x4060)" for messages.
std::string describe(ElementKind k, const void* p);

/// Host bytes of `n` elements of k, all set to one bit pattern.
std::vector<uint8_t> filled(ElementKind k, int64_t n, uint64_t bits);

/// The bit pattern of a float or a double, zero-extended (how the value tables of the tests write results).
inline uint64_t f32_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}
inline uint64_t f64_bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

}  // namespace baracuda::test
