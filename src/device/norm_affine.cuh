/// \file
/// \brief A normalization's last step, `y = v · w + b` rounded once to T, in the three forms its elementwise
/// pass takes: neither w nor b, one of them, both (the norm family and its row kernel, channel_norm).
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include "device/convert.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace norm_affine {

template <class T, class M>
__host__ __device__ __forceinline__ T apply(M v) {
  return convert::from_opmath<T>(v);
}
/// One of w (`is_w`) or b.
template <class T, class M>
__host__ __device__ __forceinline__ T apply(M v, T wb, bool is_w) {
  return convert::from_opmath<T>(is_w ? v * convert::to_opmath(wb) : v + convert::to_opmath(wb));
}
template <class T, class M>
__host__ __device__ __forceinline__ T apply(M v, T w, T b) {
  return convert::from_opmath<T>(v * convert::to_opmath(w) + convert::to_opmath(b));
}

}  // namespace norm_affine
BARACUDA_DEVICE_NAMESPACE_END
