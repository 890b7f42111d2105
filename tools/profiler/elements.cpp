#include "elements.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace baracuda::profiler {
namespace {

template <class T>
T load(const uint8_t* base, int64_t index) {
  T v;
  std::memcpy(&v, base + index * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return v;
}
template <class T>
void store(uint8_t* base, int64_t index, T v) {
  std::memcpy(base + index * static_cast<int64_t>(sizeof(T)), &v, sizeof(T));
}
int nibble(const uint8_t* base, int64_t index) { return (base[index / 2] >> (4 * (index % 2))) & 0xF; }
void set_nibble(uint8_t* base, int64_t index, int v) {
  uint8_t& b = base[index / 2];
  int shift = 4 * static_cast<int>(index % 2);
  b = static_cast<uint8_t>((b & ~(0xF << shift)) | ((v & 0xF) << shift));
}

}  // namespace

double load_element(ElementKind kind, const uint8_t* base, int64_t i) {
  switch (kind) {
    case ElementKind::F16: return __half2float(load<__half>(base, i));
    case ElementKind::Bf16: return __bfloat162float(load<__nv_bfloat16>(base, i));
    case ElementKind::F32: return load<float>(base, i);
    case ElementKind::F64: return load<double>(base, i);
    case ElementKind::S8: return load<int8_t>(base, i);
    case ElementKind::U8: return load<uint8_t>(base, i);
    case ElementKind::S32: return load<int32_t>(base, i);
    case ElementKind::S64: return static_cast<double>(load<int64_t>(base, i));
    case ElementKind::Bool: return load<uint8_t>(base, i) != 0 ? 1.0 : 0.0;
    case ElementKind::Fp8E4M3: return static_cast<float>(load<__nv_fp8_e4m3>(base, i));
    case ElementKind::Fp8E5M2: return static_cast<float>(load<__nv_fp8_e5m2>(base, i));
    case ElementKind::S4: {
      int v = nibble(base, i);
      return v >= 8 ? v - 16 : v;
    }
    case ElementKind::U4: return nibble(base, i);
    case ElementKind::U32: return load<uint32_t>(base, i);
  }
  return 0;
}

void store_element(ElementKind kind, uint8_t* base, int64_t i, double v) {
  if (is_integral(kind)) {  // truncated and saturated: a range meant for another kind must not overflow
    const double hi = kind == ElementKind::S64 ? 0x1.fffffffffffffp+62 : max_finite(kind);  // below 2^63
    v = std::isnan(v) ? 0.0 : std::clamp(std::trunc(v), min_finite(kind), hi);
  }
  switch (kind) {
    case ElementKind::F16: store(base, i, __float2half_rn(static_cast<float>(v))); break;
    case ElementKind::Bf16: store(base, i, __float2bfloat16_rn(static_cast<float>(v))); break;
    case ElementKind::F32: store(base, i, static_cast<float>(v)); break;
    case ElementKind::F64: store(base, i, v); break;
    case ElementKind::S8: store(base, i, static_cast<int8_t>(v)); break;
    case ElementKind::U8: store(base, i, static_cast<uint8_t>(v)); break;
    case ElementKind::S32: store(base, i, static_cast<int32_t>(v)); break;
    case ElementKind::S64: store(base, i, static_cast<int64_t>(v)); break;
    case ElementKind::Bool: store(base, i, static_cast<uint8_t>(v != 0 ? 1 : 0)); break;
    case ElementKind::Fp8E4M3: store(base, i, __nv_fp8_e4m3(static_cast<float>(v))); break;
    case ElementKind::Fp8E5M2: store(base, i, __nv_fp8_e5m2(static_cast<float>(v))); break;
    case ElementKind::S4:
    case ElementKind::U4: set_nibble(base, i, static_cast<int>(v)); break;
    case ElementKind::U32: store(base, i, static_cast<uint32_t>(v)); break;
  }
}

uint64_t element_bits_at(ElementKind kind, const uint8_t* base, int64_t i) {
  if (is_packed(kind)) return static_cast<uint64_t>(nibble(base, i));
  const int64_t bytes = element_bits(kind) / 8;
  uint64_t bits = 0;
  std::memcpy(&bits, base + i * bytes, static_cast<size_t>(bytes));  // little-endian host
  return bits;
}

bool is_nan_at(ElementKind kind, const uint8_t* base, int64_t i) {
  return is_floating(kind) && std::isnan(load_element(kind, base, i));
}

double max_finite(ElementKind k) {
  switch (k) {
    case ElementKind::F16: return 65504.0;
    case ElementKind::Bf16: return 3.3895313892515355e38;
    case ElementKind::F32: return std::numeric_limits<float>::max();
    case ElementKind::F64: return std::numeric_limits<double>::max();
    case ElementKind::S8: return 127;
    case ElementKind::U8: return 255;
    case ElementKind::S32: return 2147483647.0;
    case ElementKind::S64: return 9.2233720368547758e18;
    case ElementKind::Bool: return 1;
    case ElementKind::Fp8E4M3: return 448;
    case ElementKind::Fp8E5M2: return 57344;
    case ElementKind::S4: return 7;
    case ElementKind::U4: return 15;
    case ElementKind::U32: return 4294967295.0;
  }
  return 0;
}

double min_finite(ElementKind k) {
  if (is_unsigned(k)) return 0;
  switch (k) {
    case ElementKind::S8: return -128;
    case ElementKind::S32: return -2147483648.0;
    case ElementKind::S64: return -9.2233720368547758e18;
    case ElementKind::S4: return -8;
    default: return -max_finite(k);
  }
}

}  // namespace baracuda::profiler
