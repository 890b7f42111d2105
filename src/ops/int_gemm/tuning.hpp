/// \file
/// \brief Tile shapes of the int8 tensor-core GEMM, as data (per architecture). A block computes a BM×BN
/// tile of C with warps_m×warps_n warps, each owning a (BM/warps_m)×(BN/warps_n) warp tile of m16n8k32
/// MMAs, and streams K in BK slices through `stages` shared-memory buffers fed by cp.async.
///
/// A device has three tiles, chosen by M (the token count of a linear layer):
/// - decode (M ≤ decode_max_m): a 16-row tile, narrow in N and deep in K, so that a weight-streaming
///   product (memory-bound: the weight is read once, the activation is a few rows) has enough blocks over N
///   to cover every SM and enough bytes in flight per SM to approach the memory bandwidth;
/// - medium (M ≤ medium_max_m): 64×64 tiles, still enough blocks over N for a few hundred tokens;
/// - large: the compute-bound tile.
/// The emulator runs the sm_90 set, so the kernels a GPU runs are the kernels CI runs.
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

struct IntGemmTileSet {
  IntGemmTile decode;
  int decode_max_m;
  IntGemmTile medium;
  int medium_max_m;
  IntGemmTile large;

  friend constexpr bool operator==(const IntGemmTileSet&, const IntGemmTileSet&) = default;
};

/// sm_80 / sm_90:
/// - decode 16×32×256, 2 warps (16×16 warp tiles), 4 stages = 48 KiB: N = 4096 gives 128 blocks, each
///   keeping 3 slices of 8 KiB of weight in flight;
/// - medium 64×64×128, 4 warps (32×32), 3 stages = 48 KiB;
/// - large 128×128×64, 8 warps (2×4, 64×32 warp tiles: 4×4 MMAs, 64 s32 accumulators per thread),
///   3 stages = 48 KiB.
inline constexpr IntGemmTileSet kIntGemmTilesSm80{
    {16, 32, 256, 1, 2, 4}, 16, {64, 64, 128, 2, 2, 3}, 128, {128, 128, 64, 2, 4, 3}};
inline constexpr IntGemmTileSet kIntGemmTilesSm90 = kIntGemmTilesSm80;

}  // namespace baracuda::detail
