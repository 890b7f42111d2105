// Device code of the int4_gemm family: the W4A16 tensor-core GEMM over Marlin-layout weights,
// C[M, N] = A[M, K] · dequant(B)[K, N] (+ bias), and the act-order column gather of A. Instantiated for the
// cuda and sim devices by the kernel unit device.cu; tables.hpp documents the launch record.
//
// The kernel is a template on its block shape (tuning.hpp's Int4GemmConfig); the library instantiates
// kInt4GemmDefault (128 columns, 128-row slices). Described here for the first kernel's 64×64 shape, with the
// general case in brackets. A block computes a BM×64 [BM×BN] tile
// of C (BM = 16·MT rows; one [BN/64 consecutive] 64-column block[s] of the Marlin layout) with 4 warps
// [warps_n × warps_k], warp w owning the columns 16w..16w+15 [BN/warps_n columns: NT = BN/(16·warps_n)
// consecutive n16 tiles]. K is streamed in 64-row [KS-row] slices through `ST` shared buffers filled by
// 16-byte cp.async copies (zero-fill past M, and past N for a block that N % BN leaves partly outside): a
// slice is BM×64 [BM×KS] activations (rows XOR-swizzled by 16-byte chunk, as in the int8 GEMM) and the four
// [KS/16] k-tiles of the block's Marlin tiles (512 contiguous bytes per 16×64 tile). Per 16-row k-tile a
// warp takes its A fragments with ldmatrix.x4 and reads one weight word per lane per n16 tile [the NT
// words as one vector load]: the Marlin layout puts in word 4·lane + q of a 64-column block exactly lane's
// mma.m16n8k16 B fragments for the n8 blocks 16q and 16q + 8, nibbles interleaved [0,2,4,6,1,3,5,7] so that
// (word >> 4i) & 0x000F000F holds fragment register i's two values. Each pair becomes a 16-bit pair by the
// magic-number trick: OR-ing q into the exponent of 1024 (f16, 0x6400) or 128 (bf16, 0x4300) gives 1024 + q
// (128 + q) exactly; subtracting 1024 + z (z = 8 symmetric, the group's zero point otherwise) gives q − z
// exactly, and one multiply by the group's scale rounds (q − z)·s once to the activation type, as the host
// reference does. The scale and zero-point rows of the groups a slice touches travel with the slice through
// the pipeline (the block's BN columns of each: up to 4 rows for a 128-row slice in groups of 32); a warp
// reads them from the stage into registers whenever a k-tile starts a new group. mma.sync.m16n8k16 accumulates in f32 [with warps_k > 1 each
// K warp takes a contiguous run of the slice's k-tiles, and their sums are added through shared memory
// after the last slice, in a fixed order]; the epilogue adds the bias in f32 and rounds once. With K split
// into parts, each part's f32 sums go to the workspace and a second kernel adds them in order.
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "device/convert.cuh"
#include "device/ptx/bitops.cuh"
#include "device/cp_async_pipeline.cuh"
#include "device/ptx/ldmatrix.cuh"
#include "device/ptx/mma.cuh"
#include "device/shared_bytes.cuh"
#include "ops/int4_gemm/tables.hpp"
#include "ops/int4_gemm/tuning.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace int4_gemm {

struct Params {
  const unsigned char* a = nullptr;  // [M, K] of T
  int64_t lda = 0;                   // elements
  const uint32_t* b = nullptr;       // [K/16, 2N] Marlin words
  const void* scales = nullptr;      // [G, N] of T, Marlin-permuted
  const uint32_t* zeros = nullptr;   // [G, N/8] Marlin zero points, or nullptr (z = 8)
  const void* bias = nullptr;        // [N] of T, or nullptr
  int64_t bias_stride = 0;
  void* c = nullptr;  // [M, N] of T
  int64_t ldc = 0;    // elements
  int m = 0, n = 0, k = 0;
  int group_rows = 0;
  bool grouped = false;
  int slices_per_split = 0;   // K slices (of the shape's slice_rows) per blockIdx.z
  float* partial = nullptr;   // [splits, M, N] f32 when K is split, else nullptr
};

