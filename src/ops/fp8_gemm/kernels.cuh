// Device code of the fp8_gemm family: the bespoke FP8 tensor-core GEMM (variant `mma_m16n8k32_fp8`),
// D = act(α·acc + bias) with A [M, K] and B [N, K] FP8 (K-contiguous) and acc the scaled sum of
// include/baracuda/ops/fp8_gemm.hpp (per-tensor or Block128 scales), on mma.sync.m16n8k32 (sm_89+).
//
// A block computes a BM×BN tile of D. K is streamed in BK = 128 slices (one Block128 K block each) through
// ST shared-memory stages (device/cp_async_pipeline.cuh); the main loop is the int8 GEMM's
// (device/mma8_slice.cuh: 16-byte cp.async copies with zero-fill past the M/N/K edges, XOR-swizzled rows,
// ldmatrix.x4 fragments, m16n8k32 MMAs), on f32 accumulators. BN divides 128, so a block's columns lie in one
// 128-wide N block of B's scales.
//
// The arithmetic, exactly (every step one f32 operation, rounded to nearest even; `part` and `acc` per
// output element, f32 registers):
//   per slice s (K block kb = s, ascending): part = 0, then the slice's 128 products summed by the 4
//     m16n8k32 MMAs in k order (on sim: d = fmaf(a·b, d) for k ascending; a GPU's FP8 MMA may keep fewer bits
//     inside one instruction);
//   promotion: acc = fmaf(w, part, acc), acc starting at +0, where
//     Tensor:   w = 1 (so acc = acc + part, one rounding);
//     Block128: w = a_scale[m, kb] · b_scale[n / 128, kb] (the product rounded to f32 first);
//   epilogue: v = f · acc with f = (α · a_scale) · b_scale (Tensor: two f32 products, α first) or f = α
//     (Block128); v = v + bias[n] (bias converted to f32 exactly) when there is a bias (no fma: two roundings);
//     v = act(v) (int_gemm's `activate`, as every linear epilogue of the library);
//     f16/bf16/f32 D: d = round(v) (convert::from_opmath, one rounding, IEEE overflow);
//     FP8 D: d = fp8(v · d_scale) (the product rounded to f32, then to FP8 nearest even, saturating to
//     ± max finite, NaN kept);
//     amax (when given): the maximum over D of |v| (v after act, before d_scale), as the bit pattern of
//     fabsf(v) (a NaN orders above every number: it propagates), per thread, then per block
//     (fp8/block_max.cuh) and one atomicMax per block on the f32's bits, after a one-block kernel set it to
//     0 on the same stream (M or N = 0: only that kernel runs). The amax's bits do not depend on the order of
//     the blocks.
// Every sum has a fixed order: the same bits on every run of a device.
//
// Block128's scales travel with their slice: the loader copies A's scales of the block's BM rows (zeros past
// M: those rows are not stored) and B's one scale of the slice into the stage (4-byte cp.async in the slice's
// commit group), and the promotion reads them from shared memory (loading them from global memory in the
// main loop held their addresses and values across the MMAs: ptxas spilled).
//
// Two tiles, neither timed on a GPU yet: 128×128×128 with 16 warps of 32×32 and 3 stages (97.5 KiB of shared
// memory with the scales), and for M ≤ 32 (decode) 32×32×128 with 2 warps of 16×32 and 6 stages (48.8 KiB; more
// N tiles for the weight-streaming shapes); both above 48 KiB, so the launch opts in. A thread holds two sets of
// accumulators (acc and a slice's part): with the int8 kernel's 8 warps of 64×32, 128 f32 of them, ptxas used
// all 255 registers; 16 warps of 32×32 halve that (launch bounds of 512 threads: at most 128 registers). ptxas
// (CUDA 13.0): sm_90 128 and 87 registers, sm_89 120 and 72, no spills; the sm_80 pass compiles (the FP8 mma
// traps there: the plan never launches it below 8.9). More than 65535 M tiles take several launches.
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <cstdint>
#include <string>
#include <type_traits>

