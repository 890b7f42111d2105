// Device code of the affine family: `y = fma(α, x, β)` in opmath as a unary functor on the elementwise engine.
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <type_traits>

#include "device/convert.cuh"
#include "device/elementwise.cuh"
#include "ops/affine/dispatch.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace affine {

template <class T>
struct AffineOp {
  using opmath = convert::opmath_t<T>;
  opmath alpha;
  opmath beta;
  __host__ __device__ T operator()(T x) const {
    const opmath v = convert::to_opmath(x);
    if constexpr (std::is_same_v<opmath, double>)
      return convert::from_opmath<T>(fma(alpha, v, beta));
    else
      return convert::from_opmath<T>(fmaf(alpha, v, beta));
  }
};

template <class T>
Status affine_launch(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::AffineLaunch& a) {
  using opmath = convert::opmath_t<T>;
  const AffineOp<T> op{static_cast<opmath>(a.alpha), static_cast<opmath>(a.beta)};  // α, β rounded once
  return elementwise::launch_elementwise<AffineOp<T>, T, T>("AffinePlan", ctx, op, a.out, a.in);
}

}  // namespace affine
BARACUDA_DEVICE_NAMESPACE_END