template <class T>
struct Pair;
template <>
struct Pair<__half> {
  using Type = __half2;
  static constexpr unsigned kMagic = 0x64006400u;  // 1024 in each half
  static constexpr unsigned kBase = 0x6400u;       // 1024 + z is 0x6400 | z
};
template <>
struct Pair<__nv_bfloat16> {
  using Type = __nv_bfloat162;
  static constexpr unsigned kMagic = 0x43004300u;  // 128 in each half
  static constexpr unsigned kBase = 0x4300u;       // 128 + z is 0x4300 | z
};

template <class T2>
__device__ __forceinline__ T2 as_pair(unsigned u) {
  T2 r;
  std::memcpy(static_cast<void*>(&r), &u, sizeof r);
  return r;
}
template <class T2>
__device__ __forceinline__ unsigned as_bits(T2 v) {
  unsigned u;
  std::memcpy(&u, static_cast<const void*>(&v), sizeof u);
  return u;
}

/// Column `col`'s position in its Marlin-permuted scale row: the inverse of the grouped permutation
/// (position i holds column i/8 + 8·(i%8) of its 64-run) or of the per-channel one (position 8a + b holds
/// column 2a + {0,1,8,9,16,17,24,25}[b] of its 32-run).
__device__ __forceinline__ int scale_position(int col, bool grouped) {
  if (grouped) {
    const int o = col & 63;
    return (col & ~63) + 8 * (o & 7) + (o >> 3);
  }
  const int o = col & 31;
  return (col & ~31) + 8 * ((o & 7) >> 1) + 2 * (o >> 3) + (o & 1);
}

/// Column `col`'s zero point in a row of Marlin zero points (or in a block's part of one, `col` counted from
/// the block's first column, a multiple of 64): the 64-entry permutation, then the nibble interleave (element
/// e of a run of 8 sits in nibble {0,4,1,5,2,6,3,7}[e]).
__device__ __forceinline__ unsigned zero_point(const uint32_t* row, int col) {
  const int o = col & 63;
  const int p = 8 * (o & 7) + (o >> 3);
  const int e = p & 7;
  const int nib = (e >> 1) + 4 * (e & 1);
  return (row[(col >> 6) * 8 + (p >> 3)] >> (4 * nib)) & 0xFu;  // lint: shift < width: nib in [0, 7]
}

/// Byte offset of 16-byte chunk `c` of row `r` in an activation slice of `kChunks` chunks per row (XOR
/// swizzle of the chunk's low 3 bits: the 8 rows an ldmatrix phase reads hit 8 distinct bank groups).
template <int kChunks>
__device__ __forceinline__ int swizzle(int r, int c) {
  return r * (kChunks * 16) + ((c ^ (r & 7)) * 16);
}

/// `n` Marlin words from shared memory (n = 1, 2, 4 consecutive words, aligned to n words).
template <int kN>
__device__ __forceinline__ void load_words(unsigned (&w)[kN], const uint32_t* src) {
  if constexpr (kN == 4) {
    const uint4 v = *reinterpret_cast<const uint4*>(src);
    w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
  } else if constexpr (kN == 2) {
    const uint2 v = *reinterpret_cast<const uint2*>(src);
    w[0] = v.x, w[1] = v.y;
  } else {
    w[0] = *src;
  }
}

