// The int8 GEMM of kernels.cuh (C = A·Bᵀ, A [M, K] and B [N, K] K-contiguous, s8/u8 operands, the s32 store
// or the W8A8 linear epilogue) on Hopper's warpgroup MMA: wgmma.mma_async.m64nNk32 (sm_90a) with A and B
// read from shared memory through descriptors. The plans run its TMA-fed form past decode on a compute
// capability 9.0 GPU (tuning.hpp's choose_wgmma, device_wgmma.cu's table); it runs on sim in
// tests/ops/int_gemm_tiles_test, and tools/tuning/int_gemm_tiles times every candidate on a GPU and checks it
// bit for bit (docs/perf/2026-11-26-h100: exact at every shape, docs/decisions.md "GEMMs").
//
// Block tile: BM = 128 rows (two consumer warpgroups of 64 rows each, 256 threads, no producer warps) × BN
// columns (128 or 256: one wgmma.m64n{BN}k32 per warpgroup and k-step), BK = 128 bytes of K per slice.
// Shared memory per stage: the A slice (128 rows × 128 bytes) then the B slice (BN rows × 128 bytes), each
// in the K-major 128-byte-swizzle layout of the wgmma descriptors: row r at r·128 bytes, its 16-byte chunk c
// at chunk position c ^ (r % 8) (8-row atoms of 1024 bytes, SBO = 1024; LBO unused). Stages start on
// 1024-byte boundaries of the shared window (the dynamic buffer is aligned at run time), which is what the
// descriptors' base offset 0 requires. A k-step (32 bytes of K) advances both descriptors' start addresses by
// 32 bytes within the row.
//
// Pipeline (ST ≥ 3 stages): slices are filled by 16-byte cp.async.cg copies, zero-filled past the M/N/K
// edges (K % 16 == 0, as for kernels.cuh, so a chunk is wholly inside or outside K), one commit group per
// slice, ST − 2 slices ahead. Per slice s: wait for its copies, fence.proxy.async.shared::cta (cp.async writes
// are generic-proxy writes; wgmma reads through the async proxy), barrier; refill the stage of slice s − 2
// (retired: every warpgroup waited for its wgmma group s − 2 before this barrier); wgmma.fence, four
// wgmma k-steps, commit, wgmma.wait_group 1 (slice s − 1's group retires). After the last slice,
// wait_group 0.
//
// Epilogue: the wgmma accumulators of a warp are m16n8 C fragments over BN/8 column blocks (warp w of
// warpgroup j owns rows 64j + 16w .. + 15), so the mma.sync kernel's store_fragments (epilogue.cuh) runs on
// them unchanged (MI = 1, NI = BN/8), with the asymmetric column sums taken from the B slices in shared
// memory as there.
//
// The accumulators are not zeroed before the main loop: the first k-step runs with scale-d = 0 (and K = 0
// zeroes them after it). With a zeroing before the loop, ptxas (nvcc 13.0) reported C7515 for the BN = 256
// s32 kernel (wgmma serialized: "non wgmma instructions defining accumulator registers ... between start and
// end of the pipeline stage").
//
// Under sim a wgmma is computed when wait_group retires it (device/ptx/wgmma.cuh), so a stage refilled before
// its wgmma retired, or a missing wait, fails the sim tests; the fences are no-ops there, so a missing
// fence.proxy.async or wgmma.fence shows only on a GPU (the tuning program's bit-exact comparison).
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <cstdint>
#include <string>
#include <type_traits>

#include "device/ptx/cp_async.cuh"
#include "device/shared_bytes.cuh"
#include "device/ptx/mbarrier.cuh"
#include "device/ptx/tma.cuh"
#include "device/ptx/wgmma.cuh"
#include "baracuda/core/status.hpp"
#include "core/exec_context.hpp"
#include "ops/int_gemm/epilogue.cuh"
#include "ops/int_gemm/tuning.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace int_gemm {

inline constexpr int kWgmmaBM = 128, kWgmmaBK = 128;

