// The gemm family's bespoke CUDA-core kernel (every kind combination of gemm.hpp; the f32 one is the exact-f32
// path, the f64 one the f64 path): `D = act(α·op(A)·op(B) + β·C + bias)` per batch, with the optional
// pre-activation `aux` and `bias_grad` (src/ops/gemm/launch.hpp, the contract).
//
// A block of 256 threads computes a 64×64 tile of one batch's D (grid: x the tiles of the batch, y the
// batches). K is streamed in 16-deep slices: the block copies the slice of op(A) and of op(B) into shared
// memory, converted to the opmath type M (exact), through the operands' runtime strides, so one
// instantiation per kind pair serves every layout and leading dimension; consecutive threads take
// consecutive elements along whichever dimension has unit stride (coalesced on a GPU). Elements past the
// M/N/K edges are zeros. Each thread owns 4×4 outputs (rows ty + 16·i, columns tx + 16·j) and accumulates
// each with one fma per k, k ascending: a fixed order, so the same bits on every run, and on sim and cuda.
//
// The epilogue (gemm.hpp's steps 1-5, each an explicitly rounded operation so that nvcc contracts nothing):
// v = α·acc, v = fma(β, c, v) when C is given, v = v + bias[n], aux = round(v), d = round(act(v)); the f32
// activations are int_gemm's (the library's linear epilogues), the f64 ones device/activation_math.cuh's.
// bias_grad[m] = Σ_k op(A)[m, k] runs in a second kernel, one warp per row: lane l sums k = l, l + 32, …
// ascending, then a butterfly over the lanes (every lane ends with the same bits). No atomics.
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <cstdint>
#include <string>
#include <type_traits>