// The shape's fields as separate parameters (nvcc's host stubs of a kernel template cannot name a
// class-type template argument); launch_mt passes them from an Int4GemmConfig.
template <class T, int MT, bool kAsym, int BN, int KS, int ST, int WN, int WK>
__global__ void __launch_bounds__(32 * WN * WK) w4a16_kernel(Params p) {
  using T2 = typename Pair<T>::Type;
  constexpr ::baracuda::detail::Int4GemmConfig kC{BN, KS, ST, WN, WK};
  static_assert(kC.valid(), "a block shape kernels.cuh implements (tuning.hpp)");
  constexpr int BM = 16 * MT;
  constexpr int kThreads = kC.threads();
  constexpr int KT = KS / 16;           // k-tiles per slice
  constexpr int NT = kC.col_tiles();    // n16 tiles per warp
  constexpr int KW = KT / kC.warps_k;   // k-tiles per warp per slice
  constexpr int kChunks = KS / 8;       // 16-byte chunks per activation row
  constexpr int kAStage = BM * KS * 2;  // BM rows × KS elements × 2 bytes
  constexpr int kBTile = BN * 8;        // one k-tile of the block's BN/64 Marlin tiles (512 bytes each)
  constexpr int kSlots = kC.group_slots();                  // scale rows a slice can need
  constexpr int kSRow = BN * 2;                             // the block's part of a scale row (bytes)
  constexpr int kZRow = BN / 2;                             // ... of a row of zero points (BN/8 words)
  constexpr int kSOffset = kAStage + KT * kBTile;           // the stage's scale rows
  constexpr int kZOffset = kSOffset + kSlots * kSRow;       // the stage's zero-point rows (kAsym)
  constexpr int kStage = kC.stage_bytes(BM, kAsym);
  static_assert(kStage == kZOffset + (kAsym ? kSlots * kZRow : 0), "stage layout (tuning.hpp's stage_bytes)");
  static_assert(ST >= 2, "at least two stages");

  BARACUDA_DYNAMIC_SHARED(unsigned char, smem);
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid & 31, warp = tid >> 5;
  // (warp_k a constant 0 without a K split, so that k-tile offsets fold into constants)
  const int warp_n = WK == 1 ? warp : warp % WN, warp_k = WK == 1 ? 0 : warp / WN;
  const int nb = static_cast<int>(blockIdx.x);  // BN-column block
  const int m0 = static_cast<int>(blockIdx.y) * BM;
  const int split = static_cast<int>(blockIdx.z);
  const int first = split * p.slices_per_split;  // this block's part of K, in KS-row slices
  const int slices = p.k / KS - first < p.slices_per_split ? p.k / KS - first : p.slices_per_split;
  const int64_t row_words = 2 * static_cast<int64_t>(p.n);
  const int col_blocks = p.n / 64;  // of the Marlin layout: a block past N (N % BN ≠ 0) has some outside

  auto load_slice = [&](int stage, int local) {
    const int s = first + local;
    unsigned char* as = smem + stage * kStage;
    unsigned char* bs = as + kAStage;
    for (int i = tid; i < BM * kChunks; i += kThreads) {
      const int r = static_cast<unsigned>(i) / kChunks, c = static_cast<unsigned>(i) % kChunks, gm = m0 + r;
      const bool ok = gm < p.m;
      const unsigned char* src = ok ? p.a + (static_cast<int64_t>(gm) * p.lda + s * KS + c * 8) * 2 : p.a;
      ptx::cp_async_cg_zfill(as + swizzle<kChunks>(r, c), src, ok ? 16 : 0);
    }
    // The slice's KT k-tiles of the block's Marlin tiles: KT runs of 2·BN contiguous words (BN/2 chunks),
    // a whole number of chunks per thread.
    static_assert(KT * (BN / 2) % kThreads == 0, "whole chunks per thread");
BARACUDA_UNROLL
    for (int it = 0; it < KT * (BN / 2) / kThreads; ++it) {
      const int i = tid + it * kThreads;
      const int t = static_cast<unsigned>(i) / (BN / 2), chunk = static_cast<unsigned>(i) % (BN / 2);
      const uint32_t* src = p.b + (static_cast<int64_t>(s) * KT + t) * row_words + nb * (2 * BN) + chunk * 4;
      if constexpr (BN > 64) {  // a 64-column block past N: zero-filled, not read
        const bool ok = nb * (BN / 64) + chunk / 32 < col_blocks;
        ptx::cp_async_cg_zfill(bs + t * kBTile + chunk * 16, ok ? src : p.b, ok ? 16 : 0);
      } else {
        ptx::cp_async_cg_zfill(bs + t * kBTile + chunk * 16, src, 16);
      }
    }
    // The scale rows (and zero-point rows) of the groups the slice touches, the block's BN columns of each
    // (contiguous: both scale permutations and the zero points' stay within 64-column runs). With groups
    // longer than a slice this copies the same small row again per slice, from L2; the main loop then never
    // waits on a global load.
    const int g0 = s * KS / p.group_rows, rows = (s * KS + KS - 1) / p.group_rows - g0 + 1;
    unsigned char* ss = as + kSOffset;
    for (int i = tid; i < rows * (kSRow / 16); i += kThreads) {
      const int r = static_cast<unsigned>(i) / (kSRow / 16), c = static_cast<unsigned>(i) % (kSRow / 16);
      const bool ok = BN == 64 || nb * BN + c * 8 < p.n;
      const T* src = static_cast<const T*>(p.scales) + static_cast<int64_t>(g0 + r) * p.n + nb * BN + c * 8;
      ptx::cp_async_cg_zfill(ss + r * kSRow + c * 16, ok ? src : p.scales, ok ? 16 : 0);
    }
    if constexpr (kAsym) {
      unsigned char* zs = as + kZOffset;
      for (int i = tid; i < rows * (kZRow / 16); i += kThreads) {
        const int r = static_cast<unsigned>(i) / (kZRow / 16), c = static_cast<unsigned>(i) % (kZRow / 16);
        const bool ok = BN == 64 || nb * BN + c * 32 < p.n;
        const uint32_t* src = p.zeros + static_cast<int64_t>(g0 + r) * (p.n / 8) + nb * (BN / 8) + c * 4;
        ptx::cp_async_cg_zfill(zs + r * kZRow + c * 16, ok ? src : p.zeros, ok ? 16 : 0);
      }
    }
  };

  float acc[MT][2 * NT][4];
BARACUDA_UNROLL
  for (int i = 0; i < MT; ++i)
BARACUDA_UNROLL
    for (int j = 0; j < 2 * NT; ++j)
BARACUDA_UNROLL
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

  // This warp's n16 tiles are q0 .. q0 + NT − 1 of the block (all in one Marlin column block, at word
  // q0 % 4 + j of each lane's 4); this lane's columns in tile j are cols[j] and cols[j] + 8 (n8 blocks 2j and
  // 2j + 1) counted from the block's first column, with their current group's parameters.
  const int q0 = warp_n * NT;
  const int word0 = BN == 64 ? 4 * lane + q0 : (q0 >> 2) * 128 + 4 * lane + (q0 & 3);
  const int block_col0 = nb * BN;  // a multiple of 64: the scale and zero-point permutations' runs align
  int cols[NT];
BARACUDA_UNROLL
  for (int j = 0; j < NT; ++j) cols[j] = 16 * (q0 + j) + (lane >> 2);
  int group = -1;
  T2 sc[NT][2], zc[NT][2];  // scales splatted; 1024 + z (128 + z) splatted

  pipeline_prologue<ST>(slices, load_slice);
  for (int s = 0; s < slices; ++s) {
    const unsigned char* as = smem + pipeline_advance<ST>(s, slices, load_slice) * kStage;
    const uint32_t* bw = reinterpret_cast<const uint32_t*>(as + kAStage);
    const int slice_g0 = (first + s) * KS / p.group_rows;  // the group of the stage's first scale row
BARACUDA_UNROLL
    for (int kw = 0; kw < KW; ++kw) {
      const int kk = warp_k * KW + kw;
      const int g = ((first + s) * KS + kk * 16) / p.group_rows;
      if (g != group) {  // uniform: every k-tile lies in one group (group_rows is a multiple of 16)
        group = g;
        // (a block's n16 tile past N, when N % BN ≠ 0, reads the zero-filled rows: finite, never stored)
        const T* srow = reinterpret_cast<const T*>(as + kSOffset + (g - slice_g0) * kSRow);
        const uint32_t* zrow = reinterpret_cast<const uint32_t*>(as + kZOffset + (g - slice_g0) * kZRow);
BARACUDA_UNROLL
        for (int j = 0; j < NT; ++j) {
          const T sa = srow[scale_position(block_col0 + cols[j], p.grouped) - block_col0];
          const T sb = srow[scale_position(block_col0 + cols[j] + 8, p.grouped) - block_col0];
          unsigned za = 8, zb = 8;
          if constexpr (kAsym) za = zero_point(zrow, cols[j]), zb = zero_point(zrow, cols[j] + 8);
          sc[j][0] = T2{sa, sa}, sc[j][1] = T2{sb, sb};
          zc[j][0] = as_pair<T2>((Pair<T>::kBase | za) * 0x10001u);
          zc[j][1] = as_pair<T2>((Pair<T>::kBase | zb) * 0x10001u);
        }
      }
      unsigned af[MT][4];
BARACUDA_UNROLL
      for (int mi = 0; mi < MT; ++mi)
        ptx::ldmatrix<4>(af[mi], as + swizzle<kChunks>(mi * 16 + (lane & 15), kk * 2 + (lane >> 4)));
      unsigned w[NT];
      load_words<NT>(w, bw + kk * (2 * BN) + word0);
      constexpr unsigned char kAndOr = (ptx::kLop3A & ptx::kLop3B) | ptx::kLop3C;
BARACUDA_UNROLL
      for (int j = 0; j < NT; ++j) {
        unsigned bf[2][2];
BARACUDA_UNROLL
        for (int r = 0; r < 4; ++r) {
          // lint: shift < width: r in [0, 3]
          const unsigned h = ptx::lop3<kAndOr>(w[j] >> (4 * r), 0x000F000Fu, Pair<T>::kMagic);
          const T2 v = __hmul2(__hsub2(as_pair<T2>(h), zc[j][r >> 1]), sc[j][r >> 1]);
          bf[r >> 1][r & 1] = as_bits(v);
        }
BARACUDA_UNROLL
        for (int mi = 0; mi < MT; ++mi)
BARACUDA_UNROLL
          for (int h = 0; h < 2; ++h) ptx::mma_m16n8k16<T>(acc[mi][2 * j + h], af[mi], bf[h], acc[mi][2 * j + h]);
      }
    }
  }
  ptx::cp_async_wait_all();

  if constexpr (kC.warps_k > 1) {
    // The K warps' sums meet in shared memory (the pipeline's, now idle): warps 1.. of each column group
    // store theirs, warp 0 adds them in order.
    constexpr int kE = MT * 2 * NT * 4;
    float* red = reinterpret_cast<float*>(smem);
    __syncthreads();  // every warp is done reading the stages
    if (warp_k > 0) {
      float* dst = red + ((warp_k - 1) * kC.warps_n + warp_n) * kE * 32 + lane;
BARACUDA_UNROLL
      for (int mi = 0; mi < MT; ++mi)
BARACUDA_UNROLL
        for (int j = 0; j < 2 * NT; ++j)
BARACUDA_UNROLL
          for (int e = 0; e < 4; ++e) dst[((mi * 2 * NT + j) * 4 + e) * 32] = acc[mi][j][e];
    }
    __syncthreads();
    if (warp_k > 0) return;
    for (int wk = 1; wk < kC.warps_k; ++wk) {
      const float* src = red + ((wk - 1) * kC.warps_n + warp_n) * kE * 32 + lane;
BARACUDA_UNROLL
      for (int mi = 0; mi < MT; ++mi)
BARACUDA_UNROLL
        for (int j = 0; j < 2 * NT; ++j)
BARACUDA_UNROLL
          for (int e = 0; e < 4; ++e) acc[mi][j][e] += src[((mi * 2 * NT + j) * 4 + e) * 32];
    }
  }

  const int g4 = lane >> 2, t4 = lane & 3;
  if (p.partial != nullptr) {  // a part of K: its f32 sums, for reduce_splits_kernel
    float* part = p.partial + static_cast<int64_t>(split) * p.m * p.n;
BARACUDA_UNROLL
    for (int j = 0; j < 2 * NT; ++j) {
      const int col = nb * BN + 16 * q0 + 8 * j + 2 * t4;
      if (BN > 64 && col >= p.n) continue;
BARACUDA_UNROLL
      for (int mi = 0; mi < MT; ++mi)
BARACUDA_UNROLL
        for (int h = 0; h < 2; ++h) {
          const int row = m0 + mi * 16 + g4 + 8 * h;
          if (row >= p.m) continue;
          *reinterpret_cast<float2*>(part + static_cast<int64_t>(row) * p.n + col) =
              float2{acc[mi][j][2 * h], acc[mi][j][2 * h + 1]};
        }
    }
    return;
  }
  // Epilogue: bias in f32, one rounding, pairs of adjacent columns stored as one 4-byte word.
  const T* bias = static_cast<const T*>(p.bias);
  T* c = static_cast<T*>(p.c);
BARACUDA_UNROLL
  for (int j = 0; j < 2 * NT; ++j) {
    const int col = nb * BN + 16 * q0 + 8 * j + 2 * t4;
    if (BN > 64 && col >= p.n) continue;
    float b0 = 0.0f, b1 = 0.0f;
    if (bias != nullptr) {
      b0 = convert::to_opmath(bias[col * p.bias_stride]);
      b1 = convert::to_opmath(bias[(col + 1) * p.bias_stride]);
    }
BARACUDA_UNROLL
    for (int mi = 0; mi < MT; ++mi)
BARACUDA_UNROLL
      for (int h = 0; h < 2; ++h) {
        const int row = m0 + mi * 16 + g4 + 8 * h;
        if (row >= p.m) continue;
        const T2 v{convert::from_opmath<T>(acc[mi][j][2 * h] + b0), convert::from_opmath<T>(acc[mi][j][2 * h + 1] + b1)};
        *reinterpret_cast<T2*>(c + static_cast<int64_t>(row) * p.ldc + col) = v;
      }
  }
}