/// One slice's work of consumer warpgroup `cwg` (rows 64·cwg .. 64·cwg + 63 of the block): four wgmma
/// k-steps over the stage at `stage` (window address `stage_addr`, 1024-byte aligned: A's 128 rows, then B's
/// BN rows, 128 swizzled bytes each), committed as one group; with `accumulate` false the first k-step
/// overwrites the accumulators. Consumer thread `ctid` < BN adds B row ctid's bytes to its column sum
/// (asymmetric linear epilogue; a row's sum does not depend on the order of its swizzled chunks).
template <class TA, class TB, bool kAsym, int BN>
__device__ __forceinline__ void wgmma_slice(int (&acc)[BN / 2], int& colsum, const unsigned char* stage,
                                            unsigned stage_addr, int cwg, int ctid, bool accumulate) {
  constexpr int BM = kWgmmaBM, BK = kWgmmaBK;
  const std::uint64_t da = ptx::wgmma_desc(stage_addr + static_cast<unsigned>(cwg * 64 * BK), 16, 1024, ptx::WgmmaSwizzle::B128);
  const std::uint64_t db = ptx::wgmma_desc(stage_addr + static_cast<unsigned>(BM * BK), 16, 1024, ptx::WgmmaSwizzle::B128);
  ptx::wgmma_fence_operand(acc);
  ptx::wgmma_fence();
BARACUDA_UNROLL
  for (int kk = 0; kk < BK / 32; ++kk)
    ptx::wgmma_m64nNk32<BN, TA, TB>(acc, ptx::wgmma_desc_advance(da, 32u * kk), ptx::wgmma_desc_advance(db, 32u * kk),
                                    accumulate || kk > 0);
  ptx::wgmma_commit();
  if constexpr (kAsym) {
    if (ctid < BN) {
      const unsigned char* row = stage + BM * BK + ctid * 128;
BARACUDA_UNROLL
      for (int e = 0; e < 128; ++e)
        colsum += std::is_same_v<TB, int8_t> ? static_cast<int>(static_cast<int8_t>(row[e])) : static_cast<int>(row[e]);
    }
  }
}

