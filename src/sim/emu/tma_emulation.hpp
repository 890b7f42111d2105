/// \file
/// \brief Emulation of the shared-memory mbarrier (sm_90 transaction counts) and of the tensor bulk copy
/// (TMA, cp.async.bulk.tensor.2d) that src/device/ptx/mbarrier.cuh and tma.cuh issue.
///
/// mbarrier. Each barrier is identified by its shared-window address (wgmma_emulation.hpp: only dynamic
/// shared memory has one) and kept in a per-block side table, not in its 8 bytes of shared memory. A phase
/// completes when its pending arrival count reaches 0 and its transaction count is 0; it then flips the phase
/// parity and re-arms the arrival count (PTX ISA "mbarrier": expected arrival count, pending count, tx-count).
/// `try_wait.parity P` is true once the phase of parity P has completed, i.e. while the current phase's
/// parity differs from P — so a fresh barrier (phase 0) passes a wait on parity 1 at once, the usual way a
/// producer's first pass over its "empty" barriers goes through.
///
/// When a tensor bulk copy lands is the other freedom of a correct program, and the thread schedule picks it
/// (runtime.hpp): under `fwd` (and `rand` with an even seed) copies land as late as the hardware may let
/// them — issuing one only records it on its barrier (with a copy of the tensor map), and the barrier's
/// copies run when a thread tests it after every arrival of the phase is in — so a consumer that reads a
/// stage without waiting on its barrier reads the old contents. Under `rev` (and odd seeds) they land at
/// once, when issued — so a consumer that releases a stage before its last read of it (an early arrive on
/// the "empty" barrier) sees it overwritten. Either way a copy writes its whole box (zero outside the
/// tensor) and takes its bytes off the barrier's transaction count; a phase whose copies delivered more
/// bytes than arrive.expect_tx announced traps (fewer never completes: the watchdog reports the hang). What
/// this cannot show: a missing fence after mbarrier.init, or proxy fences between generic and async
/// accesses (no-ops here).
///
/// Box layout in shared memory (CUDA driver API "Tensor Memory Access"; PTX ISA "Tensor copy"): rows of
/// box_cols · elem_bytes bytes one after another from the destination (128-byte aligned), each row's
/// 16-byte chunks permuted by the swizzle mode on the absolute shared address, as the wgmma descriptors read
/// them: for W = 128/64/32 bytes, address bits [4, 4 + log2(W/16)) are XORed with bits [7, ...)
/// (wgmma_kmajor_address), the inner box row being at most W bytes.
#pragma once

#include <cstdint>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "runtime.hpp"
#include "state.hpp"
#include "wgmma_emulation.hpp"

