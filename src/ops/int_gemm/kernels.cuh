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
// "col" operand), then mma.sync.m16n8k32 accumulates in s32 (exact: select bounds K). The slice loader and
// the per-slice fragment and mma step are device/mma8_slice.cuh's, shared with the FP8 GEMM.
//
// The linear epilogue (epilogue.cuh, shared with the wgmma kernel) runs on the accumulators in registers: the asymmetric correction acc − zp[m]·Σ_k w[n,k]
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
#include "device/mma8_slice.cuh"
#include "device/ptx/mma.cuh"
#include "device/shared_bytes.cuh"
#include "ops/int_gemm/epilogue.cuh"
#include "ops/int_gemm/launch_params.cuh"
#include "ops/int_gemm/tables.hpp"
#include "ops/int_gemm/tuning.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace int_gemm {

/// The int8 m16n8k32 (exact s32 accumulation) as mma8::slice_mma's step.
template <class TA, class TB>
struct Int8Mma {
  __device__ __forceinline__ void operator()(int (&acc)[4], const unsigned (&a)[4], const unsigned (&b)[2]) const {
    ptx::mma_m16n8k32<TA, TB>(acc, a, b, acc);
  }
};

/// kAsym: the linear epilogue's zero-point correction (an asymmetric quantized x); the symmetric kernels carry
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
  // This block's BK slices of K: all of them, or its part of a split K (GemmParams::partial)
  const int split = static_cast<int>(blockIdx.z), all_slices = (p.k + BK - 1) / BK;
  const int first = p.partial != nullptr ? split * p.slices_per_split : 0;
  const int ktiles = p.partial != nullptr ? min(p.slices_per_split, all_slices - first) : all_slices;

  auto load_slice = [&](int stage, int kt) {
    unsigned char* as = smem + stage * kStageBytes;
    const int k0 = (first + kt) * BK;
    mma8::load_tile<BM, BK, NT>(as, p.a, p.lda, m0, p.m, k0, p.k, tid);
    mma8::load_tile<BN, BK, NT>(as + BM * BK, p.b, p.ldb, n0, p.n, k0, p.k, tid);
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
    mma8::slice_mma<MI, NI, BK>(acc, as, bs, wm0, wn0, lane, Int8Mma<TA, TB>{});
    if (kAsym && tid < BN) {
BARACUDA_UNROLL
      for (int c = 0; c < CPR; ++c) {
        const unsigned char* row = bs + mma8::swz<CPR>(tid, c);
BARACUDA_UNROLL
        for (int e = 0; e < 16; ++e)
          colsum += std::is_same_v<TB, int8_t> ? static_cast<int>(static_cast<int8_t>(row[e])) : static_cast<int>(row[e]);
      }
    }
  }

  int* colsum_s = reinterpret_cast<int*>(smem);
  if constexpr (kAsym) {
    ptx::cp_async_wait_all();
    __syncthreads();  // every warp is done reading the pipeline buffers
    if (tid < BN) colsum_s[tid] = colsum;
    __syncthreads();
  }
  if (p.partial != nullptr) {  // one part of K: its raw sums (and column sums), for reduce_splits_kernel
    GemmParams part = p;
    part.c = p.partial + static_cast<int64_t>(split) * p.m * p.n;
    part.ldc = p.n;
    store_fragments<int32_t, false, MI, NI>(part, m0, wm0, n0, wn0, lane, nullptr,
                                            [&](int mi, int ni, int e) { return acc[mi][ni][e]; });
    if (kAsym && tid < BN && n0 + tid < p.n) p.partial_colsum[static_cast<int64_t>(split) * p.n + n0 + tid] = colsum;
    return;
  }
  store_fragments<TOut, kAsym, MI, NI>(p, m0, wm0, n0, wn0, lane, colsum_s,
                                       [&](int mi, int ni, int e) { return acc[mi][ni][e]; });
}

