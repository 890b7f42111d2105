// The cast family's host reference. Every source value is first made exact (a long double holds every
// f64 and every int64), then rounded once by reference_formats.hpp or truncated/wrapped by the integer
// rules below. It shares no code with device/convert.cuh.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "device/host_loop.hpp"
#include "ops/cast/dispatch.hpp"
#include "core/reference_formats.hpp"

namespace baracuda::reference {
namespace {

/// The binary format of a floating storage type; nullptr for integers and bool.
template <class T>
constexpr const BinaryFormat* format_of() {
  constexpr ElementKind k = kind_of<T>;
  if constexpr (k == ElementKind::F16)
    return &kFormatF16;
  else if constexpr (k == ElementKind::Bf16)
    return &kFormatBf16;
  else if constexpr (k == ElementKind::F32)
    return &kFormatF32;
  else if constexpr (k == ElementKind::F64)
    return &kFormatF64;
  else if constexpr (k == ElementKind::Fp8E4M3)
    return &kFormatE4M3;
  else if constexpr (k == ElementKind::Fp8E5M2)
    return &kFormatE5M2;
  else
    return nullptr;
}

/// Whether T is a floating kind (has a BinaryFormat).
template <class T>
constexpr bool has_format_v = is_floating(kind_of<T>);

template <class T>
uint64_t bits_of(const T& x) {
  uint64_t b = 0;
  std::memcpy(&b, &x, sizeof(T));  // little-endian host
  return b;
}

template <class T>
T from_bits(uint64_t b) {
  T x;
  std::memcpy(static_cast<void*>(&x), &b, sizeof(T));
  return x;
}

/// The exact value of x.
template <class T>
long double exact_value(const T& x) {
  if constexpr (has_format_v<T>)
    return decode(bits_of(x), *format_of<T>());
  else if constexpr (std::is_same_v<T, bool>)
    return x ? 1.0L : 0.0L;
  else
    return static_cast<long double>(x);
}

/// Integer target I from an exact float value: truncate toward zero, clamp to I's range, NaN → 0.
template <class I>
I int_from_float_value(long double v) {
  if (std::isnan(v)) return 0;
  const long double t = std::trunc(v);
  const auto lo = static_cast<long double>(std::numeric_limits<I>::min());
  const auto hi = static_cast<long double>(std::numeric_limits<I>::max());  // exact in 64 bits
  if (t <= lo) return std::numeric_limits<I>::min();
  if (t >= hi) return std::numeric_limits<I>::max();
  return static_cast<I>(t);
}

/// Integer target I from an integer value: keep the low bits (two's-complement wrap-around).
template <class I>
I int_from_int_value(int64_t v) {
  constexpr int bits = static_cast<int>(sizeof(I) * 8);
  const uint64_t u = static_cast<uint64_t>(v);
  const uint64_t low = bits == 64 ? u : u & ((uint64_t{1} << bits) - 1);
  if constexpr (std::is_signed_v<I>) {
    const bool negative = bits < 64 && (low >> (bits - 1)) != 0;
    const int64_t value =
        negative ? static_cast<int64_t>(low) - static_cast<int64_t>(uint64_t{1} << bits) : static_cast<int64_t>(low);
    return static_cast<I>(value);
  } else {
    return static_cast<I>(low);
  }
}

template <class TIn, class TOut>
TOut convert_reference(const TIn& x, bool saturate_fp8) {
  if constexpr (std::is_same_v<TIn, TOut>) {
    return x;  // a copy: bits unchanged
  } else {
    const long double v = exact_value(x);
    if constexpr (has_format_v<TOut>) {
      const bool saturate = saturate_fp8 && is_fp8(kind_of<TOut>);
      return from_bits<TOut>(encode(v, *format_of<TOut>(), saturate));
    } else if constexpr (std::is_same_v<TOut, bool>) {
      return v != 0;  // NaN != 0
    } else if constexpr (has_format_v<TIn>) {
      return int_from_float_value<TOut>(v);
    } else {
      return int_from_int_value<TOut>(static_cast<int64_t>(v));
    }
  }
}

template <class TIn, class TOut>
Status host_cast(const detail::ExecContext&, const detail::CastLaunch& a) {
  const auto* in = static_cast<const TIn*>(a.in.data);
  auto* out = static_cast<TOut*>(a.out.data);
  detail::for_each_strided<2>(a.out.shape, {a.out.stride.data(), a.in.stride.data()},
                              [&](const std::array<int64_t, 2>& off) {
                                const TIn x = in[off[1]];
                                out[off[0]] = convert_reference<TIn, TOut>(x, a.saturate_fp8);
                              });
  return {};
}

}  // namespace

const detail::CastTable& cast_table() {
  static constexpr detail::CastTable table = [] {
    detail::CastTable t{};
    constexpr auto entry = []<class TIn, class TOut>(std::type_identity<TIn>, std::type_identity<TOut>) {
      return &host_cast<TIn, TOut>;
    };
#define BARACUDA_CAST_OP(name, in_types, out_types, tolerance, doc) \
  detail::add_kind_pair_fns(t, in_types{}, out_types{}, entry);
#include "ops/cast/cast.def"
#undef BARACUDA_CAST_OP
    return t;
  }();
  return table;
}

}  // namespace baracuda::reference
