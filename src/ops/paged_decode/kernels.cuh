// The paged_decode family's kernels (paged_attention.hpp has the contract): split-KV decode attention on CUDA cores
// over the paged cache, and the merge of the splits.
//
// Split kernel: one block of 4 warps per (split, kv head × group of ≤ 8 query rows, sequence). The rows are the
// GQA group's query heads × q_len tokens of the sequence (token-major: the heads of one token adjacent), so the
// block reads each K/V row of its chunk once for all of them. Per tile of 64 keys of the split's chunk:
//   1. the tile's K and V row offsets in the caches, one key a thread from its block-table entry (loaded during the
//      tile before) and its slot (kMaskedRow for a key past the chunk or on a page outside [0, num_blocks): such a
//      key is masked and its row never loaded); barrier;
//   2. scores: lanes are grouped LPK per key (LPK = d/8 rounded up to a power of two), each lane loads 8
//      elements of the key row and of the value row (one 16-byte load each for f16/bf16, 8 bytes for fp8/s8,
//      where aligned; both in flight at once, V kept in registers for step 4), widens the key's elements and dots
//      them with the rows' queries (f32, from shared memory); the LPK partial sums meet by xor shuffles; the score,
//      τ·k_scale·log2 e·q·k, or −inf where the row may not see the key, goes to shared memory; barrier;
//   3. online softmax, one warp per row: the tile's row maximum m', α = 2^(m − m'), P = 2^(S − m') (0 for −inf),
//      l = α·l + Σ P (a fixed xor tree), P back to shared memory; barrier;
//   4. O = α·O + P·V: each lane scales its accumulators (8 rows × its 8 columns, over the keys of its lane group)
//      and adds P·v for its keys' V rows (loaded in step 2); barrier.
// At the end the lane groups of a warp are summed by xor shuffles, then the 4 warps in order through shared
// memory, and o = O·v_scale / l is written: rounded to o (one split) or as f32 partials with their lse to the
// workspace. Merge kernel: one block per (query token, head) combines the splits in split order by their lse.
// Every sum has a fixed order and there are no atomics: the same bits on every run.
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "baracuda/core/element.hpp"
#include "baracuda/core/status.hpp"
#include "core/exec_context.hpp"
#include "device/convert.cuh"
#include "device/elementwise.cuh"  // BARACUDA_UNROLL
#include "device/vector_access.cuh"
#include "ops/attention/paged_keys.cuh"  // kMaskedRow, paged_row_offset
#include "ops/paged_decode/tables.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace paged_decode {

inline constexpr int kThreads = 128, kWarps = 4;
inline constexpr int kRows = 8;   ///< query rows per block
inline constexpr int kTile = 64;  ///< keys per tile
inline constexpr int kChunk = 8;  ///< elements of a K/V row per lane
inline constexpr float kLog2e = 1.4426950408889634f, kLn2 = 0.6931471805599453f;

/// Lanes per key: d/8 rounded up to a power of two (d = 96: 16 lanes, 12 of them loading).
constexpr int lanes_per_key(int d) { return d <= 64 ? 8 : d <= 128 ? 16 : 32; }
/// The dynamic shared memory: the queries (then the cross-warp sums) [kRows][d], the scores/probabilities
/// [kRows][kTile], m, l and α per row (f32), then the tile's K and V row offsets (int64, 8-byte aligned there).
constexpr int smem_floats(int d) { return kRows * d + kRows * kTile + 3 * kRows; }
constexpr int smem_bytes(int d) { return smem_floats(d) * 4 + 2 * kTile * 8; }
using attention::kMaskedRow;

struct Params {
  ::baracuda::detail::PagedDecodeLaunch l;
  float score_log2 = 0;  ///< τ·log2 e
  int row_groups = 1;    ///< ⌈(H/H_kv)·q_len / kRows⌉
  bool vec = false;      ///< both caches' rows 8-element aligned: vector loads
};

