/// \file
/// \brief Tile shapes of the int8 tensor-core GEMM, as data (per architecture). A block computes a BM×BN
/// tile of C with warps_m×warps_n warps, each owning a (BM/warps_m)×(BN/warps_n) warp tile of m16n8k32
/// MMAs, and streams K in BK slices through `stages` shared-memory buffers fed by cp.async.
///
/// A device has three tiles (measured on an H100 by tools/tuning/int_gemm_tiles.cu over the LLM linear
/// shapes, docs/perf/2026-11-22-h100/int_gemm_tiles.csv):
/// - decode, for M ≤ decode_max_m tokens: a 16-row tile, narrow in N and deep in K. The product is
///   weight-streaming (memory-bound): narrow tiles give enough blocks over N to cover every SM, and the deep
///   pipeline keeps enough bytes in flight per SM;
/// - large, the compute-bound tile, when it still gives at least half a block per SM;
/// - medium, when it does; otherwise decode again (few tokens and a narrow N).
/// `choose` is the rule; the emulator runs the sm_90 set with its one "SM", so the plan tests there take
/// decode and large, and tests/ops/int_gemm_tiles_test runs every tile directly.
#pragma once

#include "core/split_k.hpp"

namespace baracuda::detail {

struct IntGemmTile {
  int bm, bn, bk;
  int warps_m, warps_n;
  int stages;

  friend constexpr bool operator==(const IntGemmTile&, const IntGemmTile&) = default;
  constexpr int threads() const { return 32 * warps_m * warps_n; }
  /// Shared memory of the pipeline: A and B slices of every stage (no padding: the layout is swizzled).
  constexpr int smem_bytes() const { return stages * (bm + bn) * bk; }
};

struct IntGemmTileSet {
  IntGemmTile decode;
  int decode_max_m;
  IntGemmTile medium;
  IntGemmTile large;

  friend constexpr bool operator==(const IntGemmTileSet&, const IntGemmTileSet&) = default;
};

enum class IntGemmTileKind { Decode, Medium, Large };

constexpr long long int_gemm_blocks(const IntGemmTile& t, long long m, long long n) {
  return ((m + t.bm - 1) / t.bm) * ((n + t.bn - 1) / t.bn);
}

/// The tile of `set` for an M×N output on a device with `sms` multiprocessors.
constexpr IntGemmTileKind choose(const IntGemmTileSet& set, long long m, long long n, int sms) {
  if (m <= set.decode_max_m) return IntGemmTileKind::Decode;
  if (2 * int_gemm_blocks(set.large, m, n) >= sms) return IntGemmTileKind::Large;
  if (2 * int_gemm_blocks(set.medium, m, n) >= sms) return IntGemmTileKind::Medium;
  return IntGemmTileKind::Decode;
}

/// K parts of a decode problem (M ≤ decode_max_m): the decode tile's blocks alone cover too few SMs when N is
/// small (N = 4096 gives 128 blocks: on the H100 its weight streamed at 0.9 TB/s, against 1.8 TB/s for
/// N = 11008's 344 blocks with the same tile and K, docs/perf/2026-11-22-h100), so K is cut into parts of
/// whole BK slices until there are 264 blocks (2 per SM of a 132-SM H100), each part at least 4 slices.
/// Each part writes its raw s32 sums (and, asymmetric, its column sums) to the workspace and a second kernel
/// adds them and runs the epilogue: integer sums, so the result is the same bit for bit for any number of
/// parts. A function of the problem only (the workspace is sized at select).
constexpr int int_gemm_splits(const IntGemmTileSet& set, long long m, long long n, long long k) {
  if (m <= 0 || n <= 0 || k <= 0 || m > set.decode_max_m) return 1;
  return split_k_parts(int_gemm_blocks(set.decode, m, n), k / (4 * set.decode.bk));
}

/// sm_80 / sm_90:
/// - decode 16×32×256, 2 warps (16×16 warp tiles), 4 stages = 48 KiB: N = 4096 gives 128 blocks, each
///   keeping 3 slices of 8 KiB of weight in flight;
/// - medium 64×64×128, 4 warps (32×32), 3 stages = 48 KiB;
/// - large 128×128×128, 8 warps (2×4, 64×32 warp tiles: 4×4 MMAs, 64 s32 accumulators per thread),
///   3 stages = 96 KiB (two blocks per SM). On the H100 it beat 128×128×64 with 3 or 4 stages, 128×256×64
///   and 256×128×64 by 24 % or more at M ≥ 512.
inline constexpr IntGemmTileSet kIntGemmTilesSm80{
    {16, 32, 256, 1, 2, 4}, 16, {64, 64, 128, 2, 2, 3}, {128, 128, 128, 2, 4, 3}};
inline constexpr IntGemmTileSet kIntGemmTilesSm90 = kIntGemmTilesSm80;
static_assert(kIntGemmTilesSm90.decode == kIntGemmTilesSm80.decode &&
                  kIntGemmTilesSm90.decode_max_m == kIntGemmTilesSm80.decode_max_m,
              "int_gemm_splits (and so the plans' workspace) must not depend on the GPU: one decode tile");

/// A tile of the wgmma kernels (wgmma_kernels.cuh, sm_90a): BM = 128 rows (two consumer warpgroups), BK = 128
/// bytes of K per slice; BN (128 or 256, the wgmma's N), the stage count, and the loader vary: every thread
/// by cp.async with a block barrier per slice, or (`tma`) a producer warpgroup's tensor copies with
/// mbarrier hand-offs.
struct IntGemmWgmmaTile {
  int bn;
  int stages;
  bool tma = false;