/// The parts of a split K added in order (deterministic), then the bias, one rounding: one thread per pair of
/// adjacent outputs, grid-stride.
template <class T>
__global__ void reduce_splits_kernel(const float* partial, int splits, const T* bias, int64_t bias_stride, T* c,
                                     int64_t ldc, int m, int n) {
  using T2 = typename Pair<T>::Type;
  const int64_t pairs = static_cast<int64_t>(m) * (n / 2), plane = static_cast<int64_t>(m) * n;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < pairs;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = i / (n / 2), col = 2 * (i % (n / 2));
    float v0 = 0.0f, v1 = 0.0f;
    for (int z = 0; z < splits; ++z) {
      const float2 s = *reinterpret_cast<const float2*>(partial + z * plane + row * n + col);
      v0 += s.x, v1 += s.y;
    }
    if (bias != nullptr) {
      v0 += convert::to_opmath(bias[col * bias_stride]);
      v1 += convert::to_opmath(bias[(col + 1) * bias_stride]);
    }
    *reinterpret_cast<T2*>(c + row * ldc + col) = T2{convert::from_opmath<T>(v0), convert::from_opmath<T>(v1)};
  }
}

template <class T, int MT, bool kAsym, ::baracuda::detail::Int4GemmConfig kC>
Status launch_mt(const ::baracuda::detail::ExecContext& ctx, const Params& p, int splits) {
  const dim3 grid(static_cast<unsigned>((p.n + kC.block_cols - 1) / kC.block_cols),
                  static_cast<unsigned>((p.m + 16 * MT - 1) / (16 * MT)), static_cast<unsigned>(splits));
  const size_t smem = static_cast<size_t>(kC.smem_bytes(16 * MT, kAsym));
  auto* kernel = &w4a16_kernel<T, MT, kAsym, kC.block_cols, kC.slice_rows, kC.stages, kC.warps_n, kC.warps_k>;
  // The default shape never needs the opt-in above 48 KiB (tuning.hpp); the candidates may.
  BARACUDA_TRY(launch::allow_shared_bytes(kernel, smem, "Int4MarlinGemmPlan"));
  BARACUDA_LAUNCH(grid, dim3(kC.threads()), smem, ctx.stream, kernel)(p);
  const auto e = launch::take_last_error();
  if (!e.failed) return {};
  return Error::device(std::string("Int4MarlinGemmPlan: kernel launch failed: ") + e.message, e.code);
}

