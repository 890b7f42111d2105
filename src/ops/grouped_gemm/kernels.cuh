// The grouped_gemm family's tensor-core kernel (f16/bf16 x and W, f32 accumulation, f16/bf16/f32 y):
// `y[r, :] = x[r, :]·W[e]ᵀ (+ bias[e, :])` for the rows r of group e (grouped_gemm.hpp), with the group offsets
// in device memory.
//
// Tile scheduler, without a host synchronisation: the grid's x dimension is an upper bound of the row tiles,
// ceil(total_M / BM) + E (the effective groups are disjoint ranges of [0, total_M), and each adds at most one
// partial tile), its y dimension the N tiles. Row tile t belongs to the group whose tiles (ceil(rows / BM) each,
// in group order) cover t: every warp of the block finds it by scanning the offsets 32 groups at a time (a
// running maximum of the clamped offsets, which makes them effective, then a prefix sum of the tile counts,
// both by warp shuffles), so the search costs E / 32 steps and every warp reaches the same answer without a
// barrier. A block whose tile is past the last group's returns before touching memory. A tile never crosses a
// group boundary: its A operand is the group's rows only, so rows past the group are zero-filled in shared
// memory and never stored.
//
// The main loop is the dense GEMM's for its TN form (src/ops/gemm/tc_kernels.cuh: the same swizzled 16-byte-
// chunk tiles, tc_load_tile and tc_swz, the cp.async stages of device/cp_async_pipeline.cuh, ldmatrix.x4 and
// mma.sync m16n8k16), with both operands K-contiguous: x's rows, and the rows of W[e] ([N, K]). 16-byte
// aligned rows are copied by cp.async, others element by element. Each output's sum runs over K in slice order
// (a fixed order, no atomics: bit-stable); the bias is added once in f32 and the result rounded once.
// Tiles: 128×128×32 (8 warps of 64×32, 3 stages) and, where groups average at most 32 rows (decode), 32×64×64
// (4 warps of 32×16, 4 stages), each 48 KiB of shared memory; neither has been timed on a GPU.
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <cstdint>
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
#include "ops/gemm/tc_kernels.cuh"  // TcTile, TcOperand, tc_swz, tc_load_tile, tc_store2
#include "ops/grouped_gemm/tables.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace grouped_gemm {

using ::baracuda::gemm::TcOperand;
using ::baracuda::gemm::TcTile;

/// Problems whose groups average at most this many rows run on the small tile.
inline constexpr int64_t kSmallTileMaxAvgRows = 32;

struct GgParams {
  const void* x = nullptr;
  int64_t x_row = 0;
  const void* w = nullptr;
  int64_t w_group = 0, w_row = 0;
  const void* offsets = nullptr;
  const void* bias = nullptr;
  int64_t bias_group = 0;
  void* y = nullptr;
  int64_t y_row = 0;
  int groups = 0, total_m = 0, n = 0, k = 0;
  bool offsets64 = true;
  bool x_vec = false, w_vec = false;  ///< 16-byte aligned rows: cp.async copies
};

/// Boundary e of the offsets clamped to [0, total_m].
__device__ __forceinline__ int gg_clamped(const GgParams& p, int e) {
  const int64_t v = p.offsets64 ? static_cast<const int64_t*>(p.offsets)[e]
                                : static_cast<int64_t>(static_cast<const int32_t*>(p.offsets)[e]);
  return static_cast<int>(v < 0 ? 0 : (v > p.total_m ? p.total_m : v));
}

/// The group of row tile `tile` (tiles of BM rows, ceil(rows / BM) per effective group, in group order), its
/// first row and its end row; false when the tile is past the last group's. Called by every lane of a warp (the
/// result is the same in each lane and in each warp).
template <int BM>
__device__ __forceinline__ bool gg_find_tile(const GgParams& p, int tile, int lane, int& group, int& row0,
                                             int& row_end) {
  constexpr unsigned kAll = 0xffffffffu;
  int carry = gg_clamped(p, 0);  // o'[c]: the effective start of the chunk's first group
  int before = 0;                // tiles of the groups before the chunk
  for (int c = 0; c < p.groups; c += 32) {
    const int e = c + lane;
    int hi = e < p.groups ? gg_clamped(p, e + 1) : 0;
    BARACUDA_UNROLL
    for (int d = 1; d < 32; d *= 2) {  // running maximum: hi = o'[e + 1] (with the carry below)
      const int t = __shfl_up_sync(kAll, hi, d);
      if (lane >= d) hi = max(hi, t);
    }
    hi = max(hi, carry);
    int lo = __shfl_up_sync(kAll, hi, 1);
    if (lane == 0) lo = carry;
    const int cnt = e < p.groups ? (hi - lo + BM - 1) / BM : 0;
    int sum = cnt;
    BARACUDA_UNROLL
    for (int d = 1; d < 32; d *= 2) {
      const int t = __shfl_up_sync(kAll, sum, d);
      if (lane >= d) sum += t;
    }
    const int first = before + sum - cnt;  // this lane's group's first tile
    const unsigned hit = __ballot_sync(kAll, cnt > 0 && tile >= first && tile < first + cnt);
    if (hit != 0) {
      const int src = __ffs(static_cast<int>(hit)) - 1;
      const int g_lo = __shfl_sync(kAll, lo, src), g_first = __shfl_sync(kAll, first, src);
      row_end = __shfl_sync(kAll, hi, src);
      group = c + src;
      row0 = g_lo + (tile - g_first) * BM;
      return true;
    }
    before += __shfl_sync(kAll, sum, 31);
    carry = __shfl_sync(kAll, hi, 31);
  }
  return false;
}

