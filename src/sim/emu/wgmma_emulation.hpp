/// \file
/// \brief Emulation of the warpgroup MMA (wgmma, sm_90a) that src/device/ptx/wgmma.cuh issues, and of the
/// shared-memory window that its matrix descriptors address.
///
/// Shared window. A descriptor holds a shared-memory address (bits 17:4), not a pointer. Under the
/// emulator, the block's dynamic shared memory is given the window addresses
/// [kSharedWindowBase, kSharedWindowBase + size): shared_window_address(p) maps a pointer into it and
/// shared_window_byte(a) reads the byte at a window address. The base is 16-byte aligned but deliberately not 128- or 1024-byte
/// aligned (a GPU promises dynamic shared memory 16 bytes only), so a kernel that forgets to align a
/// swizzled tile in window addresses gets a different layout under sim too. Static __shared__ arrays
/// (thread_local storage in the emulator) have no window address: using one traps.
///
/// wgmma.mma_async.m64nNk32 with A and B from shared memory. Each thread computes its own accumulator
/// fragment, reading A and B through the descriptors (K-major, the only layout of 8-bit operands): thread t
/// of the warpgroup (warp w = (t / 32) % 4, lane l, g = l / 4, q = l % 4) owns d[i], i < N/2, at row
/// 16w + g + 8·((i >> 1) & 1), column 8·(i >> 2) + 2q + (i & 1) — the m16n8 C fragment repeated over N/8.
///
/// Asynchrony: an mma_async is only recorded (its descriptors, scale-d and the address of the thread's
/// accumulator array); commit_group closes the thread's recorded operations into a group; wait_group N
/// computes, in issue order, every operation of all but the N most recent groups, reading shared memory
/// and writing the accumulators then. This is the latest moment the hardware may read the operands, so it
/// is exact for every correct program (the ISA forbids writing the operands' shared memory and touching
/// the accumulators between an mma_async and the wait that retires it), and it makes the typical pipeline
/// bugs show under sim too: a stage refilled before the wgmma reading it has retired, accumulators read
/// before the wait, a missing commit or wait (the operations then never run). The record is per CUDA
/// thread and per block; operations still pending when the thread exits are dropped. What it cannot show: a
/// missing fence.proxy.async or wgmma.fence (no-ops here), and that every thread of the warpgroup executes
/// the instruction (.sync.aligned).
///
/// Element address (bytes, window addresses), PTX ISA "Shared Memory Matrix Layout" / "Matrix Descriptor
/// Format", for 8-bit elements (T = 16 per 16-byte unit), row r (M of A, N of B), byte k < 32 of K:
///   no swizzle:   start + (r/8)·SBO + (r%8)·16 + (k/16)·LBO + k%16          (8x16-byte core matrices)
///   swizzle W B:  a = start + (r/8)·SBO + (r%8)·W + k, then bits [4, 4+log2(W/16)) ^= bits [7, ...)
///                 (Swizzle<3,4,3> for W = 128, <2,4,3> for 64, <1,4,3> for 32), on the window address.
/// The swizzle is applied to the absolute address, which is what base offset 0 means (the pattern repeats
/// on 1024/512/256-byte boundaries of the address). A non-zero base offset, and a swizzled operand whose
/// 32 K bytes would cross its W-byte row (start % W + 32 > W), trap: their meaning is not pinned down here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "state.hpp"
#include "warp.hpp"

