// The grouped_gemm family's CUDA-core kernel, the f32 → f32 path (exact f32 arithmetic, no TF32):
// `y[r, :] = x[r, :]·W[e]ᵀ (+ bias[e, :])` for the rows r of group e (grouped_gemm.hpp).
//
// The tile scheduler is the tensor-core kernel's (kernels.cuh, gg_find_tile: ceil(total_M / 64) + E row tiles ×
// the N tiles, each block's group found by a warp scan of the device offsets, blocks past the last group's tiles
// exit). The tile is the dense GEMM's CUDA-core one (src/device/simt_tile.cuh): 256 threads, 64×64
// outputs, K in 16-deep slices through shared memory, consecutive threads along K (x's and W's unit-stride
// dimension), rows past the group and columns past N zeros; each thread owns 4×4 outputs and accumulates each
// with one fma per k, k ascending, then adds the bias once: a fixed order, the same bits on every run.
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <cstdint>
#include <type_traits>

#include "baracuda/core/element.hpp"
#include "baracuda/core/status.hpp"
#include "core/exec_context.hpp"
#include "device/elementwise.cuh"  // BARACUDA_UNROLL
#include "device/simt_tile.cuh"
#include "ops/grouped_gemm/kernels.cuh"
#include "ops/grouped_gemm/tables.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace grouped_gemm {

inline constexpr int kSimtBM = simt_tile::kBM, kSimtBN = simt_tile::kBN, kSimtBK = simt_tile::kBK,
                     kSimtThreads = simt_tile::kThreads;

template <class T>
__global__ void __launch_bounds__(kSimtThreads) grouped_gemm_simt_kernel(GgParams p) {
  BARACUDA_SHARED(float, as, [kSimtBK][kSimtBM + 1]);  // as[k][m]
  BARACUDA_SHARED(float, bs, [kSimtBK][kSimtBN + 1]);  // bs[k][n]
  const int tid = static_cast<int>(threadIdx.x);
  int group = 0, row0 = 0, row_end = 0;
  if (!gg_find_tile<kSimtBM>(p, static_cast<int>(blockIdx.x), tid & 31, group, row0, row_end)) return;  // uniform
  const int tx = tid % 16, ty = tid / 16;
  const int n0 = static_cast<int>(blockIdx.y) * kSimtBN;
  const int rows = min(kSimtBM, row_end - row0);
  const T* x = static_cast<const T*>(p.x) + static_cast<int64_t>(row0) * p.x_row;
  const T* w = static_cast<const T*>(p.w) + static_cast<int64_t>(group) * p.w_group;

  float acc[4][4];
  BARACUDA_UNROLL
  for (int i = 0; i < 4; ++i) {
    BARACUDA_UNROLL
    for (int j = 0; j < 4; ++j) acc[i][j] = 0.0f;
  }
  for (int k0 = 0; k0 < p.k; k0 += kSimtBK) {
    BARACUDA_UNROLL
    for (int i = 0; i < kSimtBM * kSimtBK / kSimtThreads; ++i) {
      const int e = tid + i * kSimtThreads;
      const int r = e / kSimtBK, c = e % kSimtBK, gk = k0 + c;
      as[c][r] = r < rows && gk < p.k ? x[static_cast<int64_t>(r) * p.x_row + gk] : 0.0f;
      const int gn = n0 + r;
      bs[c][r] = gn < p.n && gk < p.k ? w[static_cast<int64_t>(gn) * p.w_row + gk] : 0.0f;
    }
    __syncthreads();
    simt_tile::slice_fma(acc, as, bs, tx, ty);
    __syncthreads();
  }

  // y overlaps no input (the plan's rule).
  T* __restrict__ y = static_cast<T*>(p.y) + static_cast<int64_t>(row0) * p.y_row;
  const T* __restrict__ bias =
      p.bias != nullptr ? static_cast<const T*>(p.bias) + static_cast<int64_t>(group) * p.bias_group : nullptr;
  BARACUDA_UNROLL
  for (int i = 0; i < 4; ++i) {
    const int r = ty + 16 * i;
    if (r >= rows) break;
    BARACUDA_UNROLL
    for (int j = 0; j < 4; ++j) {
      const int n = n0 + tx + 16 * j;
      if (n >= p.n) break;
      float v = acc[i][j];
      if (bias != nullptr) v = __fadd_rn(v, bias[n]);
      y[static_cast<int64_t>(r) * p.y_row + n] = v;
    }
  }
}

/// The grouped GEMM of `l` (tables.hpp) for f32 x, w, bias and y on CUDA cores.
template <class TX, class TY>
Status simt(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::GroupedGemmLaunch& l) {
  static_assert(std::is_same_v<TX, float> && std::is_same_v<TY, float>, "the CUDA-core path is f32 -> f32");
  if (l.xw != ElementKind::F32 || l.y_kind != ElementKind::F32)
    return Error::internal("GroupedGemmPlan: the CUDA-core kernel was called for other kinds than its own");
  if (l.total_m == 0 || l.n == 0) return {};
  const GgParams p = gg_params(l);
  const int64_t row_tiles = (l.total_m + kSimtBM - 1) / kSimtBM + l.groups;
  const int64_t n_tiles = (l.n + kSimtBN - 1) / kSimtBN;
  if (n_tiles > 65535) return Error::unsupported("GroupedGemmPlan: N needs more than 65535 tiles");
  BARACUDA_LAUNCH(dim3(static_cast<unsigned>(row_tiles), static_cast<unsigned>(n_tiles)), dim3(kSimtThreads), 0,
                  ctx.stream, grouped_gemm_simt_kernel<float>)
  (p);
  const auto e = launch::take_last_error();
  if (e.failed) return Error::device("GroupedGemmPlan: CUDA-core kernel launch failed: " + e.message, e.code);
  return {};
}

}  // namespace grouped_gemm
BARACUDA_DEVICE_NAMESPACE_END