/// The effective length (tables.hpp's paged_effective_len, here for the device).
__device__ __forceinline__ int64_t effective_len(int32_t raw, int64_t max_blocks, int64_t block_size) {
  const int64_t cap = max_blocks * block_size;
  return raw < 0 ? 0 : (raw > cap ? cap : static_cast<int64_t>(raw));
}

/// The keys [begin, end) of split `split` of sequence `b`'s visible range, and its effective length `len`.
struct SplitRange {
  int64_t len = 0, begin = 0, end = 0;
};
__device__ __forceinline__ SplitRange split_range(const ::baracuda::detail::PagedDecodeLaunch& l, int b, int split) {
  SplitRange r;
  r.len = effective_len(l.context_lens[b * l.cl_stride], l.max_blocks, l.block_size);
  int64_t first = 0;
  if (l.window_left >= 0) first = max(int64_t{0}, r.len - l.q_len - l.window_left);
  const int64_t per = (r.len - first + l.splits - 1) / l.splits;
  r.begin = min(r.len, first + split * per), r.end = min(r.len, r.begin + per);
  return r;
}

/// Eight elements of a cache row as stored, packed in 32-bit words (4 for 2-byte kinds, 2 for 1-byte kinds): the V
/// rows wait in registers from the scores to P·V, and packed they take a quarter (1-byte kinds) or half the registers.
template <class C>
struct Chunk {
  static constexpr int kWords = kChunk * static_cast<int>(sizeof(C)) / 4;
  uint32_t w[kWords];
  __device__ __forceinline__ float at(int e) const {
    C x;
    std::memcpy(static_cast<void*>(&x), reinterpret_cast<const unsigned char*>(w) + e * sizeof(C), sizeof(C));
    return convert::code_to_float(x);
  }
};

/// Elements c0 .. c0 + 7 of a cache row: one 16-byte (2-byte kinds) or 8-byte (1-byte kinds) load when `Vec`,
/// element loads otherwise.
template <class C, bool Vec>
__device__ __forceinline__ Chunk<C> load_chunk(const C* row) {
  Chunk<C> c;
  if constexpr (Vec && sizeof(C) == 2) {
    const AlignedVector<C, kChunk> v = load_vector<kChunk>(row);
    std::memcpy(static_cast<void*>(c.w), &v, sizeof(c.w));
  } else if constexpr (Vec) {
    const unsigned long long w = *reinterpret_cast<const unsigned long long*>(row);
    std::memcpy(static_cast<void*>(c.w), &w, sizeof(c.w));
  } else {
    C x[kChunk];
    BARACUDA_UNROLL
    for (int e = 0; e < kChunk; ++e) x[e] = row[e];
    std::memcpy(static_cast<void*>(c.w), x, sizeof(c.w));
  }
  return c;
}

