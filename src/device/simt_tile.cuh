// Device helper: the 64×64 CUDA-core GEMM tile the dense and the grouped GEMM's CUDA-core kernels share
// (src/ops/gemm/simt_kernels.cuh, src/ops/grouped_gemm/simt_kernels.cuh): 256 threads, K in 16-deep slices
// staged in shared memory as as[k][m] and bs[k][n] (one column of padding), each thread owning the 4×4 outputs
// (ty + 16i, tx + 16j). The kernels fill the slices their own way (strides, groups); the product is this one.
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <type_traits>

#include "device/elementwise.cuh"  // BARACUDA_UNROLL

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace simt_tile {

inline constexpr int kBM = 64, kBN = 64, kBK = 16, kThreads = 256;

/// a·b + c rounded once, in float or double.
template <class M>
__device__ __forceinline__ M fma_rn(M a, M b, M c) {
  if constexpr (std::is_same_v<M, float>)
    return __fmaf_rn(a, b, c);
  else
    return __fma_rn(a, b, c);
}

/// One staged slice: acc[i][j] += as[k][ty + 16i]·bs[k][tx + 16j] for k = 0 … kBK − 1 in order, one fma each
/// (zeros past the edges add nothing). `As` and `Bs` are the shared arrays [kBK][kBM + 1] and [kBK][kBN + 1].
template <class M, class As, class Bs>
__device__ __forceinline__ void slice_fma(M (&acc)[4][4], const As& as, const Bs& bs, int tx, int ty) {
  BARACUDA_UNROLL
  for (int kk = 0; kk < kBK; ++kk) {
    M av[4], bv[4];
    BARACUDA_UNROLL
    for (int i = 0; i < 4; ++i) av[i] = as[kk][ty + 16 * i];
    BARACUDA_UNROLL
    for (int j = 0; j < 4; ++j) bv[j] = bs[kk][tx + 16 * j];
    BARACUDA_UNROLL
    for (int i = 0; i < 4; ++i) {
      BARACUDA_UNROLL
      for (int j = 0; j < 4; ++j) acc[i][j] = fma_rn(av[i], bv[j], acc[i][j]);
    }
  }
}

}  // namespace simt_tile
BARACUDA_DEVICE_NAMESPACE_END