template <class TA, class TB, class TOut, bool kAsym, int BN, int ST>
__global__ void __launch_bounds__(256, 1) int_gemm_wgmma_kernel(GemmParams p) {
  constexpr int BM = kWgmmaBM, BK = kWgmmaBK, NT = 256;
  constexpr int kStageBytes = (BM + BN) * BK;
  static_assert(BN == 128 || BN == 256, "BN: one wgmma.m64n128k32 or m64n256k32 per k-step");
  static_assert(ST >= 3, "ST - 2 slices in flight while the wgmma of slice s - 1 may still run");
  static_assert(!kAsym || BN <= NT, "one thread per column for the column sums");
  constexpr bool kLinear = !std::is_same_v<TOut, int32_t>;
  static_assert(kLinear || !kAsym, "IntGemm has no zero point");

  BARACUDA_DYNAMIC_SHARED(unsigned char, raw);
  const ptx::SharedAligned1024 aligned = ptx::align_shared_1024(raw);
  unsigned char* const smem = aligned.ptr;
  const unsigned smem_addr = aligned.addr;

  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid & 31, warp = tid >> 5, wg = warp >> 2;
  const int m0 = static_cast<int>(blockIdx.y) * BM, n0 = static_cast<int>(blockIdx.x) * BN;
  const int ktiles = (p.k + BK - 1) / BK;

  auto load_slice = [&](int stage, int kt) {
    unsigned char* as = smem + stage * kStageBytes;
    unsigned char* bs = as + BM * BK;
    const int k0 = kt * BK;
BARACUDA_UNROLL
    for (int i = tid; i < BM * 8; i += NT) {
      const int r = i >> 3, c = i & 7, gm = m0 + r, gk = k0 + c * 16;
      const bool ok = gm < p.m && gk < p.k;
      const unsigned char* src = ok ? p.a + static_cast<int64_t>(gm) * p.lda + gk : p.a;
      ptx::cp_async_cg_zfill(as + r * 128 + ((c ^ (r & 7)) << 4), src, ok ? 16 : 0);
    }
BARACUDA_UNROLL
    for (int i = tid; i < BN * 8; i += NT) {
      const int r = i >> 3, c = i & 7, gn = n0 + r, gk = k0 + c * 16;
      const bool ok = gn < p.n && gk < p.k;
      const unsigned char* src = ok ? p.b + static_cast<int64_t>(gn) * p.ldb + gk : p.b;
      ptx::cp_async_cg_zfill(bs + r * 128 + ((c ^ (r & 7)) << 4), src, ok ? 16 : 0);
    }
  };

  int acc[BN / 2];
  int colsum = 0;  // Σ_k b[n0 + tid, k] (asymmetric linear only)

BARACUDA_UNROLL
  for (int s = 0; s < ST - 2; ++s) {
    if (s < ktiles) load_slice(s, s);
    ptx::cp_async_commit();
  }
  for (int kt = 0; kt < ktiles; ++kt) {
    ptx::cp_async_wait<ST - 3>();  // this thread's copies of slice kt have landed
    ptx::fence_proxy_async_shared();
    __syncthreads();  // everyone's have; and every warpgroup has retired its wgmmas of slice kt - 2
    const int next = kt + ST - 2;
    if (next < ktiles) load_slice(next % ST, next);
    ptx::cp_async_commit();

    const int stage = kt % ST;
    wgmma_slice<TA, TB, kAsym, BN>(acc, colsum, smem + stage * kStageBytes,
                                   smem_addr + static_cast<unsigned>(stage * kStageBytes), wg, tid, kt > 0);
    ptx::wgmma_wait<1>();
    ptx::wgmma_fence_operand(acc);
  }
  ptx::wgmma_wait<0>();
  ptx::wgmma_fence_operand(acc);
  if (ktiles == 0) {
BARACUDA_UNROLL
    for (int i = 0; i < BN / 2; ++i) acc[i] = 0;
  }

  int* colsum_s = reinterpret_cast<int*>(smem);
  if constexpr (kAsym) {
    ptx::cp_async_wait_all();
    __syncthreads();  // every warp is done reading the pipeline buffers
    if (tid < BN) colsum_s[tid] = colsum;
    __syncthreads();
  }
  store_fragments<TOut, kAsym, 1, BN / 8>(p, m0, wg * 64 + (warp & 3) * 16, n0, 0, lane, colsum_s,
                                          [&](int, int ni, int e) { return acc[4 * ni + e]; });
}

