// The attention family's FlashAttention-2 forward kernel (f16/bf16 q, k, v, o; f32 scores, softmax and sums;
// attention.hpp has the contract), on mma.sync m16n8k16.
//
// One block per (query tile, query head, batch): grid x query tiles of the longest sequence, y heads, z batches;
// 4 warps, each owning MT m16 tiles of rows (MT = 1: 64-row tiles, warp w rows 16w..16w+15; MT = 2, FlashAttention-
// 2's 128-row tile at d ≤ 128: warp w rows 32w..32w+31, each K/V fragment loaded once for both m-tiles). The block
// finds its sequence (padded: b·S; varlen: the effective cu_seqlens, a warp-wide running maximum of the offsets,
// attention.hpp) and returns at once when its tile starts past the sequence's rows. Shared memory (the dense GEMM's
// tiles, src/ops/gemm/tc_kernels.cuh: rows of 16-byte chunks along d, XOR-swizzled by tc_swz, filled by
// tc_load_tile, zeros past the edges): the Q tile (64·MT × d), one K tile and one V tile (BN×d; BN = 64 for d = 64,
// 32 for d = 96 and 128, 16 for d = 256): at MT = 1 24 KiB for d = 64, 32 KiB for d = 96 (rows padded to 128
// elements) and 128, 48 KiB for d = 256; at MT = 2 32 KiB for d = 64, 48 KiB for d = 96 and 128 (no opt-in).
//
// The Q fragments (d/16 ldmatrix.x4 per warp) stay in registers for the whole loop at MT = 1 and d ≤ 128; otherwise
// they are read from shared memory per KV tile. Per KV tile j (only the tiles the causal/window bounds of the
// block's rows can see):
//   wait K_j; barrier; issue V_j by cp.async;  S = Q·K_jᵀ by mma (K's rows as the col operand, plain ldmatrix);
//   mask (edge tiles only, per element: -inf); online softmax on the accumulator fragments in f32: the row max
//   over the quad (2 shuffles), m' = max(m, rowmax), α = 2^((m − m')·τ·log2 e) (exactly 1 when m' = m),
//   P = 2^(S·τ·log2 e − m'·τ·log2 e)
//   (one fma and ex2.approx.ftz: a P below 2^-126 is 0; a row whose max is −inf uses 0, so masked entries give
//   0, never NaN),
//   l = α·l + Σ P
//   (per-thread partial sums, the quad's summed once at the end), O = α·O (skipped when every α of the warp is 1);
//   barrier (K_j free); issue K_{j+1}; wait V_j; barrier;
//   O += P·V_j by mma, with P rounded to the element kind in registers as the A operand (the S accumulator
//   layout is the A fragment layout) and V through ldmatrix.trans.
// Then l is summed over the quad, o = O·(1/l) rounded once, lse = m·τ + ln l; l = 0 (no visible key) or NaN gives
// o = 0 and lse = +inf. Every sum has a fixed order and there are no atomics: bit-stable. Each row's sums are the
// same at MT = 1 and 2 (the same mma chain per accumulator, the same K/V tiles): the two give the same bits.
// Paged (PagedPrefillPlan): the same kernel with K/V rows gathered through the block table as the tiles load
// (fa_load_paged_rows, or tc_load_rows for rows not 16-byte aligned and in the 128-row kernel at d = 128; a page
// outside the cache gives zero rows and masked keys), s_k the sequence's context length; each warp holds a tile's
// pages in its lanes (paged_keys.cuh), the next tile's loaded while S_j is computed. An
// FP8/int8 cache's rows load by 8-byte chunks, widened exactly to T in the tile (fa_load_rows_narrow: no cp.async),
// with τ·k_scale in the scores and v_scale in o.
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "baracuda/core/element.hpp"
#include "baracuda/core/status.hpp"
#include "core/exec_context.hpp"
#include "device/convert.cuh"
#include "device/elementwise.cuh"  // BARACUDA_UNROLL
#include "device/ptx/cp_async.cuh"
#include "device/ptx/cvt.cuh"
#include "device/ptx/ldmatrix.cuh"
#include "device/ptx/math.cuh"
#include "device/ptx/mma.cuh"
#include "ops/attention/paged_keys.cuh"
#include "ops/attention/tables.hpp"
#include "ops/gemm/tc_kernels.cuh"  // TcOperand, tc_swz, tc_load_tile, tc_store2

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace attention {

using ::baracuda::gemm::tc_load_tile;
using ::baracuda::gemm::tc_swz;
using ::baracuda::gemm::TcOperand;

/// A block's 4 warps each own MT m16 tiles of query rows: 64 rows a block (MT = 1, the default) or 128 (MT = 2,
/// FlashAttention-2's tile for d ≤ 128; FlashAttentionTile::Rows128).
inline constexpr int kFaThreads = 128;
constexpr int fa_block_m(int mt) { return 4 * 16 * mt; }
/// Keys per K/V tile for head dimension d: 64 for d = 64, 32 for d = 96 and 128 (64 would take the registers past
/// 255 and spill: at MT = 1 with Q's fragments held in registers, at MT = 2 with O's 128), 16 for d = 256 (within
/// 48 KiB of shared memory; MT = 1 only).
constexpr int fa_block_n(int d) { return d > 128 ? 16 : d > 64 ? 32 : 64; }

/// Elements per shared-memory row for head dimension d: d, or 128 for d = 96 (tc_swz swizzles rows of a power-of-two
/// number of 16-byte chunks; chunks 12..15 of a d = 96 row are zeros, never read by an ldmatrix).
constexpr int fa_row_elems(int d) { return d == 96 ? 128 : d; }
/// Shared memory of the kernel for head dimension d and MT: the Q, K and V tiles (48 KiB at most).
constexpr int fa_smem_bytes(int d, int mt = 1) { return (fa_block_m(mt) + 2 * fa_block_n(d)) * fa_row_elems(d) * 2; }

struct FaParams {
  ::baracuda::detail::FlashAttentionLaunch l;
  float scale_log2 = 0;                              ///< τ·log2 e
  bool q_vec = false, k_vec = false, v_vec = false;  ///< 16-byte aligned rows: cp.async copies
};

/// The effective cu_seqlens boundary b (attention.hpp): min(total, max(0, c[0], ..., c[b])), by one warp (every
/// lane gets it).
__device__ __forceinline__ int fa_effective(const int32_t* cu, int b, int total, int lane) {
  int m = 0;
  for (int i = lane; i <= b; i += 32) m = max(m, static_cast<int>(cu[i]));
  BARACUDA_UNROLL
  for (int d = 16; d >= 1; d /= 2) m = max(m, __shfl_xor_sync(0xffffffffu, m, d));
  return min(m, total);
}

/// Two f32 values as the element kind's pair (low half: `lo`).
template <class T>
__device__ __forceinline__ unsigned fa_pack(float lo, float hi) {
  if constexpr (std::is_same_v<T, __half>)
    return ptx::cvt_rn_f16x2_bits(lo, hi);
  else
    return ptx::cvt_rn_bf16x2_bits(lo, hi);
}

/// Eight FP8/int8 codes (`raw`'s bytes, the first lowest) widened to T, exactly (E4M3 and int8 codes are exact in
/// f16 and bf16), packed in pairs.
template <class T, class C>
__device__ __forceinline__ void fa_widen8(unsigned long long raw, unsigned (&w)[4]) {
  C x[8];
  std::memcpy(static_cast<void*>(x), &raw, sizeof(x));
  BARACUDA_UNROLL
  for (int e = 0; e < 4; ++e)
    w[e] = fa_pack<T>(convert::code_to_float(x[2 * e]), convert::code_to_float(x[2 * e + 1]));
}

/// Codes gi .. gi + 7 of `row` as fa_widen8 takes them: one 8-byte load when `vec` (8-byte aligned), else element
/// loads.
template <class C>
__device__ __forceinline__ unsigned long long fa_read8(const C* row, int gi, bool vec) {
  if (vec) return *reinterpret_cast<const unsigned long long*>(row + gi);
  C x[8];
  BARACUDA_UNROLL
  for (int e = 0; e < 8; ++e) x[e] = row[gi + e];
  unsigned long long raw;
  std::memcpy(&raw, static_cast<const void*>(x), sizeof(raw));
  return raw;
}

/// Calls f(r, c, gi, row) for each chunk this thread fills of a ROWS×(8·CPR) tile of an FP8/int8 cache: chunk
/// i = tid + it·NT is row r = i / CPR's elements gi = 8c .. 8c + 7 (c = i % CPR), and `row` is row_of(outer0 + r), or
/// nullptr for rows past o.outer_n and chunks past o.inner_n. row_of is called for every chunk of every thread, in
/// range or not (it may shuffle: tc_load_rows with `Nullable`).
template <class C, int ROWS, int CPR, int NT, class RowOf, class F>
__device__ __forceinline__ void fa_narrow_chunks(const TcOperand& o, RowOf row_of, int outer0, int tid, F f) {
  static_assert((ROWS * CPR) % NT == 0, "whole chunks per thread");
  BARACUDA_UNROLL
  for (int it = 0; it < ROWS * CPR / NT; ++it) {
    const int i = tid + it * NT;
    const int r = i / CPR, c = i % CPR;
    const int go = outer0 + r, gi = c * 8;
    const C* row = row_of(go);  // convergent: every thread, every chunk
    if (go >= o.outer_n || gi >= o.inner_n) row = nullptr;
    f(r, c, gi, row);
  }
}

/// Fills a BN×(8·CPR) K or V tile from an FP8/int8 cache: each 8-element chunk of a row is one 8-byte load (element
/// loads unless `o.vec`), its codes widened to T (fa_widen8), and one 16-byte shared store; rows past o.outer_n,
/// chunks past o.inner_n and rows on a masked page (nullptr) are zeros. Synchronous: the chunked prefill's loader.
template <class T, class C, int ROWS, int CPR, int NT, class RowOf>
__device__ __forceinline__ void fa_load_rows_narrow(unsigned char* s, const TcOperand& o, RowOf row_of, int outer0,
                                                    int tid) {
  fa_narrow_chunks<C, ROWS, CPR, NT>(o, row_of, outer0, tid, [&](int r, int c, int gi, const C* row) {
    unsigned w[4] = {0, 0, 0, 0};
    if (row != nullptr) fa_widen8<T, C>(fa_read8(row, gi, o.vec), w);
    *reinterpret_cast<uint4*>(s + tc_swz<CPR>(r, c)) = make_uint4(w[0], w[1], w[2], w[3]);
  });
}

/// The asynchronous form of fa_load_rows_narrow, in two steps. fa_stage_codes copies the codes of a ROWS×(8·CPR)
/// tile as they are stored, row r's chunk c at `codes + r·8·CPR + 8c`: 8-byte cp.async copies where `o.vec` (zero-
/// filled for rows past o.outer_n, chunks past o.inner_n and masked rows; `any` is a global address for their empty
/// copies), else element loads and an 8-byte shared store. fa_widen_codes then widens them into the T tile that
/// fa_load_rows_narrow would have filled. A thread widens exactly the chunks it staged: after its own cp.async wait,
/// no barrier is needed between the two.
template <class C, int ROWS, int CPR, int NT, class RowOf>
__device__ __forceinline__ void fa_stage_codes(unsigned char* codes, const TcOperand& o, RowOf row_of, int outer0,
                                               int tid, const void* any) {
  fa_narrow_chunks<C, ROWS, CPR, NT>(o, row_of, outer0, tid, [&](int r, int c, int gi, const C* row) {
    unsigned char* dst = codes + r * (CPR * 8) + c * 8;
    if (o.vec)
      ptx::cp_async_ca_zfill<8>(dst, row != nullptr ? static_cast<const void*>(row + gi) : any, row != nullptr ? 8 : 0);
    else
      *reinterpret_cast<unsigned long long*>(dst) = row != nullptr ? fa_read8(row, gi, false) : 0;
  });
}

template <class T, class C, int ROWS, int CPR, int NT>
__device__ __forceinline__ void fa_widen_codes(unsigned char* s, const unsigned char* codes, int tid) {
  BARACUDA_UNROLL
  for (int it = 0; it < ROWS * CPR / NT; ++it) {
    const int i = tid + it * NT;
    const int r = i / CPR, c = i % CPR;
    unsigned w[4];
    fa_widen8<T, C>(*reinterpret_cast<const unsigned long long*>(codes + r * (CPR * 8) + c * 8), w);
    *reinterpret_cast<uint4*>(s + tc_swz<CPR>(r, c)) = make_uint4(w[0], w[1], w[2], w[3]);
  }
}

/// Fills a BN×(8·CPR) K or V tile of a paged 16-bit cache at `base` by cp.async (16-byte aligned rows: the operand's
/// `vec`): row r is key keys.kv0 + r, at base + `rows`' offset of it (PagedKeys::offsets; a masked key: zeros),
/// and chunks from `inner_n` (a multiple of 8·L) on are zeros. L adjacent lanes share a row (by default max(2, NT /
/// BN); a power of two), lane h of them taking chunks h, L + h, 2L + h, ...: an instruction reads whole 32-byte sectors
/// (16·L contiguous bytes of each of 32 / L rows a warp), and a lane's chunks of one row are one shuffle of the row's
/// offset (held by lane r % 32 of every warp, in word r / 32) and then copies at immediate offsets from one source
/// address, the swizzled destination one XOR each (tc_swz's XOR of r % 8 splits into the lane's fixed low bits and
/// the chunk's high ones). The loader before it shuffled the offset for every chunk (16 rows of 16-lane halves):
/// about 21 instructions a chunk (docs/perf/2026-11-29-sass). Every lane of each warp calls it together (shuffles).
template <int BN, int CPR, int NT, int L = (NT / BN > 2 ? NT / BN : 2)>
__device__ __forceinline__ void fa_load_paged_rows(unsigned char* s, const uint16_t* base,
                                                   const typename PagedKeys<BN>::Offsets& rows, int inner_n, int tid) {
  static_assert(L >= 2 && L * BN >= NT, "lanes a row: 2 at least, and a pass of rows within the tile");
  constexpr int RP = NT / L, Q = CPR / L;  // rows a pass, a lane's chunks of a row
  static_assert(L <= 8 && CPR % L == 0 && (CPR & (CPR - 1)) == 0 && CPR >= 8 && BN % RP == 0 && 32 % L == 0,
                "the XOR form of tc_swz: CPR a power of two ≥ 8, a lane's chunk column below 8");
  const int h = tid % L;
  BARACUDA_UNROLL
  for (int pass = 0; pass < BN / RP; ++pass) {
    const int r = pass * RP + tid / L;  // a warp's 32 / L rows lie in one word of rows.off
    int64_t word = rows.off[0];
    if constexpr (PagedKeys<BN>::U == 2) word = r >= 32 ? rows.off[1] : word;  // the same for the whole warp
    const int64_t off = __shfl_sync(0xffffffffu, word, r & 31);
    const bool ok = off != kMaskedRow;
    // A masked row copies 0 bytes from the head's first row (an address that exists, as cp.async asks).
    const uint16_t* src = base + (ok ? off : 0) + 8 * h;
    const int bytes = ok ? 16 : 0;
    // Chunk L·q + h of row r lands at tc_swz<CPR>(r, L·q + h) = r·CPR·16 + 16·((L·q + h) ^ (r % 8)), which is
    // row_dst ^ 16·L·q: L·q and h share no bit, and r·CPR·16 none with 16·L·q < CPR·16.
    const int row_dst = r * (CPR * 16) + 16 * (h ^ (r & 7));
    BARACUDA_UNROLL
    for (int q = 0; q < Q; ++q) {
      const bool in = 8 * L * q < inner_n;  // the whole L-chunk column (inner_n a multiple of 8·L): constant
      ptx::cp_async_cg_zfill(s + (row_dst ^ (16 * L * q)), in ? src + 8 * L * q : base, in ? bytes : 0);
    }
  }
}

/// Zeros N accumulator tiles of the m16n8 layout (a warp's O, or its S).
template <int N>
__device__ __forceinline__ void fa_zero(float (&acc)[N][4]) {
  BARACUDA_UNROLL
  for (int n = 0; n < N; ++n) {
    BARACUDA_UNROLL
    for (int e = 0; e < 4; ++e) acc[n][e] = 0.0f;
  }
}

/// A row's partial sum l over the quad of lanes that share the row (a fixed xor order).
__device__ __forceinline__ float fa_quad_sum(float v) {
  v = __fadd_rn(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return __fadd_rn(v, __shfl_xor_sync(0xffffffffu, v, 2));
}

/// S = Q·Kᵀ for a warp's MT m16 tiles of query rows and a tile of NS·8 keys (rows of CPR 16-byte chunks along d in
/// shared memory: the col operand, plain ldmatrix), from zero. `qfrag(mt, kk, a)` gives m-tile mt's A fragment of
/// k-step kk (from registers, or by ldmatrix from shared memory); each K fragment serves the MT m-tiles. KU: the
/// k-steps unrolled (all of them when the fragments are in registers, which an index must name statically; fewer
/// keeps ptxas from hoisting every shared load of a two-m-tile warp ahead, which spilled).
template <class T, int MT, int KD, int NS, int CPR, int KU = KD, class QFrag>
__device__ __forceinline__ void fa_scores(float (&s)[MT][NS][4], const QFrag& qfrag, const unsigned char* ks,
                                          int lane) {
  const int j8 = lane >> 3, r8 = lane & 7;
  BARACUDA_UNROLL
  for (int mt = 0; mt < MT; ++mt) fa_zero(s[mt]);
  BARACUDA_UNROLL_BY(KU)
  for (int kk = 0; kk < KD; ++kk) {
    unsigned a[MT][4];
    BARACUDA_UNROLL
    for (int mt = 0; mt < MT; ++mt) qfrag(mt, kk, a[mt]);
    BARACUDA_UNROLL
    for (int nj = 0; nj < NS / 2; ++nj) {
      unsigned r[4];
      ptx::ldmatrix<4>(r, ks + tc_swz<CPR>(nj * 16 + (j8 >> 1) * 8 + r8, kk * 2 + (j8 & 1)));
      const unsigned b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
      BARACUDA_UNROLL
      for (int mt = 0; mt < MT; ++mt) {
        ptx::mma_m16n8k16<T>(s[mt][2 * nj], a[mt], b0, s[mt][2 * nj]);
        ptx::mma_m16n8k16<T>(s[mt][2 * nj + 1], a[mt], b1, s[mt][2 * nj + 1]);
      }
    }
  }
}

/// The A fragment of rows r0..r0 + 15 and k-step kk from a tile of rows of CPR 16-byte chunks in shared memory.
template <int CPR>
__device__ __forceinline__ void fa_load_a(unsigned (&a)[4], const unsigned char* tile, int r0, int kk, int lane) {
  const int j8 = lane >> 3, r8 = lane & 7;
  ptx::ldmatrix<4>(a, tile + tc_swz<CPR>(r0 + (j8 & 1) * 8 + r8, kk * 2 + (j8 >> 1)));
}

/// The online softmax step on S's accumulator fragments, row by row (hh: rows g and g + 8 of the warp's 16): the row
/// max over the quad, m' = max(m, rowmax), α = 2^((m − m')·τ·log2 e) (1 when m' = m), S → P = 2^(S·τ·log2 e −
/// m'·τ·log2 e) (ex2.approx.ftz: results below 2^-126 are 0; a row whose max is −inf uses 0: masked entries give 0,
/// never NaN), l = α·l + Σ P (per-thread partial sums), O = α·O (with `Skip`, skipped when every α of the warp is 1:
/// all 32 lanes, converged, for the vote).
template <int NS, int NO, bool Skip = true>
__device__ __forceinline__ void fa_softmax_step(float (&s)[NS][4], float (&acc)[NO][4], float (&m_row)[2],
                                                float (&l_row)[2], float scale_log2) {
  BARACUDA_UNROLL
  for (int hh = 0; hh < 2; ++hh) {
    float mx = m_row[hh];
    BARACUDA_UNROLL
    for (int n = 0; n < NS; ++n) mx = fmaxf(mx, fmaxf(s[n][2 * hh], s[n][2 * hh + 1]));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
    const float ms = mx == -INFINITY ? 0.0f : __fmul_rn(mx, scale_log2);
    // α = 1 exactly when the max is unchanged (the fma would leave m·τ·log2 e's rounding error, and α·O a trace of
    // it per tile): a tile that no key of the row survives then changes nothing, so the 64- and 128-row tiles agree.
    // The exponential is taken either way, so that the choice is a select: lanes hold different rows, and a branch
    // around it diverged within the warp on every tile.
    const float rescale = ptx::ex2_approx_ftz(__fmaf_rn(m_row[hh], scale_log2, -ms));
    const float alpha = mx == m_row[hh] ? 1.0f : rescale;
    m_row[hh] = mx;
    float sum = 0.0f;
    BARACUDA_UNROLL
    for (int n = 0; n < NS; ++n) {
      BARACUDA_UNROLL
      for (int e = 0; e < 2; ++e) {
        const float pv = ptx::ex2_approx_ftz(__fmaf_rn(s[n][2 * hh + e], scale_log2, -ms));
        s[n][2 * hh + e] = pv;
        sum = __fadd_rn(sum, pv);
      }
    }
    l_row[hh] = __fmaf_rn(alpha, l_row[hh], sum);
    // O = α·O, skipped when no row of the warp has a new maximum (every α exactly 1: the products would change no
    // bit). The vote makes the test warp-uniform; once the maxima settle, most tiles skip these NO·2 multiplications.
    // One vote per half, right after its α, so that no α stays live across the other half.
    if (!Skip || __any_sync(0xffffffffu, alpha != 1.0f)) {
      BARACUDA_UNROLL
      for (int n = 0; n < NO; ++n) {
        acc[n][2 * hh] = __fmul_rn(acc[n][2 * hh], alpha);
        acc[n][2 * hh + 1] = __fmul_rn(acc[n][2 * hh + 1], alpha);
      }
    }
  }
}

/// O += P·V for a warp's MT m16 tiles of rows and a tile of NS·8 keys: P rounded to T in registers as the A operand
/// (the S accumulators of n-tiles 2kk, 2kk + 1 are the A fragment of k-step kk), V's rows (CPR chunks along d)
/// through ldmatrix.trans, each V fragment serving the MT m-tiles.
template <class T, int MT, int NS, int NO, int CPR>
__device__ __forceinline__ void fa_pv(float (&acc)[MT][NO][4], const float (&s)[MT][NS][4], const unsigned char* vs,
                                      int lane) {
  const int j8 = lane >> 3, r8 = lane & 7;
  BARACUDA_UNROLL
  for (int kk = 0; kk < NS / 2; ++kk) {
    unsigned a[MT][4];
    BARACUDA_UNROLL
    for (int mt = 0; mt < MT; ++mt) {
      a[mt][0] = fa_pack<T>(s[mt][2 * kk][0], s[mt][2 * kk][1]);
      a[mt][1] = fa_pack<T>(s[mt][2 * kk][2], s[mt][2 * kk][3]);
      a[mt][2] = fa_pack<T>(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
      a[mt][3] = fa_pack<T>(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
    }
    BARACUDA_UNROLL
    for (int nj = 0; nj < NO / 2; ++nj) {
      unsigned r[4];
      ptx::ldmatrix<4, true>(r, vs + tc_swz<CPR>(kk * 16 + (j8 & 1) * 8 + r8, nj * 2 + (j8 >> 1)));
      const unsigned b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
      BARACUDA_UNROLL
      for (int mt = 0; mt < MT; ++mt) {
        ptx::mma_m16n8k16<T>(acc[mt][2 * nj], a[mt], b0, acc[mt][2 * nj]);
        ptx::mma_m16n8k16<T>(acc[mt][2 * nj + 1], a[mt], b1, acc[mt][2 * nj + 1]);
      }
    }
  }
}

/// `Paged`: K/V rows gathered through the block table (paged_prefill.hpp; tables.hpp's paged fields). C: the K/V
/// elements, T, or (paged) an FP8/int8 cache's codes, widened as the tiles load and scaled in the sums. MT: m16 tiles
/// of query rows per warp (fa_block_m).
template <class T, int D, bool Paged, class C, int MT>
__global__ void __launch_bounds__(kFaThreads) fa2_forward_kernel(FaParams p) {
  constexpr int BM = fa_block_m(MT), BN = fa_block_n(D), CPR = fa_row_elems(D) / 8, NT = kFaThreads;
  constexpr int KD = D / 16, NO = D / 8, NS = BN / 8, WM = 16 * MT;
  // Q's fragments stay in registers for one m-tile up to d = 128; for d = 256 (O alone takes 128 registers) and for
  // two m-tiles (O and S take 160) they are read from shared memory per KV tile.
  constexpr bool kQRegs = MT == 1 && D <= 128;
  // The paged 128-row kernel at d = 128 has no register to spare: with either the skipped rescale of O
  // (fa_softmax_step's vote; 16 bytes of spills) or the paged loader of fa_load_paged_rows (12 bytes), ptxas spills.
  // It rescales on every tile and looks each chunk's row up in tc_load_rows.
  constexpr bool kSpare = !(Paged && MT == 2 && D == 128);
  static_assert(D % 16 == 0 && (CPR == 8 || CPR == 16 || CPR == 32), "whole k16 steps; rows of 8, 16 or 32 chunks");
  static_assert(MT == 1 || (MT == 2 && D <= 128), "two m-tiles a warp up to d = 128");
  const ::baracuda::detail::FlashAttentionLaunch& l = p.l;

  BARACUDA_DYNAMIC_SHARED(unsigned char, smem);
  unsigned char* qs = smem;
  unsigned char* ks = qs + BM * CPR * 16;
  unsigned char* vs = ks + BN * CPR * 16;
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t4 = lane & 3;
  const int b = static_cast<int>(blockIdx.z), h = static_cast<int>(blockIdx.y);
  const int q0 = static_cast<int>(blockIdx.x) * BM;

  int q_start, s_q, k_start, s_k;
  if constexpr (Paged) {
    q_start = fa_effective(l.cu_q, b, l.total_q, lane);
    s_q = fa_effective(l.cu_q, b + 1, l.total_q, lane) - q_start;
    k_start = 0;
    s_k = static_cast<int>(
        ::baracuda::detail::paged_effective_len(l.context_lens[b * l.cl_stride], l.max_blocks, l.block_size));
  } else if (l.cu_q != nullptr) {
    q_start = fa_effective(l.cu_q, b, l.total_q, lane);
    s_q = fa_effective(l.cu_q, b + 1, l.total_q, lane) - q_start;
    k_start = fa_effective(l.cu_k, b, l.total_k, lane);
    s_k = fa_effective(l.cu_k, b + 1, l.total_k, lane) - k_start;
  } else {
    q_start = b * l.seqlen_q, s_q = l.seqlen_q;
    k_start = b * l.seqlen_k, s_k = l.seqlen_k;
  }
  const int rows = min(s_q, l.seqlen_q);  // rows written: at most the descriptor's longest sequence
  if (q0 >= rows) return;
  const int hk = h / (l.heads / l.kv_heads);

  const uint16_t* qd = static_cast<const uint16_t*>(l.q) + q_start * l.q_tok + h * l.q_head;
  const TcOperand qo{qd, 0, l.q_tok, 1, s_q, D, p.q_vec, true};
  constexpr bool kNarrow = sizeof(C) == 1;  // a quantized cache: codes widened into the tiles
  static_assert(kNarrow || std::is_same_v<C, T>, "K/V of q's kind, or 1-byte codes");
  using KvT = std::conditional_t<kNarrow, C, uint16_t>;
  const KvT* kd = static_cast<const KvT*>(l.k);
  const KvT* vd = static_cast<const KvT*>(l.v);
  if (s_k > 0) {
    kd += k_start * l.k_tok + hk * l.k_head;
    vd += k_start * l.v_tok + hk * l.v_head;
  }
  const TcOperand ko{kNarrow ? nullptr : reinterpret_cast<const uint16_t*>(kd), 0, l.k_tok, 1, s_k, D, p.k_vec, true};
  const TcOperand vo{kNarrow ? nullptr : reinterpret_cast<const uint16_t*>(vd), 0, l.v_tok, 1, s_k, D, p.v_vec, true};
  // The scales of a quantized cache, folded into the sums: τ·k_scale into the scores, v_scale into o.
  const float kscale = l.k_scale != nullptr ? l.k_scale[hk * l.k_scale_stride] : 1.0f;
  const float vscale = l.v_scale != nullptr ? l.v_scale[hk * l.v_scale_stride] : 1.0f;
  const float scale_log2 = kNarrow ? __fmul_rn(p.scale_log2, kscale) : p.scale_log2;
  const float scale = kNarrow ? __fmul_rn(l.scale, kscale) : l.scale;
  // Paged: the pages of the tile being loaded (paged_keys.cuh: every warp holds them in its lanes), fetched a tile
  // ahead; a key outside the cache is masked and its row never read.
  using Keys = PagedKeys<BN>;
  const int32_t* table = Paged ? l.block_tables + b * l.bt_seq : nullptr;
  const auto rows_of = [](const KvT* base, int64_t block, int64_t tok, const Keys& keys) {
    return [base, block, tok, &keys](int j) -> const KvT* {
      if constexpr (Paged) {
        return keys.row_ptr(base, block, tok, j);
      } else {
        (void)keys, (void)block;
        return base + static_cast<int64_t>(j) * tok;
      }
    };
  };

  // The KV tiles any row of the block sees: keys [lo, hi).
  const int64_t off = static_cast<int64_t>(s_k) - s_q;
  const int64_t q_hi = min(q0 + BM, s_q) - 1;
  int64_t lo = 0, hi = s_k;
  if (l.window_left >= 0 && q0 + off - l.window_left > 0) lo = q0 + off - l.window_left;
  if (l.window_right >= 0 && q_hi + off + l.window_right + 1 < hi) hi = q_hi + off + l.window_right + 1;
  const int t_lo = static_cast<int>(lo / BN);
  const int t_hi = hi > lo ? static_cast<int>((hi + BN - 1) / BN) : t_lo;

  tc_load_tile<BM, CPR, NT>(qs, qo, qd, q0, 0, tid);
  // A K or V tile from `base` (rows `tok` apart; paged: pages `block` apart, slots `tok` apart, through `keys`).
  const auto load_kv = [&](unsigned char* dst, const TcOperand& o, const KvT* base, int64_t block, int64_t tok,
                           const Keys& keys, int first) {
    if constexpr (kNarrow)
      fa_load_rows_narrow<T, C, BN, CPR, NT>(dst, o, rows_of(base, block, tok, keys), first, tid);
    else if constexpr (Paged) {
      if (kSpare && o.vec)  // 4 lanes a row at least: with 2, ptxas spills 4 bytes in the 64-row kernel at d = 64
        fa_load_paged_rows<BN, CPR, NT, (NT / BN > 4 ? NT / BN : 4)>(dst, o.data, keys.offsets(block, tok), D, tid);
      else
        ::baracuda::gemm::tc_load_rows<BN, CPR, NT, true>(dst, o, rows_of(base, block, tok, keys), first, 0, tid);
    } else {
      tc_load_tile<BN, CPR, NT>(dst, o, o.data, first, 0, tid);  // rows at o.data + j·outer
    }
  };
  Keys cur, nxt;  // tile t's pages; tile t + 1's
  // Each tile's keys are found by a division (PagedCursor::at): a cursor stepped from tile to tile (the decode's)
  // keeps two more registers live across the loop, and ptxas spills 4 bytes at d = 96 over a 1-byte cache.
  if constexpr (Paged) {
    if (t_lo < t_hi) {
      cur.fetch(table, l.bt_page, s_k, t_lo * BN, PagedCursor<BN>::at(t_lo * BN, l.block_size, lane), lane);
      cur.resolve(l.num_blocks);
    }
  }
  if (t_lo < t_hi) load_kv(ks, ko, kd, l.k_block, l.k_tok, cur, t_lo * BN);
  ptx::cp_async_commit();
  ptx::cp_async_wait_all();
  __syncthreads();
  unsigned qf[kQRegs ? KD : 1][4];
  if constexpr (kQRegs) {
    BARACUDA_UNROLL
    for (int kk = 0; kk < KD; ++kk) fa_load_a<CPR>(qf[kk], qs, warp * 16, kk, lane);
  }
  const auto q_frag = [&](int mt, int kk, unsigned(&a)[4]) {
    if constexpr (kQRegs) {
      BARACUDA_UNROLL
      for (int e = 0; e < 4; ++e) a[e] = qf[kk][e];
    } else {
      fa_load_a<CPR>(a, qs, warp * WM + mt * 16, kk, lane);
    }
  };

  float acc[MT][NO][4];
  float m_row[MT][2], l_row[MT][2];
  BARACUDA_UNROLL
  for (int mt = 0; mt < MT; ++mt) {
    fa_zero(acc[mt]);
    m_row[mt][0] = m_row[mt][1] = -INFINITY;
    l_row[mt][0] = l_row[mt][1] = 0.0f;
  }
  const int64_t row0 = q0 + warp * WM + g;  // this thread's rows: row0 + 16·mt and row0 + 16·mt + 8

  for (int t = t_lo; t < t_hi; ++t) {
    const int kv0 = t * BN;
    ptx::cp_async_wait_all();  // K_t (this thread's copies)
    __syncthreads();           // everyone's; and every warp is done with V_{t-1}
    load_kv(vs, vo, vd, l.v_block, l.v_tok, cur, kv0);
    ptx::cp_async_commit();
    if constexpr (Paged) {
      if (t + 1 < t_hi) {  // read at K_{t+1}'s load
        nxt.fetch(table, l.bt_page, s_k, kv0 + BN, PagedCursor<BN>::at(kv0 + BN, l.block_size, lane), lane);
      }
    }

    float s[MT][NS][4];
    fa_scores<T, MT, KD, NS, CPR, MT == 1 ? KD : 2>(s, q_frag, ks, lane);

    // Per-element mask where the tile crosses a bound of some row of the block (or, paged, has a masked page).
    bool full = kv0 + BN <= s_k && (l.window_right < 0 || kv0 + BN - 1 <= q0 + off + l.window_right) &&
                (l.window_left < 0 || kv0 >= q0 + BM - 1 + off - l.window_left);
    if constexpr (Paged) full = full && cur.all_valid();
    if (!full) {
      BARACUDA_UNROLL
      for (int mt = 0; mt < MT; ++mt) {
        BARACUDA_UNROLL
        for (int n = 0; n < NS; ++n) {
          BARACUDA_UNROLL
          for (int e = 0; e < 4; ++e) {
            const int64_t i = row0 + 16 * mt + 8 * (e >> 1), j = kv0 + n * 8 + 2 * t4 + (e & 1);
            const bool ok = j < s_k && (l.window_left < 0 || j >= i + off - l.window_left) &&
                            (l.window_right < 0 || j <= i + off + l.window_right) &&
                            (!Paged || cur.has_page(static_cast<int>(j - kv0)));
            if (!ok) s[mt][n][e] = -INFINITY;
          }
        }
      }
    }

    BARACUDA_UNROLL
    for (int mt = 0; mt < MT; ++mt) fa_softmax_step<NS, NO, kSpare>(s[mt], acc[mt], m_row[mt], l_row[mt], scale_log2);

    __syncthreads();  // every warp is done with K_t
    if (t + 1 < t_hi) {
      if constexpr (Paged) nxt.resolve(l.num_blocks);
      load_kv(ks, ko, kd, l.k_block, l.k_tok, nxt, kv0 + BN);
    }
    ptx::cp_async_commit();
    ptx::cp_async_wait<1>();  // V_t (this thread's copies)
    __syncthreads();          // everyone's

    fa_pv<T, MT, NS, NO, CPR>(acc, s, vs, lane);
    if constexpr (Paged) cur = nxt;
  }
  ptx::cp_async_wait_all();  // no copy in flight at exit (only empty groups remain)

  T* od = static_cast<T*>(l.o) + q_start * l.o_tok + h * l.o_head;
  BARACUDA_UNROLL
  for (int r = 0; r < 2 * MT; ++r) {  // row r: m-tile r / 2, half r % 2
    const int mt = r >> 1, hh = r & 1;
    const float sum = fa_quad_sum(l_row[mt][hh]);
    const bool empty = !(sum > 0.0f);  // no visible key (0), or NaN
    const float inv = empty ? 0.0f : kNarrow ? __fdiv_rn(vscale, sum) : __fdiv_rn(1.0f, sum);
    const int64_t i = row0 + 8 * r;
    if (i >= rows) continue;
    T* orow = od + i * l.o_tok;
    BARACUDA_UNROLL
    for (int n = 0; n < NO; ++n) {
      const T v2[2] = {convert::from_opmath<T>(__fmul_rn(acc[mt][n][2 * hh], inv)),
                       convert::from_opmath<T>(__fmul_rn(acc[mt][n][2 * hh + 1], inv))};
      ::baracuda::gemm::tc_store2(orow + n * 8 + 2 * t4, v2, true);
    }
    if (l.lse != nullptr && t4 == 0) {
      const float lse = empty ? INFINITY : __fmaf_rn(m_row[mt][hh], scale, logf(sum));
      const int64_t tok = l.cu_q != nullptr ? q_start + i : i;
      l.lse[b * l.lse_batch + h * l.lse_head + tok * l.lse_tok] = lse;
    }
  }
}

/// The forward of `l` (tables.hpp) for element T (__half or __nv_bfloat16) and head dimension D; `Paged`: K/V
/// through the block table (paged_prefill.hpp), of kind C (T, or a quantized cache's codes); MT m16 tiles of query
/// rows per warp (fa_block_m: 64 or 128 rows a block).
template <class T, int D, bool Paged = false, class C = T, int MT = 1>
Status fa2_forward(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::FlashAttentionLaunch& l) {
  static_assert(fa_smem_bytes(D, MT) <= 48 * 1024, "within the default dynamic shared memory (no opt-in)");
  constexpr std::string_view plan = Paged ? "PagedPrefillPlan" : "FlashAttentionPlan";
  if (l.element != kind_of<T> || l.head_dim != D || (Paged && l.cache_kind != kind_of<C>))
    return Error::internal("attention: the kernel was called for another kind or head dimension");
  if (l.batch == 0 || l.heads == 0 || l.seqlen_q == 0 || l.total_q == 0) return {};
  FaParams p;
  p.l = l;
  p.scale_log2 = l.scale * 1.4426950408889634f;  // one f32 product (host code, IEEE)
  const auto vec = [](const void* data, int64_t tok, int64_t head) {
    return reinterpret_cast<uintptr_t>(data) % 16 == 0 && tok % 8 == 0 && head % 8 == 0;
  };
  p.q_vec = vec(l.q, l.q_tok, l.q_head);
  // 16-byte rows (8-byte for 1-byte codes) at 8-element-aligned bases and strides.
  const auto kv_vec = [](const void* data, int64_t tok, int64_t head, int64_t block) {
    return reinterpret_cast<uintptr_t>(data) % (8 * sizeof(C)) == 0 && tok % 8 == 0 && head % 8 == 0 &&
           (!Paged || block % 8 == 0);
  };
  p.k_vec = kv_vec(l.k, l.k_tok, l.k_head, l.k_block);
  p.v_vec = kv_vec(l.v, l.v_tok, l.v_head, l.v_block);
  constexpr int BM = fa_block_m(MT);
  const dim3 grid(static_cast<unsigned>((l.seqlen_q + BM - 1) / BM), static_cast<unsigned>(l.heads),
                  static_cast<unsigned>(l.batch));
  constexpr size_t smem = fa_smem_bytes(D, MT);
  BARACUDA_LAUNCH(grid, dim3(kFaThreads), smem, ctx.stream, fa2_forward_kernel<T, D, Paged, C, MT>)(p);
  const auto e = launch::take_last_error();
  if (e.failed) return Error::device(std::string(plan) + ": kernel launch failed: " + e.message, e.code);
  return {};
}

/// Fills a table slot (one function per head dimension, attention_head_dim_slot) with the forward for T over C at MT:
/// d = 64, 96 and 128, and 256 with the 64-row tile only.
template <class T, bool Paged, class C, int MT, class Slot>
constexpr void add_head_dims(Slot& slot) {
  using ::baracuda::detail::attention_head_dim_slot;
  slot[attention_head_dim_slot(64)] = &fa2_forward<T, 64, Paged, C, MT>;
  slot[attention_head_dim_slot(96)] = &fa2_forward<T, 96, Paged, C, MT>;
  slot[attention_head_dim_slot(128)] = &fa2_forward<T, 128, Paged, C, MT>;
  if constexpr (MT == 1) slot[attention_head_dim_slot(256)] = &fa2_forward<T, 256, Paged, C, MT>;
}

/// The dense forward's table with MT m16 tiles of query rows per warp (device.cu, device_wide.cu): f16 and bf16.
template <int MT>
constexpr ::baracuda::detail::FlashAttentionTables make_forward_tables(std::string_view variant) {
  using ::baracuda::detail::kind_index;
  ::baracuda::detail::FlashAttentionTables t{};
  add_head_dims<__half, false, __half, MT>(t.fwd[kind_index(kind_of<__half>)]);
  add_head_dims<__nv_bfloat16, false, __nv_bfloat16, MT>(t.fwd[kind_index(kind_of<__nv_bfloat16>)]);
  t.variant = variant;
  return t;
}

/// The chunked prefill's slots for q of kind T over a cache of kind C.
template <class T, class C, int MT>
constexpr void add_paged_pair(::baracuda::detail::PagedPrefillTables& t) {
  using ::baracuda::detail::kind_index;
  add_head_dims<T, true, C, MT>(t.fwd[kind_index(kind_of<T>)][kind_index(kind_of<C>)]);
}

/// The chunked prefill's table with MT m16 tiles per warp (device_paged.cu, device_paged_wide.cu): f16 and bf16 q
/// over caches of q's kind, FP8 E4M3 or int8.
template <int MT>
constexpr ::baracuda::detail::PagedPrefillTables make_paged_tables(std::string_view variant) {
  ::baracuda::detail::PagedPrefillTables t{};
  add_paged_pair<__half, __half, MT>(t);
  add_paged_pair<__half, __nv_fp8_e4m3, MT>(t);
  add_paged_pair<__half, int8_t, MT>(t);
  add_paged_pair<__nv_bfloat16, __nv_bfloat16, MT>(t);
  add_paged_pair<__nv_bfloat16, __nv_fp8_e4m3, MT>(t);
  add_paged_pair<__nv_bfloat16, int8_t, MT>(t);
  t.variant = variant;
  return t;
}

}  // namespace attention
BARACUDA_DEVICE_NAMESPACE_END
