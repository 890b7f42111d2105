// The paged_decode family's tensor-core split kernel (PagedDecodeKernel::TensorCores; paged_attention.hpp has the
// contract): FlashAttention-2's forward step (ops/attention/kernels.cuh) for the query rows of one GQA group.
//
// One warp per (split, kv head × group of ≤ 16 query rows, sequence). The rows are the group's query heads × q_len
// tokens (token-major, as the CUDA-core kernel's), one m16 tile: S = Q·Kᵀ and O += P·V by mma.sync m16n8k16, so the
// warp reads each K/V row of its chunk once for all of them, and the dot products leave the FMA pipe (the CUDA-core
// kernel issues about 60 instructions per key at d = 128: docs/perf/2026-11-27-h100). Shared memory: the Q tile
// (16 rows) and two stages of a 32-key K tile and V tile (the dense GEMM's swizzled 16-byte-chunk rows,
// gemm/tc_kernels.cuh); over an FP8/int8 cache, in the same bytes, one K/V tile pair and two stages of their codes.
// Per tile t of the split's chunk:
//   request tile t + 1 (cp.async for f16/bf16 rows: a lane pair a row, each row's offset shuffled once from the
//   lane that loaded its block-table entry during tile t − 1 and computed it; attention/paged_keys.cuh,
//   fa_load_paged_rows; rows not 16-byte aligned: a lookup per chunk); wait for tile t (an FP8/int8 cache: its codes,
//   requested by cp.async at the end of tile t − 2 into a staging buffer, widened exactly into the f16/bf16 tiles by
//   the threads that staged them: attention's fa_stage_codes and fa_widen_codes); S = Q·K_tᵀ; mask (per element
//   where the tile crosses the chunk's end, a masked page, a row's causal bound or its window); the online softmax
//   on the accumulator fragments (FlashAttention-2's: row max over the quad, α, P = 2^(S·τ·log2 e − m·τ·log2 e),
//   l); O = α·O + P·V_t with P rounded to the element kind as the A operand and V by ldmatrix.trans.
// Masked keys load as zero rows and never dereference their page. At the end o = O·v_scale / l and lse = m·τ + ln l
// are written, rounded to o (one split) or as f32 partials to the workspace, which kernels.cuh's merge kernel
// combines. Fixed orders, no atomics: the same bits on every run.
#pragma once

#include "ops/attention/kernels.cuh"  // fa_stage_codes, fa_widen_codes; first: the device namespace (sim/compat.cuh)
#include "ops/paged_decode/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace paged_decode {

inline constexpr int kTcThreads = 32;

struct TcParams {
  ::baracuda::detail::PagedDecodeLaunch l;
  float score_log2 = 0;                              ///< τ·log2 e
  int row_groups = 1;                                ///< ⌈(H/H_kv)·q_len / 16⌉
  int tile_pages = 0;                                ///< kPagedTcKeys / block_size (PagedCursor)
  bool q_vec = false, k_vec = false, v_vec = false;  ///< 16-byte (8-byte for 1-byte codes) aligned rows
};

