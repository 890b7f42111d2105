/// \file
/// \brief libm in the opmath type M, once for every family: `pmath::f(x)` calls the f-suffixed function for
/// float and the double one for double — never a fast-math intrinsic, never a double computation rounded to
/// float.
#pragma once

#include "sim/compat.cuh"

#include <cmath>
#include <type_traits>

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace pmath {

#define BARACUDA_PRECISE_MATH1(fn)                               \
  template <class M>                                             \
  __host__ __device__ __forceinline__ M fn(M x) {                \
    if constexpr (std::is_same_v<M, float>) return ::fn##f(x);   \
    else return ::fn(x);                                         \
  }
#define BARACUDA_PRECISE_MATH2(fn)                               \
  template <class M>                                             \
  __host__ __device__ __forceinline__ M fn(M x, M y) {           \
    if constexpr (std::is_same_v<M, float>) return ::fn##f(x, y); \
    else return ::fn(x, y);                                      \
  }
BARACUDA_PRECISE_MATH1(fabs)
BARACUDA_PRECISE_MATH1(sqrt)
BARACUDA_PRECISE_MATH1(rsqrt)
BARACUDA_PRECISE_MATH1(cbrt)
BARACUDA_PRECISE_MATH1(exp)
BARACUDA_PRECISE_MATH1(exp2)
BARACUDA_PRECISE_MATH1(expm1)
BARACUDA_PRECISE_MATH1(log)
BARACUDA_PRECISE_MATH1(log2)
BARACUDA_PRECISE_MATH1(log10)
BARACUDA_PRECISE_MATH1(log1p)
BARACUDA_PRECISE_MATH1(sin)
BARACUDA_PRECISE_MATH1(cos)
BARACUDA_PRECISE_MATH1(tan)
BARACUDA_PRECISE_MATH1(asin)
BARACUDA_PRECISE_MATH1(acos)
BARACUDA_PRECISE_MATH1(atan)
BARACUDA_PRECISE_MATH1(sinh)
BARACUDA_PRECISE_MATH1(cosh)
BARACUDA_PRECISE_MATH1(tanh)
BARACUDA_PRECISE_MATH1(asinh)
BARACUDA_PRECISE_MATH1(acosh)
BARACUDA_PRECISE_MATH1(atanh)
BARACUDA_PRECISE_MATH1(erf)
BARACUDA_PRECISE_MATH1(erfc)
BARACUDA_PRECISE_MATH1(lgamma)
BARACUDA_PRECISE_MATH1(floor)
BARACUDA_PRECISE_MATH1(ceil)
BARACUDA_PRECISE_MATH1(rint)
BARACUDA_PRECISE_MATH1(trunc)
BARACUDA_PRECISE_MATH1(sinpi)
BARACUDA_PRECISE_MATH1(cospi)
BARACUDA_PRECISE_MATH2(fmod)
BARACUDA_PRECISE_MATH2(pow)
BARACUDA_PRECISE_MATH2(atan2)
BARACUDA_PRECISE_MATH2(hypot)
BARACUDA_PRECISE_MATH2(copysign)
#undef BARACUDA_PRECISE_MATH1
#undef BARACUDA_PRECISE_MATH2

}  // namespace pmath
BARACUDA_DEVICE_NAMESPACE_END