namespace baracuda::simt::ptx {

inline constexpr unsigned kSharedWindowBase = 0x410;

/// Window address of a pointer into the block's dynamic shared memory (one past the end included).
inline unsigned shared_window_address(const void* p) {
  const auto* b = detail::t_cur.dynamic_smem;
  const auto* c = static_cast<const unsigned char*>(p);
  if (b == nullptr || c < b || c > b + detail::t_cur.dynamic_smem_bytes)
    detail::trap("shared-memory address of a pointer outside the block's dynamic shared memory (under sim, only "
                 "dynamic shared memory has shared-window addresses)");
  return kSharedWindowBase + static_cast<unsigned>(c - b);
}

/// The byte at window address `a` of the block's dynamic shared memory.
inline unsigned char shared_window_byte(unsigned a, const char* what) {
  if (a < kSharedWindowBase || a - kSharedWindowBase >= detail::t_cur.dynamic_smem_bytes)
    detail::trap(what);
  return detail::t_cur.dynamic_smem[a - kSharedWindowBase];
}

/// The fields of a wgmma matrix descriptor (PTX ISA "Matrix Descriptor Format").
struct WgmmaDescFields {
  unsigned start, lbo, sbo;  // bytes
  unsigned base_offset;
  unsigned mode;  // 0 none, 1 128B, 2 64B, 3 32B
};

constexpr WgmmaDescFields decode_wgmma_desc(std::uint64_t d) {
  return {static_cast<unsigned>(d & 0x3fffu) << 4, static_cast<unsigned>((d >> 16) & 0x3fffu) << 4,
          static_cast<unsigned>((d >> 32) & 0x3fffu) << 4, static_cast<unsigned>((d >> 49) & 7u),
          static_cast<unsigned>(d >> 62)};
}

/// Window address of byte k (< 32) of row r of a K-major 8-bit operand; see the file comment.
inline unsigned wgmma_kmajor_address(const WgmmaDescFields& f, int r, int k) {
  const unsigned ru = static_cast<unsigned>(r), ku = static_cast<unsigned>(k);
  if (f.mode == 0) return f.start + (ru / 8) * f.sbo + (ru % 8) * 16 + (ku / 16) * f.lbo + ku % 16;
  const unsigned width = f.mode == 1 ? 128 : f.mode == 2 ? 64 : 32;
  const unsigned mask = width / 16 - 1;  // 7, 3, 1: the 16-byte chunk bits [4, ...) that are XORed
  const unsigned a = f.start + (ru / 8) * f.sbo + (ru % 8) * width + ku;
  return a ^ (((a >> 7) & mask) << 4);
}

inline void check_wgmma_desc(const WgmmaDescFields& f, const char* which) {
  if (f.mode != 0 && f.base_offset != 0)
    detail::trap(which);  // a non-zero base offset is not emulated
  if (f.mode != 0) {
    const unsigned width = f.mode == 1 ? 128 : f.mode == 2 ? 64 : 32;
    if (f.start % width + 32 > width) detail::trap(which);  // K would cross the swizzle row
  }
}

/// Computes d (N/2 s32 of this thread) = A·Bᵀ (+ d when scale_d), A 64×32 and B N×32 (K-major) in shared
/// memory, for the thread's fragment.
inline void wgmma_execute(int n, bool a_signed, bool b_signed, int* d, std::uint64_t desc_a, std::uint64_t desc_b,
                          bool scale_d) {
  // The operands' byte-wise reads are the instruction's (every thread reads whole tiles): not checked by
  // initcheck/racecheck (docs/sim.md).
  const detail::MemcheckPause pause;
  const WgmmaDescFields fa = decode_wgmma_desc(desc_a), fb = decode_wgmma_desc(desc_b);
  check_wgmma_desc(fa, "wgmma: descriptor A has a non-zero base offset or its 32 K bytes cross a swizzle row "
                       "(not emulated)");
  check_wgmma_desc(fb, "wgmma: descriptor B has a non-zero base offset or its 32 K bytes cross a swizzle row "
                       "(not emulated)");
  const int lane = lane_id(), w = warp_id() % 4, g = lane >> 2, q = lane & 3;
  constexpr const char* kOut = "wgmma: a descriptor addresses shared memory outside the block's dynamic shared memory";
  auto value = [](unsigned char v, bool sgn) {
    return sgn ? static_cast<int>(static_cast<std::int8_t>(v)) : static_cast<int>(v);
  };
  int a[2][32];
  for (int h = 0; h < 2; ++h)
    for (int k = 0; k < 32; ++k)
      a[h][k] = value(shared_window_byte(wgmma_kmajor_address(fa, 16 * w + g + 8 * h, k), kOut), a_signed);
  for (int j = 0; j < n / 8; ++j)
    for (int e = 0; e < 2; ++e) {
      const int col = 8 * j + 2 * q + e;
      int b[32];
      for (int k = 0; k < 32; ++k) b[k] = value(shared_window_byte(wgmma_kmajor_address(fb, col, k), kOut), b_signed);
      for (int h = 0; h < 2; ++h) {
        unsigned acc = scale_d ? static_cast<unsigned>(d[4 * j + 2 * h + e]) : 0u;  // s32 wraps around
        for (int k = 0; k < 32; ++k) acc += static_cast<unsigned>(a[h][k] * b[k]);
        d[4 * j + 2 * h + e] = static_cast<int>(acc);
      }
    }
}

/// The recorded, not yet computed wgmma operations of one CUDA thread (see the file comment).
struct WgmmaPending {
  struct Op {
    int* d;
    std::uint64_t desc_a, desc_b;
    int n;
    bool a_signed, b_signed, scale_d;
  };
  std::uint64_t block_serial = 0;
  std::vector<Op> ops;          ///< in issue order
  std::vector<std::size_t> ends;  ///< ops[0 .. ends[i]) belong to committed groups 0..i
};

/// This CUDA thread's record (per worker, indexed by the linear thread id; reset for every new block).
inline WgmmaPending& wgmma_pending() {
  static thread_local std::vector<WgmmaPending> records;
  const auto& c = detail::t_cur;
  const std::size_t tid =
      c.thread_idx.x + static_cast<std::size_t>(c.block_dim.x) * (c.thread_idx.y + static_cast<std::size_t>(c.block_dim.y) * c.thread_idx.z);
  if (records.size() <= tid) records.resize(tid + 1);
  WgmmaPending& r = records[tid];
  if (r.block_serial != c.block_serial) {
    r.block_serial = c.block_serial;
    r.ops.clear();
    r.ends.clear();
  }
  return r;
}

template <int N, bool ASigned, bool BSigned>
inline void wgmma_m64nNk32(int (&d)[N / 2], std::uint64_t desc_a, std::uint64_t desc_b, bool scale_d) {
  const detail::MemcheckPause pause;  // the records are the emulator's state
  wgmma_pending().ops.push_back({d, desc_a, desc_b, N, ASigned, BSigned, scale_d});
}

inline void wgmma_commit_group() {
  const detail::MemcheckPause pause;
  WgmmaPending& r = wgmma_pending();
  r.ends.push_back(r.ops.size());  // an empty group counts too
}

/// wait_group n: computes the operations of every committed group but the n most recent.
inline void wgmma_wait_group(int n) {
  const detail::MemcheckPause pause;
  WgmmaPending& r = wgmma_pending();
  if (static_cast<int>(r.ends.size()) <= n) return;
  const std::size_t retire = r.ends.size() - static_cast<std::size_t>(n);
  const std::size_t end = r.ends[retire - 1];
  for (std::size_t i = 0; i < end; ++i) {
    const auto& o = r.ops[i];
    wgmma_execute(o.n, o.a_signed, o.b_signed, o.d, o.desc_a, o.desc_b, o.scale_d);
  }
  r.ops.erase(r.ops.begin(), r.ops.begin() + static_cast<std::ptrdiff_t>(end));
  r.ends.erase(r.ends.begin(), r.ends.begin() + static_cast<std::ptrdiff_t>(retire));
  for (auto& e : r.ends) e -= end;
}

}  // namespace baracuda::simt::ptx