/// Rows per block (tables.hpp's int4_gemm_block_rows): one 16-row slab for a decode step, up to four.
template <class T, bool kAsym, ::baracuda::detail::Int4GemmConfig kC>
Status launch(const ::baracuda::detail::ExecContext& ctx, const Params& p, int splits) {
  switch (::baracuda::detail::int4_gemm_block_rows(p.m)) {
    case 16: return launch_mt<T, 1, kAsym, kC>(ctx, p, splits);
    case 32: return launch_mt<T, 2, kAsym, kC>(ctx, p, splits);
    default: return launch_mt<T, 4, kAsym, kC>(ctx, p, splits);
  }
}

/// The GEMM of `l` with block shape kC (tuning.hpp), K cut into at most `l.splits` parts of whole slices
/// (none empty). The library runs kInt4GemmDefault; the tests and the tuning program run the candidates.
template <class T, ::baracuda::detail::Int4GemmConfig kC>
Status gemm_with_config(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::Int4GemmLaunch& l) {
  if (l.m == 0 || l.n == 0) return {};
  // (groups of a multiple of 32 rows: a slice touches at most slice_rows/32 of them, the stage's scale rows)
  if (l.k % kC.slice_rows != 0 || l.n % 64 != 0 || l.splits < 1 || l.group_rows % 32 != 0)
    return Error::invalid(
        "Int4MarlinGemmPlan: K must be a multiple of the kernel's K slice, N of 64, the group of 32 rows");
  Params p;
  p.a = static_cast<const unsigned char*>(l.a.data);
  p.lda = l.a.stride[0];
  p.b = static_cast<const uint32_t*>(l.b.data);
  p.scales = l.scales.data;
  p.zeros = static_cast<const uint32_t*>(l.zeros.data);
  p.bias = l.bias.data;
  p.bias_stride = l.bias.data != nullptr ? l.bias.stride[0] : 0;
  p.c = l.c.data;
  p.ldc = l.c.stride[0];
  p.m = static_cast<int>(l.m), p.n = static_cast<int>(l.n), p.k = static_cast<int>(l.k);
  p.group_rows = static_cast<int>(l.group_rows);
  p.grouped = l.grouped;
  const int slices = p.k / kC.slice_rows;
  p.slices_per_split = (slices + l.splits - 1) / l.splits;
  const int splits = (slices + p.slices_per_split - 1) / p.slices_per_split;  // no empty part
  p.partial = splits > 1 ? static_cast<float*>(l.partial.data) : nullptr;
  const Status main =
      p.zeros != nullptr ? launch<T, true, kC>(ctx, p, splits) : launch<T, false, kC>(ctx, p, splits);
  if (!main) return main;
  if (splits == 1) return {};
  const int64_t pairs = static_cast<int64_t>(p.m) * (p.n / 2);
  const int64_t blocks = (pairs + 255) / 256;
  BARACUDA_LAUNCH(dim3(static_cast<unsigned>(blocks < 65535 * 8 ? blocks : 65535 * 8)), dim3(256), 0, ctx.stream,
                  reduce_splits_kernel<T>)
  (p.partial, splits, static_cast<const T*>(p.bias), p.bias_stride, static_cast<T*>(p.c), p.ldc, p.m, p.n);
  const auto e = launch::take_last_error();
  if (!e.failed) return {};
  return Error::device(std::string("Int4MarlinGemmPlan: reduce kernel launch failed: ") + e.message, e.code);
}

