// Device code of the int_gemm family: one tiled int8 tensor-core GEMM template, C = A·Bᵀ with A [M, K] and
// B [N, K] (both K-contiguous), instantiated for the s8/u8 operand kinds and for two epilogues: IntGemm's
// s32 store and the W8A8 linear epilogue of include/baracuda/ops/int_gemm.hpp (steps 1-5, f32 opmath).
//
// A block computes a BM×BN tile of C (tuning.hpp). K is streamed in BK slices through `stages` shared
// buffers filled by 16-byte cp.async copies (.cg, zero-fill past the M/N/K edges; K % 16 == 0 so a 16-byte
// chunk is either wholly inside K or wholly outside), one commit group per slice, wait_group stages-2 and a
// barrier before a slice is read. Rows of a slice are BK bytes; the 16-byte chunks of a row are XOR-swizzled
// with the row index so that the 8 rows an ldmatrix phase reads hit 8 distinct bank groups. Each warp owns
// a (BM/warps_m)×(BN/warps_n) warp tile: per 32-wide k step, ldmatrix.x4 loads an A fragment (16×32 int8 =
// 16×16 b16) per 16 rows and an x4 loads the B fragments of two n8 tiles (B [N, K] non-transposed is the
// "col" operand), then mma.sync.m16n8k32 accumulates in s32 (exact: select bounds K).
//
// The linear epilogue runs on the accumulators in registers: the asymmetric correction acc − zp[m]·Σ_k w[n,k]
// (the column sums are accumulated from the B slices already in shared memory, in wrap-around s32, which is
// exact because the corrected result fits), then t = s_w[n]·f32(acc), v = s_a[m]·t or fma(s_a[m], t, bias),
// the activation, one rounding to the output type; pairs of adjacent columns are stored as one vector
// where the address is aligned, the edges with guarded scalar stores.
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <cstdint>
#include <string>
#include <type_traits>

#include "device/convert.cuh"
#include "device/elementwise.cuh"  // BARACUDA_UNROLL
#include "device/cp_async_pipeline.cuh"
#include "device/ptx/ldmatrix.cuh"
#include "device/ptx/mma.cuh"
#include "ops/int_gemm/tables.hpp"
#include "ops/int_gemm/tuning.hpp"

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

/// Byte offset of 16-byte chunk `c` of row `r` in a slice with CPR chunks per row (XOR swizzle).
template <int CPR>
__device__ __forceinline__ int swz(int r, int c) {
  constexpr int kMask = (CPR >= 8 ? 8 : CPR) - 1;
  constexpr int kShift = CPR >= 8 ? 0 : CPR == 4 ? 1 : CPR == 2 ? 2 : 3;
  return r * (CPR * 16) + ((c ^ ((r >> kShift) & kMask)) * 16);
}

