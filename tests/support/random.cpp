#include "random.hpp"

#include <cmath>
#include <stdexcept>

#include "numeric.hpp"

namespace baracuda::test {

std::vector<uint8_t> random_bits(ElementKind k, int64_t n, uint64_t seed) {
  Rng rng(seed);
  const int w = element_bytes(k);
  std::vector<uint8_t> v(static_cast<size_t>(n * w));
  for (int64_t i = 0; i < n; ++i) store_bits(k, v.data() + i * w, k == ElementKind::Bool ? rng.next() & 1 : rng.next());
  return v;
}

std::vector<uint8_t> exact_small_values(ElementKind k, int64_t n, uint64_t seed, std::vector<double>* values) {
  static const double kFloatPool[] = {0,   -0.0, 1,   -1,   2,  -2,   3,    -3,    0.5,   -0.5, 1.5, -1.5,
                                      2.5, -2.5, 3.5, -3.5, 6,  -6,   7,    -7,    12,    -12,  14,  -14,
                                      96,  -96,  112, -112, 64, -128, 0.25, 0.375, -0.75, 224,  -192};
  static const double kSignedPool[] = {0,  1,   -1, 2,   -2, 3,   -3,  6,    -6, 7,   -7,
                                       12, -12, 14, -14, 96, -96, 112, -112, 64, -128};
  static const double kUnsignedPool[] = {0, 1, 2, 3, 6, 7, 12, 14, 64, 96, 112, 128, 192, 224};
  const double* pool = kFloatPool;
  size_t size = std::size(kFloatPool);
  if (k == ElementKind::Bool) {
    static const double kBool[] = {0, 1};
    pool = kBool, size = 2;
  } else if (k == ElementKind::U8 || k == ElementKind::U32) {
    pool = kUnsignedPool, size = std::size(kUnsignedPool);
  } else if (is_integral(k)) {
    pool = kSignedPool, size = std::size(kSignedPool);
  }
  Rng rng(seed);
  const int w = element_bytes(k);
  std::vector<uint8_t> bytes(static_cast<size_t>(n * w));
  values->resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    double v = pool[rng.below(size)];
    if (k == ElementKind::S8 && v > 127) v = 127;
    if (!encode_exact(k, v, bytes.data() + i * w)) throw std::logic_error("exact_small_values: not exact");
    (*values)[static_cast<size_t>(i)] = v;
  }
  return bytes;
}

std::vector<uint8_t> random_floats(ElementKind k, int64_t n, double lo, double hi, uint64_t seed,
                                   std::vector<double>* values) {
  int mant = 52, emin = -1022;  // f64's
  float_precision(k, &mant, &emin);
  Rng rng(seed);
  const int w = element_bytes(k);
  std::vector<uint8_t> bytes(static_cast<size_t>(n * w));
  values->resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    double v = rng.uniform(lo, hi);
    if (v != 0) {
      int e2 = 0;
      std::frexp(v, &e2);
      const double q = std::ldexp(1.0, std::max(e2 - 1, emin) - mant);
      v = std::trunc(v / q) * q;
    }
    if (!encode_exact(k, v, bytes.data() + i * w)) throw std::logic_error("random_floats: not exact");
    (*values)[static_cast<size_t>(i)] = v;
  }
  return bytes;
}

}  // namespace baracuda::test
