// Device helper of the fp8 family: a block-wide maximum of int32 values, published with one atomicMax.
// The values are f32 bit patterns of non-negative floats (or the quiet NaN), which order like integers,
// so the result does not depend on the order blocks finish: the amax is deterministic.
#pragma once

#include "sim/compat.cuh"

#include <cstdint>

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace fp8 {

/// Every thread of the block must call this (it has barriers); blockDim.x a multiple of 32, ≤ 1024.
/// `out` receives max(*out, the block's values) as signed integers.
__device__ __forceinline__ void block_max_to_global(int32_t v, int32_t* out) {
  BARACUDA_SHARED(int32_t, warp_max, [32]);
  for (int o = 16; o > 0; o >>= 1) {
    const int32_t other = __shfl_xor_sync(0xffffffffu, v, o);
    v = other > v ? other : v;
  }
  const unsigned lane = threadIdx.x % 32u, warp = threadIdx.x / 32u;
  if (lane == 0) warp_max[warp] = v;
  __syncthreads();
  if (warp == 0) {
    const unsigned warps = (blockDim.x + 31u) / 32u;
    v = lane < warps ? warp_max[lane] : 0;  // 0 (= +0.0f) is the identity of a max over |x|
    for (int o = 16; o > 0; o >>= 1) {
      const int32_t other = __shfl_xor_sync(0xffffffffu, v, o);
      v = other > v ? other : v;
    }
    if (lane == 0) atomicMax(out, v);
  }
}

}  // namespace fp8
BARACUDA_DEVICE_NAMESPACE_END
