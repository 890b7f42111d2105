/// \file
/// \brief The split-K rule the GEMM families share: how many parts to cut K into when the output alone gives
/// a large GPU too few blocks. A function of the problem only, so that plans can size the parts' workspace at
/// select and every device computes the same parts.
#pragma once

namespace baracuda::detail {

/// Blocks a split problem aims for: 2 per SM of a 132-SM H100.
inline constexpr long long kSplitKTargetBlocks = 264;

/// Parts for a problem whose output gives `blocks` blocks: enough to reach kSplitKTargetBlocks, at most
/// `max_parts` (the family's floor on the K each part keeps), at least 1.
constexpr int split_k_parts(long long blocks, long long max_parts) {
  if (blocks <= 0) return 1;
  long long s = (kSplitKTargetBlocks + blocks - 1) / blocks;
  if (s > max_parts) s = max_parts;
  return s < 1 ? 1 : static_cast<int>(s);
}

}  // namespace baracuda::detail