/// The same GEMM with its operands brought in by the tensor memory accelerator: 384 threads, warpgroup 0 the
/// producer (one thread issues every copy; the warpgroup gives back its registers), warpgroups 1 and 2 the
/// consumers of kernel above (rows 0..63 and 64..127 of the block, registers claimed for the accumulators).
/// Per slice kt, in stage kt % ST (round r = kt / ST): the producer waits on empty[stage] (parity (r & 1) ^ 1,
/// which the first round passes at once), announces the stage's bytes on full[stage] and issues two box
/// copies (A: 128 rows × 128 K bytes at (k0, m0); B: BN rows at (k0, n0); 128B swizzle, zero outside the
/// tensors: the ragged edges). Each consumer waits on full[stage] (parity r & 1), runs wgmma_slice, waits
/// until only that group is pending (slice kt − 1's has retired) and then releases slice kt − 1's stage:
/// lane 0 of each of the 8 consumer warps arrives on its empty barrier (count 8). After the set-up no
/// block-wide barrier: the producer warpgroup exits when it has issued the last copy (so that it keeps no
/// accumulator registers alive across a join), and the consumers publish their column sums through an
/// mbarrier of their own. Shared memory: the stages (1024-byte aligned), full[ST], empty[ST], that barrier,
/// and BN column sums.
template <class TA, class TB, class TOut, bool kAsym, int BN, int ST>
__global__ void __launch_bounds__(384, 1)
    int_gemm_wgmma_tma_kernel(GemmParams p, const BARACUDA_GRID_CONSTANT ptx::TensorMap map_a,
                              const BARACUDA_GRID_CONSTANT ptx::TensorMap map_b) {
  constexpr int BM = kWgmmaBM, BK = kWgmmaBK;
  constexpr int kStageBytes = (BM + BN) * BK;
  static_assert(BN == 128 || BN == 256, "BN: one wgmma.m64n128k32 or m64n256k32 per k-step");
  static_assert(ST >= 2, "at least two stages");
  constexpr bool kLinear = !std::is_same_v<TOut, int32_t>;
  static_assert(kLinear || !kAsym, "IntGemm has no zero point");

  BARACUDA_DYNAMIC_SHARED(unsigned char, raw);
  const ptx::SharedAligned1024 aligned = ptx::align_shared_1024(raw);
  unsigned char* const smem = aligned.ptr;
  const unsigned smem_addr = aligned.addr;
  auto* const full = reinterpret_cast<std::uint64_t*>(smem + ST * kStageBytes);
  std::uint64_t* const empty = full + ST;
  std::uint64_t* const sums_ready = empty + ST;  // the consumers' own barrier (256 threads)
  int* const colsum_s = reinterpret_cast<int*>(sums_ready + 1);

  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid & 31, warp = tid >> 5, wg = warp >> 2;
  const int m0 = static_cast<int>(blockIdx.y) * BM, n0 = static_cast<int>(blockIdx.x) * BN;
  const int ktiles = (p.k + BK - 1) / BK;

  if (tid == 0) {
    if (ktiles > 0) {  // (with K = 0 the maps are not encoded: there is nothing to copy)
      ptx::prefetch_tensor_map(map_a);
      ptx::prefetch_tensor_map(map_b);
    }
BARACUDA_UNROLL
    for (int s = 0; s < ST; ++s) {
      ptx::mbarrier_init(&full[s], 1);
      ptx::mbarrier_init(&empty[s], 8);
    }
    ptx::mbarrier_init(sums_ready, 256);
    ptx::fence_mbarrier_init();
  }
  __syncthreads();

  if (wg == 0) {  // the producer; it never meets the consumers at a barrier, so it holds no accumulators
    ptx::warpgroup_release_registers<40>();
    if (tid == 0) {
      for (int kt = 0; kt < ktiles; ++kt) {
        const int stage = kt % ST;
        const unsigned round = static_cast<unsigned>(kt / ST);
        ptx::mbarrier_wait_parity(&empty[stage], (round & 1u) ^ 1u);
        ptx::mbarrier_arrive_expect_tx(&full[stage], kStageBytes);
        unsigned char* as = smem + stage * kStageBytes;
        ptx::tma_load_2d(as, map_a, &full[stage], kt * BK, m0);
        ptx::tma_load_2d(as + BM * BK, map_b, &full[stage], kt * BK, n0);
      }
    }
    return;
  }

  ptx::warpgroup_claim_registers<232>();
  const int cwg = wg - 1, ctid = tid - 128;
  int acc[BN / 2];
  int colsum = 0;  // Σ_k b[n0 + ctid, k] (asymmetric linear only)
  for (int kt = 0; kt < ktiles; ++kt) {
    const int stage = kt % ST;
    ptx::mbarrier_wait_parity(&full[stage], static_cast<unsigned>(kt / ST) & 1u);
    wgmma_slice<TA, TB, kAsym, BN>(acc, colsum, smem + stage * kStageBytes,
                                   smem_addr + static_cast<unsigned>(stage * kStageBytes), cwg, ctid, kt > 0);
    ptx::wgmma_wait<1>();  // slice kt - 1's wgmmas have retired: its stage may be refilled
    ptx::wgmma_fence_operand(acc);
    if (kt > 0) {
      __syncwarp();  // (the warp's column-sum reads of that stage are done too)
      if (lane == 0) ptx::mbarrier_arrive(&empty[(kt - 1) % ST]);
    }
  }
  ptx::wgmma_wait<0>();
  ptx::wgmma_fence_operand(acc);
  if (ktiles == 0) {
BARACUDA_UNROLL
    for (int i = 0; i < BN / 2; ++i) acc[i] = 0;
  }
  if constexpr (kAsym) {  // publish the column sums to every consumer (the producer has left: no __syncthreads)
    if (ctid < BN) colsum_s[ctid] = colsum;
    ptx::mbarrier_arrive(sums_ready);
    ptx::mbarrier_wait_parity(sums_ready, 0);
  }
  store_fragments<TOut, kAsym, 1, BN / 8>(p, m0, cwg * 64 + (warp & 3) * 16, n0, 0, lane, colsum_s,
                                          [&](int, int ni, int e) { return acc[4 * ni + e]; });
}

