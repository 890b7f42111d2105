// Device code of Fp8ScalingUpdatePlan: TransformerEngine's amax_and_scale_update for one tensor, in one
// block: roll the history in place (chunk by chunk, a barrier between each chunk's reads and writes),
// reduce its maximum with fmaxf, then thread 0 updates scale and scale_inv.
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <cfloat>
#include <cstdint>

#include "device/elementwise.cuh"
#include "ops/fp8/dispatch.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace fp8 {

inline constexpr int kUpdateThreads = 256;

__device__ __forceinline__ float warp_fmax(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

__global__ void scaling_update_kernel(float* history, int64_t stride, int64_t length, float* scale,
                                      float* scale_inv, bool most_recent, float scaled_max) {
  const int64_t tid = threadIdx.x;
  const float last = history[0];  // the current step's amax; read by all before slot 0 is rewritten
  float m = 0.0f;                 // fmaxf from 0: NaN entries are skipped, as in TransformerEngine
  for (int64_t off = 0; off < length; off += blockDim.x) {
    const int64_t i = off + tid;
    float a = 0.0f;
    if (i < length) {
      a = i < length - 1 ? history[(i + 1) * stride] : last;
      m = fmaxf(m, a);
    }
    __syncthreads();  // every read of this chunk happens before its writes (the roll is in place)
    if (i < length) history[i * stride] = i > 0 ? a : 0.0f;
  }

  BARACUDA_SHARED(float, warp_max, [32]);
  m = warp_fmax(m);
  if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (unsigned w = 1; w < (blockDim.x + 31) / 32; ++w) m = fmaxf(m, warp_max[w]);
    const float amax = most_recent ? last : m;
    float s = *scale;
    if (amax > 0.0f && amax <= FLT_MAX) s = scaled_max / amax;  // finite and positive, else keep
    if (s > FLT_MAX || s < -FLT_MAX) s = FLT_MAX;              // an infinite scale becomes FLT_MAX
    *scale = s;
    *scale_inv = 1.0f / s;
  }
}

inline Status scaling_update_launch(const ::baracuda::detail::ExecContext& ctx,
                                    const ::baracuda::detail::Fp8ScalingUpdateLaunch& a) {
  BARACUDA_LAUNCH(dim3(1), dim3(kUpdateThreads), 0, ctx.stream, scaling_update_kernel)
  (static_cast<float*>(a.amax_history.data), a.amax_history.stride[0], a.amax_history.shape.dims[0],
   static_cast<float*>(a.scale.data), static_cast<float*>(a.scale_inv.data),
   a.algo == AmaxComputeAlgo::MostRecent, a.scaled_max);
  return elementwise::launch_status("Fp8ScalingUpdatePlan");
}

}  // namespace fp8
BARACUDA_DEVICE_NAMESPACE_END
