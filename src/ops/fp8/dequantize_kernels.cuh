// Device code of Fp8DequantizePlan: y = x · scale_inv as a unary functor on the elementwise engine (the
// functor reads scale_inv from device memory, so the plan stays graph-capturable).
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <type_traits>

#include "device/convert.cuh"
#include "device/elementwise.cuh"
#include "ops/fp8/dispatch.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace fp8 {

template <class TIn, class TOut>
struct DequantizeOp {
  const float* scale_inv;
  __host__ __device__ TOut operator()(TIn x) const {
    const float v = convert::to_float(x);  // exact
    if constexpr (std::is_same_v<TOut, double>)
      return static_cast<double>(v) * static_cast<double>(*scale_inv);  // exact: 4 × 24 significant bits
    else
      return convert::from_float<TOut>(v * *scale_inv, false);
  }
};

template <class TIn, class TOut>
Status dequantize_launch(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::Fp8DequantizeLaunch& a) {
  const DequantizeOp<TIn, TOut> op{static_cast<const float*>(a.scale_inv.data)};
  return elementwise::launch_elementwise<DequantizeOp<TIn, TOut>, TOut, TIn>("Fp8DequantizePlan", ctx, op, a.y, a.x);
}

}  // namespace fp8
BARACUDA_DEVICE_NAMESPACE_END