template <class T, class C, int D, bool Vec>
__global__ void __launch_bounds__(kThreads, ::baracuda::detail::paged_split_blocks_per_sm(D, sizeof(C), Vec))
    split_kernel(Params p) {
  constexpr int LPK = lanes_per_key(D), KPW = 32 / LPK, CH = D / kChunk, STEPS = kTile / (kWarps * KPW);
  static_assert(D % kChunk == 0 && CH <= LPK && kRows % kWarps == 0 && kTile == 64, "the lane layout");
  const ::baracuda::detail::PagedDecodeLaunch& l = p.l;

  BARACUDA_DYNAMIC_SHARED(float, smem);
  float* q_s = smem;                                  // [kRows][D]; the cross-warp sums at the end
  float* s_s = q_s + kRows * D;                       // [kRows][kTile]
  float* m_s = s_s + kRows * kTile;                   // [kRows] running maximum (log2 domain)
  float* l_s = m_s + kRows;                           // [kRows] running sum
  float* a_s = l_s + kRows;                           // [kRows] the tile's α
  static_assert(smem_floats(D) % 2 == 0, "the offsets 8-byte aligned");
  int64_t* koff_s = reinterpret_cast<int64_t*>(a_s + kRows);  // [kTile] K row offsets (kMaskedRow: masked)
  int64_t* voff_s = koff_s + kTile;                            // [kTile] V row offsets

  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  const int g = lane / LPK, cl = lane % LPK;  // the lane's key slot in its warp, its chunk of the row
  const bool chunk_on = cl < CH;
  const int split = static_cast<int>(blockIdx.x), b = static_cast<int>(blockIdx.z);
  const int hk = static_cast<int>(blockIdx.y) / p.row_groups, rg = static_cast<int>(blockIdx.y) % p.row_groups;
  const int group = l.heads / l.kv_heads, rows_total = group * l.q_len, row0 = rg * kRows;
  const int nrows = min(kRows, rows_total - row0);

  const SplitRange range = split_range(l, b, split);
  const int64_t len = range.len, k_begin = range.begin, k_end = range.end;

  // Queries (rows past nrows: zeros), in f32.
  const T* q = static_cast<const T*>(l.q);
  for (int idx = tid; idx < kRows * D; idx += kThreads) {
    const int r = idx / D, c = idx % D;
    float x = 0.0f;
    if (r < nrows) {
      const int row = row0 + r, i = row / group, h = hk * group + row % group;
      x = convert::to_float(q[(int64_t{b} * l.q_len + i) * l.q_tok + h * l.q_head + c]);
    }
    q_s[idx] = x;
  }
  if (tid < kRows) m_s[tid] = -INFINITY, l_s[tid] = 0.0f;
  // Each row's query index i (−1 for rows past nrows, which see nothing): the row sees keys up to len − q_len + i.
  int last_rel[kRows];
  BARACUDA_UNROLL
  for (int r = 0; r < kRows; ++r) last_rel[r] = r < nrows ? (row0 + r) / group : -1;
  const int64_t base = len - l.q_len;
  const float ks = l.k_scale != nullptr ? l.k_scale[hk * l.k_scale_stride] : 1.0f;
  const float vs = l.v_scale != nullptr ? l.v_scale[hk * l.v_scale_stride] : 1.0f;
  const float sl2 = __fmul_rn(p.score_log2, ks);
  const C* kc = static_cast<const C*>(l.k) + hk * l.k_head + cl * kChunk;
  const C* vc = static_cast<const C*>(l.v) + hk * l.v_head + cl * kChunk;

  float acc[kRows][kChunk];
  BARACUDA_UNROLL
  for (int r = 0; r < kRows; ++r) BARACUDA_UNROLL
  for (int e = 0; e < kChunk; ++e) acc[r][e] = 0.0f;
  __syncthreads();

  // Thread tid < kTile loads key t0 + tid's block-table entry a tile ahead of its use (−1 past the chunk), so that the
  // load's latency passes under the previous tile's work rather than before every tile's K/V loads, and turns it into
  // the key's row offsets at the tile's start: the lanes that load the row add them, where each computed the slot (a
  // remainder) and the products itself (docs/perf/2026-11-29-sass).
  const auto table_entry = [&](int64_t t0) -> int32_t {
    const int64_t j = t0 + tid;
    return tid < kTile && j < k_end ? l.block_tables[b * l.bt_seq + (j / l.block_size) * l.bt_page] : -1;
  };
  int32_t entry = table_entry(k_begin);
  for (int64_t t0 = k_begin; t0 < k_end; t0 += kTile) {
    if (tid < kTile) {
      const bool ok = entry >= 0 && entry < l.num_blocks;  // outside: masked, never read
      const int64_t slot = (t0 + tid) % l.block_size;
      koff_s[tid] = attention::paged_row_offset(ok, entry, slot, l.k_block, l.k_offset);
      voff_s[tid] = attention::paged_row_offset(ok, entry, slot, l.v_block, l.v_offset);
    }
    __syncthreads();
    if (t0 + kTile < k_end) entry = table_entry(t0 + kTile);

    Chunk<C> vr[STEPS];
    BARACUDA_UNROLL
    for (int step = 0; step < STEPS; ++step) {
      const int kt = (step * kWarps + warp) * KPW + g;
      const int64_t j = t0 + kt;
      const int64_t koff = koff_s[kt];
      const bool has_row = koff != kMaskedRow;
      float x[kChunk];
      if (has_row && chunk_on) {
        // V's row with K's: both loads in flight before the scores (V waits in registers for step 4).
        const Chunk<C> kr = load_chunk<C, Vec>(kc + koff);
        vr[step] = load_chunk<C, Vec>(vc + voff_s[kt]);
        BARACUDA_UNROLL
        for (int e = 0; e < kChunk; ++e) x[e] = kr.at(e);
      } else {
        BARACUDA_UNROLL
        for (int e = 0; e < kChunk; ++e) x[e] = 0.0f;
      }
      BARACUDA_UNROLL
      for (int r = 0; r < kRows; ++r) {
        if (r >= nrows) break;  // block-uniform: the shuffles below stay converged
        const float* qr = q_s + r * D + cl * kChunk;
        float part = 0.0f;
        if (chunk_on) {
          BARACUDA_UNROLL
          for (int e = 0; e < kChunk; ++e) part = __fmaf_rn(qr[e], x[e], part);
        }
        BARACUDA_UNROLL
        for (int off = LPK / 2; off >= 1; off /= 2) part = __fadd_rn(part, __shfl_xor_sync(0xffffffffu, part, off));
        if (cl == 0) {
          const int64_t last = last_rel[r] < 0 ? int64_t{-1} : base + last_rel[r];
          const bool seen = has_row && j <= last && (l.window_left < 0 || j >= last - l.window_left);
          s_s[r * kTile + kt] = seen ? __fmul_rn(part, sl2) : -INFINITY;
        }
      }
    }
    __syncthreads();

    BARACUDA_UNROLL
    for (int rr = 0; rr < kRows / kWarps; ++rr) {
      const int r = warp + rr * kWarps;
      if (r >= nrows) break;
      const float s0 = s_s[r * kTile + lane], s1 = s_s[r * kTile + lane + 32];
      float mx = fmaxf(s0, s1);
      BARACUDA_UNROLL
      for (int off = 16; off >= 1; off /= 2) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
      const float m_old = m_s[r], m_new = fmaxf(m_old, mx);
      const bool none = m_new == -INFINITY;  // nothing seen yet: α = 1, P = 0
      const float alpha = none ? 1.0f : exp2f(m_old - m_new);
      const float p0 = s0 == -INFINITY ? 0.0f : exp2f(s0 - m_new);
      const float p1 = s1 == -INFINITY ? 0.0f : exp2f(s1 - m_new);
      float sum = __fadd_rn(p0, p1);
      BARACUDA_UNROLL
      for (int off = 16; off >= 1; off /= 2) sum = __fadd_rn(sum, __shfl_xor_sync(0xffffffffu, sum, off));
      s_s[r * kTile + lane] = p0, s_s[r * kTile + lane + 32] = p1;
      __syncwarp();
      if (lane == 0) {
        m_s[r] = m_new;
        l_s[r] = __fadd_rn(__fmul_rn(alpha, l_s[r]), sum);
        a_s[r] = alpha;
      }
    }
    __syncthreads();

    BARACUDA_UNROLL
    for (int r = 0; r < kRows; ++r) {
      if (r >= nrows) break;
      const float alpha = a_s[r];
      BARACUDA_UNROLL
      for (int e = 0; e < kChunk; ++e) acc[r][e] = __fmul_rn(acc[r][e], alpha);
    }
    BARACUDA_UNROLL
    for (int step = 0; step < STEPS; ++step) {
      const int kt = (step * kWarps + warp) * KPW + g;
      if (koff_s[kt] == kMaskedRow || !chunk_on) continue;
      float x[kChunk];
      BARACUDA_UNROLL
      for (int e = 0; e < kChunk; ++e) x[e] = vr[step].at(e);
      BARACUDA_UNROLL
      for (int r = 0; r < kRows; ++r) {
        if (r >= nrows) break;
        const float pr = s_s[r * kTile + kt];
        BARACUDA_UNROLL
        for (int e = 0; e < kChunk; ++e) acc[r][e] = __fmaf_rn(pr, x[e], acc[r][e]);
      }
    }
    __syncthreads();
  }

  // The lane groups of a warp (xor tree), then the warps in order, into q_s (free: the last barrier passed).
  BARACUDA_UNROLL
  for (int r = 0; r < kRows; ++r) {
    if (r >= nrows) break;
    BARACUDA_UNROLL
    for (int e = 0; e < kChunk; ++e) BARACUDA_UNROLL
    for (int off = LPK; off < 32; off *= 2)
      acc[r][e] = __fadd_rn(acc[r][e], __shfl_xor_sync(0xffffffffu, acc[r][e], off));
  }
  float* red = q_s;
  for (int w = 0; w < kWarps; ++w) {
    if (warp == w && g == 0 && chunk_on) {
      BARACUDA_UNROLL
      for (int r = 0; r < kRows; ++r) {
        if (r >= nrows) break;
        BARACUDA_UNROLL
        for (int e = 0; e < kChunk; ++e) {
          float* dst = red + r * D + cl * kChunk + e;
          *dst = w == 0 ? acc[r][e] : __fadd_rn(*dst, acc[r][e]);
        }
      }
    }
    __syncthreads();
  }

  const int64_t tokens = int64_t{l.batch} * l.q_len;
  for (int idx = tid; idx < nrows * D; idx += kThreads) {
    const int r = idx / D, c = idx % D;
    const int row = row0 + r, i = row / group, h = hk * group + row % group;
    const int64_t tok = int64_t{b} * l.q_len + i;
    const float sum = l_s[r];
    const bool empty = !(sum > 0.0f);  // no visible key (or NaN): o = 0
    const float val = empty ? 0.0f : __fdiv_rn(__fmul_rn(red[idx], vs), sum);
    if (l.splits == 1)
      static_cast<T*>(l.o)[tok * l.o_tok + h * l.o_head + c] = convert::from_opmath<T>(val);
    else
      l.o_part[((split * tokens + tok) * l.heads + h) * D + c] = val;
    if (c == 0) {
      const float lse = __fmul_rn(__fadd_rn(m_s[r], log2f(sum)), kLn2);
      if (l.splits == 1) {
        if (l.lse != nullptr) l.lse[tok * l.lse_tok + h * l.lse_head] = empty ? INFINITY : lse;
      } else {
        l.lse_part[(split * tokens + tok) * l.heads + h] = empty ? -INFINITY : lse;
      }
    }
  }
}

