/// \file
/// \brief Block shapes of the W4A16 tensor-core GEMM (kernels.cuh), as data. A block computes a BM×BN tile
/// of C: BM = 16·MT rows (16, 32 or 64 by M: tables.hpp's int4_gemm_block_rows) and BN = `block_cols`
/// columns, i.e. BN/64 consecutive 64-column blocks of the Marlin layout (whose 16-row k-tiles keep each
/// 64-column block in 128 contiguous words, so a BN-column block reads one contiguous run of 2·BN words per
/// k-tile). K is streamed in `slice_rows`-row slices through `stages` shared buffers fed by cp.async: one
/// stage holds BM×slice_rows activations and slice_rows/16 × BN/64 Marlin tiles of 512 bytes (slice_rows·BN/2
/// bytes of weight).
///
/// Warps: `warps_n` warps split the BN columns, each owning BN/warps_n of them (BN/(16·warps_n) n16 tiles,
/// every one of the block's rows); `warps_k` > 1 further splits each slice's k-tiles into `warps_k`
/// contiguous runs, one per group of warps_n warps (Marlin's intra-block K split), whose f32 sums are added
/// through shared memory after the last slice, in a fixed order (deterministic).
///
/// The library runs `kInt4GemmDefault` only. The candidates are instantiated by tests/ops/int4_gemm_configs_kernels.cu (every one on sim
/// against the host reference) and tools/tuning/int4_gemm_configs.cu (timed on a GPU, checked against the
/// default's output), from whose measurement it was chosen (docs/decisions.md, "Measurement and tuning").
#pragma once

namespace baracuda::detail {

struct Int4GemmConfig {
  int block_cols;  ///< BN: output columns per block, 64, 128 or 256
  int slice_rows;  ///< K rows per pipeline stage, 64 or 128
  int stages;      ///< cp.async pipeline depth
  int warps_n;     ///< warps splitting the block's columns
  int warps_k;     ///< warps splitting each slice's k-tiles (1: none)

  friend constexpr bool operator==(const Int4GemmConfig&, const Int4GemmConfig&) = default;
  constexpr int warps() const { return warps_n * warps_k; }
  constexpr int threads() const { return 32 * warps(); }
  /// n16 tiles (16 output columns) per warp.
  constexpr int col_tiles() const { return block_cols / (16 * warps_n); }
  /// Weight bytes of one pipeline stage.
  constexpr int weight_stage_bytes() const { return slice_rows * block_cols / 2; }
  /// Scale (and zero-point) rows a stage holds: the groups a slice can touch, groups being 32, 64 or 128
  /// rows or the whole of K.
  constexpr int group_slots() const { return slice_rows / 32; }
  /// One pipeline stage of a block of `block_rows` rows: activation rows of slice_rows·2 bytes (swizzled, no
  /// padding), the weight, group_slots() rows of BN scales (2 bytes each) and, with zero points, as many
  /// rows of BN/8 words.
  constexpr int stage_bytes(int block_rows, bool zero_points) const {
    return block_rows * slice_rows * 2 + weight_stage_bytes() + group_slots() * block_cols * 2 +
           (zero_points ? group_slots() * block_cols / 2 : 0);
  }
  /// Dynamic shared memory of a block of `block_rows` rows: the pipeline's stages, or the warps_k > 1
  /// reduction if larger.
  constexpr int smem_bytes(int block_rows, bool zero_points) const {
    const int pipeline = stages * stage_bytes(block_rows, zero_points);
    const int reduce = (warps_k - 1) * warps_n * 32 * (block_rows / 16) * col_tiles() * 8 * 4;
    return pipeline > reduce ? pipeline : reduce;
  }
  /// The shapes kernels.cuh implements.
  constexpr bool valid() const {
    return (block_cols == 64 || block_cols == 128 || block_cols == 256) && (slice_rows == 64 || slice_rows == 128) &&
           stages >= 2 && warps_n >= 1 && warps_k >= 1 && block_cols % (16 * warps_n) == 0 &&
           (col_tiles() == 1 || col_tiles() == 2 || col_tiles() == 4) && (slice_rows / 16) % warps_k == 0 &&
           threads() <= 256 && (slice_rows / 16) * (block_cols / 2) % threads() == 0;  // whole weight chunks per thread
  }
};

/// The library's shapes, chosen from tools/tuning/int4_gemm_configs.cu on an H100 (docs/perf/2026-11-26-h100,
/// int4_configs.csv: M 1–128 on 4096×4096, 11008×4096 and 8192×8192, each with the split rule): 128 columns,
/// 128-row slices, 3 stages, 4 warps of 32 columns came within 1.12× of the best candidate per shape on
/// average (1.43× at worst, M = 128 on 4096×4096), where the first kernel's 64×64×4 shape was 1.48× (1.69×)
/// behind: 16 KiB of weight per stage against 2 KiB keeps enough bytes in flight to stream the weight.
/// Its 128-row slices divide every K the plan takes (K % 128 == 0, int4_gemm.hpp).
inline constexpr Int4GemmConfig kInt4GemmDefault{128, 128, 3, 4, 1};

/// The candidates tools/tuning/int4_gemm_configs.cu times and tests/ops/int4_gemm_configs_test.cpp checks:
/// the library's shape first, the first kernel's 64×64, wider blocks (4 Marlin column blocks) and
/// deeper pipelines, and 8 warps either across 256 columns or as 4 column warps × 2 K warps over 128 columns
/// (Marlin's small-batch layout).
inline constexpr Int4GemmConfig kInt4GemmCandidates[] = {
    {128, 128, 3, 4, 1}, {64, 64, 4, 4, 1},   {128, 64, 4, 4, 1},  {128, 128, 4, 4, 1},
    {256, 64, 4, 8, 1},  {256, 128, 4, 8, 1}, {128, 128, 4, 4, 2}, {64, 128, 4, 4, 2},
};

static_assert(kInt4GemmDefault.valid() && kInt4GemmDefault.slice_rows == 128);
static_assert([] {
  for (const Int4GemmConfig& c : kInt4GemmCandidates)
    if (!c.valid() || c.smem_bytes(64, true) > 227 * 1024) return false;
  return kInt4GemmCandidates[0] == kInt4GemmDefault;
}());

}  // namespace baracuda::detail
