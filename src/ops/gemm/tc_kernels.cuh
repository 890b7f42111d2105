// The gemm family's bespoke tensor-core kernel (f16/bf16 operands, f32 accumulation, f16/bf16/f32 output):
// `D = act(α·op(A)·op(B) + β·C + bias)` per batch with the optional pre-activation `aux` and `bias_grad`
// (src/ops/gemm/launch.hpp, the contract), on mma.sync.m16n8k16.
//
// A block computes a BM×BN tile of one batch's D (grid: x M tiles, y N tiles, z batches). K is streamed in
// BK slices through ST shared-memory stages (device/cp_async_pipeline.cuh). Each operand tile is kept in
// shared memory in the operand's own layout: rows of 16-byte chunks along the dimension whose global stride is
// 1 (K for a row-major A or a column-major B, M or N otherwise), so the copies stay 16-byte copies for every
// transpose combination; the chunks of a row are XOR-swizzled with the row index so that the 8 rows an
// ldmatrix phase reads hit 8 distinct bank groups. A K-contiguous tile feeds the mma fragments through plain
// `ldmatrix.x4`, an M- or N-contiguous one through `ldmatrix.x4.trans`. An operand whose unit-stride rows are
// 16-byte aligned (data, the other stride and the batch stride multiples of 8 elements) is copied by
// `cp.async` (zero-fill past the edges, partial chunks included); any other (unaligned, or no unit stride) is
// read element by element into the same layout (correct, slower). Ragged M/N/K edges are zeros in shared
// memory, so they add nothing. Two tiles, each 48 KiB of shared memory (no opt-in): 128×128×32 with 8 warps
// of 64×32 and 3 stages, and for M ≤ 32 (decode) 32×64×64 with 4 warps of 32×16 and 4 stages; neither has been
// timed on a GPU yet. More than 65535 N tiles or batches take several launches.
//
// The epilogue runs on the accumulators in registers, in f32: v = α·acc, v = fma(β, c, v) when C is given,
// v = v + bias[n] when a bias is given, aux = round(v), d = round(act(v)), with int_gemm's `activate` (the
// arithmetic of the rest of the library's linear epilogues). bias_grad[m] = Σ_k op(A)[m, k] (batch 0) is
// summed in f32 by the blocks of the first N tile, one thread per row of A, from the A slices already in
// shared memory, in k order (each slice's sum, then the slices' sums): no atomics, and every sum of the
// kernel has a fixed order (bit-stable).
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
#include "device/ptx/cp_async.cuh"
#include "device/ptx/ldmatrix.cuh"
#include "device/ptx/mma.cuh"
#include "ops/gemm/launch.hpp"
#include "ops/int_gemm/epilogue.cuh"  // activate

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace gemm {

/// One block shape of the tensor-core kernel: BM×BN outputs, BK-deep K slices, warps_m×warps_n warps, stages.
struct TcTile {
  int bm = 0, bn = 0, bk = 0, warps_m = 0, warps_n = 0, stages = 0;
  constexpr int threads() const { return warps_m * warps_n * 32; }
  constexpr int smem_bytes() const { return stages * (bm + bn) * bk * 2; }
};
/// The general tile, and the one for M ≤ 32 (decode: more blocks along N, a deeper K slice).
inline constexpr TcTile kTcLarge{128, 128, 32, 2, 4, 3};
inline constexpr TcTile kTcSmall{32, 64, 64, 1, 4, 4};
/// Problems with M up to this run on kTcSmall.
inline constexpr int64_t kTcSmallMaxM = 32;

/// One operand as the kernel reads it: element (o, i) of a batch is at `data + o·outer + i·inner`, where i
/// runs along the dimension copied in 16-byte chunks (the unit-stride one when there is one) and o along the
/// other; `k_inner`: i is K.
struct TcOperand {
  const uint16_t* data = nullptr;
  int64_t batch = 0, outer = 0, inner = 0;
  int outer_n = 0, inner_n = 0;
  bool vec = false;      ///< inner == 1 and 16-byte aligned rows: cp.async chunks; else element loads
  bool k_inner = false;  ///< the chunks run along K (else along M for A, N for B)
};

/// The kernel's parameters (launch.hpp's record, with the operands in the kernel's terms).
struct TcParams {
  TcOperand a = {}, b = {};
  int m = 0, n = 0, k = 0;
  const void* c = nullptr;  ///< nullptr: no C term
  int64_t c_batch = 0, c_row = 0;
  void* d = nullptr;
  int64_t d_batch = 0, d_row = 0;
  void* aux = nullptr;
  int64_t aux_batch = 0, aux_row = 0;
  const void* bias = nullptr;
  int64_t bias_stride = 0;
  void* bias_grad = nullptr;
  int64_t bias_grad_stride = 0;
  float alpha = 1.0f, beta = 0.0f;
  int activation = 0;  ///< LinearActivation
  int64_t batch0 = 0;  ///< the batch of blockIdx.z == 0 (a launch covers at most 65535 batches)
  int n_tile0 = 0;     ///< the N tile of blockIdx.y == 0 (and at most 65535 N tiles)
};

/// Byte offset of 16-byte chunk `c` of row `r` in a tile with CPR chunks per row (XOR swizzle: the 8 rows
/// one ldmatrix phase reads at one chunk column land in 8 distinct 16-byte bank groups).
template <int CPR>
__device__ __forceinline__ int tc_swz(int r, int c) {
  constexpr int kMask = (CPR >= 8 ? 8 : CPR) - 1;
  constexpr int kShift = CPR >= 8 ? 0 : CPR == 4 ? 1 : CPR == 2 ? 2 : 3;
  return r * (CPR * 16) + ((c ^ ((r >> kShift) & kMask)) * 16);
}

/// Fills a ROWS×(8·CPR) tile: row r, chunk c holds elements (outer0 + r, inner0 + 8c .. 8c + 7) of the
/// operand whose row `go` starts at `row_of(go)` (a gather, e.g. through a page table; with `Nullable`, nullptr: a
/// row of zeros), zeros outside [0, outer_n) × [0, inner_n). 16-byte cp.async copies (vec), else element loads and
/// one 16-byte shared store per chunk. With `Nullable` every thread calls row_of for each of its chunks' rows, in
/// range or not (row_of may shuffle: attention/paged_keys.cuh; it must accept any go in [outer0, outer0 + ROWS)).
/// Without `Nullable` no row pointer is tested (the test cost a compare and a select per chunk in loops that issue
/// little else: the attention forward's), and row_of is called for rows in range only.
template <int ROWS, int CPR, int NT, bool Nullable = true, class RowOf>
__device__ __forceinline__ void tc_load_rows(unsigned char* s, const TcOperand& o, RowOf row_of, int outer0, int inner0,
                                             int tid) {
  static_assert((ROWS * CPR) % NT == 0, "whole chunks per thread");
  BARACUDA_UNROLL
  for (int it = 0; it < ROWS * CPR / NT; ++it) {
    const int i = tid + it * NT;
    const int r = i / CPR, c = i % CPR;
    const int go = outer0 + r, gi = inner0 + c * 8;
    const bool in = go < o.outer_n && gi < o.inner_n;
    const uint16_t* row = nullptr;
    if constexpr (Nullable)
      row = row_of(go);  // convergent: every thread, every chunk
    else if (in)
      row = row_of(go);
    const bool ok = Nullable ? in && row != nullptr : in;
    unsigned char* dst = s + tc_swz<CPR>(r, c);
    if (o.vec) {
      const int rem = ok ? min(8, o.inner_n - gi) : 0;
      ptx::cp_async_cg_zfill(dst, ok ? row + gi : o.data, rem * 2);
    } else {
      unsigned w[4] = {0, 0, 0, 0};
      if (ok) {
        BARACUDA_UNROLL
        for (int e = 0; e < 8; ++e) {
          if (gi + e < o.inner_n) {
            // lint: shift < width: 0 or 16, on a 32-bit value
            w[e / 2] |= static_cast<unsigned>(row[static_cast<int64_t>(gi + e) * o.inner]) << (16 * (e % 2));
          }
        }
      }
      *reinterpret_cast<uint4*>(dst) = make_uint4(w[0], w[1], w[2], w[3]);
    }
  }
}

/// tc_load_rows over the strided operand at `base` (row `go` at base + go·outer) by cp.async (o.vec) for a tile whose
/// chunks are each whole or past inner_n (inner_n − inner0 a multiple of 8, or at least 8·CPR), without the per-chunk
/// bounds and row arithmetic of tc_load_rows (about 30 instructions a chunk: docs/perf/2026-11-29-sass). NT / CPR
/// divides ROWS, so a thread's chunks are one column c = tid % CPR of rows tid / CPR + it·(NT / CPR): each is a 64-bit
/// add and a cp.async, zero-filled (from `o.data`) past inner_n and, when `RowTest`, past outer_n (a compare and two
/// selects more); without it every row must be below outer_n.
template <int ROWS, int CPR, int NT, bool RowTest>
__device__ __forceinline__ void tc_load_tile_whole(unsigned char* s, const TcOperand& o, const uint16_t* base,
                                                   int outer0, int inner0, int tid) {
  constexpr int RS = NT / CPR;  // rows between a thread's chunks
  static_assert(NT % CPR == 0 && ROWS % RS == 0, "a thread's chunks: one column, every RS-th row");
  const int r0 = tid / CPR, c = tid % CPR, gi = inner0 + c * 8;
  const bool in = gi < o.inner_n;
  // The source advances by one add a chunk (64-bit products per chunk cost ptxas a dozen instructions); a chunk that
  // copies no byte reads from o.data, a valid address.
  const uint16_t* src = base + static_cast<int64_t>(outer0 + r0) * o.outer + gi;
  const int64_t step = RS * o.outer;
  int row = outer0 + r0;
  BARACUDA_UNROLL
  for (int it = 0; it < ROWS / RS; ++it, src += step, row += RS) {
    const bool ok = in && (!RowTest || row < o.outer_n);
    ptx::cp_async_cg_zfill(s + tc_swz<CPR>(r0 + it * RS, c), ok ? src : o.data, ok ? 16 : 0);
  }
}

/// tc_load_rows over the strided operand at `base`: row `go` at base + go·outer. By tc_load_tile_whole (rows past
/// outer_n zero-filled) where o.vec and no chunk is cut by inner_n, which is every tile of the attention kernels and
/// every whole-K slice of the GEMMs. Its row test lets the one fast path take a sequence's last tile too: a fast path
/// for tiles wholly in range beside tc_load_rows for the last one spilled 20 bytes in the 128-row attention forward.
template <int ROWS, int CPR, int NT>
__device__ __forceinline__ void tc_load_tile(unsigned char* s, const TcOperand& o, const uint16_t* base, int outer0,
                                             int inner0, int tid) {
  const int left = o.inner_n - inner0;
  if (o.vec && left >= 0 && (left % 8 == 0 || left >= 8 * CPR)) {
    tc_load_tile_whole<ROWS, CPR, NT, true>(s, o, base, outer0, inner0, tid);
    return;
  }
  tc_load_rows<ROWS, CPR, NT, false>(
      s, o, [base, &o](int go) { return base + static_cast<int64_t>(go) * o.outer; }, outer0, inner0, tid);
}

/// Stores v[0] at dst[0] and, when `two`, v[1] at dst[1] (one vector store where aligned).
template <class T>
__device__ __forceinline__ void tc_store2(T* dst, const T (&v)[2], bool two) {
  if (two && (reinterpret_cast<uintptr_t>(dst) % (2 * sizeof(T))) == 0) {
    ::baracuda::int_gemm::Pair2<T> pr;
    pr.x = v[0], pr.y = v[1];
    *reinterpret_cast<::baracuda::int_gemm::Pair2<T>*>(dst) = pr;
  } else {
    dst[0] = v[0];
    if (two) dst[1] = v[1];
  }
}

/// One stage's BK of K for a warp's MI×NI fragments: the A and B fragments by ldmatrix (`.trans` where the
/// stage's rows run along K: `a_k` / `b_k` false), then the mma.sync m16n8k16 steps, k ascending. The dense
/// and the grouped GEMM (ops/grouped_gemm/kernels.cuh, K-contiguous operands) share it.
template <class TAB, int MI, int NI, int BM, int BN, int BK>
__device__ __forceinline__ void tc_slice_mma(float (&acc)[MI][NI][4], const unsigned char* as, const unsigned char* bs,
                                             bool a_k, bool b_k, int wm0, int wn0, int lane) {
  BARACUDA_UNROLL
  for (int kk = 0; kk < BK / 16; ++kk) {
    unsigned af[MI][4];
    unsigned bf[NI][2];
    // Lane l gives the row of matrix j = l / 8 of an x4: A's matrices are (m 0-7, k 0-7), (m 8-15, k 0-7),
    // (m 0-7, k 8-15), (m 8-15, k 8-15) of the 16×16 fragment; B's (k 0-7, n 0-7), (k 8-15, n 0-7),
    // (k 0-7, n 8-15), (k 8-15, n 8-15) of two n8 fragments. `.trans` where the rows in memory run along K.
    const int j = lane >> 3, r8 = lane & 7;
    BARACUDA_UNROLL
    for (int mi = 0; mi < MI; ++mi) {
      if (a_k) {
        ptx::ldmatrix<4>(af[mi], as + tc_swz<BK / 8>(wm0 + mi * 16 + (j & 1) * 8 + r8, kk * 2 + (j >> 1)));
      } else {
        ptx::ldmatrix<4, true>(af[mi],
                               as + tc_swz<BM / 8>(kk * 16 + (j >> 1) * 8 + r8, (wm0 + mi * 16) / 8 + (j & 1)));
      }
    }
    BARACUDA_UNROLL
    for (int nj = 0; nj < NI / 2; ++nj) {
      unsigned q[4];
      if (b_k) {
        ptx::ldmatrix<4>(q, bs + tc_swz<BK / 8>(wn0 + nj * 16 + (j >> 1) * 8 + r8, kk * 2 + (j & 1)));
      } else {
        ptx::ldmatrix<4, true>(q, bs + tc_swz<BN / 8>(kk * 16 + (j & 1) * 8 + r8, (wn0 + nj * 16) / 8 + (j >> 1)));
      }
      bf[2 * nj][0] = q[0], bf[2 * nj][1] = q[1];
      bf[2 * nj + 1][0] = q[2], bf[2 * nj + 1][1] = q[3];
    }
    BARACUDA_UNROLL
    for (int mi = 0; mi < MI; ++mi) {
      BARACUDA_UNROLL
      for (int ni = 0; ni < NI; ++ni) ptx::mma_m16n8k16<TAB>(acc[mi][ni], af[mi], bf[ni], acc[mi][ni]);
    }
  }
}

// The tile comes as integers (WM×WN warps, ST stages): nvcc's host stubs cannot name a class-type template
// argument of a __global__ function.
template <class TAB, class TCD, int BM, int BN, int BK, int WM, int WN, int ST>
__global__ void __launch_bounds__(32 * WM * WN) tc_gemm_kernel(TcParams p) {
  constexpr int NT = WM * WN * 32;
  constexpr int WTM = BM / WM, WTN = BN / WN;
  constexpr int MI = WTM / 16, NI = WTN / 8;
  constexpr int kABytes = BM * BK * 2, kStageBytes = (BM + BN) * BK * 2;
  static_assert(BK % 16 == 0 && BM % 8 == 0 && BN % 8 == 0, "tile: whole k16 steps and 16-byte chunks");
  static_assert(WTM % 16 == 0 && WTN % 16 == 0, "warp tiles: multiples of 16×16");
  static_assert(ST >= 2, "at least two stages");
  static_assert(BM <= NT, "one thread per row of A for bias_grad");

  BARACUDA_DYNAMIC_SHARED(unsigned char, smem);
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid & 31, warp = tid >> 5;
  const int wm0 = (warp / WN) * WTM, wn0 = (warp % WN) * WTN;
  const int n_tile = p.n_tile0 + static_cast<int>(blockIdx.y);
  const int m0 = static_cast<int>(blockIdx.x) * BM, n0 = n_tile * BN;
  const int64_t bz = p.batch0 + static_cast<int64_t>(blockIdx.z);
  const uint16_t* abase = p.a.data + bz * p.a.batch;
  const uint16_t* bbase = p.b.data + bz * p.b.batch;
  const bool a_k = p.a.k_inner, b_k = p.b.k_inner;
  const int slices = (p.k + BK - 1) / BK;

  auto load = [&](int stage, int s) {
    unsigned char* as = smem + stage * kStageBytes;
    unsigned char* bs = as + kABytes;
    const int k0 = s * BK;
    if (a_k)
      tc_load_tile<BM, BK / 8, NT>(as, p.a, abase, m0, k0, tid);
    else
      tc_load_tile<BK, BM / 8, NT>(as, p.a, abase, k0, m0, tid);
    if (b_k)
      tc_load_tile<BN, BK / 8, NT>(bs, p.b, bbase, n0, k0, tid);
    else
      tc_load_tile<BK, BN / 8, NT>(bs, p.b, bbase, k0, n0, tid);
  };

  float acc[MI][NI][4];
  BARACUDA_UNROLL
  for (int i = 0; i < MI; ++i) {
    BARACUDA_UNROLL
    for (int j = 0; j < NI; ++j) {
      BARACUDA_UNROLL
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;
    }
  }
  // bias_grad: this thread's row of A (batch 0, first N tile only), summed in k order
  const bool bgrad = p.bias_grad != nullptr && n_tile == 0 && bz == 0 && tid < BM;
  float rowsum = 0.0f;

  pipeline_prologue<ST>(slices, load);
  for (int s = 0; s < slices; ++s) {
    const unsigned char* as = smem + pipeline_advance<ST>(s, slices, load) * kStageBytes;
    const unsigned char* bs = as + kABytes;
    tc_slice_mma<TAB, MI, NI, BM, BN, BK>(acc, as, bs, a_k, b_k, wm0, wn0, lane);
    if (bgrad) {  // the slice's BK elements summed first, then added to the row's sum (error ~ (BK + K/BK)·u)
      float part = 0.0f;
      for (int kk = 0; kk < BK; ++kk) {
        const int off =
            a_k ? tc_swz<BK / 8>(tid, kk >> 3) + (kk & 7) * 2 : tc_swz<BM / 8>(kk, tid >> 3) + (tid & 7) * 2;
        part = __fadd_rn(part, convert::to_float(*reinterpret_cast<const TAB*>(as + off)));
      }
      rowsum = __fadd_rn(rowsum, part);
    }
  }
  ptx::cp_async_wait_all();  // no copy may be in flight when the block exits (only empty groups remain)

  if (bgrad && m0 + tid < p.m)
    static_cast<TCD*>(p.bias_grad)[static_cast<int64_t>(m0 + tid) * p.bias_grad_stride] =
        convert::from_opmath<TCD>(rowsum);

  // No output overlaps an input or another output, except that D may be C exactly (in place: each element
  // of C is read by the thread that then writes it); so only aux and the bias are __restrict__.
  const TCD* c = p.c != nullptr ? static_cast<const TCD*>(p.c) + bz * p.c_batch : nullptr;
  TCD* d = static_cast<TCD*>(p.d) + bz * p.d_batch;
  TCD* __restrict__ aux = p.aux != nullptr ? static_cast<TCD*>(p.aux) + bz * p.aux_batch : nullptr;
  const TCD* __restrict__ bias = static_cast<const TCD*>(p.bias);
  const int g = lane >> 2, t4 = lane & 3;
  BARACUDA_UNROLL
  for (int ni = 0; ni < NI; ++ni) {
    const int col = n0 + wn0 + ni * 8 + 2 * t4;
    if (col >= p.n) continue;
    const bool two = col + 1 < p.n;
    float bv[2] = {0.0f, 0.0f};
    if (bias != nullptr) {
      bv[0] = convert::to_float(bias[static_cast<int64_t>(col) * p.bias_stride]);
      if (two) bv[1] = convert::to_float(bias[static_cast<int64_t>(col + 1) * p.bias_stride]);
    }
    BARACUDA_UNROLL
    for (int mi = 0; mi < MI; ++mi) {
      BARACUDA_UNROLL
      for (int h = 0; h < 2; ++h) {
        const int row = m0 + wm0 + mi * 16 + g + h * 8;
        if (row >= p.m) continue;
        float v[2];
        BARACUDA_UNROLL
        for (int e = 0; e < 2; ++e) {
          v[e] = __fmul_rn(p.alpha, acc[mi][ni][2 * h + e]);
          if (c != nullptr && (e == 0 || two))
            v[e] = __fmaf_rn(p.beta, convert::to_float(c[row * p.c_row + col + e]), v[e]);
          if (bias != nullptr) v[e] = __fadd_rn(v[e], bv[e]);
        }
        if (aux != nullptr) {
          const TCD o[2] = {convert::from_opmath<TCD>(v[0]), convert::from_opmath<TCD>(v[1])};
          tc_store2(aux + row * p.aux_row + col, o, two);
        }
        const TCD o[2] = {convert::from_opmath<TCD>(::baracuda::int_gemm::activate(p.activation, v[0])),
                          convert::from_opmath<TCD>(::baracuda::int_gemm::activate(p.activation, v[1]))};
        tc_store2(d + row * p.d_row + col, o, two);
      }
    }
  }
}

/// The operand (i, j) ↦ data + b·batch + i·row + j·col of extents rows × cols, in the kernel's terms: chunks
/// along the dimension of stride 1 (j when both or neither are), 16-byte copies where that is possible.
/// `k_is_j`: j is K (A: [M, K]); else i is K (B: [K, N]).
inline TcOperand tc_operand(const ::baracuda::detail::GemmOperand& o, int64_t rows, int64_t cols, int64_t batch,
                            bool k_is_j) {
  const bool along_j = o.col == 1 || o.row != 1;
  TcOperand t;
  t.data = static_cast<const uint16_t*>(o.data);
  t.batch = o.batch;
  t.outer = along_j ? o.row : o.col;
  t.inner = along_j ? o.col : o.row;
  t.outer_n = static_cast<int>(along_j ? rows : cols);
  t.inner_n = static_cast<int>(along_j ? cols : rows);
  t.k_inner = along_j == k_is_j;
  t.vec = t.inner == 1 && reinterpret_cast<uintptr_t>(o.data) % 16 == 0 && (t.outer_n == 1 || t.outer % 8 == 0) &&
          (batch == 1 || t.batch % 8 == 0);
  return t;
}

template <class TAB, class TCD, TcTile kT>
Status tc_launch(const ::baracuda::detail::ExecContext& ctx, TcParams p, int64_t batch, int64_t max_yz) {
  static_assert(kT.smem_bytes() <= 48 * 1024, "within the default dynamic shared memory (no opt-in)");
  const int64_t n_tiles = p.n > 0 ? (p.n + kT.bn - 1) / kT.bn : 1;  // N = 0: one tile column for bias_grad
  const dim3 block(static_cast<unsigned>(kT.threads()));
  auto* kernel = &tc_gemm_kernel<TAB, TCD, kT.bm, kT.bn, kT.bk, kT.warps_m, kT.warps_n, kT.stages>;
  for (int64_t b0 = 0; b0 < batch; b0 += max_yz)
    for (int64_t t0 = 0; t0 < n_tiles; t0 += max_yz) {
      p.batch0 = b0;
      p.n_tile0 = static_cast<int>(t0);
      const dim3 grid(static_cast<unsigned>((p.m + kT.bm - 1) / kT.bm),
                      static_cast<unsigned>(n_tiles - t0 < max_yz ? n_tiles - t0 : max_yz),
                      static_cast<unsigned>(batch - b0 < max_yz ? batch - b0 : max_yz));
      BARACUDA_LAUNCH(grid, block, static_cast<size_t>(kT.smem_bytes()), ctx.stream, kernel)(p);
      const auto e = launch::take_last_error();
      if (e.failed) return Error::device("GemmPlan: tensor-core kernel launch failed: " + e.message, e.code);
    }
  return {};
}

/// tensor_core below, with at most `max_yz` N tiles and batches per launch (gridDim.y and gridDim.z; more take
/// several launches): 65535, CUDA's limit, or less to test the chunking.
template <class TAB, class TCD>
Status tensor_core_chunked(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::GemmLaunch& l,
                           int64_t max_yz) {
  static_assert(std::is_same_v<TAB, __half> || std::is_same_v<TAB, __nv_bfloat16>, "TAB: f16 or bf16");
  static_assert(std::is_same_v<TCD, TAB> || std::is_same_v<TCD, float>, "TCD: TAB or f32");
  if (l.ab != kind_of<TAB> || l.cd != kind_of<TCD>)
    return Error::internal("GemmPlan: the tensor-core kernel was called for other kinds than its own");
  constexpr int64_t kMax = (int64_t{1} << 31) - 256;  // 32-bit row, column and k indices, past the edge tiles too
  if (l.m > kMax || l.n > kMax || l.k > kMax)
    return Error::unsupported("GemmPlan: the tensor-core kernel takes M, N and K up to 2^31 - 256");
  // Empty: nothing to write; but N = 0 with bias_grad still writes bias_grad (gemm.hpp).
  if (l.m == 0 || l.batch == 0 || (l.n == 0 && l.bias_grad.data == nullptr)) return {};
  TcParams p;
  p.m = static_cast<int>(l.m), p.n = static_cast<int>(l.n), p.k = static_cast<int>(l.k);
  p.a = tc_operand(l.a, l.m, l.k, l.batch, true);
  p.b = tc_operand(l.b, l.k, l.n, l.batch, false);
  p.c = l.beta != 0.0 ? l.c.data : nullptr;
  p.c_batch = l.c.batch, p.c_row = l.c.row;
  p.d = const_cast<void*>(l.d.data);
  p.d_batch = l.d.batch, p.d_row = l.d.row;
  p.aux = const_cast<void*>(l.aux.data);
  p.aux_batch = l.aux.batch, p.aux_row = l.aux.row;
  p.bias = l.bias.data;
  p.bias_stride = l.bias.col;
  p.bias_grad = const_cast<void*>(l.bias_grad.data);
  p.bias_grad_stride = l.bias_grad.col;
  p.alpha = static_cast<float>(l.alpha), p.beta = static_cast<float>(l.beta);
  p.activation = static_cast<int>(l.activation);
  if (l.m <= kTcSmallMaxM) return tc_launch<TAB, TCD, kTcSmall>(ctx, p, l.batch, max_yz);
  return tc_launch<TAB, TCD, kTcLarge>(ctx, p, l.batch, max_yz);
}

/// The tensor-core GEMM of `l` (launch.hpp), TAB = the kind of A and B (__half or __nv_bfloat16), TCD = the
/// kind of C, D, aux, bias and bias_grad (TAB or float). Any strides (16-byte aligned unit-stride rows take
/// the cp.async path, others element loads); M, N and K up to 2^31 − 256.
template <class TAB, class TCD>
Status tensor_core(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::GemmLaunch& l) {
  return tensor_core_chunked<TAB, TCD>(ctx, l, 65535);
}

}  // namespace gemm
BARACUDA_DEVICE_NAMESPACE_END