/// One block per (query token, head): o = Σ_s w_s·o_s / Σ_s w_s with w_s = exp(lse_s − max lse), in split order;
/// lse = max + ln Σ w_s; no split with a key: o = 0, lse = +inf.
template <class T>
__global__ void __launch_bounds__(kThreads) merge_kernel(::baracuda::detail::PagedDecodeLaunch l) {
  const int64_t tok = blockIdx.x;
  const int h = static_cast<int>(blockIdx.y);
  const int64_t tokens = int64_t{l.batch} * l.q_len, stride = tokens * l.heads;
  const int64_t row = tok * l.heads + h;
  float mx = -INFINITY;
  for (int s = 0; s < l.splits; ++s) mx = fmaxf(mx, l.lse_part[s * stride + row]);
  const bool empty = mx == -INFINITY;
  float wsum = 0.0f;
  for (int s = 0; s < l.splits; ++s) {
    const float ls = l.lse_part[s * stride + row];
    wsum = __fadd_rn(wsum, ls == -INFINITY ? 0.0f : expf(ls - mx));
  }
  T* o = static_cast<T*>(l.o) + tok * l.o_tok + h * l.o_head;
  for (int c = static_cast<int>(threadIdx.x); c < l.head_dim; c += kThreads) {
    float a = 0.0f;
    for (int s = 0; s < l.splits; ++s) {
      const float ls = l.lse_part[s * stride + row];
      if (ls == -INFINITY) continue;
      a = __fmaf_rn(expf(ls - mx), l.o_part[(s * stride + row) * l.head_dim + c], a);
    }
    o[c] = convert::from_opmath<T>(empty ? 0.0f : __fdiv_rn(a, wsum));
  }
  if (threadIdx.x == 0 && l.lse != nullptr)
    l.lse[tok * l.lse_tok + h * l.lse_head] = empty ? INFINITY : __fadd_rn(mx, logf(wsum));
}