/// The two tensor maps of the TMA kernel: A [M, K] and B [N, K], bytes, boxes of 128 K bytes × 128 / BN rows.
inline std::string wgmma_tensor_maps(ptx::TensorMap& a, ptx::TensorMap& b, const GemmParams& p, int bn) {
  ptx::TensorMapSpec2d s;
  s.base = p.a, s.cols = static_cast<std::uint64_t>(p.k), s.rows = static_cast<std::uint64_t>(p.m);
  s.row_bytes = static_cast<std::uint64_t>(p.lda), s.box_cols = kWgmmaBK, s.box_rows = kWgmmaBM;
  s.swizzle = ptx::TmaSwizzle::B128;
  if (std::string why = ptx::encode_tensor_map_2d(a, s); !why.empty()) return "A: " + why;
  s.base = p.b, s.rows = static_cast<std::uint64_t>(p.n), s.row_bytes = static_cast<std::uint64_t>(p.ldb);
  s.box_rows = static_cast<unsigned>(bn);
  if (std::string why = ptx::encode_tensor_map_2d(b, s); !why.empty()) return "B: " + why;
  return {};
}

template <class TA, class TB, class TOut, bool kAsym, ::baracuda::detail::IntGemmWgmmaTile kT>
Status launch_wgmma_tile(const ::baracuda::detail::ExecContext& ctx, const GemmParams& p, const char* plan) {
  if (p.m == 0 || p.n == 0) return {};
#if !BARACUDA_SIM
  if (ctx.sm != 90) return Error::unsupported(std::string(plan) + ": the wgmma kernel is sm_90a code (compute capability 9.0)");
#endif
  const dim3 grid(static_cast<unsigned>((p.n + kT.bn - 1) / kT.bn), static_cast<unsigned>((p.m + kT.bm - 1) / kT.bm));
  const dim3 block(static_cast<unsigned>(kT.threads()));
  const size_t smem = static_cast<size_t>(kT.smem_bytes());
  auto start = [&](auto* kernel, const auto&... maps) -> Status {
    BARACUDA_TRY(launch::allow_shared_bytes(kernel, smem, plan));
    BARACUDA_LAUNCH(grid, block, smem, ctx.stream, kernel)(p, maps...);
    return {};
  };
  if constexpr (kT.tma) {
    ptx::TensorMap map_a{}, map_b{};
    if (p.k > 0) {
      if (std::string why = wgmma_tensor_maps(map_a, map_b, p, kT.bn); !why.empty())
        return Error::invalid(std::string(plan) + ": " + why);
    }
    if (Status s = start(&int_gemm_wgmma_tma_kernel<TA, TB, TOut, kAsym, kT.bn, kT.stages>, map_a, map_b); !s) return s;
  } else {
    if (Status s = start(&int_gemm_wgmma_kernel<TA, TB, TOut, kAsym, kT.bn, kT.stages>); !s) return s;
  }
  const auto le = launch::take_last_error();
  if (!le.failed) return {};
  return Error::device(std::string(plan) + ": kernel launch failed: " + le.message, le.code);
}

}  // namespace int_gemm
BARACUDA_DEVICE_NAMESPACE_END
