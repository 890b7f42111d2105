/// \file
/// \brief Tile shapes of the int8 tensor-core GEMM, as data (per device kind and, for cuda, per
/// architecture). A block computes a BM×BN tile of C with warps_m×warps_n warps, each owning a
/// (BM/warps_m)×(BN/warps_n) warp tile of m16n8k32 MMAs, and streams K in BK slices through `stages`
/// shared-memory buffers fed by cp.async.
#pragma once

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

/// sm_80 / sm_90: 128×128×64, 8 warps (2×4, 64×32 warp tiles: 4×4 MMAs, 64 s32 accumulators per thread),
/// 3 stages = 48 KiB of shared memory (no opt-in above the static limit needed).
inline constexpr IntGemmTile kIntGemmTileSm80{128, 128, 64, 2, 4, 3};
inline constexpr IntGemmTile kIntGemmTileSm90{128, 128, 64, 2, 4, 3};

/// The emulator: every thread is a fiber, so a small tile (32×32×32, 4 warps of 16×16, 3 stages) keeps the
/// CI shapes cheap while still exercising ragged edges, several K slices and the pipeline's stage reuse.
inline constexpr IntGemmTile kIntGemmTileSim{32, 32, 32, 2, 2, 3};

}  // namespace baracuda::detail
