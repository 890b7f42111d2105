/// \file
/// \brief The main-loop step of the 8-bit tensor-core GEMMs (the int8 GEMM, ops/int_gemm/kernels.cuh, and the
/// FP8 GEMM, ops/fp8_gemm/kernels.cuh): C = A·Bᵀ with A [M, K] and B [N, K], both K-contiguous 8-bit
/// operands, streamed in BK-byte slices of K through shared memory, and m16n8k32 MMAs on them.
///
/// - `load_tile` fills one operand's ROWS×BK slice with 16-byte cp.async copies (.cg, zero-fill past the row
///   and K edges; K % 16 == 0, so a 16-byte chunk is either wholly inside K or wholly outside). Rows are BK
///   bytes; their 16-byte chunks are XOR-swizzled with the row index (`swz`) so that the 8 rows an ldmatrix
///   phase reads hit 8 distinct bank groups.
/// - `slice_mma` runs one slice for a warp's MI×NI m16n8 fragments: per 32-wide k step (ascending), an
///   ldmatrix.x4 loads the A fragment (16×32 bytes = 16×16 b16) of each 16 rows and an x4 loads the B fragments
///   of two n8 tiles (B [N, K] non-transposed is the "col" operand), then `mma(acc[mi][ni], af[mi], bf[ni])`
///   for every fragment: the caller's m16n8k32 (s32 accumulators for int8, f32 for FP8: the fragment layouts of
///   the two instructions are the same).
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <cstdint>

#include "device/ptx/cp_async.cuh"
#include "device/ptx/ldmatrix.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace mma8 {

/// Byte offset of 16-byte chunk `c` of row `r` in a slice with CPR chunks per row (XOR swizzle).
template <int CPR>
__device__ __forceinline__ int swz(int r, int c) {
  constexpr int kMask = (CPR >= 8 ? 8 : CPR) - 1;
  constexpr int kShift = CPR >= 8 ? 0 : CPR == 4 ? 1 : CPR == 2 ? 2 : 3;
  return r * (CPR * 16) + ((c ^ ((r >> kShift) & kMask)) * 16);
}

/// Issues the copies of rows r0 .. r0 + ROWS − 1, bytes k0 .. k0 + BK − 1 of the [rows, k] operand at `g`
/// (row stride `ld` bytes) into the slice `s`, NT threads sharing the 16-byte chunks; zeros past the edges.
template <int ROWS, int BK, int NT>
__device__ __forceinline__ void load_tile(unsigned char* s, const unsigned char* g, int64_t ld, int r0, int rows,
                                          int k0, int k, int tid) {
  constexpr int CPR = BK / 16;
  for (int i = tid; i < ROWS * CPR; i += NT) {
    const int r = i / CPR, c = i % CPR, gr = r0 + r, gk = k0 + c * 16;
    const bool ok = gr < rows && gk < k;
    const unsigned char* src = ok ? g + static_cast<int64_t>(gr) * ld + gk : g;
    ptx::cp_async_cg_zfill(s + swz<CPR>(r, c), src, ok ? 16 : 0);
  }
}

/// One BK slice for a warp's fragments: `as` the A slice (the warp's rows from wm0), `bs` the B slice (its
/// columns from wn0); `mma(acc[mi][ni], a_fragment, b_fragment)` accumulates one m16n8k32 step.
template <int MI, int NI, int BK, class Acc, class Mma>
__device__ __forceinline__ void slice_mma(Acc (&acc)[MI][NI][4], const unsigned char* as, const unsigned char* bs,
                                          int wm0, int wn0, int lane, Mma&& mma) {
  constexpr int CPR = BK / 16;
  static_assert(BK % 32 == 0 && (CPR <= 8 || CPR % 8 == 0), "BK: a multiple of 32 (and of 128 above 128)");
  static_assert(NI % 2 == 0, "B fragments are loaded two n8 tiles at a time");
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
      for (int ni = 0; ni < NI; ++ni) mma(acc[mi][ni], af[mi], bf[ni]);
  }
}

}  // namespace mma8
BARACUDA_DEVICE_NAMESPACE_END