namespace baracuda::simt::ptx {

/// The sim device's tensor map: what cuTensorMapEncodeTiled takes for a 2-D tile copy, kept as plain values
/// (device/ptx/tma.cuh checks them, for both devices, before building one).
struct TensorMap2d {
  const unsigned char* base = nullptr;
  std::uint64_t cols = 0, rows = 0;  ///< elements along the inner dimension, rows
  std::uint64_t row_bytes = 0;       ///< byte distance between rows
  unsigned box_cols = 0, box_rows = 0;
  unsigned elem_bytes = 1;
  unsigned swizzle_bytes = 0;  ///< 0 (none), 32, 64 or 128
};

struct MbarrierState {
  unsigned expected = 0, pending = 0;
  long long tx = 0;
  unsigned phase = 0;
  struct Copy {
    unsigned dst;  // window address
    TensorMap2d map;
    long long c0, c1;
  };
  std::vector<Copy> copies;
};

/// The barriers of the running block (per worker; reset for every new block).
inline std::unordered_map<unsigned, MbarrierState>& mbarriers() {
  static thread_local std::uint64_t serial = 0;
  static thread_local std::unordered_map<unsigned, MbarrierState> table;
  if (serial != detail::t_cur.block_serial) {
    serial = detail::t_cur.block_serial;
    table.clear();
  }
  return table;
}

inline MbarrierState& mbarrier_at(const void* bar) {
  const unsigned a = shared_window_address(bar);
  if (a % 8 != 0) detail::trap("mbarrier: the barrier is not 8-byte aligned");
  auto& t = mbarriers();
  const auto it = t.find(a);
  if (it == t.end()) detail::trap("mbarrier: used before mbarrier.init");
  return it->second;
}

inline void mbarrier_init(void* bar, unsigned count) {
  const detail::MemcheckPause pause;  // the barriers' table is the emulator's state
  const unsigned a = shared_window_address(bar);
  if (a % 8 != 0) detail::trap("mbarrier.init: the barrier is not 8-byte aligned");
  if (count == 0 || count >= (1u << 20)) detail::trap("mbarrier.init: the count must be in [1, 2^20 - 1]");
  MbarrierState s;
  s.expected = s.pending = count;
  mbarriers()[a] = std::move(s);
}

inline void mbarrier_try_complete(MbarrierState& b) {
  if (b.pending == 0 && b.tx == 0 && b.copies.empty()) {
    b.phase ^= 1u;
    b.pending = b.expected;
  }
}

inline void mbarrier_arrive(void* bar, unsigned tx_bytes) {
  const detail::MemcheckPause pause;
  MbarrierState& b = mbarrier_at(bar);
  if (b.pending == 0) detail::trap("mbarrier.arrive: more arrivals than the barrier's count in this phase");
  b.tx += tx_bytes;
  --b.pending;
  mbarrier_try_complete(b);
}

/// Runs one recorded copy: the box at (c0, c1) of the map, zero outside the tensor, into shared memory.
inline void tma_execute(const MbarrierState::Copy& c) {
  const detail::MemcheckPause pause;  // initcheck learns of the bytes below; racecheck not (see memcheck.hpp)
  const TensorMap2d& m = c.map;
  const unsigned row = m.box_cols * m.elem_bytes;
  const unsigned mask = m.swizzle_bytes == 0 ? 0u : m.swizzle_bytes / 16 - 1;
  auto* smem = detail::t_cur.dynamic_smem;
  for (unsigned r = 0; r < m.box_rows; ++r) {
    const long long gr = c.c1 + r;
    for (unsigned b = 0; b < row; ++b) {
      const long long gc = c.c0 + b / m.elem_bytes;
      const bool in = gr >= 0 && gc >= 0 && static_cast<std::uint64_t>(gr) < m.rows && static_cast<std::uint64_t>(gc) < m.cols;
      const unsigned char v =
          in ? m.base[static_cast<std::uint64_t>(gr) * m.row_bytes + static_cast<std::uint64_t>(gc) * m.elem_bytes +
                      b % m.elem_bytes]
             : 0;
      unsigned a = c.dst + r * row + b;
      a ^= ((a >> 7) & mask) << 4;
      if (a < kSharedWindowBase || a - kSharedWindowBase >= detail::t_cur.dynamic_smem_bytes)
        detail::trap("cp.async.bulk.tensor: the box runs past the block's dynamic shared memory");
      smem[a - kSharedWindowBase] = v;
      pause.note_written(&smem[a - kSharedWindowBase], 1);
    }
  }
}

/// Copies land at once (true) or as late as possible (false), by the schedule: see the file comment.
inline bool tma_lands_at_issue() {
  const Schedule s = get_schedule();
  return s.kind == ScheduleKind::Reverse || (s.kind == ScheduleKind::Random && s.seed % 2 == 1);
}

inline void tma_land(MbarrierState& b, const MbarrierState::Copy& c) {
  tma_execute(c);
  b.tx -= static_cast<long long>(c.map.box_rows) * c.map.box_cols * c.map.elem_bytes;
}

/// Whether the phase of `parity` has completed; lands the barrier's recorded copies once every arrival of
/// the phase is in.
inline bool mbarrier_phase_passed(void* bar, unsigned parity) {
  const detail::MemcheckPause pause;
  MbarrierState& b = mbarrier_at(bar);
  if ((b.phase & 1u) != (parity & 1u)) return true;
  if (b.pending != 0) return false;
  const std::vector<MbarrierState::Copy> copies = std::move(b.copies);
  b.copies.clear();
  for (const auto& c : copies) tma_land(b, c);
  if (b.tx < 0) detail::trap("mbarrier: the bulk copies delivered more bytes than arrive.expect_tx announced");
  mbarrier_try_complete(b);
  return (b.phase & 1u) != (parity & 1u);
}

/// mbarrier.try_wait.parity.
inline bool mbarrier_try_wait_parity(void* bar, unsigned parity) {
  const bool passed = mbarrier_phase_passed(bar, parity);
  if (passed) detail::note_mbarrier_acquire();
  return passed;
}

/// cp.async.bulk.tensor.2d...mbarrier::complete_tx::bytes: lands now or is recorded on the barrier (see the
/// file comment).
inline void tma_load_2d(void* dst, const TensorMap2d& map, void* bar, int c0, int c1) {
  const detail::MemcheckPause pause;
  const unsigned d = shared_window_address(dst);
  if (d % 128 != 0) detail::trap("cp.async.bulk.tensor: the shared-memory destination is not 128-byte aligned");
  if (map.base == nullptr) detail::trap("cp.async.bulk.tensor: an unencoded tensor map");
  MbarrierState& b = mbarrier_at(bar);
  const MbarrierState::Copy c{d, map, c0, c1};
  if (!tma_lands_at_issue()) {
    b.copies.push_back(c);
    return;
  }
  tma_land(b, c);  // (the count may dip below zero until the matching arrive.expect_tx)
  if (b.tx >= 0) mbarrier_try_complete(b);
}

}  // namespace baracuda::simt::ptx