// The tile comes as integers (WM×WN warps, ST stages): nvcc's host stubs cannot name a class-type template
// argument of a __global__ function.
template <class TX, class TY, int BM, int BN, int BK, int WM, int WN, int ST>
__global__ void __launch_bounds__(32 * WM * WN) grouped_gemm_kernel(GgParams p) {
  constexpr int NT = WM * WN * 32;
  constexpr int WTM = BM / WM, WTN = BN / WN;
  constexpr int MI = WTM / 16, NI = WTN / 8;
  constexpr int kABytes = BM * BK * 2, kStageBytes = (BM + BN) * BK * 2;
  static_assert(BK % 16 == 0 && BM % 8 == 0 && BN % 8 == 0, "tile: whole k16 steps and 16-byte chunks");
  static_assert(WTM % 16 == 0 && WTN % 16 == 0, "warp tiles: multiples of 16×16");
  static_assert(ST >= 2, "at least two stages");

  BARACUDA_DYNAMIC_SHARED(unsigned char, smem);
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid & 31, warp = tid >> 5;
  int group = 0, row0 = 0, row_end = 0;
  if (!gg_find_tile<BM>(p, static_cast<int>(blockIdx.x), lane, group, row0, row_end)) return;  // uniform
  const int wm0 = (warp / WN) * WTM, wn0 = (warp % WN) * WTN;
  const int n0 = static_cast<int>(blockIdx.y) * BN;
  const int rows = min(BM, row_end - row0);

  const uint16_t* xs = static_cast<const uint16_t*>(p.x);
  const uint16_t* ws = static_cast<const uint16_t*>(p.w);
  TcOperand a;  // the group's rows of x only: rows past them are zero-filled
  a.data = xs, a.outer = p.x_row, a.inner = 1, a.outer_n = rows, a.inner_n = p.k, a.vec = p.x_vec, a.k_inner = true;
  TcOperand b;  // W[e]: [N, K]
  b.data = ws, b.outer = p.w_row, b.inner = 1, b.outer_n = p.n, b.inner_n = p.k, b.vec = p.w_vec, b.k_inner = true;
  const uint16_t* abase = xs + static_cast<int64_t>(row0) * p.x_row;
  const uint16_t* bbase = ws + static_cast<int64_t>(group) * p.w_group;
  const int slices = (p.k + BK - 1) / BK;

  auto load = [&](int stage, int s) {
    unsigned char* as = smem + stage * kStageBytes;
    ::baracuda::gemm::tc_load_tile<BM, BK / 8, NT>(as, a, abase, 0, s * BK, tid);
    ::baracuda::gemm::tc_load_tile<BN, BK / 8, NT>(as + kABytes, b, bbase, n0, s * BK, tid);
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

  pipeline_prologue<ST>(slices, load);
  for (int s = 0; s < slices; ++s) {
    const unsigned char* as = smem + pipeline_advance<ST>(s, slices, load) * kStageBytes;
    const unsigned char* bs = as + kABytes;
    ::baracuda::gemm::tc_slice_mma<TX, MI, NI, BM, BN, BK>(acc, as, bs, true, true, wm0, wn0, lane);
  }
  ptx::cp_async_wait_all();  // no copy may be in flight when the block exits (only empty groups remain)

  // y overlaps no input (the plan's rule).
  TY* __restrict__ y = static_cast<TY*>(p.y) + static_cast<int64_t>(row0) * p.y_row;
  const TY* __restrict__ bias =
      p.bias != nullptr ? static_cast<const TY*>(p.bias) + static_cast<int64_t>(group) * p.bias_group : nullptr;
  const int g = lane >> 2, t4 = lane & 3;
  BARACUDA_UNROLL
  for (int ni = 0; ni < NI; ++ni) {
    const int col = n0 + wn0 + ni * 8 + 2 * t4;
    if (col >= p.n) continue;
    const bool two = col + 1 < p.n;
    float bv[2] = {0.0f, 0.0f};
    if (bias != nullptr) {
      bv[0] = convert::to_float(bias[col]);
      if (two) bv[1] = convert::to_float(bias[col + 1]);
    }
    BARACUDA_UNROLL
    for (int mi = 0; mi < MI; ++mi) {
      BARACUDA_UNROLL
      for (int h = 0; h < 2; ++h) {
        const int row = wm0 + mi * 16 + g + h * 8;
        if (row >= rows) continue;
        float v[2] = {acc[mi][ni][2 * h], acc[mi][ni][2 * h + 1]};
        if (bias != nullptr) v[0] = __fadd_rn(v[0], bv[0]), v[1] = __fadd_rn(v[1], bv[1]);
        const TY o[2] = {convert::from_opmath<TY>(v[0]), convert::from_opmath<TY>(v[1])};
        ::baracuda::gemm::tc_store2(y + static_cast<int64_t>(row) * p.y_row + col, o, two);
      }
    }
  }
}

template <class TX, class TY, TcTile kT>
Status gg_launch(const ::baracuda::detail::ExecContext& ctx, const GgParams& p) {
  static_assert(kT.smem_bytes() <= 48 * 1024, "within the default dynamic shared memory (no opt-in)");
  const int64_t row_tiles = (static_cast<int64_t>(p.total_m) + kT.bm - 1) / kT.bm + p.groups;
  const int64_t n_tiles = (static_cast<int64_t>(p.n) + kT.bn - 1) / kT.bn;
  if (n_tiles > 65535) return Error::unsupported("GroupedGemmPlan: N needs more than 65535 tiles");
  auto* kernel = &grouped_gemm_kernel<TX, TY, kT.bm, kT.bn, kT.bk, kT.warps_m, kT.warps_n, kT.stages>;
  const dim3 grid(static_cast<unsigned>(row_tiles), static_cast<unsigned>(n_tiles), 1);
  const dim3 block(static_cast<unsigned>(kT.threads()));
  BARACUDA_LAUNCH(grid, block, static_cast<size_t>(kT.smem_bytes()), ctx.stream, kernel)(p);
  const auto e = launch::take_last_error();
  if (e.failed) return Error::device("GroupedGemmPlan: kernel launch failed: " + e.message, e.code);
  return {};
}

/// The kernels' parameters from the launch record; 16-byte copies where x's and W's rows are 16-byte aligned.
inline GgParams gg_params(const ::baracuda::detail::GroupedGemmLaunch& l) {
  GgParams p;
  p.x = l.x, p.x_row = l.x_row;
  p.w = l.w, p.w_group = l.w_group, p.w_row = l.w_row;
  p.offsets = l.offsets, p.offsets64 = l.offsets64;
  p.bias = l.bias, p.bias_group = l.bias_group;
  p.y = l.y, p.y_row = l.y_row;
  p.groups = static_cast<int>(l.groups), p.total_m = static_cast<int>(l.total_m);
  p.n = static_cast<int>(l.n), p.k = static_cast<int>(l.k);
  p.x_vec = reinterpret_cast<uintptr_t>(l.x) % 16 == 0 && (l.total_m == 1 || l.x_row % 8 == 0);
  p.w_vec = reinterpret_cast<uintptr_t>(l.w) % 16 == 0 && (l.n == 1 || l.w_row % 8 == 0) &&
            (l.groups == 1 || l.w_group % 8 == 0);
  return p;
}

/// The grouped GEMM of `l` (tables.hpp), TX = the kind of x and w (__half or __nv_bfloat16), TY = the kind of
/// y and bias (TX or float). total_M, N, K below 2^31 − 256 and N within 65535 tiles (the plan's rules).
template <class TX, class TY>
Status tensor_core(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::GroupedGemmLaunch& l) {
  static_assert(std::is_same_v<TX, __half> || std::is_same_v<TX, __nv_bfloat16>, "TX: f16 or bf16");
  static_assert(std::is_same_v<TY, TX> || std::is_same_v<TY, float>, "TY: TX or f32");
  if (l.xw != kind_of<TX> || l.y_kind != kind_of<TY>)
    return Error::internal("GroupedGemmPlan: the kernel was called for other kinds than its own");
  if (l.total_m == 0 || l.n == 0) return {};
  const GgParams p = gg_params(l);
  if (l.total_m <= kSmallTileMaxAvgRows * l.groups) return gg_launch<TX, TY, ::baracuda::gemm::kTcSmall>(ctx, p);
  return gg_launch<TX, TY, ::baracuda::gemm::kTcLarge>(ctx, p);
}

}  // namespace grouped_gemm
BARACUDA_DEVICE_NAMESPACE_END