/// The parts of a split K added (wrap-around s32: exact, and the same for any number of parts or order),
/// then the s32 store or the linear epilogue (linear_element), one thread per element, grid-stride.
template <class TOut, bool kAsym>
__global__ void reduce_splits_kernel(GemmParams p, int splits) {
  const int64_t plane = static_cast<int64_t>(p.m) * p.n;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < plane;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int row = static_cast<int>(i / p.n), col = static_cast<int>(i % p.n);
    unsigned acc = 0;
    for (int z = 0; z < splits; ++z) acc += static_cast<unsigned>(p.partial[z * plane + i]);
    if constexpr (std::is_same_v<TOut, int32_t>) {
      static_cast<int32_t*>(p.c)[static_cast<int64_t>(row) * p.ldc + col] = static_cast<int32_t>(acc);
    } else {
      unsigned cs = 0;
      if constexpr (kAsym)
        for (int z = 0; z < splits; ++z) cs += static_cast<unsigned>(p.partial_colsum[static_cast<int64_t>(z) * p.n + col]);
      const float sa = p.a_scale != nullptr ? p.a_scale[row * p.a_scale_stride] : p.a_scale_scalar;
      const unsigned zp = kAsym ? static_cast<unsigned>(p.a_zp[row * p.a_zp_stride]) : 0u;
      const TOut* bias = static_cast<const TOut*>(p.bias);
      const float bv = bias != nullptr ? convert::to_opmath(bias[col * p.bias_stride]) : 0.0f;
      static_cast<TOut*>(p.c)[static_cast<int64_t>(row) * p.ldc + col] = linear_element<TOut, kAsym>(
          static_cast<int>(acc), sa, zp, p.w_scale[col * p.w_scale_stride], bv, static_cast<int>(cs), bias != nullptr,
          p.activation);
    }
  }
}

template <class TA, class TB, class TOut, bool kAsym, ::baracuda::detail::IntGemmTile kT>
Status launch_tile(const ::baracuda::detail::ExecContext& ctx, const GemmParams& p, const char* plan,
                   unsigned parts = 1) {
  const dim3 grid(static_cast<unsigned>((p.n + kT.bn - 1) / kT.bn), static_cast<unsigned>((p.m + kT.bm - 1) / kT.bm),
                  parts);
  const dim3 block(static_cast<unsigned>(kT.threads()));
  const size_t smem = static_cast<size_t>(kT.smem_bytes());
  auto* kernel = &int_gemm_kernel<TA, TB, TOut, kAsym, kT.bm, kT.bn, kT.bk, kT.warps_m, kT.warps_n, kT.stages>;
  BARACUDA_TRY(launch::allow_shared_bytes(kernel, smem, plan));
  BARACUDA_LAUNCH(grid, block, smem, ctx.stream, kernel)(p);
  const auto e = launch::take_last_error();
  if (!e.failed) return {};
  return Error::device(std::string(plan) + ": kernel launch failed: " + e.message, e.code);
}

/// reduce_splits_kernel over the `parts` s32 sums in p.partial (grid-stride over M·N).
template <class TOut, bool kAsym>
Status launch_reduce(const ::baracuda::detail::ExecContext& ctx, const GemmParams& p, int parts, const char* plan) {
  const int64_t blocks = (static_cast<int64_t>(p.m) * p.n + 255) / 256;
  BARACUDA_LAUNCH(dim3(static_cast<unsigned>(blocks < 65535 * 8 ? blocks : 65535 * 8)), dim3(256), 0, ctx.stream,
                  reduce_splits_kernel<TOut, kAsym>)
  (p, parts);
  const auto e = launch::take_last_error();
  if (!e.failed) return {};
  return Error::device(std::string(plan) + ": split-K reduction launch failed: " + e.message, e.code);
}

/// Tile kT with K cut into at most `splits` parts of whole slices (none empty), each writing its raw sums to
/// p.partial, then reduce_splits_kernel.
template <class TA, class TB, class TOut, bool kAsym, ::baracuda::detail::IntGemmTile kT>
Status launch_split(const ::baracuda::detail::ExecContext& ctx, GemmParams p, int splits, const char* plan) {
  const int slices = (p.k + kT.bk - 1) / kT.bk;
  p.slices_per_split = (slices + splits - 1) / splits;
  const int parts = (slices + p.slices_per_split - 1) / p.slices_per_split;
  if (Status s = launch_tile<TA, TB, TOut, kAsym, kT>(ctx, p, plan, static_cast<unsigned>(parts)); !s) return s;
  return launch_reduce<TOut, kAsym>(ctx, p, parts, plan);
}

