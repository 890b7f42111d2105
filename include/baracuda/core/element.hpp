/// \file
/// \brief Element kinds, their C++ storage types, traits and type lists.
///
/// Every tensor element in baracuda has an `ElementKind`. Each kind maps to exactly one C++ storage
/// type through `dtype_traits<T>`, and back through `element_type_t<Kind>`. Type lists (`FloatTypes`,
/// `AllTypes`, ...) drive the compile-time dispatch tables of the op families and the test sweeps.
///
/// Sub-byte kinds (`S4`, `U4`) are stored packed, two values per byte, the **even** logical index in
/// the **low** nibble. Their C++ storage types (`int4x2_t`, `uint4x2_t`) stand for one byte = two
/// elements; tensors of them count logical elements in their shape and must be contiguous.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

namespace baracuda {

/// The element types a tensor may hold.
enum class ElementKind : uint8_t {
  F16,      ///< IEEE binary16 (`__half`)
  Bf16,     ///< bfloat16 (`__nv_bfloat16`)
  F32,      ///< IEEE binary32 (`float`)
  F64,      ///< IEEE binary64 (`double`)
  S8,       ///< int8_t
  U8,       ///< uint8_t
  S32,      ///< int32_t
  S64,      ///< int64_t
  Bool,     ///< one byte, 0 or 1 (`bool`)
  Fp8E4M3,  ///< OCP FP8 E4M3 "fn" (no infinities, max 448; `__nv_fp8_e4m3`)
  Fp8E5M2,  ///< OCP FP8 E5M2 (IEEE-like, max 57344; `__nv_fp8_e5m2`)
  S4,       ///< signed 4-bit, packed pairs, even index in the low nibble (`int4x2_t`)
  U4,       ///< unsigned 4-bit, packed pairs, even index in the low nibble (`uint4x2_t`)
  U32,      ///< uint32_t (indices)
};

/// Number of `ElementKind` values; dispatch tables are indexed by `static_cast<size_t>(kind)`.
inline constexpr size_t kNumElementKinds = 14;

/// One byte holding two signed 4-bit values: element 2i in bits [3:0], element 2i+1 in bits [7:4].
struct int4x2_t {
  uint8_t bits;
};
/// One byte holding two unsigned 4-bit values: element 2i in bits [3:0], element 2i+1 in bits [7:4].
struct uint4x2_t {
  uint8_t bits;
};

/// Lower-case name of a kind ("f16", "bf16", "fp8e4m3", "s4", ...), as the profiler and SKUs print it.
constexpr std::string_view to_string(ElementKind k) {
  switch (k) {
    case ElementKind::F16: return "f16";
    case ElementKind::Bf16: return "bf16";
    case ElementKind::F32: return "f32";
    case ElementKind::F64: return "f64";
    case ElementKind::S8: return "s8";
    case ElementKind::U8: return "u8";
    case ElementKind::S32: return "s32";
    case ElementKind::S64: return "s64";
    case ElementKind::Bool: return "bool";
    case ElementKind::Fp8E4M3: return "fp8e4m3";
    case ElementKind::Fp8E5M2: return "fp8e5m2";
    case ElementKind::S4: return "s4";
    case ElementKind::U4: return "u4";
    case ElementKind::U32: return "u32";
  }
  return "?";
}

/// Parses a kind from its `to_string` name; returns false when the name is unknown.
bool parse_element_kind(std::string_view name, ElementKind* out);

/// Bits one logical element occupies in memory (4 for S4/U4).
constexpr int element_bits(ElementKind k) {
  switch (k) {
    case ElementKind::F16:
    case ElementKind::Bf16: return 16;
    case ElementKind::F32:
    case ElementKind::S32:
    case ElementKind::U32: return 32;
    case ElementKind::F64:
    case ElementKind::S64: return 64;
    case ElementKind::S8:
    case ElementKind::U8:
    case ElementKind::Bool:
    case ElementKind::Fp8E4M3:
    case ElementKind::Fp8E5M2: return 8;
    case ElementKind::S4:
    case ElementKind::U4: return 4;
  }
  return 0;
}

/// Bytes needed to store `numel` logical elements of kind `k` (rounded up for packed kinds).
constexpr int64_t storage_bytes(ElementKind k, int64_t numel) {
  return (numel * element_bits(k) + 7) / 8;
}

constexpr bool is_floating(ElementKind k) {
  return k == ElementKind::F16 || k == ElementKind::Bf16 || k == ElementKind::F32 ||
         k == ElementKind::F64 || k == ElementKind::Fp8E4M3 || k == ElementKind::Fp8E5M2;
}
constexpr bool is_fp8(ElementKind k) {
  return k == ElementKind::Fp8E4M3 || k == ElementKind::Fp8E5M2;
}
constexpr bool is_packed(ElementKind k) { return k == ElementKind::S4 || k == ElementKind::U4; }
constexpr bool is_integral(ElementKind k) { return !is_floating(k) && k != ElementKind::Bool; }

/// Maps a C++ storage type to its kind. Specialised for every storage type; `opmath_t` is the type
/// arithmetic on it is carried out in (f32 for 16- and 8-bit floats, the type itself otherwise).
template <class T>
struct dtype_traits;

#define BARACUDA_DTYPE_TRAITS(T, KIND, OPMATH)                   \
  template <>                                                    \
  struct dtype_traits<T> {                                       \
    static constexpr ElementKind kind = ElementKind::KIND;       \
    using opmath_t = OPMATH;                                     \
    static constexpr int bits = element_bits(ElementKind::KIND); \
  };
BARACUDA_DTYPE_TRAITS(__half, F16, float)
BARACUDA_DTYPE_TRAITS(__nv_bfloat16, Bf16, float)
BARACUDA_DTYPE_TRAITS(float, F32, float)
BARACUDA_DTYPE_TRAITS(double, F64, double)
BARACUDA_DTYPE_TRAITS(int8_t, S8, int32_t)
BARACUDA_DTYPE_TRAITS(uint8_t, U8, int32_t)
BARACUDA_DTYPE_TRAITS(int32_t, S32, int32_t)
BARACUDA_DTYPE_TRAITS(int64_t, S64, int64_t)
BARACUDA_DTYPE_TRAITS(bool, Bool, bool)
BARACUDA_DTYPE_TRAITS(__nv_fp8_e4m3, Fp8E4M3, float)
BARACUDA_DTYPE_TRAITS(__nv_fp8_e5m2, Fp8E5M2, float)
BARACUDA_DTYPE_TRAITS(int4x2_t, S4, int32_t)
BARACUDA_DTYPE_TRAITS(uint4x2_t, U4, int32_t)
BARACUDA_DTYPE_TRAITS(uint32_t, U32, uint32_t)
#undef BARACUDA_DTYPE_TRAITS

template <class T>
concept Element = requires { dtype_traits<std::remove_cv_t<T>>::kind; };

template <class T>
inline constexpr ElementKind kind_of = dtype_traits<std::remove_cv_t<T>>::kind;

/// A compile-time list of element types.
template <class... Ts>
struct type_list {
  static constexpr size_t size = sizeof...(Ts);
};

/// Calls `f.template operator()<T>()` for every T of a type list, in order.
template <class... Ts, class F>
constexpr void for_each_type(type_list<Ts...>, F&& f) {
  (f.template operator()<Ts>(), ...);
}

template <class List, class T>
struct type_list_contains;
template <class... Ts, class T>
struct type_list_contains<type_list<Ts...>, T> : std::bool_constant<(std::is_same_v<Ts, T> || ...)> {};

/// Every kind, in `ElementKind` order.
using AllTypes = type_list<__half, __nv_bfloat16, float, double, int8_t, uint8_t, int32_t, int64_t,
                           bool, __nv_fp8_e4m3, __nv_fp8_e5m2, int4x2_t, uint4x2_t, uint32_t>;
/// Every kind stored in whole bytes (no packed 4-bit).
using ByteTypes = type_list<__half, __nv_bfloat16, float, double, int8_t, uint8_t, int32_t, int64_t,
                            bool, __nv_fp8_e4m3, __nv_fp8_e5m2, uint32_t>;
/// The floating-point types ops compute on (f16, bf16, f32, f64).
using FloatTypes = type_list<__half, __nv_bfloat16, float, double>;
/// The 8-bit floating-point types.
using Fp8Types = type_list<__nv_fp8_e4m3, __nv_fp8_e5m2>;
/// Quantized output element types.
using QuantOutTypes = type_list<int8_t, uint8_t, int4x2_t, uint4x2_t>;

/// The storage type of a kind.
template <ElementKind K>
struct element_type;
#define BARACUDA_ELEMENT_TYPE(KIND, T) \
  template <>                          \
  struct element_type<ElementKind::KIND> { using type = T; };
BARACUDA_ELEMENT_TYPE(F16, __half)
BARACUDA_ELEMENT_TYPE(Bf16, __nv_bfloat16)
BARACUDA_ELEMENT_TYPE(F32, float)
BARACUDA_ELEMENT_TYPE(F64, double)
BARACUDA_ELEMENT_TYPE(S8, int8_t)
BARACUDA_ELEMENT_TYPE(U8, uint8_t)
BARACUDA_ELEMENT_TYPE(S32, int32_t)
BARACUDA_ELEMENT_TYPE(S64, int64_t)
BARACUDA_ELEMENT_TYPE(Bool, bool)
BARACUDA_ELEMENT_TYPE(Fp8E4M3, __nv_fp8_e4m3)
BARACUDA_ELEMENT_TYPE(Fp8E5M2, __nv_fp8_e5m2)
BARACUDA_ELEMENT_TYPE(S4, int4x2_t)
BARACUDA_ELEMENT_TYPE(U4, uint4x2_t)
BARACUDA_ELEMENT_TYPE(U32, uint32_t)
#undef BARACUDA_ELEMENT_TYPE
template <ElementKind K>
using element_type_t = typename element_type<K>::type;

}  // namespace baracuda