  friend constexpr bool operator==(const IntGemmWgmmaTile&, const IntGemmWgmmaTile&) = default;
  static constexpr int bm = 128, bk = 128;
  constexpr int threads() const { return tma ? 384 : 256; }
  /// The stages plus 1 KiB to align the first stage to 1024 bytes of the shared window; with TMA also the
  /// full and empty barriers (8 bytes each per stage), the consumers' barrier and BN column sums.
  constexpr int smem_bytes() const { return stages * (bm + bn) * bk + 1024 + (tma ? 16 * stages + 8 + 4 * bn : 0); }
};

/// The candidates tools/tuning/int_gemm_tiles.cu times on a GPU, each bit for bit against the library's
/// launch (tests/ops/int_gemm_tiles_test runs each on sim). On an H100 (docs/perf/2026-11-26-h100) all were
/// exact, and the TMA-fed ones beat the cp.async-fed ones at every shape past decode.
inline constexpr IntGemmWgmmaTile kIntGemmWgmmaCandidates[] = {
    {128, 4}, {128, 5}, {256, 3}, {128, 4, true}, {128, 6, true}, {256, 4, true},
};
static_assert([] {
  for (const IntGemmWgmmaTile& t : kIntGemmWgmmaCandidates)
    if (t.smem_bytes() > 227 * 1024) return false;
  return true;
}());

/// What a compute capability 9.0 GPU runs past decode (M > decode_max_m), in builds with sm_90a kernels:
/// the TMA-fed wgmma kernel, 128×128 with 6 stages, or 128×256 with 4 for the s32 output (IntGemm) when its
/// blocks alone cover every SM. Measured on an H100 over the LLM linear shapes (docs/perf/2026-11-26-h100,
/// int_gemm_tiles.csv): for the s32 output 1.16–2.4× the best mma.sync tile at every M ≥ 64, while at M ≤ 16
/// the split-K decode tile stays ahead (15.8 against 19.2 µs at 1×4096×4096); 128×256 wins once it has a
/// block per SM (8192×4096×4096: 232 against 255 µs). The linear epilogue costs the wgmma kernel more than
/// the mma.sync one (at 128×4096×4096: 41 µs against 19 for the s32 output; the best mma.sync tile,
/// 16×64×128, 32 µs), so it runs there only when each block has enough K to hide it: narrow blocks × K ≥
/// SMs × 2048 (e.g. M = 128 with N = 4096 and K = 11008: 60 against 74 µs; with K = 4096 mma.sync stays).
/// 128×256 loses with the linear epilogue at every shape (777 against 491 µs at 8192×4096×4096).
inline constexpr IntGemmWgmmaTile kIntGemmWgmmaNarrow{128, 6, true};
inline constexpr IntGemmWgmmaTile kIntGemmWgmmaWide{256, 4, true};

enum class IntGemmWgmmaKind { None, Narrow, Wide };

/// The wgmma tile for an M×N×K problem on a 9.0 device with `sms` multiprocessors (`s32_out`: IntGemm's
/// store, not the linear epilogue); None where `choose`'s mma.sync tiles run.
constexpr IntGemmWgmmaKind choose_wgmma(const IntGemmTileSet& set, long long m, long long n, long long k, int sms,
                                        bool s32_out) {
  if (m <= set.decode_max_m) return IntGemmWgmmaKind::None;
  const auto blocks = [&](const IntGemmWgmmaTile& t) {
    return ((m + IntGemmWgmmaTile::bm - 1) / IntGemmWgmmaTile::bm) * ((n + t.bn - 1) / t.bn);
  };
  if (s32_out) return blocks(kIntGemmWgmmaWide) >= sms ? IntGemmWgmmaKind::Wide : IntGemmWgmmaKind::Narrow;
  return blocks(kIntGemmWgmmaNarrow) * k >= 2048LL * sms ? IntGemmWgmmaKind::Narrow : IntGemmWgmmaKind::None;
}

/// choose_wgmma on a device of compute capability `sm` (×10) with `sms` multiprocessors: None unless 9.0,
/// whose sm_90a code the wgmma kernels are. The one rule both the dispatch (kernels.cuh) and the SKU
/// (plan.cpp) follow.
constexpr IntGemmWgmmaKind wgmma_for_device(int sm, int sms, long long m, long long n, long long k, bool s32_out) {
  return sm == 90 ? choose_wgmma(kIntGemmTilesSm90, m, n, k, sms, s32_out) : IntGemmWgmmaKind::None;
}

}  // namespace baracuda::detail
