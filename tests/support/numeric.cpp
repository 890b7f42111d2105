#include "numeric.hpp"

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <limits>

namespace baracuda::test {
namespace {

struct Fmt {
  int m, e, bias;
  bool ieee;  // false: E4M3 "fn" (S.1111.111 is NaN, no infinity)
};

/// The entry of `table` whose `kind` is k, or nullptr.
template <class Entry, size_t N>
const Entry* entry_of(const Entry (&table)[N], ElementKind k) {
  for (const Entry& e : table)
    if (e.kind == k) return &e;
  return nullptr;
}

bool float_format(ElementKind k, Fmt* f) {
  struct Entry {
    ElementKind kind;
    Fmt fmt;
  };
  static constexpr Entry kFormats[] = {
      {ElementKind::F16, {10, 5, 15, true}},
      {ElementKind::Bf16, {7, 8, 127, true}},
      {ElementKind::F32, {23, 8, 127, true}},
      {ElementKind::F64, {52, 11, 1023, true}},
      {ElementKind::Fp8E4M3, {3, 4, 7, false}},
      {ElementKind::Fp8E5M2, {2, 5, 15, true}},
  };
  const Entry* e = entry_of(kFormats, k);
  if (e != nullptr) *f = e->fmt;
  return e != nullptr;
}

double decode_float(uint64_t bits, const Fmt& f) {
  const bool neg = (bits >> (f.m + f.e)) & 1;
  const uint64_t emax = (uint64_t{1} << f.e) - 1;
  const uint64_t ef = (bits >> f.m) & emax;
  const uint64_t mf = bits & ((uint64_t{1} << f.m) - 1);
  double v;
  if (f.ieee && ef == emax)
    v = mf == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  else if (!f.ieee && ef == emax && mf == (uint64_t{1} << f.m) - 1)
    v = std::numeric_limits<double>::quiet_NaN();
  else if (ef == 0)
    v = std::ldexp(static_cast<double>(mf), 1 - f.bias - f.m);
  else
    v = std::ldexp(static_cast<double>(mf | (uint64_t{1} << f.m)), static_cast<int>(ef) - f.bias - f.m);
  return neg ? -v : v;
}

bool encode_float(double v, const Fmt& f, uint64_t* out) {
  const uint64_t sign = std::signbit(v) ? uint64_t{1} << (f.m + f.e) : 0;
  const uint64_t emax = (uint64_t{1} << f.e) - 1;
  if (std::isnan(v)) {
    *out = f.ieee ? (emax << f.m) | (uint64_t{1} << (f.m - 1)) : (emax << f.m) | ((uint64_t{1} << f.m) - 1);
    return true;
  }
  if (std::isinf(v)) {
    if (!f.ieee) return false;
    *out = sign | (emax << f.m);
    return true;
  }
  const double a = std::fabs(v);
  if (a == 0) {
    *out = sign;
    return true;
  }
  int e2 = 0;
  std::frexp(a, &e2);
  const int emin = 1 - f.bias;
  const int x = std::max(e2 - 1, emin);
  const double n = std::ldexp(a, f.m - x);
  if (n != std::floor(n)) return false;  // not representable (too many significant bits)
  const auto ni = static_cast<uint64_t>(n);
  if (ni < (uint64_t{1} << f.m)) {  // subnormal
    *out = sign | ni;
    return true;
  }
  const uint64_t field = static_cast<uint64_t>(x + f.bias);
  const uint64_t mant = ni & ((uint64_t{1} << f.m) - 1);
  if (f.ieee ? field >= emax : (field > emax || (field == emax && mant == (uint64_t{1} << f.m) - 1))) return false;
  *out = sign | (field << f.m) | mant;
  return true;
}

}  // namespace

int element_bytes(ElementKind k) { return k == ElementKind::S4 || k == ElementKind::U4 ? 1 : element_bits(k) / 8; }

uint64_t load_bits(ElementKind k, const void* p) {
  uint64_t b = 0;
  std::memcpy(&b, p, static_cast<size_t>(element_bytes(k)));
  return b;
}

void store_bits(ElementKind k, void* p, uint64_t bits) { std::memcpy(p, &bits, static_cast<size_t>(element_bytes(k))); }

double decode_value(ElementKind k, const void* p) {
  Fmt f{};
  if (float_format(k, &f)) return decode_float(load_bits(k, p), f);
  const uint64_t b = load_bits(k, p);
  switch (k) {
    case ElementKind::S8:
      return static_cast<int8_t>(b);
    case ElementKind::U8:
      return static_cast<uint8_t>(b);
    case ElementKind::S32:
      return static_cast<int32_t>(b);
    case ElementKind::S64:
      return static_cast<double>(static_cast<int64_t>(b));
    case ElementKind::U32:
      return static_cast<uint32_t>(b);
    case ElementKind::Bool:
      return b != 0 ? 1 : 0;
    default:
      return static_cast<double>(b);
  }
}

bool float_precision(ElementKind k, int* mantissa_bits, int* min_exponent) {
  Fmt f{};
  if (!float_format(k, &f)) return false;
  *mantissa_bits = f.m, *min_exponent = 1 - f.bias;
  return true;
}

bool is_nan(ElementKind k, const void* p) {
  Fmt f{};
  return float_format(k, &f) && std::isnan(decode_float(load_bits(k, p), f));
}

bool encode_exact(ElementKind k, double v, void* p) {
  Fmt f{};
  if (float_format(k, &f)) {
    uint64_t b = 0;
    if (!encode_float(v, f, &b)) return false;
    store_bits(k, p, b);
    return true;
  }
  if (std::isnan(v) || v != std::trunc(v)) return false;
  // The integer kinds' ranges as doubles (s64's top: the largest double below 2^63).
  struct Range {
    ElementKind kind;
    double lo, hi;
  };
  static constexpr Range kRanges[] = {
      {ElementKind::S8, -128, 127},
      {ElementKind::U8, 0, 255},
      {ElementKind::S32, -2147483648.0, 2147483647.0},
      {ElementKind::U32, 0, 4294967295.0},
      {ElementKind::S64, -9223372036854775808.0, 9223372036854774784.0},
      {ElementKind::Bool, 0, 1},
  };
  const Range* r = entry_of(kRanges, k);
  if (r == nullptr || v < r->lo || v > r->hi) return false;
  const uint64_t b = v < 0 ? static_cast<uint64_t>(static_cast<int64_t>(v)) : static_cast<uint64_t>(v);
  store_bits(k, p, b);
  return true;
}

std::string describe(ElementKind k, const void* p) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.17g (0x%llx)", decode_value(k, p),
                static_cast<unsigned long long>(load_bits(k, p)));
  return buf;
}

std::vector<uint8_t> filled(ElementKind k, int64_t n, uint64_t bits) {
  const int w = element_bytes(k);
  std::vector<uint8_t> v(static_cast<size_t>(n * w));
  for (int64_t i = 0; i < n; ++i) store_bits(k, v.data() + i * w, bits);
  return v;
}

}  // namespace baracuda::test
