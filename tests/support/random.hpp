// Test support: deterministic random data (SplitMix64; the same seed gives the same bytes everywhere).
#pragma once

#include <cstdint>
#include <vector>

#include "baracuda/core/element.hpp"

namespace baracuda::test {

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, n).
  uint64_t below(uint64_t n) { return next() % n; }
  /// Uniform in [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * static_cast<double>(next() >> 11) * 0x1p-53; }

 private:
  uint64_t state_;
};

/// `n` elements of kind k with uniformly random bit patterns (every NaN, inf and subnormal included);
/// bool elements are 0 or 1.
std::vector<uint8_t> random_bits(ElementKind k, int64_t n, uint64_t seed);

/// `n` elements of kind k drawn from a pool of values exactly representable in every kind the sweep
/// casts between (±0, small integers, halves and quarters with ≤ 3 significant bits, up to ±112);
/// integer kinds get integers (unsigned: non-negative), bool 0/1. The values are written to `values`.
std::vector<uint8_t> exact_small_values(ElementKind k, int64_t n, uint64_t seed, std::vector<double>* values);

/// `n` elements of a floating kind k, uniform in [lo, hi) and rounded to k (by truncating the f64
/// significand to k's width, so every value is exact in k); their values in `values`.
std::vector<uint8_t> random_floats(ElementKind k, int64_t n, double lo, double hi, uint64_t seed,
                                   std::vector<double>* values);

}  // namespace baracuda::test