template <class T>
Status gemm_fn(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::Int4GemmLaunch& l) {
  return gemm_with_config<T, ::baracuda::detail::kInt4GemmDefault>(ctx, l);
}

/// out[m, j] = a[m, perm[j]]: one thread per output element, grid-stride.
template <class T>
__global__ void permute_columns_kernel(const T* a, int64_t lda, const int32_t* perm, int64_t perm_stride, T* out,
                                       int64_t ldo, int64_t m, int64_t k) {
  const int64_t total = m * k;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / k, j = i % k;
    out[r * ldo + j] = a[r * lda + perm[j * perm_stride]];
  }
}

template <class T>
Status permute_fn(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::PermuteColumnsLaunch& l) {
  const int64_t total = l.m * l.k;
  if (total == 0) return {};
  const int64_t blocks = (total + 255) / 256;
  const dim3 grid(static_cast<unsigned>(blocks < 65535 * 8 ? blocks : 65535 * 8));
  BARACUDA_LAUNCH(grid, dim3(256), 0, ctx.stream, permute_columns_kernel<T>)
  (static_cast<const T*>(l.a.data), l.a.stride[0], static_cast<const int32_t*>(l.perm.data), l.perm.stride[0],
   static_cast<T*>(l.out.data), l.out.stride[0], l.m, l.k);
  const auto e = launch::take_last_error();
  if (!e.failed) return {};
  return Error::device(std::string("Int4MarlinGemmPlan: permute kernel launch failed: ") + e.message, e.code);
}

constexpr ::baracuda::detail::Int4GemmTables make_tables() {
  return ::baracuda::detail::make_int4_gemm_tables([]<class T>(std::type_identity<T>) { return &gemm_fn<T>; },
                                                   []<class T>(std::type_identity<T>) { return &permute_fn<T>; });
}

}  // namespace int4_gemm
BARACUDA_DEVICE_NAMESPACE_END
