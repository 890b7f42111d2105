// Internal: the host reference's model of binary floating-point formats, written from the IEEE 754
// definition (and the OCP FP8 spec for E4M3's "fn" encoding), independent of the CUDA conversion
// functions the devices use. Values travel as exact `long double`s (x87 extended: 64-bit significand,
// so every f64 and every int64 is exact); rounding happens once, here.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "baracuda/core/element.hpp"

namespace baracuda::reference {

/// A sign / exponent / mantissa format.
struct BinaryFormat {
  int mantissa_bits;  ///< explicit fraction bits
  int exponent_bits;
  int bias;
  bool ieee_specials;  ///< all-ones exponent = ±inf / NaN. false: OCP E4M3 "fn", only S.1111.111 is NaN, no inf

  constexpr uint64_t mantissa_mask() const { return (uint64_t{1} << mantissa_bits) - 1; }
  constexpr uint64_t exponent_max_field() const { return (uint64_t{1} << exponent_bits) - 1; }
  constexpr uint64_t sign_bit() const { return uint64_t{1} << (mantissa_bits + exponent_bits); }
  /// Bits of the largest finite value.
  constexpr uint64_t max_finite_bits() const {
    return ieee_specials ? ((exponent_max_field() - 1) << mantissa_bits) | mantissa_mask()
                         : (exponent_max_field() << mantissa_bits) | (mantissa_mask() - 1);
  }
  /// The canonical (positive, quiet) NaN.
  constexpr uint64_t nan_bits() const {
    return ieee_specials ? (exponent_max_field() << mantissa_bits) | (uint64_t{1} << (mantissa_bits - 1))
                         : (exponent_max_field() << mantissa_bits) | mantissa_mask();
  }
  constexpr uint64_t inf_bits() const { return exponent_max_field() << mantissa_bits; }
};

inline constexpr BinaryFormat kFormatF16{10, 5, 15, true};
inline constexpr BinaryFormat kFormatBf16{7, 8, 127, true};
inline constexpr BinaryFormat kFormatF32{23, 8, 127, true};
inline constexpr BinaryFormat kFormatF64{52, 11, 1023, true};
inline constexpr BinaryFormat kFormatE4M3{3, 4, 7, false};
inline constexpr BinaryFormat kFormatE5M2{2, 5, 15, true};

/// The exact value of a bit pattern (NaN for NaN encodings).
inline long double decode(uint64_t bits, const BinaryFormat& f) {
  const bool neg = (bits & f.sign_bit()) != 0;
  const uint64_t e = (bits >> f.mantissa_bits) & f.exponent_max_field();
  const uint64_t m = bits & f.mantissa_mask();
  long double v;
  if (f.ieee_specials && e == f.exponent_max_field()) {
    v = m == 0 ? INFINITY : NAN;
  } else if (!f.ieee_specials && e == f.exponent_max_field() && m == f.mantissa_mask()) {
    v = NAN;
  } else if (e == 0) {
    v = std::ldexp(static_cast<long double>(m), 1 - f.bias - f.mantissa_bits);  // subnormal
  } else {
    v = std::ldexp(static_cast<long double>(m | (uint64_t{1} << f.mantissa_bits)),
                   static_cast<int>(e) - f.bias - f.mantissa_bits);
  }
  return neg ? -v : v;
}

/// Rounds the exact value v to the format, to nearest with ties to even, and encodes it. Overflow (the
/// value rounded with an unbounded exponent exceeds the largest finite value) and ±inf give ±inf, or NaN
/// where the format has no infinity, or ±max finite when `saturate`. NaN gives the canonical NaN.
inline uint64_t encode(long double v, const BinaryFormat& f, bool saturate = false) {
  if (std::isnan(v)) return f.nan_bits();
  const uint64_t sign = std::signbit(v) ? f.sign_bit() : 0;
  const long double a = std::fabs(v);
  auto overflow = [&]() -> uint64_t {
    if (saturate) return sign | f.max_finite_bits();
    return f.ieee_specials ? sign | f.inf_bits() : f.nan_bits() | sign;
  };
  if (std::isinf(a)) return overflow();
  if (a == 0) return sign;

  const int emin = 1 - f.bias;  // exponent of the smallest normal
  int e2 = 0;
  (void)std::frexp(a, &e2);                // a = fr · 2^e2, fr in [0.5, 1)
  const int exp = std::max(e2 - 1, emin);  // exponent of a's leading bit, or emin for subnormals
  const long double quantum = std::ldexp(1.0L, exp - f.mantissa_bits);
  long double n = std::nearbyint(a / quantum);  // exact division by a power of two; one rounding (to even)
  const long double rounded = n * quantum;
  if (rounded > decode(f.max_finite_bits(), f)) return overflow();

  int field = exp + f.bias;
  if (n >= std::ldexp(1.0L, f.mantissa_bits + 1)) {  // rounded up to the next binade
    n /= 2;
    ++field;
  }
  const auto ni = static_cast<uint64_t>(n);
  if (ni < (uint64_t{1} << f.mantissa_bits)) return sign | ni;  // subnormal (field stays 0)
  return sign | (static_cast<uint64_t>(field) << f.mantissa_bits) | (ni & f.mantissa_mask());
}

/// The format of a floating storage type (f16, bf16, f32, f64).
template <class T>
constexpr const BinaryFormat& format_of() {
  constexpr ElementKind k = kind_of<T>;
  static_assert(k == ElementKind::F16 || k == ElementKind::Bf16 || k == ElementKind::F32 || k == ElementKind::F64,
                "format_of: a floating storage type");
  if constexpr (k == ElementKind::F16)
    return kFormatF16;
  else if constexpr (k == ElementKind::Bf16)
    return kFormatBf16;
  else if constexpr (k == ElementKind::F32)
    return kFormatF32;
  else
    return kFormatF64;
}

/// The exact value of a floating storage value.
template <class T>
long double value_of(const T& x) {
  uint64_t b = 0;
  std::memcpy(&b, &x, sizeof(T));
  return decode(b, format_of<T>());
}

/// The exact value of a stored code: a floating storage value, an FP8 E4M3 code or an int8 (a quantized cache's
/// element before its scale).
template <class C>
long double code_value(const C& x) {
  if constexpr (std::is_same_v<C, int8_t>) {
    return x;
  } else if constexpr (std::is_same_v<C, __nv_fp8_e4m3>) {
    uint8_t b = 0;
    std::memcpy(&b, &x, 1);
    return decode(b, kFormatE4M3);
  } else {
    return value_of(x);
  }
}

/// v rounded once (to nearest even) to the storage type T.
template <class T>
T store(long double v) {
  const uint64_t b = encode(v, format_of<T>());
  T x;
  std::memcpy(static_cast<void*>(&x), &b, sizeof(T));
  return x;
}

}  // namespace baracuda::reference