#include "baracuda/core/element.hpp"
#include "baracuda/core/status.hpp"
#include "core/exec_context.hpp"
#include "device/convert.cuh"
#include "device/cp_async_pipeline.cuh"
#include "device/elementwise.cuh"  // BARACUDA_UNROLL
#include "device/mma8_slice.cuh"
#include "device/ptx/mma.cuh"
#include "device/shared_bytes.cuh"
#include "ops/fp8/block_max.cuh"
#include "ops/fp8_gemm/launch.hpp"
#include "ops/fp8_gemm/tables.hpp"
#include "ops/int_gemm/epilogue.cuh"  // activate, Pair2

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace fp8_gemm {

/// One block shape: BM×BN outputs, BK-deep K slices, warps_m×warps_n warps, stages.
struct Fp8Tile {
  int bm = 0, bn = 0, bk = 0, warps_m = 0, warps_n = 0, stages = 0;
  constexpr int threads() const { return warps_m * warps_n * 32; }
  /// A stage: the A and B slices, then (Block128) the slice's scales: A's for the block's BM rows, B's one.
  constexpr int stage_bytes() const { return (bm + bn) * bk + 4 * bm + 16; }
  constexpr int smem_bytes() const { return stages * stage_bytes(); }
};
inline constexpr Fp8Tile kFp8Large{128, 128, 128, 4, 4, 3};
inline constexpr Fp8Tile kFp8Decode{32, 32, 128, 2, 1, 6};
/// Problems with M up to this run on kFp8Decode.
inline constexpr int64_t kFp8DecodeMaxM = 32;
static_assert(kFp8Large.smem_bytes() <= 99 * 1024 && kFp8Decode.smem_bytes() <= 99 * 1024,
              "within a block's dynamic shared memory on sm_89 (99 KiB; sm_90: 227 KiB)");

/// The bias's kind as the kernel reads it.
enum BiasCode : int { kNoBias = 0, kBiasF16 = 1, kBiasBf16 = 2, kBiasF32 = 3 };

/// The kernel's parameters (launch.hpp's record in the kernel's terms).
struct Fp8Params {
  const unsigned char* a = nullptr;
  const unsigned char* b = nullptr;
  int64_t lda = 0, ldb = 0;  // bytes (= elements)
  int m = 0, n = 0, k = 0;
  const float* a_scale = nullptr;
  const float* b_scale = nullptr;
  int64_t a_scale_row = 0, a_scale_col = 0, b_scale_row = 0, b_scale_col = 0;
  int block128 = 0;  ///< Fp8GemmScaling::Block128 (else Tensor)
  float alpha = 1.0f;
  const void* bias = nullptr;
  int bias_code = kNoBias;
  const float* d_scale = nullptr;  ///< FP8 D only
  void* d = nullptr;
  int64_t ldd = 0;
  int32_t* amax = nullptr;  ///< the f32 amax's bits, or nullptr
  int activation = 0;       ///< LinearActivation
  int m_tile0 = 0;          ///< the M tile of blockIdx.y == 0 (a launch covers at most 65535 M tiles)
};

/// The FP8 m16n8k32 (f32 accumulate) as mma8::slice_mma's step.
template <class TA, class TB>
struct Fp8Mma {
  __device__ __forceinline__ void operator()(float (&acc)[4], const unsigned (&a)[4], const unsigned (&b)[2]) const {
    ptx::mma_m16n8k32_fp8<TA, TB>(acc, a, b, acc);
  }
};

__device__ __forceinline__ float bias_at(const void* bias, int code, int col) {
  switch (code) {
    case kBiasF16: return convert::to_float(static_cast<const __half*>(bias)[col]);
    case kBiasBf16: return convert::to_float(static_cast<const __nv_bfloat16*>(bias)[col]);
    default: return static_cast<const float*>(bias)[col];
  }
}

/// Stores v[0] at dst[0] and, when `two`, v[1] at dst[1] (one vector store where aligned).
template <class T>
__device__ __forceinline__ void store2(T* dst, const T (&v)[2], bool two) {
  if (two && (reinterpret_cast<uintptr_t>(dst) % (2 * sizeof(T))) == 0) {
    ::baracuda::int_gemm::Pair2<T> pr;
    pr.x = v[0], pr.y = v[1];
    *reinterpret_cast<::baracuda::int_gemm::Pair2<T>*>(dst) = pr;
  } else {
    dst[0] = v[0];
    if (two) dst[1] = v[1];
  }
}

/// Sets the amax to 0 before the GEMM's blocks take their maxima (one thread; T = float: a template, so that
/// every unit that includes this header may instantiate it).
template <class T>
__global__ void __launch_bounds__(32) amax_reset_kernel(T* amax) {
  if (threadIdx.x == 0 && blockIdx.x == 0) *amax = T(0);
}

// The tile comes as integers (WM×WN warps, ST stages): nvcc's host stubs cannot name a class-type template
// argument of a __global__ function.
template <class TA, class TB, class TD, int BM, int BN, int BK, int WM, int WN, int ST>
__global__ void __launch_bounds__(WM * WN * 32) fp8_gemm_kernel(Fp8Params p) {
  constexpr int NT = WM * WN * 32;
  constexpr int WTM = BM / WM, WTN = BN / WN;
  constexpr int MI = WTM / 16, NI = WTN / 8;
  constexpr int kScaleOffset = (BM + BN) * BK, kStageBytes = kScaleOffset + 4 * BM + 16;
  static_assert(BK == 128, "one Block128 K block per slice");
  static_assert(128 % BN == 0, "one Block128 N block of B's scales per block");
  static_assert(WTM % 16 == 0 && WTN % 16 == 0, "warp tiles: multiples of 16×16");
  static_assert(ST >= 2, "at least two stages");
  constexpr bool kFp8Out = convert::is_fp8_v<TD>;

  BARACUDA_DYNAMIC_SHARED(unsigned char, smem);
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t4 = lane & 3;
  const int wm0 = (warp / WN) * WTM, wn0 = (warp % WN) * WTN;
  const int m0 = (p.m_tile0 + static_cast<int>(blockIdx.y)) * BM, n0 = static_cast<int>(blockIdx.x) * BN;
  const int slices = (p.k + BK - 1) / BK;

  // Block128: this block's row of B's scales (n0 / 128). A slice's scales travel with its operands (4-byte
  // copies in the same commit group): A's for rows m0 .. m0 + BM − 1 (zeros past M: those rows are not
  // stored), then B's.
  const float* b_scale_nb = p.b_scale + static_cast<int64_t>(n0 / 128) * p.b_scale_row;
  auto load = [&](int stage, int s) {
    unsigned char* as = smem + stage * kStageBytes;
    const int k0 = s * BK;
    mma8::load_tile<BM, BK, NT>(as, p.a, p.lda, m0, p.m, k0, p.k, tid);
    mma8::load_tile<BN, BK, NT>(as + BM * BK, p.b, p.ldb, n0, p.n, k0, p.k, tid);
    if (p.block128) {
      for (int i = tid; i <= BM; i += NT) {
        const bool ok = i == BM || m0 + i < p.m;
        const float* src = i == BM ? b_scale_nb + static_cast<int64_t>(s) * p.b_scale_col
                           : ok    ? p.a_scale + static_cast<int64_t>(m0 + i) * p.a_scale_row +
                                      static_cast<int64_t>(s) * p.a_scale_col
                                   : p.a_scale;
        ptx::cp_async_ca_zfill<4>(as + kScaleOffset + 4 * i, src, ok ? 4 : 0);
      }
    }
  };

  float acc[MI][NI][4];
BARACUDA_UNROLL
  for (int i = 0; i < MI; ++i)
BARACUDA_UNROLL
    for (int j = 0; j < NI; ++j)
BARACUDA_UNROLL
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

  pipeline_prologue<ST>(slices, load);
  for (int s = 0; s < slices; ++s) {
    const unsigned char* as = smem + pipeline_advance<ST>(s, slices, load) * kStageBytes;
    float part[MI][NI][4];
BARACUDA_UNROLL
    for (int i = 0; i < MI; ++i)
BARACUDA_UNROLL
      for (int j = 0; j < NI; ++j)
BARACUDA_UNROLL
        for (int e = 0; e < 4; ++e) part[i][j][e] = 0.0f;
    mma8::slice_mma<MI, NI, BK>(part, as, as + BM * BK, wm0, wn0, lane, Fp8Mma<TA, TB>{});
    float w[MI][2];  // the promotion's factors
BARACUDA_UNROLL
    for (int mi = 0; mi < MI; ++mi) w[mi][0] = w[mi][1] = 1.0f;
    if (p.block128) {
      const float* sc = reinterpret_cast<const float*>(as + kScaleOffset);
BARACUDA_UNROLL
      for (int mi = 0; mi < MI; ++mi)
BARACUDA_UNROLL
        for (int h = 0; h < 2; ++h) w[mi][h] = __fmul_rn(sc[wm0 + mi * 16 + g + h * 8], sc[BM]);
    }
BARACUDA_UNROLL
    for (int i = 0; i < MI; ++i)
BARACUDA_UNROLL
      for (int j = 0; j < NI; ++j)
BARACUDA_UNROLL
        for (int e = 0; e < 4; ++e) acc[i][j][e] = __fmaf_rn(w[i][e >> 1], part[i][j][e], acc[i][j][e]);
  }
  ptx::cp_async_wait_all();  // no copy may be in flight when the block exits (only empty groups remain)

  // The plan guarantees that D overlaps no input: the pointers are __restrict__.
  TD* __restrict__ d = static_cast<TD*>(p.d);
  const float f = p.block128 ? p.alpha : __fmul_rn(__fmul_rn(p.alpha, p.a_scale[0]), p.b_scale[0]);
  float ds = 1.0f;
  if constexpr (kFp8Out) ds = *p.d_scale;
  int32_t amax = 0;  // the bits of max |v| over this thread's elements (+0 for none)
BARACUDA_UNROLL
  for (int ni = 0; ni < NI; ++ni) {
    const int col = n0 + wn0 + ni * 8 + 2 * t4;
    if (col >= p.n) continue;
    const bool two = col + 1 < p.n;
    float bv[2] = {0.0f, 0.0f};
    if (p.bias_code != kNoBias) {
      bv[0] = bias_at(p.bias, p.bias_code, col);
      if (two) bv[1] = bias_at(p.bias, p.bias_code, col + 1);
    }
BARACUDA_UNROLL
    for (int mi = 0; mi < MI; ++mi)
BARACUDA_UNROLL
      for (int h = 0; h < 2; ++h) {
        const int row = m0 + wm0 + mi * 16 + g + h * 8;
        if (row >= p.m) continue;
        TD out[2];
BARACUDA_UNROLL
        for (int e = 0; e < 2; ++e) {
          float v = __fmul_rn(f, acc[mi][ni][2 * h + e]);
          if (p.bias_code != kNoBias) v = __fadd_rn(v, bv[e]);
          v = ::baracuda::int_gemm::activate(p.activation, v);
          if (e == 0 || two) {
            const int32_t bits = __float_as_int(fabsf(v));
            amax = bits > amax ? bits : amax;
          }
          if constexpr (kFp8Out) {
            constexpr auto kFormat = std::is_same_v<TD, __nv_fp8_e4m3> ? __NV_E4M3 : __NV_E5M2;
            out[e] = convert::fp8_of_storage<TD>(convert::fp8_from_float(__fmul_rn(v, ds), true, kFormat));
          } else {
            out[e] = convert::from_opmath<TD>(v);
          }
        }
        store2(d + static_cast<int64_t>(row) * p.ldd + col, out, two);
      }
  }
  if (p.amax != nullptr) fp8::block_max_to_global(amax, p.amax);  // uniform: every thread of the block
}

/// The GEMM at tile kT, in launches of at most 65535 M tiles (gridDim.y).
template <class TA, class TB, class TD, Fp8Tile kT>
Status launch_tile(const ::baracuda::detail::ExecContext& ctx, Fp8Params p) {
  const size_t smem = static_cast<size_t>(kT.smem_bytes());
  auto* kernel = &fp8_gemm_kernel<TA, TB, TD, kT.bm, kT.bn, kT.bk, kT.warps_m, kT.warps_n, kT.stages>;
  BARACUDA_TRY(launch::allow_shared_bytes(kernel, smem, "Fp8GemmPlan"));
  const int64_t m_tiles = (static_cast<int64_t>(p.m) + kT.bm - 1) / kT.bm;
  const unsigned n_tiles = static_cast<unsigned>((static_cast<int64_t>(p.n) + kT.bn - 1) / kT.bn);
  for (int64_t t0 = 0; t0 < m_tiles; t0 += 65535) {
    p.m_tile0 = static_cast<int>(t0);
    const dim3 grid(n_tiles, static_cast<unsigned>(m_tiles - t0 < 65535 ? m_tiles - t0 : 65535));
    BARACUDA_LAUNCH(grid, dim3(static_cast<unsigned>(kT.threads())), smem, ctx.stream, kernel)(p);
    const auto e = launch::take_last_error();
    if (e.failed) return Error::device("Fp8GemmPlan: kernel launch failed: " + e.message, e.code);
  }
  return {};
}

/// The kernel's parameters from the launch record.
inline Fp8Params fp8_params(const ::baracuda::detail::Fp8GemmLaunch& l) {
  Fp8Params p;
  p.a = static_cast<const unsigned char*>(l.a);
  p.b = static_cast<const unsigned char*>(l.b);
  p.lda = l.lda, p.ldb = l.ldb;
  p.m = static_cast<int>(l.m), p.n = static_cast<int>(l.n), p.k = static_cast<int>(l.k);
  p.a_scale = l.a_scale, p.b_scale = l.b_scale;
  p.a_scale_row = l.a_scale_row, p.a_scale_col = l.a_scale_col;
  p.b_scale_row = l.b_scale_row, p.b_scale_col = l.b_scale_col;
  p.block128 = l.scaling == Fp8GemmScaling::Block128 ? 1 : 0;
  p.alpha = static_cast<float>(l.alpha);
  p.bias = l.bias;
  p.bias_code = l.bias == nullptr                  ? kNoBias
                : l.bias_kind == ElementKind::F16  ? kBiasF16
                : l.bias_kind == ElementKind::Bf16 ? kBiasBf16
                                                   : kBiasF32;
  p.d_scale = l.d_scale;
  p.d = l.d;
  p.ldd = l.ldd;
  p.amax = reinterpret_cast<int32_t*>(l.amax);
  p.activation = static_cast<int>(l.activation);
  return p;
}

/// The amax reset (with an amax), then the GEMM (unless M or N is 0) at the tile for M.
template <class TA, class TB, class TD>
Status run(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::Fp8GemmLaunch& l) {
  constexpr int64_t kMax = (int64_t{1} << 31) - 256;  // 32-bit row, column and k indices, past the edge tiles too
  if (l.m > kMax || l.n > kMax || l.k > kMax)
    return Error::unsupported("Fp8GemmPlan: the bespoke kernel takes M, N and K up to 2^31 - 256");
  if (l.amax != nullptr) {
    BARACUDA_LAUNCH(dim3(1), dim3(32), 0, ctx.stream, amax_reset_kernel<float>)(l.amax);
    const auto e = launch::take_last_error();
    if (e.failed) return Error::device("Fp8GemmPlan: amax reset launch failed: " + e.message, e.code);
  }
  if (l.m == 0 || l.n == 0) return {};
  const Fp8Params p = fp8_params(l);
  if (l.m <= kFp8DecodeMaxM) return launch_tile<TA, TB, TD, kFp8Decode>(ctx, p);
  return launch_tile<TA, TB, TD, kFp8Large>(ctx, p);
}

/// The table's function for A of type TA and D of type TD: B's kind from the record (e4m3, or e5m2 beside an
/// e4m3 A); the scaling, the bias's kind and the activation are run-time fields of the kernel.
template <class TA, class TD>
Status fp8_gemm_fn(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::Fp8GemmLaunch& l) {
  if (l.a_kind != kind_of<TA> || l.d_kind != kind_of<TD>)
    return Error::internal("Fp8GemmPlan: the FP8 kernel was called for other kinds than its own");
#if !BARACUDA_SIM
  if (ctx.sm < 89) return Error::unsupported("Fp8GemmPlan: the FP8 tensor cores need compute capability 8.9");
#endif
  if (l.b_kind == ElementKind::Fp8E4M3) return run<TA, __nv_fp8_e4m3, TD>(ctx, l);
  if constexpr (std::is_same_v<TA, __nv_fp8_e4m3>) {
    if (l.b_kind == ElementKind::Fp8E5M2) return run<TA, __nv_fp8_e5m2, TD>(ctx, l);
  }
  return Error::internal("Fp8GemmPlan: the FP8 kernel takes B e4m3, or e5m2 beside an e4m3 A");
}

constexpr ::baracuda::detail::Fp8GemmTables make_tables() {
  ::baracuda::detail::Fp8GemmTables t{};
  ::baracuda::detail::for_each_fp8_gemm_kinds([&]<class TA, class TD>(std::type_identity<TA>, std::type_identity<TD>) {
    using ::baracuda::detail::kind_index;
    const size_t a = kind_index(kind_of<TA>), o = kind_index(kind_of<TD>);
    t.gemm[a][o] = &fp8_gemm_fn<TA, TD>;
    t.variant[a][o] = "mma_m16n8k32_fp8";
  });
  return t;
}

}  // namespace fp8_gemm
BARACUDA_DEVICE_NAMESPACE_END