/// The set's tile for this problem on this device (tuning.hpp's `choose`); the decode tile with K cut into
/// `splits` parts when the plan gave it a workspace for them.
template <class TA, class TB, class TOut, bool kAsym, ::baracuda::detail::IntGemmTileSet kSet>
Status launch_from_set(const ::baracuda::detail::ExecContext& ctx, const GemmParams& p, int splits, const char* plan) {
  using ::baracuda::detail::IntGemmTileKind;
  switch (::baracuda::detail::choose(kSet, p.m, p.n, ctx.multiprocessor_count)) {
    case IntGemmTileKind::Decode:
      if (splits > 1 && p.partial != nullptr && p.k > 0)
        return launch_split<TA, TB, TOut, kAsym, kSet.decode>(ctx, p, splits, plan);
      return launch_tile<TA, TB, TOut, kAsym, kSet.decode>(ctx, p, plan);
    case IntGemmTileKind::Medium: return launch_tile<TA, TB, TOut, kAsym, kSet.medium>(ctx, p, plan);
    case IntGemmTileKind::Large: break;
  }
  return launch_tile<TA, TB, TOut, kAsym, kSet.large>(ctx, p, plan);
}

/// The tile set of this device: the emulator runs the sm_90 set (the same kernels a GPU runs).
template <class TA, class TB, class TOut, bool kAsym>
Status launch(const ::baracuda::detail::ExecContext& ctx, const GemmParams& p, int splits, const char* plan) {
  if (p.m == 0 || p.n == 0) return {};
#if BARACUDA_SIM
  return launch_from_set<TA, TB, TOut, kAsym, ::baracuda::detail::kIntGemmTilesSm90>(ctx, p, splits, plan);
#else
  if constexpr (::baracuda::detail::kIntGemmTilesSm90 == ::baracuda::detail::kIntGemmTilesSm80) {
    return launch_from_set<TA, TB, TOut, kAsym, ::baracuda::detail::kIntGemmTilesSm80>(ctx, p, splits, plan);
  } else {
    if (ctx.sm >= 90)
      return launch_from_set<TA, TB, TOut, kAsym, ::baracuda::detail::kIntGemmTilesSm90>(ctx, p, splits, plan);
    return launch_from_set<TA, TB, TOut, kAsym, ::baracuda::detail::kIntGemmTilesSm80>(ctx, p, splits, plan);
  }
#endif
}

#ifndef BARACUDA_HAVE_SM90A_KERNELS
#define BARACUDA_HAVE_SM90A_KERNELS 0
#endif

/// The wgmma tile (tuning.hpp's choose_wgmma) for an M×N×K problem on `ctx`: only on a compute capability 9.0
/// GPU in a build with sm_90a kernels (device_wgmma.cu), and only for operands its tensor maps can describe
/// (16-byte aligned rows); None elsewhere, and on sim, which runs the mma.sync set.
inline ::baracuda::detail::IntGemmWgmmaKind wgmma_kind(const ::baracuda::detail::ExecContext& ctx, int64_t m, int64_t n,
                                                       int64_t k, const ::baracuda::ConstDynTensor& a,
                                                       const ::baracuda::ConstDynTensor& b, bool s32_out) {
#if !BARACUDA_SIM && BARACUDA_HAVE_SM90A_KERNELS
  const auto rows_aligned = [](const ::baracuda::ConstDynTensor& t) {
    return reinterpret_cast<std::uintptr_t>(t.data) % 16 == 0 && t.stride[0] % 16 == 0;
  };
  if (rows_aligned(a) && rows_aligned(b))
    return ::baracuda::detail::wgmma_for_device(ctx.sm, ctx.multiprocessor_count, m, n, k, s32_out);
#else
  (void)ctx, (void)m, (void)n, (void)k, (void)a, (void)b, (void)s32_out;
#endif
  return ::baracuda::detail::IntGemmWgmmaKind::None;
}

