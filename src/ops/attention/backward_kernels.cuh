// The attention backward's kernels (attention_backward.hpp has the contract), on mma.sync m16n8k16 with f32
// accumulation, deterministic (no atomics). Three launches:
// 1. fa2_bwd_dsum_kernel: D = Σ_c dO·o per (token, head) in f32, into the workspace ([H, T_q]).
// 2. fa2_bwd_dkdv_kernel: one block per (64-key tile, kv head, batch), 4 warps, warp w owning keys 16w..16w+15.
//    K and V tiles stay in shared memory; for each query head of the group and each query tile (BM rows) that
//    sees the key tile: Sᵀ = K·Qᵀ and dPᵀ = V·dOᵀ by mma (Q and dO rows as the col operand, plain ldmatrix), Pᵀ =
//    2^(Sᵀ·τ·log2 e − lse·log2 e) (ex2.approx.ftz; masked, or lse not finite: 0), dSᵀ = Pᵀ·(dPᵀ − D); dV += Pᵀ·dO
//    and dK += dSᵀ·Q with Pᵀ, dSᵀ rounded to the element kind in registers as the A operand (the accumulator layout
//    is the A fragment layout) and dO, Q through ldmatrix.trans. dK = τ·acc.
// 3. fa2_bwd_dq_kernel: one block per (64-query tile, head, batch), warp w owning rows 16w..16w+15; for each key
//    tile the rows see: S = Q·Kᵀ, dP = dO·Vᵀ, P and dS as above, dQ += dS·K (K through ldmatrix.trans). dQ = τ·acc.
// Tiles: the dense GEMM's (tc_kernels.cuh: rows of swizzled 16-byte chunks along d, zeros past the edges), rows of
// fa_row_elems(d) elements. The tiles a step streams (dK/dV: Q and dO; dQ: K and V) are double-buffered: at the top of
// step s one barrier makes step s's copies visible and frees step s − 1's stage, into which step s + 1's copies are
// then requested, so they arrive while step s computes; the dK/dV kernel's stages also hold their rows' lse and D.
// Shared memory: (128 + 4·step) rows and 4·step floats, 49 KiB for d = 64 and 64.5 KiB for d = 96 and 128 (the opt-in
// above 48 KiB).
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <cmath>
#include <cstdint>

