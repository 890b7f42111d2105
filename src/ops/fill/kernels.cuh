// Device code of the fill family: a nullary functor on the elementwise engine. A fill writes a bit
// pattern, so kinds of equal width share one instantiation (f16, bf16 → 16-bit; S4/U4 → bytes).
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <cstdint>
#include <type_traits>

#include "device/elementwise.cuh"
#include "ops/fill/dispatch.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace fill {

template <class U>
struct FillOp {
  U value;
  __host__ __device__ U operator()() const { return value; }
};

template <size_t Bytes>
using storage_uint_t =
    std::conditional_t<Bytes == 1, uint8_t,
                       std::conditional_t<Bytes == 2, uint16_t, std::conditional_t<Bytes == 4, uint32_t, uint64_t>>>;

inline Status fill_bytes(const ::baracuda::detail::ExecContext& ctx, void* data, int64_t count, uint8_t value) {
  const DynTensor bytes = DynTensor::dense(data, ElementKind::U8, Shape{count});
  return elementwise::launch_elementwise<FillOp<uint8_t>, uint8_t>("FillPlan", ctx, FillOp<uint8_t>{value}, bytes);
}

template <class T>
Status fill_launch(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::FillLaunch& a) {
  if constexpr (is_packed(kind_of<T>)) {
    // Contiguous packed pairs: whole bytes, then (odd count) the last byte with a zero high nibble.
    const int64_t n = a.out.numel();
    BARACUDA_TRY(fill_bytes(ctx, a.out.data, n / 2, static_cast<uint8_t>(a.bits)));
    if (n % 2 == 0) return {};
    return fill_bytes(ctx, static_cast<uint8_t*>(a.out.data) + n / 2, 1, static_cast<uint8_t>(a.bits & 0x0F));
  } else {
    using U = storage_uint_t<sizeof(T)>;
    return elementwise::launch_elementwise<FillOp<U>, U>("FillPlan", ctx, FillOp<U>{static_cast<U>(a.bits)}, a.out);
  }
}

}  // namespace fill
BARACUDA_DEVICE_NAMESPACE_END
