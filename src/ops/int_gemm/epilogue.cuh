// The epilogue of the int8 GEMM kernels (kernels.cuh: mma.sync; wgmma_kernels.cuh: wgmma, sm_90a): the
// kernels' parameters and store_fragments, which stores a warp's m16n8 accumulator fragments as IntGemm's s32
// output or runs the W8A8 linear epilogue of include/baracuda/ops/int_gemm.hpp on them (steps 1-5, f32
// opmath: the asymmetric correction acc − zp[m]·Σ_k w[n,k] in wrap-around s32, t = s_w[n]·f32(acc),
// v = s_a[m]·t or fma(s_a[m], t, bias), the activation, one rounding to the output type).
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <cstdint>
#include <type_traits>

#include "device/convert.cuh"
#include "device/elementwise.cuh"  // BARACUDA_UNROLL

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace int_gemm {

/// The kernel's parameters (one struct for both epilogues; the linear fields are unused by IntGemm).
struct GemmParams {
  const unsigned char* a = nullptr;
  const unsigned char* b = nullptr;
  int64_t lda = 0, ldb = 0;  // bytes (= elements)
  int m = 0, n = 0, k = 0;
  void* c = nullptr;
  int64_t ldc = 0;  // elements
  // linear epilogue
  const float* a_scale = nullptr;  // [M] or nullptr: a_scale_scalar
  int64_t a_scale_stride = 0;
  float a_scale_scalar = 1.0f;
  const int32_t* a_zp = nullptr;  // [M] or nullptr (symmetric)
  int64_t a_zp_stride = 0;
  const float* w_scale = nullptr;  // [N] (stride) or [1] (stride 0)
  int64_t w_scale_stride = 0;
  const void* bias = nullptr;  // [N] of the output type, or nullptr
  int64_t bias_stride = 0;
  int activation = 0;  // LinearActivation
  // K cut into parts (decode; tuning.hpp's int_gemm_splits): blockIdx.z takes BK slices
  // [z·slices_per_split, (z + 1)·slices_per_split) and writes its raw sums to partial[z] (s32 [M, N]) and
  // its column sums to partial_colsum[z] (s32 [N], asymmetric linear only); nullptr: no split.
  int slices_per_split = 0;
  int32_t* partial = nullptr;
  int32_t* partial_colsum = nullptr;
};

template <class T>
struct alignas(2 * sizeof(T)) Pair2 {
  T x, y;
};

/// Step 4 of the epilogue, as the host reference computes it (f32).
__device__ __forceinline__ float activate(int act, float v) {
  switch (act) {
    case 1: return v > 0.0f ? v : (v != v ? v : 0.0f);
    case 2: {
      const float s = v >= 0.0f ? 1.0f / (1.0f + expf(-v)) : expf(v) / (1.0f + expf(v));
      return v * s;
    }
    case 3: return 0.5f * v * erfcf(-v * 0.70710678118654752440f);
    case 4: {
      const float inner = 0.79788456080286535588f * (v + 0.044715f * v * v * v);
      return 0.5f * v * (1.0f + tanhf(inner));
    }
    default: return v;
  }
}

/// Steps 1-5 of the linear epilogue (int_gemm.hpp) for one element: the s32 sum `a32`, the row's scale of x
/// `sa` and zero point `zp`, the column's weight scale `sw`, bias `bv` (used when `has_bias`) and
/// column sum `cs` (kAsym). The one definition of the arithmetic, for the fragment stores below and for the
/// split-K reduction.
template <class TOut, bool kAsym>
__device__ __forceinline__ TOut linear_element(int a32, float sa, unsigned zp, float sw, float bv, int cs,
                                               bool has_bias, int activation) {
  if constexpr (kAsym)  // exact in wrap-around s32: the corrected sum fits (select's K bound)
    a32 = static_cast<int>(static_cast<unsigned>(a32) - zp * static_cast<unsigned>(cs));
  const float tt = __fmul_rn(sw, static_cast<float>(a32));
  float v = has_bias ? __fmaf_rn(sa, tt, bv) : __fmul_rn(sa, tt);
  v = activate(activation, v);
  return convert::from_opmath<TOut>(v);
}

/// The epilogue of one warp's accumulators, shared by the mma.sync and the wgmma kernels. They hold m16n8
/// C fragments: `acc(mi, ni, e)` (mi < MI, ni < NI, e < 4, compile-time after unrolling) is the element at
/// row m0 + wm0 + 16·mi + g + 8·(e >> 1), column n0 + wn0 + 8·ni + 2·t4 + (e & 1) of C (g = lane / 4,
/// t4 = lane % 4): (m0, n0) the block's corner, (wm0, wn0) the warp's offset in it, kept apart as the kernels
/// compute them (folded into one sum, ptxas gave the mma.sync kernel's asymmetric 128×128 tile a spill).
/// IntGemm (TOut = int32_t) stores the s32 values; the linear epilogue computes steps 1-5 of int_gemm.hpp.
/// `colsum[c - n0]` (kAsym only) is Σ_k w[c, k] for every column c of the block's tile. Rows past M and
/// columns past N are not stored; pairs of adjacent columns are stored as one vector where the address is
/// aligned.
template <class TOut, bool kAsym, int MI, int NI, class Acc>
__device__ __forceinline__ void store_fragments(const GemmParams& p, int m0, int wm0, int n0, int wn0, int lane,
                                                const int* colsum, Acc&& acc) {
  constexpr bool kLinear = !std::is_same_v<TOut, int32_t>;
  static_assert(kLinear || !kAsym, "IntGemm has no zero point");
  const int g = lane >> 2, t4 = lane & 3;
  if constexpr (!kLinear) {
    (void)colsum;
    int32_t* c = static_cast<int32_t*>(p.c);
BARACUDA_UNROLL
    for (int mi = 0; mi < MI; ++mi)
BARACUDA_UNROLL
      for (int ni = 0; ni < NI; ++ni)
BARACUDA_UNROLL
        for (int h = 0; h < 2; ++h) {
          const int row = m0 + wm0 + mi * 16 + g + h * 8, col = n0 + wn0 + ni * 8 + 2 * t4;
          if (row >= p.m || col >= p.n) continue;
          int32_t* dst = c + static_cast<int64_t>(row) * p.ldc + col;
          if (col + 1 < p.n && (reinterpret_cast<uintptr_t>(dst) & 7) == 0) {
            *reinterpret_cast<Pair2<int32_t>*>(dst) = Pair2<int32_t>{acc(mi, ni, 2 * h), acc(mi, ni, 2 * h + 1)};
          } else {
            dst[0] = acc(mi, ni, 2 * h);
            if (col + 1 < p.n) dst[1] = acc(mi, ni, 2 * h + 1);
          }
        }
  } else {
    // The plans guarantee that y overlaps no input, so the pointers are declared __restrict__: the bias has
    // the output's type, and without that promise every parameter load would be ordered after the stores
    // before it (measured: a third of the large GEMM's time on an H100). Row parameters are loaded first,
    // column parameters per n8 block, so few registers stay live beside the accumulators.
    TOut* __restrict__ y = static_cast<TOut*>(p.c);
    const TOut* __restrict__ bias = static_cast<const TOut*>(p.bias);
    const float* __restrict__ w_scale = p.w_scale;
    float sa[MI][2];
    unsigned zp[MI][2];
BARACUDA_UNROLL
    for (int mi = 0; mi < MI; ++mi)
BARACUDA_UNROLL
      for (int h = 0; h < 2; ++h) {
        const int row = m0 + wm0 + mi * 16 + g + h * 8;
        const int rr = row < p.m ? row : p.m - 1;
        sa[mi][h] = p.a_scale != nullptr ? p.a_scale[rr * p.a_scale_stride] : p.a_scale_scalar;
        zp[mi][h] = kAsym ? static_cast<unsigned>(p.a_zp[rr * p.a_zp_stride]) : 0u;
      }
BARACUDA_UNROLL
    for (int ni = 0; ni < NI; ++ni) {
      const int col = n0 + wn0 + ni * 8 + 2 * t4;
      if (col >= p.n) continue;
      float sw[2], bv[2];
      int cs[2];
BARACUDA_UNROLL
      for (int e = 0; e < 2; ++e) {
        const int cc = col + e < p.n ? col + e : col;  // the pair's second column may be past N
        sw[e] = w_scale[cc * p.w_scale_stride];
        bv[e] = bias != nullptr ? convert::to_opmath(bias[cc * p.bias_stride]) : 0.0f;
        cs[e] = kAsym ? colsum[cc - n0] : 0;
      }
BARACUDA_UNROLL
      for (int mi = 0; mi < MI; ++mi)
BARACUDA_UNROLL
        for (int h = 0; h < 2; ++h) {
          const int row = m0 + wm0 + mi * 16 + g + h * 8;
          if (row >= p.m) continue;
          TOut out[2];
BARACUDA_UNROLL
          for (int e = 0; e < 2; ++e)
            out[e] = linear_element<TOut, kAsym>(acc(mi, ni, 2 * h + e), sa[mi][h], zp[mi][h], sw[e], bv[e], cs[e],
                                                 bias != nullptr, p.activation);
          TOut* dst = y + static_cast<int64_t>(row) * p.ldc + col;
          if (col + 1 < p.n && (reinterpret_cast<uintptr_t>(dst) % (2 * sizeof(TOut))) == 0) {
            Pair2<TOut> pr;
            pr.x = out[0], pr.y = out[1];
            *reinterpret_cast<Pair2<TOut>*>(dst) = pr;
          } else {
            dst[0] = out[0];
            if (col + 1 < p.n) dst[1] = out[1];
          }
        }
    }
  }
}

}  // namespace int_gemm
BARACUDA_DEVICE_NAMESPACE_END