#include "device/shared_bytes.cuh"
#include "ops/attention/backward_tables.hpp"
#include "ops/attention/kernels.cuh"  // fa_effective, fa_pack, fa_row_elems, the GEMM's tile helpers

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace attention {

inline constexpr int kFbThreads = 128;
inline constexpr int kFbKeys = 64;     ///< keys per dK/dV block (4 warps × 16)
inline constexpr int kFbQueries = 64;  ///< queries per dQ block (4 warps × 16)
/// Query rows per step of the dK/dV kernel, and keys per step of the dQ kernel: 64 for d = 64, else 32.
constexpr int fb_step(int d) { return d > 64 ? 32 : 64; }
/// The dQ kernel's shared memory: the 64-row tiles a block keeps (two) and two stages of the two tiles a step streams.
constexpr int fb_dq_smem_bytes(int d) { return (2 * 64 + 4 * fb_step(d)) * fa_row_elems(d) * 2; }
/// The dK/dV kernel's: the same, and in each stage its query rows' lse and D (f32).
constexpr int fb_dkdv_smem_bytes(int d) { return fb_dq_smem_bytes(d) + 4 * fb_step(d) * 4; }

struct FbParams {
  ::baracuda::detail::FlashAttentionBackwardLaunch l;
  float scale_log2 = 0;  ///< τ·log2 e
  bool q_vec = false, k_vec = false, v_vec = false, do_vec = false;
};

/// Batch b's sequences: the first token and length of q's and k's (attention.hpp's effective offsets).
struct FbSeq {
  int q_start, s_q, k_start, s_k;
};
__device__ __forceinline__ FbSeq fb_sequence(const ::baracuda::detail::FlashAttentionLaunch& l, int b, int lane) {
  if (l.cu_q == nullptr) return {b * l.seqlen_q, l.seqlen_q, b * l.seqlen_k, l.seqlen_k};
  FbSeq s;
  s.q_start = fa_effective(l.cu_q, b, l.total_q, lane);
  s.s_q = fa_effective(l.cu_q, b + 1, l.total_q, lane) - s.q_start;
  s.k_start = fa_effective(l.cu_k, b, l.total_k, lane);
  s.s_k = fa_effective(l.cu_k, b + 1, l.total_k, lane) - s.k_start;
  return s;
}

/// Query i sees key j (attention.hpp's bottom-right aligned window; off = s_k − s_q).
__device__ __forceinline__ bool fb_visible(const ::baracuda::detail::FlashAttentionLaunch& l, int64_t i, int64_t j,
                                           int64_t off) {
  return (l.window_left < 0 || j >= i + off - l.window_left) && (l.window_right < 0 || j <= i + off + l.window_right);
}

/// Where query row i (token tok) of head h keeps its lse.
__device__ __forceinline__ const float* fb_lse_at(const ::baracuda::detail::FlashAttentionLaunch& l, int b, int h,
                                                  int64_t i, int64_t tok) {
  return l.lse + b * l.lse_batch + h * l.lse_head + (l.cu_q != nullptr ? tok : i) * l.lse_tok;
}

/// lse·log2 e of a row whose lse is v, +inf where the row contributes nothing (`in` false: past the rows; or an lse
/// that is not finite: no visible key).
__device__ __forceinline__ float fb_lse_log2(float v, bool in) {
  return in && isfinite(v) ? v * 1.4426950408889634f : INFINITY;
}

template <class T, int D>
__global__ void __launch_bounds__(kFbThreads) fa2_bwd_dsum_kernel(FbParams p) {
  const ::baracuda::detail::FlashAttentionLaunch& l = p.l.f;
  const int64_t t = static_cast<int64_t>(blockIdx.x) * kFbThreads + threadIdx.x;
  const int h = static_cast<int>(blockIdx.y);
  if (t >= l.total_q) return;
  const T* o = static_cast<const T*>(l.o) + t * l.o_tok + h * l.o_head;
  const T* g = static_cast<const T*>(p.l.d_o) + t * p.l.do_tok + h * p.l.do_head;
  float sum = 0.0f;
  for (int c = 0; c < D; ++c) sum = __fmaf_rn(convert::to_float(g[c]), convert::to_float(o[c]), sum);
  p.l.dsum[static_cast<int64_t>(h) * l.total_q + t] = sum;
}

/// s = A·Bᵀ and dp = A2·B2ᵀ (from zero), k = d: A, A2 the warp's 16 rows of `as`, `as2` from row r0; B, B2 the BC rows
/// of `bs`, `bs2` (plain ldmatrix for all four: the rows hold d along their chunks).
template <class T, int D, int BC>
__device__ __forceinline__ void fb_qk(float (&s)[BC / 8][4], float (&dp)[BC / 8][4], const unsigned char* as,
                                      const unsigned char* bs, const unsigned char* as2, const unsigned char* bs2,
                                      int r0, int lane) {
  constexpr int CPR = fa_row_elems(D) / 8;
  const int j8 = lane >> 3, r8 = lane & 7;
  BARACUDA_UNROLL
  for (int n = 0; n < BC / 8; ++n) {
    BARACUDA_UNROLL
    for (int e = 0; e < 4; ++e) s[n][e] = 0.0f, dp[n][e] = 0.0f;
  }
  BARACUDA_UNROLL
  for (int kk = 0; kk < D / 16; ++kk) {
    unsigned a[4], a2[4];
    ptx::ldmatrix<4>(a, as + tc_swz<CPR>(r0 + (j8 & 1) * 8 + r8, kk * 2 + (j8 >> 1)));
    ptx::ldmatrix<4>(a2, as2 + tc_swz<CPR>(r0 + (j8 & 1) * 8 + r8, kk * 2 + (j8 >> 1)));
    BARACUDA_UNROLL
    for (int nj = 0; nj < BC / 16; ++nj) {
      unsigned r[4];
      ptx::ldmatrix<4>(r, bs + tc_swz<CPR>(nj * 16 + (j8 >> 1) * 8 + r8, kk * 2 + (j8 & 1)));
      const unsigned b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
      ptx::mma_m16n8k16<T>(s[2 * nj], a, b0, s[2 * nj]);
      ptx::mma_m16n8k16<T>(s[2 * nj + 1], a, b1, s[2 * nj + 1]);
      ptx::ldmatrix<4>(r, bs2 + tc_swz<CPR>(nj * 16 + (j8 >> 1) * 8 + r8, kk * 2 + (j8 & 1)));
      const unsigned c0[2] = {r[0], r[1]}, c1[2] = {r[2], r[3]};
      ptx::mma_m16n8k16<T>(dp[2 * nj], a2, c0, dp[2 * nj]);
      ptx::mma_m16n8k16<T>(dp[2 * nj + 1], a2, c1, dp[2 * nj + 1]);
    }
  }
}

/// acc[D/8][4] += A · B: A the 16×BC accumulators `x` rounded to T (k = their columns), B BC rows of `bs` (k = the
/// row, n = d) through ldmatrix.trans.
template <class T, int D, int BC>
__device__ __forceinline__ void fb_pv(float (&acc)[D / 8][4], const float (&x)[BC / 8][4], const unsigned char* bs,
                                      int lane) {
  constexpr int CPR = fa_row_elems(D) / 8;
  const int j8 = lane >> 3, r8 = lane & 7;
  BARACUDA_UNROLL
  for (int kk = 0; kk < BC / 16; ++kk) {
    const unsigned a[4] = {fa_pack<T>(x[2 * kk][0], x[2 * kk][1]), fa_pack<T>(x[2 * kk][2], x[2 * kk][3]),
                           fa_pack<T>(x[2 * kk + 1][0], x[2 * kk + 1][1]),
                           fa_pack<T>(x[2 * kk + 1][2], x[2 * kk + 1][3])};
    BARACUDA_UNROLL
    for (int nj = 0; nj < D / 16; ++nj) {
      unsigned r[4];
      ptx::ldmatrix<4, true>(r, bs + tc_swz<CPR>(kk * 16 + (j8 & 1) * 8 + r8, nj * 2 + (j8 >> 1)));
      const unsigned b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
      ptx::mma_m16n8k16<T>(acc[2 * nj], a, b0, acc[2 * nj]);
      ptx::mma_m16n8k16<T>(acc[2 * nj + 1], a, b1, acc[2 * nj + 1]);
    }
  }
}

/// Stores τ·acc (16 rows of the warp from row r0 of a [rows, d] view at `dst` with token stride `tok`), rows < n.
template <class T, int D>
__device__ __forceinline__ void fb_store(T* dst, int64_t tok, const float (&acc)[D / 8][4], float scale, int64_t r0,
                                         int n, int lane) {
  const int g = lane >> 2;
  BARACUDA_UNROLL
  for (int hh = 0; hh < 2; ++hh) {
    const int64_t r = r0 + g + 8 * hh;
    if (r >= n) continue;
    BARACUDA_UNROLL
    for (int c = 0; c < D / 8; ++c) {
      const T v2[2] = {convert::from_opmath<T>(__fmul_rn(acc[c][2 * hh], scale)),
                       convert::from_opmath<T>(__fmul_rn(acc[c][2 * hh + 1], scale))};
      ::baracuda::gemm::tc_store2(dst + r * tok + c * 8 + 2 * (lane & 3), v2, true);
    }
  }
}

template <int D>
__device__ __forceinline__ void fb_zero(float (&acc)[D / 8][4]) {
  BARACUDA_UNROLL
  for (int c = 0; c < D / 8; ++c) {
    BARACUDA_UNROLL
    for (int e = 0; e < 4; ++e) acc[c][e] = 0.0f;
  }
}

template <class T, int D>
__global__ void __launch_bounds__(kFbThreads) fa2_bwd_dkdv_kernel(FbParams p) {
  constexpr int BN = kFbKeys, BM = fb_step(D), CPR = fa_row_elems(D) / 8, NT = kFbThreads;
  const ::baracuda::detail::FlashAttentionLaunch& l = p.l.f;
  BARACUDA_DYNAMIC_SHARED(unsigned char, smem);
  constexpr int kTile = BM * CPR * 16;
  unsigned char* ks = smem;
  unsigned char* vs = ks + BN * CPR * 16;
  unsigned char* stages = vs + BN * CPR * 16;  // stage s: Q at stages + 2s·kTile, dO at stages + (2s + 1)·kTile
  float* row_vals = reinterpret_cast<float*>(stages + 4 * kTile);  // stage s: lse at 2s·BM, D at (2s + 1)·BM
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t4 = lane & 3;
  const int b = static_cast<int>(blockIdx.z), hk = static_cast<int>(blockIdx.y);
  const int kv0 = static_cast<int>(blockIdx.x) * BN;
  const FbSeq sq = fb_sequence(l, b, lane);
  const int krows = min(sq.s_k, l.seqlen_k);  // key rows written
  if (kv0 >= krows) return;
  const int rows = min(sq.s_q, l.seqlen_q);  // query rows that contribute
  const int group = l.heads / l.kv_heads;
  const int64_t off = static_cast<int64_t>(sq.s_k) - sq.s_q;

  const uint16_t* kd = static_cast<const uint16_t*>(l.k) + sq.k_start * l.k_tok + hk * l.k_head;
  const uint16_t* vd = static_cast<const uint16_t*>(l.v) + sq.k_start * l.v_tok + hk * l.v_head;
  tc_load_tile<BN, CPR, NT>(ks, TcOperand{kd, 0, l.k_tok, 1, sq.s_k, D, p.k_vec, true}, kd, kv0, 0, tid);
  tc_load_tile<BN, CPR, NT>(vs, TcOperand{vd, 0, l.v_tok, 1, sq.s_k, D, p.v_vec, true}, vd, kv0, 0, tid);

  // The query rows that see some key of the tile: [i_lo, i_hi].
  const int64_t k_last = min(kv0 + BN, sq.s_k) - 1;
  int64_t i_lo = 0, i_hi = rows - 1;
  if (l.window_right >= 0) i_lo = max(i_lo, kv0 - off - l.window_right);
  if (l.window_left >= 0) i_hi = min(i_hi, k_last - off + l.window_left);
  const int t_lo = i_lo <= i_hi ? static_cast<int>(i_lo / BM) : 0;
  const int t_hi = i_lo <= i_hi ? static_cast<int>(i_hi / BM) + 1 : 0;

  // Steps (h, t): query head h of the group, query tile t, h-major; step s's Q and dO in stage s & 1.
  const auto q_of = [&](int h) { return static_cast<const uint16_t*>(l.q) + sq.q_start * l.q_tok + h * l.q_head; };
  const auto do_of = [&](int h) {
    return static_cast<const uint16_t*>(p.l.d_o) + sq.q_start * p.l.do_tok + h * p.l.do_head;
  };
  // Step (h, t)'s Q and dO tiles, and its rows' lse and D (a thread a value: rows past `rows` read nothing).
  const auto load_step = [&](int stage, int h, int t) {
    const uint16_t* qd = q_of(h);
    const uint16_t* gd = do_of(h);
    unsigned char* qs = stages + 2 * stage * kTile;
    tc_load_tile<BM, CPR, NT>(qs, TcOperand{qd, 0, l.q_tok, 1, rows, D, p.q_vec, true}, qd, t * BM, 0, tid);
    tc_load_tile<BM, CPR, NT>(qs + kTile, TcOperand{gd, 0, p.l.do_tok, 1, rows, D, p.do_vec, true}, gd, t * BM, 0, tid);
    static_assert(2 * BM <= NT, "a thread a row value");
    if (tid < 2 * BM) {
      const int64_t i = int64_t{t} * BM + tid % BM;
      const bool in = i < rows;
      const float* src = tid < BM ? fb_lse_at(l, b, h, i, sq.q_start + i)
                                  : p.l.dsum + static_cast<int64_t>(h) * l.total_q + sq.q_start + i;
      ptx::cp_async_ca_zfill<4>(row_vals + 2 * stage * BM + tid, in ? src : p.l.dsum, in ? 4 : 0);
    }
  };
  const int h_end = t_lo < t_hi ? (hk + 1) * group : hk * group;
  if (h_end > hk * group) load_step(0, hk * group, t_lo);
  ptx::cp_async_commit();  // with K and V

  float dk[D / 8][4], dv[D / 8][4];
  fb_zero<D>(dk), fb_zero<D>(dv);
  for (int h = hk * group, t = t_lo, s = 0; h < h_end; ++s) {
    const int qq0 = t * BM;
    ptx::cp_async_wait_all();  // step s's Q and dO (the first step: K and V too)
    __syncthreads();           // everyone's; and every warp is done with step s − 1's stage
    int hn = h, tn = t + 1;
    if (tn == t_hi) {  // the next query head's first tile
      tn = t_lo;
      ++hn;
    }
    if (hn < h_end) load_step((s + 1) & 1, hn, tn);
    ptx::cp_async_commit();
    const unsigned char* qs = stages + 2 * (s & 1) * kTile;
    const unsigned char* gs = qs + kTile;
    const float* lse_t = row_vals + 2 * (s & 1) * BM;  // the tile's rows: lse, then D

    float st[BM / 8][4], dpt[BM / 8][4];  // Sᵀ and dPᵀ: rows keys (warp's 16), columns queries
    fb_qk<T, D, BM>(st, dpt, ks, qs, vs, gs, warp * 16, lane);
    BARACUDA_UNROLL
    for (int n = 0; n < BM / 8; ++n) {
      BARACUDA_UNROLL
      for (int c = 0; c < 2; ++c) {
        const int r = n * 8 + 2 * t4 + c;
        const int64_t i = qq0 + r;
        const float ll = fb_lse_log2(lse_t[r], i < rows);  // rows past `rows` were zero-filled
        const float di = lse_t[BM + r];
        BARACUDA_UNROLL
        for (int hh = 0; hh < 2; ++hh) {
          const int64_t j = kv0 + warp * 16 + g + 8 * hh;
          const bool ok = j < sq.s_k && fb_visible(l, i, j, off);
          const float pv = ok ? ptx::ex2_approx_ftz(__fmaf_rn(st[n][2 * hh + c], p.scale_log2, -ll)) : 0.0f;
          st[n][2 * hh + c] = pv;
          dpt[n][2 * hh + c] = __fmul_rn(pv, __fsub_rn(dpt[n][2 * hh + c], di));
        }
      }
    }
    fb_pv<T, D, BM>(dv, st, gs, lane);
    fb_pv<T, D, BM>(dk, dpt, qs, lane);
    h = hn, t = tn;
  }
  ptx::cp_async_wait_all();  // the K/V copies when no query tile was visited
  T* dkd = static_cast<T*>(p.l.dk) + sq.k_start * p.l.dk_tok + hk * p.l.dk_head;
  T* dvd = static_cast<T*>(p.l.dv) + sq.k_start * p.l.dv_tok + hk * p.l.dv_head;
  fb_store<T, D>(dkd, p.l.dk_tok, dk, l.scale, kv0 + warp * 16, krows, lane);
  fb_store<T, D>(dvd, p.l.dv_tok, dv, 1.0f, kv0 + warp * 16, krows, lane);
}

template <class T, int D>
__global__ void __launch_bounds__(kFbThreads) fa2_bwd_dq_kernel(FbParams p) {
  constexpr int BM = kFbQueries, BN = fb_step(D), CPR = fa_row_elems(D) / 8, NT = kFbThreads;
  const ::baracuda::detail::FlashAttentionLaunch& l = p.l.f;
  BARACUDA_DYNAMIC_SHARED(unsigned char, smem);
  constexpr int kTile = BN * CPR * 16;
  unsigned char* qs = smem;
  unsigned char* gs = qs + BM * CPR * 16;  // dO
  unsigned char* stages = gs + BM * CPR * 16;  // stage s: K at stages + 2s·kTile, V at stages + (2s + 1)·kTile
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t4 = lane & 3;
  const int b = static_cast<int>(blockIdx.z), h = static_cast<int>(blockIdx.y);
  const int q0 = static_cast<int>(blockIdx.x) * BM;
  const FbSeq sq = fb_sequence(l, b, lane);
  const int rows = min(sq.s_q, l.seqlen_q);
  if (q0 >= rows) return;
  const int hk = h / (l.heads / l.kv_heads);
  const int64_t off = static_cast<int64_t>(sq.s_k) - sq.s_q;

  const uint16_t* qd = static_cast<const uint16_t*>(l.q) + sq.q_start * l.q_tok + h * l.q_head;
  const uint16_t* gd = static_cast<const uint16_t*>(p.l.d_o) + sq.q_start * p.l.do_tok + h * p.l.do_head;
  tc_load_tile<BM, CPR, NT>(qs, TcOperand{qd, 0, l.q_tok, 1, rows, D, p.q_vec, true}, qd, q0, 0, tid);
  tc_load_tile<BM, CPR, NT>(gs, TcOperand{gd, 0, p.l.do_tok, 1, rows, D, p.do_vec, true}, gd, q0, 0, tid);
  const uint16_t* kd = static_cast<const uint16_t*>(l.k);
  const uint16_t* vd = static_cast<const uint16_t*>(l.v);
  if (sq.s_k > 0) {
    kd += sq.k_start * l.k_tok + hk * l.k_head;
    vd += sq.k_start * l.v_tok + hk * l.v_head;
  }
  const TcOperand ko{kd, 0, l.k_tok, 1, sq.s_k, D, p.k_vec, true};
  const TcOperand vo{vd, 0, l.v_tok, 1, sq.s_k, D, p.v_vec, true};

  // This thread's rows (row0, row0 + 8): lse·log2 e and D.
  const int64_t row0 = q0 + warp * 16 + g;
  float ll[2], di[2];
  BARACUDA_UNROLL
  for (int hh = 0; hh < 2; ++hh) {
    const int64_t i = row0 + 8 * hh;
    ll[hh] = fb_lse_log2(i < rows ? *fb_lse_at(l, b, h, i, sq.q_start + i) : 0.0f, i < rows);
    di[hh] = i < rows ? p.l.dsum[static_cast<int64_t>(h) * l.total_q + sq.q_start + i] : 0.0f;
  }
  // The key tiles any row of the block sees: keys [lo, hi) (as the forward).
  const int64_t q_hi = min(q0 + BM, rows) - 1;
  int64_t lo = 0, hi = sq.s_k;
  if (l.window_left >= 0 && q0 + off - l.window_left > 0) lo = q0 + off - l.window_left;
  if (l.window_right >= 0 && q_hi + off + l.window_right + 1 < hi) hi = q_hi + off + l.window_right + 1;
  const int t_lo = static_cast<int>(lo / BN);
  const int t_hi = hi > lo ? static_cast<int>((hi + BN - 1) / BN) : t_lo;

  // Key tile t's K and V in stage t & 1.
  const auto load_step = [&](int t) {
    unsigned char* ks = stages + 2 * (t & 1) * kTile;
    tc_load_tile<BN, CPR, NT>(ks, ko, kd, t * BN, 0, tid);
    tc_load_tile<BN, CPR, NT>(ks + kTile, vo, vd, t * BN, 0, tid);
  };
  if (t_lo < t_hi) load_step(t_lo);
  ptx::cp_async_commit();  // with Q and dO

  float dq[D / 8][4];
  fb_zero<D>(dq);
  for (int t = t_lo; t < t_hi; ++t) {
    const int kv0 = t * BN;
    ptx::cp_async_wait_all();  // tile t's K and V (the first tile: Q and dO too)
    __syncthreads();           // everyone's; and every warp is done with tile t − 1's stage
    if (t + 1 < t_hi) load_step(t + 1);
    ptx::cp_async_commit();
    const unsigned char* ks = stages + 2 * (t & 1) * kTile;
    const unsigned char* vs = ks + kTile;

    float s[BN / 8][4], dp[BN / 8][4];
    fb_qk<T, D, BN>(s, dp, qs, ks, gs, vs, warp * 16, lane);
    BARACUDA_UNROLL
    for (int n = 0; n < BN / 8; ++n) {
      BARACUDA_UNROLL
      for (int e = 0; e < 4; ++e) {
        const int hh = e >> 1;
        const int64_t i = row0 + 8 * hh, j = kv0 + n * 8 + 2 * t4 + (e & 1);
        const bool ok = j < sq.s_k && fb_visible(l, i, j, off);
        const float pv = ok ? ptx::ex2_approx_ftz(__fmaf_rn(s[n][e], p.scale_log2, -ll[hh])) : 0.0f;
        dp[n][e] = __fmul_rn(pv, __fsub_rn(dp[n][e], di[hh]));
      }
    }
    fb_pv<T, D, BN>(dq, dp, ks, lane);
  }
  ptx::cp_async_wait_all();  // the Q/dO copies when no key tile was visited
  T* dqd = static_cast<T*>(p.l.dq) + sq.q_start * p.l.dq_tok + h * p.l.dq_head;
  fb_store<T, D>(dqd, p.l.dq_tok, dq, l.scale, q0 + warp * 16, rows, lane);
}

/// The backward of `l` (backward_tables.hpp) for element T (__half or __nv_bfloat16) and head dimension D.
template <class T, int D>
Status fa2_backward(const ::baracuda::detail::ExecContext& ctx,
                    const ::baracuda::detail::FlashAttentionBackwardLaunch& l) {
  static_assert(fb_dkdv_smem_bytes(D) <= 80 * 1024,
                "two blocks per SM on sm_80 (164 KiB) and sm_90: the registers allow two");
  constexpr size_t kSmem = fb_dkdv_smem_bytes(D), kDqSmem = fb_dq_smem_bytes(D);
  const ::baracuda::detail::FlashAttentionLaunch& f = l.f;
  if (f.element != kind_of<T> || f.head_dim != D)
    return Error::internal("FlashAttentionBackwardPlan: the kernel was called for another kind or head dimension");
  if (f.batch == 0 || f.heads == 0) return {};
  FbParams p;
  p.l = l;
  p.scale_log2 = f.scale * 1.4426950408889634f;  // one f32 product (host code, IEEE)
  const auto vec = [](const void* data, int64_t tok, int64_t head) {
    return reinterpret_cast<uintptr_t>(data) % 16 == 0 && tok % 8 == 0 && head % 8 == 0;
  };
  p.q_vec = vec(f.q, f.q_tok, f.q_head);
  p.k_vec = vec(f.k, f.k_tok, f.k_head);
  p.v_vec = vec(f.v, f.v_tok, f.v_head);
  p.do_vec = vec(l.d_o, l.do_tok, l.do_head);
  const auto check = [](const char* what) -> Status {
    const auto e = launch::take_last_error();
    if (e.failed)
      return Error::device(std::string("FlashAttentionBackwardPlan: the ") + what + " launch failed: " + e.message,
                           e.code);
    return {};
  };
  if (f.total_q > 0) {
    const dim3 gd(static_cast<unsigned>((f.total_q + kFbThreads - 1) / kFbThreads), static_cast<unsigned>(f.heads));
    BARACUDA_LAUNCH(gd, dim3(kFbThreads), 0, ctx.stream, fa2_bwd_dsum_kernel<T, D>)(p);
    BARACUDA_TRY(check("D"));
  }
  if (f.seqlen_k > 0 && f.total_k > 0) {  // also without query rows: dk = dv = 0
    const dim3 gk(static_cast<unsigned>((f.seqlen_k + kFbKeys - 1) / kFbKeys), static_cast<unsigned>(f.kv_heads),
                  static_cast<unsigned>(f.batch));
    BARACUDA_TRY(launch::allow_shared_bytes(&fa2_bwd_dkdv_kernel<T, D>, kSmem, "FlashAttentionBackwardPlan"));
    BARACUDA_LAUNCH(gk, dim3(kFbThreads), kSmem, ctx.stream, fa2_bwd_dkdv_kernel<T, D>)(p);
    BARACUDA_TRY(check("dK/dV"));
  }
  if (f.seqlen_q == 0 || f.total_q == 0) return {};
  const dim3 gq(static_cast<unsigned>((f.seqlen_q + kFbQueries - 1) / kFbQueries), static_cast<unsigned>(f.heads),
                static_cast<unsigned>(f.batch));
  BARACUDA_TRY(launch::allow_shared_bytes(&fa2_bwd_dq_kernel<T, D>, kDqSmem, "FlashAttentionBackwardPlan"));
  BARACUDA_LAUNCH(gq, dim3(kFbThreads), kDqSmem, ctx.stream, fa2_bwd_dq_kernel<T, D>)(p);
  return check("dQ");
}

}  // namespace attention
BARACUDA_DEVICE_NAMESPACE_END