/// kAsym: the linear epilogue's zero-point correction (asymmetric activations); the symmetric kernels carry
/// no column-sum code in their main loop.
template <class TA, class TB, class TOut, bool kAsym, int BM, int BN, int BK, int WM, int WN, int ST>
__global__ void __launch_bounds__(WM * WN * 32) int_gemm_kernel(GemmParams p) {
  constexpr int NT = WM * WN * 32;
  constexpr int CPR = BK / 16;
  constexpr int WTM = BM / WM, WTN = BN / WN;
  constexpr int MI = WTM / 16, NI = WTN / 8;
  constexpr int kStageBytes = (BM + BN) * BK;
  static_assert(BK % 32 == 0 && (CPR <= 8 || CPR % 8 == 0), "BK: a multiple of 32 (and of 128 above 128)");
  static_assert(WTM % 16 == 0 && WTN % 16 == 0, "warp tiles: multiples of 16×16");
  static_assert(ST >= 2, "at least two stages");
  static_assert(!kAsym || BN <= NT, "one thread per column for the column sums");
  constexpr bool kLinear = !std::is_same_v<TOut, int32_t>;
  static_assert(kLinear || !kAsym, "IntGemm has no zero point");

  BARACUDA_DYNAMIC_SHARED(unsigned char, smem);
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid & 31, warp = tid >> 5;
  const int wm0 = (warp / WN) * WTM, wn0 = (warp % WN) * WTN;
  const int m0 = static_cast<int>(blockIdx.y) * BM, n0 = static_cast<int>(blockIdx.x) * BN;
  const int ktiles = (p.k + BK - 1) / BK;

  auto load_slice = [&](int stage, int kt) {
    unsigned char* as = smem + stage * kStageBytes;
    unsigned char* bs = as + BM * BK;
    const int k0 = kt * BK;
    for (int i = tid; i < BM * CPR; i += NT) {
      const int r = i / CPR, c = i % CPR, gm = m0 + r, gk = k0 + c * 16;
      const bool ok = gm < p.m && gk < p.k;
      const unsigned char* src = ok ? p.a + static_cast<int64_t>(gm) * p.lda + gk : p.a;
      ptx::cp_async_cg_zfill(as + swz<CPR>(r, c), src, ok ? 16 : 0);
    }
    for (int i = tid; i < BN * CPR; i += NT) {
      const int r = i / CPR, c = i % CPR, gn = n0 + r, gk = k0 + c * 16;
      const bool ok = gn < p.n && gk < p.k;
      const unsigned char* src = ok ? p.b + static_cast<int64_t>(gn) * p.ldb + gk : p.b;
      ptx::cp_async_cg_zfill(bs + swz<CPR>(r, c), src, ok ? 16 : 0);
    }
  };

  int acc[MI][NI][4];
BARACUDA_UNROLL
  for (int i = 0; i < MI; ++i)
BARACUDA_UNROLL
    for (int j = 0; j < NI; ++j)
BARACUDA_UNROLL
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0;
  int colsum = 0;  // Σ_k b[n0 + tid, k] (asymmetric linear only)

  pipeline_prologue<ST>(ktiles, load_slice);
  for (int kt = 0; kt < ktiles; ++kt) {
    const unsigned char* as = smem + pipeline_advance<ST>(kt, ktiles, load_slice) * kStageBytes;
    const unsigned char* bs = as + BM * BK;
BARACUDA_UNROLL
    for (int kk = 0; kk < BK / 32; ++kk) {
      unsigned af[MI][4];
      unsigned bf[NI][2];
BARACUDA_UNROLL
      for (int mi = 0; mi < MI; ++mi) {
        const int r = wm0 + mi * 16 + ((lane >> 3) & 1) * 8 + (lane & 7);
        ptx::ldmatrix<4>(af[mi], as + swz<CPR>(r, kk * 2 + (lane >> 4)));
      }
BARACUDA_UNROLL
      for (int nj = 0; nj < NI / 2; ++nj) {
        const int r = wn0 + nj * 16 + (lane >> 4) * 8 + (lane & 7);
        unsigned q[4];
        ptx::ldmatrix<4>(q, bs + swz<CPR>(r, kk * 2 + ((lane >> 3) & 1)));
        bf[2 * nj][0] = q[0], bf[2 * nj][1] = q[1];
        bf[2 * nj + 1][0] = q[2], bf[2 * nj + 1][1] = q[3];
      }
BARACUDA_UNROLL
      for (int mi = 0; mi < MI; ++mi)
BARACUDA_UNROLL
        for (int ni = 0; ni < NI; ++ni) ptx::mma_m16n8k32<TA, TB>(acc[mi][ni], af[mi], bf[ni], acc[mi][ni]);
    }
    if (kAsym && tid < BN) {
BARACUDA_UNROLL
      for (int c = 0; c < CPR; ++c) {
        const unsigned char* row = bs + swz<CPR>(tid, c);
BARACUDA_UNROLL
        for (int e = 0; e < 16; ++e)
          colsum += std::is_same_v<TB, int8_t> ? static_cast<int>(static_cast<int8_t>(row[e])) : static_cast<int>(row[e]);
      }
    }
  }

  const int g = lane >> 2, t4 = lane & 3;
  if constexpr (!kLinear) {
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
            *reinterpret_cast<Pair2<int32_t>*>(dst) = Pair2<int32_t>{acc[mi][ni][2 * h], acc[mi][ni][2 * h + 1]};
          } else {
            dst[0] = acc[mi][ni][2 * h];
            if (col + 1 < p.n) dst[1] = acc[mi][ni][2 * h + 1];
          }
        }
  } else {
    int* colsum_s = reinterpret_cast<int*>(smem);
    if constexpr (kAsym) {
      ptx::cp_async_wait_all();
      __syncthreads();  // every warp is done reading the pipeline buffers
      if (tid < BN) colsum_s[tid] = colsum;
      __syncthreads();
    }
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
        cs[e] = kAsym ? colsum_s[cc - n0] : 0;
      }
