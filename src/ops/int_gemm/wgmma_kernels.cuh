// The int8 GEMM of kernels.cuh (C = A·Bᵀ, A [M, K] and B [N, K] K-contiguous, s8/u8 operands, the s32 store
// or the W8A8 linear epilogue) on Hopper's warpgroup MMA: wgmma.mma_async.m64nNk32 (sm_90a) with A and B
// read from shared memory through descriptors. A CANDIDATE, not dispatched by the plans: it runs on sim in
// tests/ops/int_gemm_tiles_test and is timed and checked bit for bit on a GPU by tools/tuning/int_gemm_tiles;
// nothing on hardware has verified it yet (docs/decisions.md, "GEMMs").
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
#include "device/ptx/wgmma.cuh"
#include "baracuda/core/status.hpp"
#include "core/exec_context.hpp"
#include "ops/int_gemm/epilogue.cuh"
#include "ops/int_gemm/tuning.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace int_gemm {

template <class TA, class TB, class TOut, bool kAsym, int BN, int ST>
__global__ void __launch_bounds__(256, 1) int_gemm_wgmma_kernel(GemmParams p) {
  constexpr int BM = 128, BK = 128, NT = 256;
  constexpr int kStageBytes = (BM + BN) * BK;
  static_assert(BN == 128 || BN == 256, "BN: one wgmma.m64n128k32 or m64n256k32 per k-step");
  static_assert(ST >= 3, "ST - 2 slices in flight while the wgmma of slice s - 1 may still run");
  static_assert(!kAsym || BN <= NT, "one thread per column for the column sums");
  constexpr bool kLinear = !std::is_same_v<TOut, int32_t>;
  static_assert(kLinear || !kAsym, "IntGemm has no zero point");

  BARACUDA_DYNAMIC_SHARED(unsigned char, raw);
  const unsigned raw_addr = ptx::smem_address(raw);
  const unsigned pad = (1024u - (raw_addr & 1023u)) & 1023u;
  unsigned char* const smem = raw + pad;  // 1024-byte aligned in the shared window
  const unsigned smem_addr = raw_addr + pad;

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
    const unsigned a_addr = smem_addr + static_cast<unsigned>(stage * kStageBytes + wg * 64 * BK);
    const unsigned b_addr = smem_addr + static_cast<unsigned>(stage * kStageBytes + BM * BK);
    const std::uint64_t da = ptx::wgmma_desc(a_addr, 16, 1024, ptx::WgmmaSwizzle::B128);
    const std::uint64_t db = ptx::wgmma_desc(b_addr, 16, 1024, ptx::WgmmaSwizzle::B128);
    ptx::wgmma_fence_operand(acc);
    ptx::wgmma_fence();
BARACUDA_UNROLL
    for (int kk = 0; kk < BK / 32; ++kk)
      ptx::wgmma_m64nNk32<BN, TA, TB>(acc, ptx::wgmma_desc_advance(da, 32u * kk), ptx::wgmma_desc_advance(db, 32u * kk),
                                      kt > 0 || kk > 0);
    ptx::wgmma_commit();
    if constexpr (kAsym) {
      if (tid < BN) {  // the row's sum does not depend on the order of its swizzled chunks
        const unsigned char* row = smem + stage * kStageBytes + BM * BK + tid * 128;
BARACUDA_UNROLL
        for (int e = 0; e < 128; ++e)
          colsum += std::is_same_v<TB, int8_t> ? static_cast<int>(static_cast<int8_t>(row[e])) : static_cast<int>(row[e]);
      }
    }
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

template <class TA, class TB, class TOut, bool kAsym, ::baracuda::detail::IntGemmWgmmaTile kT>
Status launch_wgmma_tile(const ::baracuda::detail::ExecContext& ctx, const GemmParams& p, const char* plan) {
  if (p.m == 0 || p.n == 0) return {};
#if !BARACUDA_SIM
  if (ctx.sm != 90) return Error::unsupported(std::string(plan) + ": the wgmma kernel is sm_90a code (compute capability 9.0)");
#endif
  const dim3 grid(static_cast<unsigned>((p.n + kT.bn - 1) / kT.bn), static_cast<unsigned>((p.m + kT.bm - 1) / kT.bm));
  const dim3 block(static_cast<unsigned>(kT.threads()));
  const size_t smem = static_cast<size_t>(kT.smem_bytes());
  auto* kernel = &int_gemm_wgmma_kernel<TA, TB, TOut, kAsym, kT.bn, kT.stages>;
#if !BARACUDA_SIM
  const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  if (e != cudaSuccess) return Error::device(std::string(plan) + ": cudaFuncSetAttribute: " + cudaGetErrorString(e), e);
#endif
  BARACUDA_LAUNCH(grid, block, smem, ctx.stream, kernel)(p);
  const auto le = launch::take_last_error();
  if (!le.failed) return {};
  return Error::device(std::string(plan) + ": kernel launch failed: " + le.message, le.code);
}

}  // namespace int_gemm
BARACUDA_DEVICE_NAMESPACE_END