template <class TA, class TB>
Status int_gemm_fn(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::IntGemmLaunch& l) {
#if !BARACUDA_SIM && BARACUDA_HAVE_SM90A_KERNELS
  using ::baracuda::detail::IntGemmWgmmaKind, ::baracuda::detail::kind_index, ::baracuda::kind_of;
  if (const IntGemmWgmmaKind w = wgmma_kind(ctx, l.m, l.n, l.k, l.a, l.b, true); w != IntGemmWgmmaKind::None) {
    const auto& t = int_gemm_wgmma_tables();
    return (w == IntGemmWgmmaKind::Wide ? t.int_gemm_wide : t.int_gemm_narrow)[kind_index(kind_of<TA>)]
                                                                               [kind_index(kind_of<TB>)](ctx, l);
  }
#endif
  return launch<TA, TB, int32_t, false>(ctx, gemm_params(l), l.split.splits, "IntGemmPlan");
}


template <class TA, class T>
Status linear_fn(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::LinearLaunch& l) {
#if !BARACUDA_SIM && BARACUDA_HAVE_SM90A_KERNELS
  using ::baracuda::detail::kind_index, ::baracuda::kind_of;
  if (wgmma_kind(ctx, l.m, l.n, l.k, l.a, l.w, false) != ::baracuda::detail::IntGemmWgmmaKind::None)
    return int_gemm_wgmma_tables().linear[kind_index(kind_of<TA>)][kind_index(kind_of<T>)](ctx, l);
#endif
  const GemmParams p = linear_params(l);
  constexpr const char* kPlan = "QuantizedLinearPlan/SmoothQuantLinearPlan";
  if (p.a_zp != nullptr) return launch<TA, int8_t, T, true>(ctx, p, l.split.splits, kPlan);
  return launch<TA, int8_t, T, false>(ctx, p, l.split.splits, kPlan);
}

/// The symmetric linear epilogue alone, over s32 sums another GEMM wrote (l.split.partial, [splits, M, N]; the
/// cuBLASLt SKU's second step): reduce_splits_kernel, which adds the parts and applies linear_element.
template <class T>
Status linear_epilogue_fn(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::LinearLaunch& l) {
  constexpr const char* kPlan = "QuantizedLinearPlan/SmoothQuantLinearPlan";
  const GemmParams p = linear_params(l);
  if (p.a_zp != nullptr || p.partial == nullptr || l.split.splits < 1)
    return Error::internal(std::string(kPlan) + ": the epilogue takes the s32 sums of a symmetric x");
  if (p.m == 0 || p.n == 0) return {};
  return launch_reduce<T, false>(ctx, p, l.split.splits, kPlan);
}

constexpr ::baracuda::detail::IntGemmTables make_tables() {
  ::baracuda::detail::IntGemmTables t{};
  using ::baracuda::detail::IntGemmOperandTypes, ::baracuda::detail::LinearOutputTypes;
  ::baracuda::detail::add_kind_pair_fns(t.int_gemm, IntGemmOperandTypes{}, IntGemmOperandTypes{},
                                        []<class TA, class TB>(std::type_identity<TA>, std::type_identity<TB>) {
                                          return &int_gemm_fn<TA, TB>;
                                        });
  // f64 outputs (the f64 epilogue) are the host reference's only: their slots stay empty.
  ::baracuda::detail::add_kind_pair_fns(t.linear, IntGemmOperandTypes{}, LinearOutputTypes{},
                                        []<class TA, class T>(std::type_identity<TA>, std::type_identity<T>) {
                                          if constexpr (std::is_same_v<T, double>)
                                            return ::baracuda::detail::LinearFn{};
                                          else
                                            return ::baracuda::detail::LinearFn{&linear_fn<TA, T>};
                                        });
  ::baracuda::detail::add_kind_fns(t.linear_epilogue, LinearOutputTypes{}, []<class T>(std::type_identity<T>) {
    if constexpr (std::is_same_v<T, double>)
      return ::baracuda::detail::LinearFn{};
    else
      return ::baracuda::detail::LinearFn{&linear_epilogue_fn<T>};
  });
  t.wgmma = !BARACUDA_SIM && BARACUDA_HAVE_SM90A_KERNELS;
  return t;
}

}  // namespace int_gemm
BARACUDA_DEVICE_NAMESPACE_END