BARACUDA_UNROLL
      for (int mi = 0; mi < MI; ++mi)
BARACUDA_UNROLL
        for (int h = 0; h < 2; ++h) {
          const int row = m0 + wm0 + mi * 16 + g + h * 8;
          if (row >= p.m) continue;
          TOut out[2];
BARACUDA_UNROLL
          for (int e = 0; e < 2; ++e) {
            int a32 = acc[mi][ni][2 * h + e];
            if constexpr (kAsym)  // exact in wrap-around s32: the corrected sum fits (select's K bound)
              a32 = static_cast<int>(static_cast<unsigned>(a32) - zp[mi][h] * static_cast<unsigned>(cs[e]));
            const float tt = __fmul_rn(sw[e], static_cast<float>(a32));
            float v = bias != nullptr ? __fmaf_rn(sa[mi][h], tt, bv[e]) : __fmul_rn(sa[mi][h], tt);
            v = activate(p.activation, v);
            out[e] = convert::from_opmath<TOut>(v);
          }
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

template <class TA, class TB, class TOut, bool kAsym, ::baracuda::detail::IntGemmTile kT>
Status launch_tile(const ::baracuda::detail::ExecContext& ctx, const GemmParams& p, const char* plan) {
  const dim3 grid(static_cast<unsigned>((p.n + kT.bn - 1) / kT.bn), static_cast<unsigned>((p.m + kT.bm - 1) / kT.bm));
  const dim3 block(static_cast<unsigned>(kT.threads()));
  const size_t smem = static_cast<size_t>(kT.smem_bytes());
  auto* kernel = &int_gemm_kernel<TA, TB, TOut, kAsym, kT.bm, kT.bn, kT.bk, kT.warps_m, kT.warps_n, kT.stages>;
#if !BARACUDA_SIM
  // Above 48 KiB a block's dynamic shared memory needs the kernel's opt-in (per device, so on every launch).
  if (smem > 48 * 1024) {
    const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
    if (e != cudaSuccess)
      return Error::device(std::string(plan) + ": cudaFuncSetAttribute: " + cudaGetErrorString(e), e);
  }
#endif
  BARACUDA_LAUNCH(grid, block, smem, ctx.stream, kernel)(p);
  const auto e = launch::take_last_error();
  if (!e.failed) return {};
  return Error::device(std::string(plan) + ": kernel launch failed: " + e.message, e.code);
}

/// The set's tile for this problem on this device (tuning.hpp's `choose`).
template <class TA, class TB, class TOut, bool kAsym, ::baracuda::detail::IntGemmTileSet kSet>
Status launch_from_set(const ::baracuda::detail::ExecContext& ctx, const GemmParams& p, const char* plan) {
  using ::baracuda::detail::IntGemmTileKind;
  switch (::baracuda::detail::choose(kSet, p.m, p.n, ctx.multiprocessor_count)) {
    case IntGemmTileKind::Decode: return launch_tile<TA, TB, TOut, kAsym, kSet.decode>(ctx, p, plan);
    case IntGemmTileKind::Medium: return launch_tile<TA, TB, TOut, kAsym, kSet.medium>(ctx, p, plan);
    case IntGemmTileKind::Large: break;
  }
  return launch_tile<TA, TB, TOut, kAsym, kSet.large>(ctx, p, plan);
}

/// The tile set of this device: the emulator runs the sm_90 set (the same kernels a GPU runs).
template <class TA, class TB, class TOut, bool kAsym>
Status launch(const ::baracuda::detail::ExecContext& ctx, const GemmParams& p, const char* plan) {
  if (p.m == 0 || p.n == 0) return {};
#if BARACUDA_SIM
  return launch_from_set<TA, TB, TOut, kAsym, ::baracuda::detail::kIntGemmTilesSm90>(ctx, p, plan);
#else
  if constexpr (::baracuda::detail::kIntGemmTilesSm90 == ::baracuda::detail::kIntGemmTilesSm80) {
    return launch_from_set<TA, TB, TOut, kAsym, ::baracuda::detail::kIntGemmTilesSm80>(ctx, p, plan);
  } else {
    if (ctx.sm >= 90) return launch_from_set<TA, TB, TOut, kAsym, ::baracuda::detail::kIntGemmTilesSm90>(ctx, p, plan);
    return launch_from_set<TA, TB, TOut, kAsym, ::baracuda::detail::kIntGemmTilesSm80>(ctx, p, plan);
  }
#endif
}

inline GemmParams gemm_params(const ::baracuda::detail::IntGemmLaunch& l) {
  GemmParams p;
  p.a = static_cast<const unsigned char*>(l.a.data);
  p.b = static_cast<const unsigned char*>(l.b.data);
  p.lda = l.a.stride[0], p.ldb = l.b.stride[0];
  p.m = static_cast<int>(l.m), p.n = static_cast<int>(l.n), p.k = static_cast<int>(l.k);
  p.c = l.c.data;
  p.ldc = l.c.stride[0];
  return p;
}

template <class TA, class TB>
Status int_gemm_fn(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::IntGemmLaunch& l) {
  return launch<TA, TB, int32_t, false>(ctx, gemm_params(l), "IntGemmPlan");
}

inline GemmParams linear_params(const ::baracuda::detail::LinearLaunch& l) {
  GemmParams p = gemm_params(::baracuda::detail::IntGemmLaunch{l.m, l.n, l.k, l.a, l.w, l.y});
  p.a_scale = static_cast<const float*>(l.a_scale.data);
  p.a_scale_stride = l.a_scale.data != nullptr ? l.a_scale.stride[0] : 0;
  p.a_scale_scalar = static_cast<float>(l.a_scale_scalar);
  p.a_zp = static_cast<const int32_t*>(l.a_zero_point.data);
  p.a_zp_stride = l.a_zero_point.data != nullptr ? l.a_zero_point.stride[0] : 0;
  p.w_scale = static_cast<const float*>(l.w_scale.data);
  p.w_scale_stride = l.w_scale.shape.dims[0] == l.n && l.n > 1 ? l.w_scale.stride[0] : 0;
  p.bias = l.bias.data;
  p.bias_stride = l.bias.data != nullptr ? l.bias.stride[0] : 0;
  p.activation = static_cast<int>(l.activation);
  return p;
}

template <class TA, class T>
Status linear_fn(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::LinearLaunch& l) {
  const GemmParams p = linear_params(l);
  constexpr const char* kPlan = "QuantizedLinearPlan/SmoothQuantLinearPlan";
  if (p.a_zp != nullptr) return launch<TA, int8_t, T, true>(ctx, p, kPlan);
  return launch<TA, int8_t, T, false>(ctx, p, kPlan);
}

template <class TA, class TB>
struct IntGemmEntry {
  static constexpr ::baracuda::detail::IntGemmFn fn = &int_gemm_fn<TA, TB>;
};
/// f64 outputs (f64 epilogue) are the host reference's only: their slots stay empty.
template <class TA, class T>
constexpr ::baracuda::detail::LinearFn linear_ptr() {
  if constexpr (std::is_same_v<T, double>)
    return nullptr;
  else
    return &linear_fn<TA, T>;
}
template <class TA, class T>
struct LinearEntry {
  static constexpr ::baracuda::detail::LinearFn fn = linear_ptr<TA, T>();
};

constexpr ::baracuda::detail::IntGemmTables make_tables() {
  ::baracuda::detail::IntGemmTables t{};
  ::baracuda::detail::add_kind_pair_entries<::baracuda::detail::IntGemmFn, IntGemmEntry>(
      t.int_gemm, ::baracuda::detail::IntGemmOperandTypes{}, ::baracuda::detail::IntGemmOperandTypes{});
  ::baracuda::detail::add_kind_pair_entries<::baracuda::detail::LinearFn, LinearEntry>(
      t.linear, ::baracuda::detail::IntGemmOperandTypes{}, ::baracuda::detail::LinearOutputTypes{});
  return t;
}

}  // namespace int_gemm
BARACUDA_DEVICE_NAMESPACE_END
