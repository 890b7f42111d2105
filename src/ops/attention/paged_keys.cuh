// The block table of one K/V tile, held in a warp's lanes: the paged attention kernels (the chunked prefill,
// ops/attention/kernels.cuh, and the tensor-core decode, ops/paged_decode/tc_kernels.cuh) find a K/V row's page by
// a shuffle. They looked it up per 16-byte chunk: an integer division and a global load of the block table between
// cp.async instructions, whose "memory" clobber kept each load from moving ahead of the previous copy, so every chunk
// waited for one (16 per K or V tile and thread in the decode). Now each lane loads one entry per 32 keys, a tile
// ahead of its use, and computes the key's row offset in each cache (offsets()); the lanes that copy a row shuffle it
// once from the lane that holds the key (attention/kernels.cuh's fa_load_paged_rows; row_ptr() for loaders that look
// up per chunk).
#pragma once

#include "sim/compat.cuh"  // first: the device namespace and device API

#include <cstdint>

#include "device/elementwise.cuh"  // BARACUDA_UNROLL

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace attention {

/// A masked key's row offset in a paged cache: beyond any view's reach (core/validate.hpp's check_reach), so no real
/// offset, negative ones with negative strides included, equals it.
inline constexpr int64_t kMaskedRow = INT64_MIN;

/// The offset (elements) of the row of slot `slot` of page `page` in a cache whose pages are `block` apart and slots
/// `slot_stride` apart, or kMaskedRow unless `has_page`: the paged kernels compute it once per key and tile.
__device__ __forceinline__ int64_t paged_row_offset(bool has_page, int64_t page, int64_t slot, int64_t block,
                                                    int64_t slot_stride) {
  return has_page ? page * block + slot * slot_stride : kMaskedRow;
}

/// Where keys kv0 + 32·u + l (u < (BN + 31) / 32) fall in a sequence's block table, for lane l: the entry and the
/// slot in its page. at() divides by the page size; advance() steps a tile of BN keys by an add, where a division
/// and a remainder by the runtime page size took about 40 instructions a tile (docs/perf/2026-11-29-sass). The
/// plans' page sizes (8, 16, 32: paged_attention.hpp) divide the tiles (32 or 64 keys), so a lane's next key is
/// BN / block_size pages on, in the same slot.
template <int BN>
struct PagedCursor {
  static constexpr int U = (BN + 31) / 32;
  int entry[U] = {}, slot[U] = {};

  /// The cursor at keys kv0 on, pages of block_size ≥ 1 keys.
  static __device__ __forceinline__ PagedCursor at(int kv0, int block_size, int lane) {
    PagedCursor c;
    BARACUDA_UNROLL
    for (int u = 0; u < U; ++u) {
      const int j = kv0 + 32 * u + lane;
      c.entry[u] = j / block_size, c.slot[u] = j % block_size;
    }
    return c;
  }
  /// The next tile's keys (BN further on), `tile_pages` = BN / block_size (a page size that divides BN).
  __device__ __forceinline__ void advance(int tile_pages) {
    BARACUDA_UNROLL
    for (int u = 0; u < U; ++u) entry[u] += tile_pages;
  }
};

/// Keys [kv0, kv0 + BN) of one sequence: lane l of every warp holds key kv0 + 32·u + l (u < U), its page in the
/// high and its slot in the page in the low 32 bits of `key[u]`; the page is the block-table entry as loaded until
/// resolve(), then −1 for a key past the sequence's keys or on a page outside [0, num_blocks) (a masked key, whose
/// row is never read). Every lane of a warp calls every member together (shuffles, ballots).
template <int BN>
struct PagedKeys {
  static constexpr int U = (BN + 31) / 32;
  static_assert(BN >= 1 && U <= 2, "up to 64 keys a tile");
  int kv0 = 0;
  int64_t key[U] = {};
  unsigned valid[U] = {};  ///< after resolve(): bit l of valid[u] set when key kv0 + 32·u + l has a page

  /// Issues the loads of keys [kv0_, kv0_ + BN)'s entries of `table` (the sequence's row of the block table, entry p
  /// at table[p·stride]), where `at` stands at kv0_; `keys`: the sequence's keys (entries past them are not read).
  /// Nothing waits for them here.
  __device__ __forceinline__ void fetch(const int32_t* table, int64_t stride, int keys, int kv0_,
                                        const PagedCursor<BN>& at, int lane) {
    kv0 = kv0_;
    BARACUDA_UNROLL
    for (int u = 0; u < U; ++u) {
      const int r = 32 * u + lane, j = kv0 + r;
      const bool in = r < BN && j < keys;
      const int32_t page = in ? table[static_cast<int64_t>(at.entry[u]) * stride] : -1;
      key[u] = static_cast<int64_t>(page) * (int64_t{1} << 32) + (in ? at.slot[u] : 0);
    }
  }

  /// Masks the keys whose page lies outside [0, num_blocks) and records which keys have a page.
  __device__ __forceinline__ void resolve(int64_t num_blocks) {
    BARACUDA_UNROLL
    for (int u = 0; u < U; ++u) {
      const int64_t page = key[u] >> 32;
      const bool ok = page >= 0 && page < num_blocks;
      if (!ok) key[u] = int64_t{-1} * (int64_t{1} << 32);
      valid[u] = __ballot_sync(0xffffffffu, ok);
    }
  }

  /// Key kv0 + r's (page, slot) packed as in `key` (page −1: masked), 0 ≤ r < BN; r may differ between lanes.
  __device__ __forceinline__ int64_t row(int r) const {
    int64_t k = __shfl_sync(0xffffffffu, key[0], r & 31);
    if constexpr (U == 2) {
      const int64_t k1 = __shfl_sync(0xffffffffu, key[1], r & 31);
      if (r >= 32) k = k1;
    }
    return k;
  }

  /// Whether key kv0 + r has a page (after resolve()), 0 ≤ r < BN.
  __device__ __forceinline__ bool has_page(int r) const {
    const unsigned word = U == 2 && r >= 32 ? valid[U - 1] : valid[0];  // constant indices: kept in registers
    // lint: shift < width: r & 31 < 32, on a 32-bit value
    return (word >> (r & 31)) & 1u;
  }

  /// The valid[] word of a tile part with n > 0 keys.
  static constexpr unsigned word_of_keys(int n) {
    // lint: shift < width: n < 32 in this branch
    return n >= 32 ? 0xffffffffu : (1u << n) - 1u;
  }

  /// Whether every key of the tile has a page (after resolve()).
  __device__ __forceinline__ bool all_valid() const {
    bool all = true;
    BARACUDA_UNROLL
    for (int u = 0; u < U; ++u) all = all && valid[u] == word_of_keys(BN - 32 * u);
    return all;
  }

  /// The offsets (elements) of the tile's rows in a cache whose page p, slot s starts at p·block + s·slot_stride, each
  /// in the lane that holds its key (kMaskedRow for a masked key), after resolve(): fa_load_paged_rows shuffles them.
  struct Offsets {
    int64_t off[U];
  };
  __device__ __forceinline__ Offsets offsets(int64_t block, int64_t slot_stride) const {
    Offsets o;
    BARACUDA_UNROLL
    for (int u = 0; u < U; ++u) {
      const int64_t page = key[u] >> 32, slot = key[u] & 0xffffffff;
      o.off[u] = paged_row_offset(page >= 0, page, slot, block, slot_stride);
    }
    return o;
  }

  /// Row j (kv0 ≤ j < kv0 + BN) of a cache at `base` whose page p, slot s starts at base + p·block + s·slot_stride;
  /// nullptr for a masked key.
  template <class E>
  __device__ __forceinline__ const E* row_ptr(const E* base, int64_t block, int64_t slot_stride, int j) const {
    const int64_t k = row(j - kv0);
    const int64_t page = k >> 32, slot = k & 0xffffffff;
    return page < 0 ? nullptr : base + page * block + slot * slot_stride;
  }
};

}  // namespace attention
BARACUDA_DEVICE_NAMESPACE_END