inline Status launch_error(const char* what) {
  const auto e = launch::take_last_error();
  if (!e.failed) return {};
  return Error::device(std::string("PagedDecodePlan: ") + what + " launch failed: " + e.message, e.code);
}

/// Whether rows at `data` with these element strides start on whole 8-element chunks (kChunk) of `elem`-byte
/// elements: one 8·elem-byte load per chunk.
inline bool chunks_aligned(const void* data, size_t elem, int64_t s0, int64_t s1, int64_t s2) {
  return reinterpret_cast<uintptr_t>(data) % (kChunk * elem) == 0 && s0 % kChunk == 0 && s1 % kChunk == 0 &&
         s2 % kChunk == 0;
}

/// The merge kernel over the splits' partials, when there are several.
template <class T>
Status launch_merge(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::PagedDecodeLaunch& l) {
  if (l.splits == 1) return {};
  const dim3 mgrid(static_cast<unsigned>(int64_t{l.batch} * l.q_len), static_cast<unsigned>(l.heads));
  BARACUDA_LAUNCH(mgrid, dim3(kThreads), 0, ctx.stream, merge_kernel<T>)(l);
  return launch_error("merge kernel");
}

/// The decode of `l` (tables.hpp) for element T, cache kind C and head dimension D.
template <class T, class C, int D>
Status paged_decode(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::PagedDecodeLaunch& l) {
  static_assert(smem_bytes(D) <= 48 * 1024, "within the default dynamic shared memory (no opt-in)");
  if (l.element != kind_of<T> || l.cache_kind != kind_of<C> || l.head_dim != D)
    return Error::internal("PagedDecodePlan: the kernel was called for another kind or head dimension");
  if (l.batch == 0 || l.q_len == 0 || l.heads == 0) return {};
  Params p;
  p.l = l;
  p.score_log2 = l.scale * kLog2e;  // one f32 product (host code, IEEE)
  const int group = l.heads / l.kv_heads;
  p.row_groups = (group * l.q_len + kRows - 1) / kRows;
  p.vec = chunks_aligned(l.k, sizeof(C), l.k_block, l.k_offset, l.k_head) &&
          chunks_aligned(l.v, sizeof(C), l.v_block, l.v_offset, l.v_head);
  const dim3 grid(static_cast<unsigned>(l.splits), static_cast<unsigned>(l.kv_heads * p.row_groups),
                  static_cast<unsigned>(l.batch));
  if (p.vec) {
    BARACUDA_LAUNCH(grid, dim3(kThreads), static_cast<size_t>(smem_bytes(D)), ctx.stream, split_kernel<T, C, D, true>)
    (p);
  } else {
    BARACUDA_LAUNCH(grid, dim3(kThreads), static_cast<size_t>(smem_bytes(D)), ctx.stream, split_kernel<T, C, D, false>)
    (p);
  }
  BARACUDA_TRY(launch_error("split kernel"));
  return launch_merge<T>(ctx, l);
}

}  // namespace paged_decode
BARACUDA_DEVICE_NAMESPACE_END