template <class T, class C, int D>
__global__ void __launch_bounds__(kTcThreads) tc_split_kernel(TcParams p) {
  using ::baracuda::detail::kPagedTcKeys;
  using ::baracuda::detail::kPagedTcRows;
  using ::baracuda::gemm::TcOperand;
  constexpr int BN = kPagedTcKeys, RM = kPagedTcRows, CPR = (D == 96 ? 128 : D) / 8, NT = kTcThreads;
  constexpr int KD = D / 16, NO = D / 8, NS = BN / 8, kTile = BN * CPR * 16;
  constexpr bool kNarrow = sizeof(C) == 1;  // a quantized cache: codes widened into the tiles
  static_assert(kNarrow || std::is_same_v<C, T>, "K/V of q's kind, or 1-byte codes");
  static_assert(D % 16 == 0 && D <= 128 && ::baracuda::detail::kPagedTcStages == 2, "the tile layout");
  using KvT = std::conditional_t<kNarrow, C, uint16_t>;
  const ::baracuda::detail::PagedDecodeLaunch& l = p.l;

  BARACUDA_DYNAMIC_SHARED(unsigned char, smem);
  unsigned char* qs = smem;                // [16 rows][CPR chunks]
  unsigned char* kv = qs + RM * CPR * 16;  // stage s: K at kv + 2s·kTile, V at kv + (2s + 1)·kTile
  // A 1-byte cache: one K and one V tile of T at kv, then two stages of their codes (fa_stage_codes' layout): stage s
  // K's at codes + 2s·kCodes, V's at codes + (2s + 1)·kCodes. The same bytes as the 16-bit stages.
  constexpr int kCodes = BN * CPR * 8;
  static_assert(2 * kTile + 4 * kCodes == 4 * kTile, "the 16-bit stages' shared memory");
  unsigned char* codes = kv + 2 * kTile;
  const int lane = static_cast<int>(threadIdx.x);
  const int g = lane >> 2, t4 = lane & 3;
  const int split = static_cast<int>(blockIdx.x), b = static_cast<int>(blockIdx.z);
  const int hk = static_cast<int>(blockIdx.y) / p.row_groups, rg = static_cast<int>(blockIdx.y) % p.row_groups;
  const int group = l.heads / l.kv_heads, row0 = rg * RM, nrows = min(RM, group * l.q_len - row0);
  const SplitRange range = split_range(l, b, split);
  const int len = static_cast<int>(range.len), k_begin = static_cast<int>(range.begin);
  const int k_end = static_cast<int>(range.end);

  // Query row r of the tile: token i = (row0 + r) / group of sequence b, head hk·group + (row0 + r) % group.
  const uint16_t* qd = static_cast<const uint16_t*>(l.q);
  const auto q_row = [&](int r) {
    const int row = row0 + r;
    return qd + (int64_t{b} * l.q_len + row / group) * l.q_tok +
           static_cast<int64_t>(hk * group + row % group) * l.q_head;
  };
  const TcOperand qo{qd, 0, 0, 1, nrows, D, p.q_vec, true};
  ::baracuda::gemm::tc_load_rows<RM, CPR, NT, false>(qs, qo, q_row, 0, 0, lane);  // every row exists
  ptx::cp_async_commit();

  // The pages of the tiles (attention/paged_keys.cuh: one key a lane), fetched two tiles ahead of their loads; a
  // key outside the cache is masked and its row never read.
  using Keys = attention::PagedKeys<BN>;
  static_assert(BN == NT, "one key of a tile a lane");
  const int32_t* table = l.block_tables + b * l.bt_seq;
  const KvT* kd = static_cast<const KvT*>(l.k) + hk * l.k_head;
  const KvT* vd = static_cast<const KvT*>(l.v) + hk * l.v_head;
  const auto as16 = [](const KvT* x) { return kNarrow ? nullptr : reinterpret_cast<const uint16_t*>(x); };
  const TcOperand ko{as16(kd), 0, 0, 1, k_end, D, p.k_vec, true};
  const TcOperand vo{as16(vd), 0, 0, 1, k_end, D, p.v_vec, true};
  // Requests a tile into stage `stage` (cp.async, or a 1-byte cache's codes staged for fa_widen_codes).
  const auto load_tile = [&](int stage, const Keys& keys) {
    unsigned char* ks = kv + 2 * stage * kTile;
    const auto k_row = [&](int j) { return keys.row_ptr(kd, l.k_block, l.k_offset, j); };
    const auto v_row = [&](int j) { return keys.row_ptr(vd, l.v_block, l.v_offset, j); };
    if constexpr (kNarrow) {
      unsigned char* cs = codes + 2 * stage * kCodes;
      attention::fa_stage_codes<C, BN, CPR, NT>(cs, ko, k_row, keys.kv0, lane, l.k);
      attention::fa_stage_codes<C, BN, CPR, NT>(cs + kCodes, vo, v_row, keys.kv0, lane, l.v);
    } else if (p.k_vec && p.v_vec) {  // each row's offset from the lane holding its key: no lookup per chunk
      attention::fa_load_paged_rows<BN, CPR, NT>(ks, ko.data, keys.offsets(l.k_block, l.k_offset), D, lane);
      attention::fa_load_paged_rows<BN, CPR, NT>(ks + kTile, vo.data, keys.offsets(l.v_block, l.v_offset), D, lane);
    } else {
      const auto k16 = [&](int j) { return as16(k_row(j)); };
      const auto v16 = [&](int j) { return as16(v_row(j)); };
      ::baracuda::gemm::tc_load_rows<BN, CPR, NT>(ks, ko, k16, keys.kv0, 0, lane);
      ::baracuda::gemm::tc_load_rows<BN, CPR, NT>(ks + kTile, vo, v16, keys.kv0, 0, lane);
    }
  };
  const int tiles = k_end > k_begin ? (k_end - k_begin + BN - 1) / BN : 0;
  // Copy groups: at each tile's wait, tile t's and tile t + 1's are the last two. A 16-bit tile is requested at the top
  // of the tile before; a 1-byte cache's codes at the end of the tile two before (their stage is free once this
  // thread has widened the codes it staged), so they have a whole tile to arrive.
  Keys cur, nxt, far;  // tile t's pages, tile t + 1's, tile t + 2's
  auto at = attention::PagedCursor<BN>::at(k_begin, l.block_size, lane);  // the keys of the last tile fetched
  if (tiles > 0) {
    cur.fetch(table, l.bt_page, k_end, k_begin, at, lane);
    cur.resolve(l.num_blocks);
    load_tile(0, cur);
  }
  if (tiles > 1) {
    at.advance(p.tile_pages);
    nxt.fetch(table, l.bt_page, k_end, k_begin + BN, at, lane);
  }
  ptx::cp_async_commit();
  if constexpr (kNarrow) {
    if (tiles > 1) {
      nxt.resolve(l.num_blocks);
      load_tile(1, nxt);
    }
    ptx::cp_async_commit();
  }
  ptx::cp_async_wait<1>();  // Q (and a 1-byte cache's tile 0)
  __syncthreads();
  unsigned qf[KD][4];
  BARACUDA_UNROLL
  for (int kk = 0; kk < KD; ++kk) attention::fa_load_a<CPR>(qf[kk], qs, 0, kk, lane);
  const auto q_frag = [&](int, int kk, unsigned(&a)[4]) {
    BARACUDA_UNROLL
    for (int e = 0; e < 4; ++e) a[e] = qf[kk][e];
  };

  // The scales of a quantized cache, folded into the sums: τ·k_scale into the scores, v_scale into o.
  const float kscale = l.k_scale != nullptr ? l.k_scale[hk * l.k_scale_stride] : 1.0f;
  const float vscale = l.v_scale != nullptr ? l.v_scale[hk * l.v_scale_stride] : 1.0f;
  const float scale_log2 = kNarrow ? __fmul_rn(p.score_log2, kscale) : p.score_log2;
  const float scale = kNarrow ? __fmul_rn(l.scale, kscale) : l.scale;
  // Row r sees keys up to base + its token (bottom-right causal) and, with a window, from there − window_left.
  const int base = len - l.q_len;
  const auto last_of = [&](int r) { return base + (row0 + r) / group; };
  const int last_lo = last_of(0), last_hi = last_of(nrows - 1);

  float acc[1][NO][4];  // one m-tile: the attention family's step with MT = 1
  attention::fa_zero(acc[0]);
  float m_row[2] = {-INFINITY, -INFINITY}, l_row[2] = {0.0f, 0.0f};

  for (int t = 0; t < tiles; ++t) {
    const int kv0 = k_begin + t * BN;
    if constexpr (!kNarrow) {
      if (t + 1 < tiles) {
        nxt.resolve(l.num_blocks);
        load_tile((t + 1) & 1, nxt);
      }
      ptx::cp_async_commit();
    }
    if (t + 2 < tiles) {         // read a tile later
      at.advance(p.tile_pages);  // to kv0 + 2·BN: the condition holds for a prefix of the tiles
      far.fetch(table, l.bt_page, k_end, kv0 + 2 * BN, at, lane);
    }
    ptx::cp_async_wait<1>();  // tile t (this thread's copies)
    const unsigned char* ks = kv + (kNarrow ? 0 : 2 * (t & 1) * kTile);
    const unsigned char* vs = ks + kTile;
    if constexpr (kNarrow) {
      const unsigned char* cs = codes + 2 * (t & 1) * kCodes;
      attention::fa_widen_codes<T, C, BN, CPR, NT>(kv, cs, lane);
      attention::fa_widen_codes<T, C, BN, CPR, NT>(kv + kTile, cs + kCodes, lane);
    }
    __syncthreads();  // everyone's

    float s1[1][NS][4];
    float(&s)[NS][4] = s1[0];
    attention::fa_scores<T, 1, KD, NS, CPR>(s1, q_frag, ks, lane);

    // Per-element mask unless every key of the tile is on a valid page, in the chunk, and seen by every row.
    const bool full = kv0 + BN <= k_end && kv0 + BN - 1 <= last_lo &&
                      (l.window_left < 0 || kv0 >= last_hi - l.window_left) && cur.all_valid();
    if (!full) {
      BARACUDA_UNROLL
      for (int n = 0; n < NS; ++n) {
        BARACUDA_UNROLL
        for (int e = 0; e < 4; ++e) {
          const int r = g + 8 * (e >> 1), j = kv0 + n * 8 + 2 * t4 + (e & 1);
          const int last = last_of(r);
          const bool ok = r < nrows && j < k_end && j <= last && (l.window_left < 0 || j >= last - l.window_left) &&
                          cur.has_page(j - kv0);
          if (!ok) s[n][e] = -INFINITY;
        }
      }
    }

    attention::fa_softmax_step(s, acc[0], m_row, l_row, scale_log2);
    attention::fa_pv<T, 1, NS, NO, CPR>(acc, s1, vs, lane);
    __syncthreads();  // every lane is done with stage t & 1 (a 1-byte cache: the T tiles) before it is refilled
    if constexpr (kNarrow) {
      if (t + 2 < tiles) {
        far.resolve(l.num_blocks);
        load_tile(t & 1, far);
      }
      ptx::cp_async_commit();
    }
    cur = nxt, nxt = far;
  }
  ptx::cp_async_wait_all();  // no copy in flight at exit (only empty groups remain)

  const int64_t tokens = int64_t{l.batch} * l.q_len;
  BARACUDA_UNROLL
  for (int hh = 0; hh < 2; ++hh) {
    const float sum = attention::fa_quad_sum(l_row[hh]);
    const int r = g + 8 * hh;
    if (r >= nrows) continue;
    const bool empty = !(sum > 0.0f);  // no visible key (0), or NaN: o = 0
    const float inv = empty ? 0.0f : __fdiv_rn(vscale, sum);
    const float lse = __fmaf_rn(m_row[hh], scale, logf(sum));
    const int row = row0 + r, h = hk * group + row % group;
    const int64_t tok = int64_t{b} * l.q_len + row / group;
    BARACUDA_UNROLL
    for (int n = 0; n < NO; ++n) {
      const int c = n * 8 + 2 * t4;
      const float v0 = __fmul_rn(acc[0][n][2 * hh], inv), v1 = __fmul_rn(acc[0][n][2 * hh + 1], inv);
      if (l.splits == 1) {
        const T v2[2] = {convert::from_opmath<T>(v0), convert::from_opmath<T>(v1)};
        ::baracuda::gemm::tc_store2(static_cast<T*>(l.o) + tok * l.o_tok + h * l.o_head + c, v2, true);
      } else {
        float* part = l.o_part + ((split * tokens + tok) * l.heads + h) * D + c;
        part[0] = v0, part[1] = v1;
      }
    }
    if (t4 == 0) {
      if (l.splits == 1) {
        if (l.lse != nullptr) l.lse[tok * l.lse_tok + h * l.lse_head] = empty ? INFINITY : lse;
      } else {
        l.lse_part[(split * tokens + tok) * l.heads + h] = empty ? -INFINITY : lse;
      }
    }
  }
}

