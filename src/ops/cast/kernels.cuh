// Device code of the cast family: one unary functor (device/convert.cuh) on the elementwise engine, one
// instantiation per (input, output) pair of the catalog; same-kind copies share one per element width.
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <cstdint>
#include <type_traits>

#include "device/convert.cuh"
#include "device/elementwise.cuh"
#include "ops/cast/dispatch.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace cast {

template <class TIn, class TOut>
struct CastOp {
  bool saturate_fp8;
  __host__ __device__ TOut operator()(TIn x) const { return convert::cast<TOut>(x, saturate_fp8); }
};

template <size_t Bytes>
using storage_uint_t =
    std::conditional_t<Bytes == 1, uint8_t,
                       std::conditional_t<Bytes == 2, uint16_t, std::conditional_t<Bytes == 4, uint32_t, uint64_t>>>;

template <class TIn, class TOut>
Status cast_launch(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::CastLaunch& a) {
  if constexpr (std::is_same_v<TIn, TOut>) {
    using U = storage_uint_t<sizeof(TIn)>;  // a copy moves bits
    return elementwise::launch_elementwise<CastOp<U, U>, U, U>("CastPlan", ctx, CastOp<U, U>{false}, a.out, a.in);
  } else {
    return elementwise::launch_elementwise<CastOp<TIn, TOut>, TOut, TIn>(
        "CastPlan", ctx, CastOp<TIn, TOut>{a.saturate_fp8}, a.out, a.in);
  }
}

/// The device's table, from the catalog.
constexpr ::baracuda::detail::CastTable make_cast_table() {
  ::baracuda::detail::CastTable t{};
  constexpr auto entry = []<class TIn, class TOut>(std::type_identity<TIn>, std::type_identity<TOut>) {
    return &cast_launch<TIn, TOut>;
  };
#define BARACUDA_CAST_OP(name, in_types, out_types, tolerance, doc) \
  ::baracuda::detail::add_kind_pair_fns(t, in_types{}, out_types{}, entry);
#include "ops/cast/cast.def"
#undef BARACUDA_CAST_OP
  return t;
}

}  // namespace cast
BARACUDA_DEVICE_NAMESPACE_END
