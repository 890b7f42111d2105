/// \file
/// \brief The host side of the segmented-reduction engine (segment_reduce.cuh): how a problem is split
/// into segments and reduced elements, the launch schedule (warp or block per segment, chunks per
/// segment) and the workspace it needs. Plain host C++: plans call `segment_reduce_workspace_bytes` at
/// select time, and the launcher computes the same schedule from the same inputs, so both always agree.
///
/// The schedule depends only on the device (kind, SM count), the shape and the kept mask — never on
/// strides or pointers — so a plan's workspace size is known before any tensor is seen, and a given
/// device reduces every segment in the same order on every run (bit-identical results).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

#include "baracuda/core/tensor.hpp"
#include "core/exec_context.hpp"

namespace baracuda::detail {

/// Launch configuration of the engine, per device kind.
struct SegmentReduceTuning {
  int threads_per_block = 256;
  /// Segments with at least this many reduced elements get a whole block each; shorter ones a warp.
  int64_t block_segment_min = 1024;
  /// A segment is split into chunks (two passes) only while each chunk keeps at least this many elements.
  int64_t min_chunk_elements = 16384;
  /// Blocks the first pass aims to keep busy per SM when segments are few (chunks fill the difference).
  int blocks_per_sm = 4;
  /// Cap on resident blocks per SM of the grid-stride loops.
  int max_blocks_per_sm = 8;
};

/// GPUs: 256-thread blocks; chunks of ≥ 16 Ki elements (≥ 64 per thread) so the partial writes and the
/// second pass stay negligible next to the data read.
inline constexpr SegmentReduceTuning kSegmentReduceTuningCuda{256, 1024, 16384, 4, 8};
/// The emulator (one SM, every thread a fiber): small blocks, and thresholds low enough that tests reach
/// the block and multi-chunk paths with small tensors.
inline constexpr SegmentReduceTuning kSegmentReduceTuningSim{64, 256, 512, 4, 8};

inline const SegmentReduceTuning& segment_reduce_tuning(const ExecContext& ctx) {
  return ctx.device == DeviceKind::Sim ? kSegmentReduceTuningSim : kSegmentReduceTuningCuda;
}

/// How a problem is run: `segments` results, each over `reduced` elements, by one warp
/// (`block_per_segment` false) or one block per (segment, chunk); with `chunks` > 1 every chunk writes a
/// partial to the workspace and a second pass combines a segment's partials in chunk order.
struct SegmentReduceSchedule {
  int64_t segments = 0;
  int64_t reduced = 0;
  bool block_per_segment = false;
  int64_t chunks = 1;
  int64_t chunk_elements = 0;  ///< elements per chunk (the last one may be shorter)
  int threads_per_block = 256;

  bool two_pass() const { return chunks > 1; }
};

/// The schedule for `shape` reduced over the dimensions not in `kept_mask` on `ctx`'s device.
inline SegmentReduceSchedule segment_reduce_schedule(const ExecContext& ctx, const Shape& shape, uint32_t kept_mask) {
  const SegmentReduceTuning& t = segment_reduce_tuning(ctx);
  SegmentReduceSchedule s;
  s.threads_per_block = t.threads_per_block;
  s.segments = 1;
  s.reduced = 1;
  for (int d = 0; d < shape.rank; ++d) (((kept_mask >> d) & 1u) ? s.segments : s.reduced) *= shape.dims[d];
  s.chunk_elements = s.reduced;
  if (s.segments == 0) return s;
  s.block_per_segment = s.reduced >= t.block_segment_min;
  if (s.block_per_segment) {
    const int64_t target_blocks = static_cast<int64_t>(t.blocks_per_sm) * std::max(1, ctx.multiprocessor_count);
    if (s.segments < target_blocks) {
      const int64_t by_parallelism = (target_blocks + s.segments - 1) / s.segments;
      const int64_t by_size = s.reduced / t.min_chunk_elements;
      s.chunks = std::max<int64_t>(1, std::min(by_parallelism, by_size));
    }
  }
  s.chunk_elements = (s.reduced + s.chunks - 1) / s.chunks;
  // Ceil division can leave trailing chunks empty (e.g. 10 elements in 4 chunks of 3); drop them.
  s.chunks = s.chunk_elements == 0 ? 1 : (s.reduced + s.chunk_elements - 1) / s.chunk_elements;
  return s;
}

/// Workspace the engine needs for this problem with an accumulator of `acc_bytes`: one partial per
/// (segment, chunk) on the two-pass schedule, 0 when one pass suffices.
inline size_t segment_reduce_workspace_bytes(const ExecContext& ctx, const Shape& shape, uint32_t kept_mask,
                                             size_t acc_bytes) {
  const SegmentReduceSchedule s = segment_reduce_schedule(ctx, shape, kept_mask);
  if (!s.two_pass()) return 0;
  return static_cast<size_t>(s.segments) * static_cast<size_t>(s.chunks) * acc_bytes;
}

/// The iteration geometry: kept and reduced dimensions, each list **innermost first**, extent-1
/// dimensions dropped and neighbours merged where every input is contiguous across them. Segment numbers
/// are row-major over the kept dimensions (merging preserves that order); reduced elements are numbered
/// row-major over the reduced dimensions, which fixes the combine order.
template <int NIn>
struct SegmentReduceGeometry {
  struct Dims {
    int rank = 0;
    std::array<int64_t, kMaxRank> sizes{};
    std::array<std::array<int64_t, kMaxRank>, NIn> strides{};
  };
  Dims kept;
  Dims reduced;
};

/// Builds the geometry of `shape` (valid, rank ≤ kMaxRank) whose input k has element strides `strides[k]`
/// (outermost first, as in `DynTensor`).
template <int NIn>
SegmentReduceGeometry<NIn> segment_reduce_geometry(const Shape& shape, uint32_t kept_mask,
                                                   const std::array<const int64_t*, NIn>& strides) {
  SegmentReduceGeometry<NIn> g;
  for (int d = shape.rank - 1; d >= 0; --d) {
    if (shape.dims[d] == 1) continue;
    auto& dims = ((kept_mask >> d) & 1u) ? g.kept : g.reduced;
    if (dims.rank > 0) {
      bool mergeable = true;
      for (int k = 0; k < NIn; ++k)
        if (strides[k][d] != dims.strides[k][dims.rank - 1] * dims.sizes[dims.rank - 1]) mergeable = false;
      // Merge only neighbours in the same list: row-major numbering over that list is unchanged.
      if (mergeable) {
        dims.sizes[dims.rank - 1] *= shape.dims[d];
        continue;
      }
    }
    dims.sizes[dims.rank] = shape.dims[d];
    for (int k = 0; k < NIn; ++k) dims.strides[k][dims.rank] = strides[k][d];
    ++dims.rank;
  }
  return g;
}

}  // namespace baracuda::detail