/// The tensor-core decode of `l` (tables.hpp) for element T, cache kind C and head dimension D (≤ 128).
template <class T, class C, int D>
Status paged_decode_tc(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::PagedDecodeLaunch& l) {
  constexpr int kSmem = ::baracuda::detail::paged_tc_smem_bytes(D);
  static_assert(kSmem <= 48 * 1024, "within the default dynamic shared memory (no opt-in)");
  if (l.element != kind_of<T> || l.cache_kind != kind_of<C> || l.head_dim != D)
    return Error::internal("PagedDecodePlan: the kernel was called for another kind or head dimension");
  if (l.batch == 0 || l.q_len == 0 || l.heads == 0) return {};
  TcParams p;
  p.l = l;
  p.score_log2 = l.scale * kLog2e;  // one f32 product (host code, IEEE)
  if (l.block_size <= 0 || ::baracuda::detail::kPagedTcKeys % l.block_size != 0)
    return Error::internal("PagedDecodePlan: the tensor-core kernel needs a page size that divides its 32-key tiles");
  p.tile_pages = ::baracuda::detail::kPagedTcKeys / l.block_size;
  const int group = l.heads / l.kv_heads;
  p.row_groups = (group * l.q_len + ::baracuda::detail::kPagedTcRows - 1) / ::baracuda::detail::kPagedTcRows;
  // Whole 8-element chunks at aligned addresses: 16 bytes (cp.async) for f16/bf16, 8 for 1-byte codes.
  p.q_vec = chunks_aligned(l.q, 2, l.q_tok, l.q_head, 0);
  p.k_vec = chunks_aligned(l.k, sizeof(C), l.k_block, l.k_offset, l.k_head);
  p.v_vec = chunks_aligned(l.v, sizeof(C), l.v_block, l.v_offset, l.v_head);
  const dim3 grid(static_cast<unsigned>(l.splits), static_cast<unsigned>(l.kv_heads * p.row_groups),
                  static_cast<unsigned>(l.batch));
  BARACUDA_LAUNCH(grid, dim3(kTcThreads), static_cast<size_t>(kSmem), ctx.stream, tc_split_kernel<T, C, D>)(p);
  BARACUDA_TRY(launch_error("split kernel"));
  return launch_merge<T>(ctx, l);
}

}  // namespace paged_decode
BARACUDA_DEVICE_NAMESPACE_END