#include "baracuda/core/element.hpp"
#include "baracuda/core/status.hpp"
#include "core/exec_context.hpp"
#include "device/activation_math.cuh"
#include "device/convert.cuh"
#include "device/elementwise.cuh"  // BARACUDA_UNROLL
#include "device/simt_tile.cuh"
#include "ops/gemm/launch.hpp"
#include "ops/int_gemm/epilogue.cuh"  // activate (f32)

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace gemm {

inline constexpr int kSimtBM = simt_tile::kBM, kSimtBN = simt_tile::kBN, kSimtBK = simt_tile::kBK,
                     kSimtThreads = simt_tile::kThreads;

/// The SIMT kernel's parameters (M: the opmath type). Strides in elements.
template <class M>
struct SimtParams {
  const void* a = nullptr;
  const void* b = nullptr;
  const void* c = nullptr;     // nullptr: β·C is not added
  const void* bias = nullptr;  // nullptr: no bias
  void* d = nullptr;
  void* aux = nullptr;  // nullptr: no aux
  int64_t a_batch = 0, a_row = 0, a_col = 0, b_batch = 0, b_row = 0, b_col = 0;
  int64_t c_batch = 0, c_row = 0, d_batch = 0, d_row = 0, aux_batch = 0, aux_row = 0, bias_stride = 0;
  int64_t m = 0, n = 0, k = 0;
  int64_t tiles_n = 0;  // ceil(N / 64)
  M alpha = 1, beta = 0;
  int activation = 0;  // LinearActivation
};

using simt_tile::fma_rn;
template <class M>
__device__ __forceinline__ M mul_rn(M a, M b) {
  if constexpr (std::is_same_v<M, float>)
    return __fmul_rn(a, b);
  else
    return __dmul_rn(a, b);
}
template <class M>
__device__ __forceinline__ M add_rn(M a, M b) {
  if constexpr (std::is_same_v<M, float>)
    return __fadd_rn(a, b);
  else
    return __dadd_rn(a, b);
}

/// Step 5's function (LinearActivation's order: none, relu, silu, gelu_erf, gelu_tanh).
template <class M>
__device__ __forceinline__ M simt_activate(int act, M v) {
  if constexpr (std::is_same_v<M, float>) {
    return int_gemm::activate(act, v);
  } else {
    switch (act) {
      case 1:
        return activation::relu(v);
      case 2:
        return activation::Silu::value(v);
      case 3:
        return activation::GeluErf::value(v);
      case 4:
        return activation::GeluTanh::value(v);
      default:
        return v;
    }
  }
}

template <class TAB, class TCD>
__global__ void __launch_bounds__(kSimtThreads) gemm_simt_kernel(SimtParams<convert::opmath_t<TCD>> p) {
  using M = convert::opmath_t<TCD>;
  BARACUDA_SHARED(M, as, [kSimtBK][kSimtBM + 1]);  // as[k][m]
  BARACUDA_SHARED(M, bs, [kSimtBK][kSimtBN + 1]);  // bs[k][n]
  const int tid = static_cast<int>(threadIdx.x);
  const int tx = tid % 16, ty = tid / 16;
  const int64_t tile = blockIdx.x;
  const int64_t m0 = (tile / p.tiles_n) * kSimtBM, n0 = (tile % p.tiles_n) * kSimtBN;
  const int64_t batch = blockIdx.y;
  const TAB* A = static_cast<const TAB*>(p.a) + batch * p.a_batch;
  const TAB* B = static_cast<const TAB*>(p.b) + batch * p.b_batch;

  M acc[4][4];
  BARACUDA_UNROLL
  for (int i = 0; i < 4; ++i) {
    BARACUDA_UNROLL
    for (int j = 0; j < 4; ++j) acc[i][j] = M(0);
  }
  for (int64_t k0 = 0; k0 < p.k; k0 += kSimtBK) {
    BARACUDA_UNROLL
    for (int i = 0; i < kSimtBM * kSimtBK / kSimtThreads; ++i) {
      const int e = tid + i * kSimtThreads;
      const bool k_fast = p.a_col == 1;  // consecutive threads along the unit-stride dimension
      const int r = k_fast ? e / kSimtBK : e % kSimtBM, c = k_fast ? e % kSimtBK : e / kSimtBM;
      const int64_t gm = m0 + r, gk = k0 + c;
      as[c][r] = gm < p.m && gk < p.k ? convert::to_opmath(A[gm * p.a_row + gk * p.a_col]) : M(0);
    }
    BARACUDA_UNROLL
    for (int i = 0; i < kSimtBK * kSimtBN / kSimtThreads; ++i) {
      const int e = tid + i * kSimtThreads;
      const bool n_fast = p.b_col == 1;
      const int r = n_fast ? e / kSimtBN : e % kSimtBK, c = n_fast ? e % kSimtBN : e / kSimtBK;
      const int64_t gk = k0 + r, gn = n0 + c;
      bs[r][c] = gk < p.k && gn < p.n ? convert::to_opmath(B[gk * p.b_row + gn * p.b_col]) : M(0);
    }
    __syncthreads();
    simt_tile::slice_fma(acc, as, bs, tx, ty);
    __syncthreads();
  }

  const TCD* C = static_cast<const TCD*>(p.c);
  const TCD* bias = static_cast<const TCD*>(p.bias);
  TCD* D = static_cast<TCD*>(p.d) + batch * p.d_batch;
  TCD* aux = p.aux != nullptr ? static_cast<TCD*>(p.aux) + batch * p.aux_batch : nullptr;
  BARACUDA_UNROLL
  for (int i = 0; i < 4; ++i) {
    const int64_t m = m0 + ty + 16 * i;
    if (m >= p.m) break;
    BARACUDA_UNROLL
    for (int j = 0; j < 4; ++j) {
      const int64_t n = n0 + tx + 16 * j;
      if (n >= p.n) break;
      M v = mul_rn(p.alpha, acc[i][j]);
      if (C != nullptr) v = fma_rn(p.beta, convert::to_opmath(C[batch * p.c_batch + m * p.c_row + n]), v);
      if (bias != nullptr) v = add_rn(v, convert::to_opmath(bias[n * p.bias_stride]));
      if (aux != nullptr) aux[m * p.aux_row + n] = convert::from_opmath<TCD>(v);
      D[m * p.d_row + n] = convert::from_opmath<TCD>(simt_activate(p.activation, v));
    }
  }
}

/// bias_grad[m] = round(Σ_k op(A)[m, k]) of batch 0: one warp per row, 8 rows per block.
template <class TAB, class TCD>
__global__ void __launch_bounds__(256) gemm_bias_grad_kernel(const TAB* a, int64_t a_row, int64_t a_col, int64_t m_rows,
                                                             int64_t k, TCD* out, int64_t out_stride) {
  using M = convert::opmath_t<TCD>;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int64_t m = static_cast<int64_t>(blockIdx.x) * 8 + threadIdx.x / 32;
  if (m >= m_rows) return;  // whole warps leave together
  M s = M(0);
  for (int64_t i = lane; i < k; i += 32) s = add_rn(s, convert::to_opmath(a[m * a_row + i * a_col]));
  BARACUDA_UNROLL
  for (int off = 16; off > 0; off >>= 1) s = add_rn(s, __shfl_xor_sync(0xffffffffu, s, off));
  if (lane == 0) out[m * out_stride] = convert::from_opmath<TCD>(s);
}

/// The SIMT GEMM of `l` (launch.hpp): TAB the kind of A and B, TCD that of C, D, aux, bias and bias_grad.
template <class TAB, class TCD>
Status simt(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::GemmLaunch& l) {
  using M = convert::opmath_t<TCD>;
  static_assert(std::is_same_v<M, convert::opmath_t<TAB>>, "one opmath type for the inputs and outputs");
  if (l.ab != kind_of<TAB> || l.cd != kind_of<TCD>)
    return Error::internal("GemmPlan: the SIMT kernel was called for other kinds than its own");
  if (l.m == 0 || l.batch == 0) return {};
  if (l.n > 0) {
    SimtParams<M> p;
    p.a = l.a.data, p.b = l.b.data;
    p.c = l.beta != 0.0 ? l.c.data : nullptr;
    p.bias = l.bias.data, p.d = const_cast<void*>(l.d.data), p.aux = const_cast<void*>(l.aux.data);
    p.a_batch = l.a.batch, p.a_row = l.a.row, p.a_col = l.a.col;
    p.b_batch = l.b.batch, p.b_row = l.b.row, p.b_col = l.b.col;
    p.c_batch = l.c.batch, p.c_row = l.c.row, p.d_batch = l.d.batch, p.d_row = l.d.row;
    p.aux_batch = l.aux.batch, p.aux_row = l.aux.row, p.bias_stride = l.bias.col;
    p.m = l.m, p.n = l.n, p.k = l.k;
    p.tiles_n = (l.n + kSimtBN - 1) / kSimtBN;
    p.alpha = static_cast<M>(l.alpha), p.beta = static_cast<M>(l.beta);
    p.activation = static_cast<int>(l.activation);
    const int64_t tiles = ((l.m + kSimtBM - 1) / kSimtBM) * p.tiles_n;  // select keeps it below 2^31
    BARACUDA_LAUNCH(dim3(static_cast<unsigned>(tiles), static_cast<unsigned>(l.batch)), dim3(kSimtThreads), 0,
                    ctx.stream, gemm_simt_kernel<TAB, TCD>)
    (p);
    const auto e = launch::take_last_error();
    if (e.failed) return Error::device("GemmPlan: SIMT kernel launch failed: " + e.message, e.code);
  }
  if (l.bias_grad.data != nullptr) {
    BARACUDA_LAUNCH(dim3(static_cast<unsigned>((l.m + 7) / 8)), dim3(256), 0, ctx.stream,
                    gemm_bias_grad_kernel<TAB, TCD>)
    (static_cast<const TAB*>(l.a.data), l.a.row, l.a.col, l.m, l.k,
     static_cast<TCD*>(const_cast<void*>(l.bias_grad.data)), l.bias_grad.col);
    const auto e = launch::take_last_error();
    if (e.failed) return Error::device("GemmPlan: bias_grad kernel launch failed: " + e.message, e.code);
  }
  return {};
}

}  // namespace gemm
BARACUDA_DEVICE_NAMESPACE_END
