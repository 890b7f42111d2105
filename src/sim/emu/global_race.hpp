/// \file
/// \brief Internal to the runtime: racecheck's store for global memory (memcheck.hpp says what is checked).
///
/// GlobalShadow remembers, for 8-byte granules of memory, the last write and the last read (which bytes each
/// covered, and who made it). It is a direct-mapped table of 2^20 slots, shared by the worker threads and
/// locked in stripes: a granule whose slot another granule (or an earlier launch) holds starts empty, so a
/// working set beyond 8 MiB makes racecheck forget history (miss hazards), never invent it.
///
/// AtomicSync is the order that atomics on global memory create between blocks: every atomic operation on an
/// address releases its block's accesses so far to that address and acquires what earlier atomics on it
/// released (a version counter per address). Block-granular, like the rest of the cross-block model: a
/// release publishes every access its block recorded before it, and an acquire serves the whole block.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

// The checking path runs on every load and store of a checked launch: it is not instrumented by the
// sanitizers itself (its own memory is plain vectors and the shadow) and is built with -O2
// (src/sim/CMakeLists.txt).
#define BARACUDA_SIM_HOT __attribute__((no_sanitize("address", "undefined")))

namespace baracuda::simt::detail {

/// One access to global memory as racecheck remembers it.
struct GlobalEvent {
  std::uint64_t launch = 0;  ///< the launch's generation; 0: no event
  std::uint64_t block = 0;   ///< linear block index
  std::uint64_t seq = 0;     ///< the block's event counter at the access (MemCheck::seq_)
  const void* pc = nullptr;
  std::uint32_t tid = 0;    ///< linear thread index in the block
  std::uint32_t bar = 0;    ///< barriers the thread had passed
  std::uint32_t clock = 0;  ///< its own warp clock
};

/// The last write and the last read of one granule, with the bytes (a mask) that each covered.
struct GlobalSlot {
  std::uintptr_t granule = 0;
  GlobalEvent write, read;
  std::uint8_t write_bytes = 0, read_bytes = 0;
};

class GlobalShadow {
 public:
  static constexpr unsigned kGranuleShift = 3;  ///< 8-byte granules
  static GlobalShadow& get();

  /// Locks the slot of `granule` for `launch` and returns it (emptied when it held another granule or launch).
  GlobalSlot& lock(std::uintptr_t granule, std::uint64_t launch);
  void unlock(std::uintptr_t granule);

 private:
  static constexpr unsigned kSlotBits = 20;
  static constexpr unsigned kStripeShift = 8;  ///< 256 slots (2 KiB of memory) per lock
  GlobalShadow();
  GlobalSlot* slots_ = nullptr;
  std::atomic<bool> stripes_[std::size_t{1} << (kSlotBits - kStripeShift)] = {};
};

class AtomicSync {
 public:
  static AtomicSync& get();

  /// An address's release history.
  struct Var {
    std::uint64_t version = 0;  ///< atomics on it so far
    /// Per block: (version, seq) of each of its releases, in increasing order of both.
    std::unordered_map<std::uint64_t, std::vector<std::pair<std::uint64_t, std::uint64_t>>> releases;
  };
  /// What an atomic acquired: the releases to `var` up to `version`.
  struct Acquired {
    const Var* var;
    std::uint64_t version;
  };

  /// An atomic on `p` by block `block` of launch `launch`, after its access number `seq`.
  Acquired atomic(std::uint64_t launch, const void* p, std::uint64_t block, std::uint64_t seq);
  /// The last access of `block` that `a` acquired (its seq; 0: none).
  std::uint64_t released(const Acquired& a, std::uint64_t block);

 private:
  std::mutex mu_;
  std::uint64_t launch_ = 0;
  std::unordered_map<std::uintptr_t, Var> vars_;
};

}  // namespace baracuda::simt::detail
