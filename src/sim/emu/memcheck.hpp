/// \file
/// \brief Internal to the runtime: initcheck on shared memory and racecheck on shared and global memory, fed by
/// the compiler's load/store instrumentation (clang `-fsanitize-coverage=func,trace-loads,trace-stores` on the
/// sim kernel sources: every load and store calls a `__sanitizer_cov_load<N>` / `__sanitizer_cov_store<N>`
/// hook with its address, defined in memcheck.cpp).
///
/// Shadow. Every byte of the running block's shared memory (dynamic, and the static variables registered
/// by BARACUDA_SHARED) has a shadow entry: whether it was written in this block (initcheck), its last write
/// and its last read (racecheck), each as (thread, barrier interval, warp clock, code address). Entries carry
/// the block's serial number, so a new block starts with an empty shadow without clearing it. Every other
/// address that kernel code touches is global memory, except the running fiber's stack, the worker's
/// thread-local storage and AddressSanitizer's fake frames; its last write and last read per 8-byte granule
/// (with the bytes each covered) are in GlobalShadow (global_race.hpp), shared by the workers, for racecheck.
///
/// Happens-before. An earlier access by thread A is ordered before a later access by thread B of the same
/// block when A is B, when B has passed more __syncthreads barriers than A had at its access, or when A and B
/// are lanes of one warp and a __syncwarp that both took part in completed between the two: each lane keeps
/// a vector clock over its warp's lanes, joined at every completed __syncwarp — or when B, after A's access,
/// completed a wait on an mbarrier phase (an acquire of every access recorded before the wait: precise for
/// the usual producer/consumer pipelines, where the accesses before the phase are the arrivers'; an access by
/// a thread that did not arrive, made before the wait, is taken as ordered too). Warp collectives other than
/// __syncwarp (shuffles, votes, ...) and fences order nothing, and atomics on shared memory order nothing: two
/// accesses that they alone separate, at least one a write, are a hazard (RAW, WAR or WAW).
///
/// Global memory adds two rules. Accesses of different launches are ordered (a launch ends before the next
/// begins). Accesses of different blocks of one launch are ordered only through atomics on global memory
/// (AtomicSync): an atomic operation on an address releases every access its block has recorded so far and
/// acquires, for its whole block, what the earlier atomics on that address released; within a block it is an
/// acquire of the running thread. This is coarser than the memory model — the __threadfence that a release
/// needs on hardware is assumed, and a release publishes its block's accesses, not only its thread's — so
/// it never reports a correct last-block reduction or flag handshake, and may miss a race around one.
///
/// cp.async. Its read of global memory is recorded at issue; its write of shared memory at issue and again where it
/// lands (async_copies.hpp: at its thread's wait_group, wait_all or exit), and between the two its bytes are in
/// flight: any access to them (a read of a stage before its wait, or before its issuer's wait and the barrier after;
/// a second copy into them) is reported as such, whatever the schedule.
///
/// Not recorded: the accesses of atomics themselves, of the emulated warp-wide instructions (the ops of warp
/// collectives, wgmma's operands; ldmatrix's rows are racecheck reads) and of TMA. TMA marks its bytes of shared
/// memory written for initcheck only (its completion is an mbarrier's, which is not modelled). The emulator's own
/// state that its inline code keeps (mbarriers, wgmma records) is accessed under MemcheckPause.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "global_race.hpp"

namespace baracuda::simt::detail {

class BlockExec;
struct LaunchJob;
struct ThreadRec;
struct Worker;

class MemCheck {
 public:
  /// Starts block `linear_block` of `job` on worker `w` as the worker's block `serial` (threads as BlockExec
  /// numbers them).
  void begin_block(const LaunchJob& job, Worker& w, BlockExec& exec, unsigned nthreads, std::uint64_t serial,
                   std::uint64_t linear_block);
  /// The lanes of `mask` in warp `warp` completed a __syncwarp together: join their clocks.
  void syncwarp(int warp, unsigned mask);
  /// The running thread completed an mbarrier wait: every access recorded so far is ordered before its next.
  void acquire();

  /// An access of `bytes` bytes at `p` by the running thread, from code address `pc`; a read is checked by
  /// initcheck too unless `init_check` is false. `copy`: a cp.async's write of shared memory (async_copies.hpp),
  /// at issue (+1: checked as the thread's store, then in flight until it lands) or where it lands (−1: recorded
  /// again, at the thread's cp.async.wait_group or exit, where a GPU may have made it). Any access to bytes in
  /// flight, by any thread, is a hazard (racecheck).
  void access(const void* p, std::size_t bytes, bool store, const void* pc, bool init_check = true, int copy = 0);
  /// An atomic operation of the running thread on `p`: on global memory, a release and an acquire.
  void atomic(const void* p);
  /// Bytes of shared memory that an emulated instruction wrote (TMA), for initcheck.
  void note_written(const void* p, std::size_t bytes);

 private:
  struct Event {
    std::uint64_t serial = 0;  ///< the block's serial number: an older one is no event
    std::uint32_t bar = 0;     ///< the thread's barriers passed at the access
    std::uint32_t clock = 0;   ///< its own warp clock at the access
    std::uint32_t tid = 0;     ///< linear thread index
    std::uint64_t seq = 0;     ///< the block's event counter at the access (mbarrier acquires)
    const void* pc = nullptr;
  };
  struct Shadow {
    std::uint64_t written = 0;  ///< serial of the block that wrote the byte
    Event write;
    Event read;
    std::uint64_t inflight_serial = 0;  ///< the block whose cp.async copies `inflight` counts
    std::uint32_t inflight = 0;         ///< copies in flight into the byte (issued, not landed)
    std::uint32_t inflight_tid = 0;     ///< the thread that issued the latest of them
    const void* inflight_pc = nullptr;  ///< and its code address
  };
  struct Region {
    const unsigned char* base;
    std::size_t bytes;
    std::vector<Shadow>* shadow;
    int index;  ///< -1: dynamic shared memory; else the static variable's registration index
  };

  bool find(const void* p, std::size_t bytes, Region* out);
  Event current(const void* pc);
  bool ordered(const Event& earlier, const ThreadRec& now);
  /// Whether an access of this block (thread `tid`, `bar` barriers passed, warp clock `clock`, event `seq`) is
  /// ordered before the running thread's next.
  bool ordered_in_block(std::uint32_t tid, std::uint32_t bar, std::uint32_t clock, std::uint64_t seq,
                        const ThreadRec& now);
  // Global memory (racecheck).
  bool is_global(const void* p);
  void access_global(const void* p, std::size_t bytes, bool store, const void* pc);
  bool ordered_global(const GlobalEvent& earlier, const ThreadRec& now);
  void global_hazard(const char* kind, const void* p, std::size_t bytes, const GlobalEvent& other,
                     const char* other_did, const void* pc);
  /// The report key of hazard `kind` ("RAW", "WAR", "WAW") on shared or global memory, or null when this
  /// block has reported that kind already (one report each).
  const char* claim_hazard(const char* kind, bool global);
  void report_hazard(const char* key, const char* kind, const std::string& location, std::size_t bytes,
                     const void* pc, const std::string& other, const char* other_did, const void* other_pc,
                     const char* unordered);
  std::string thread_in(std::uint64_t block, std::uint32_t tid) const;
  void hazard(const char* kind, const Region& r, std::size_t offset, std::size_t bytes, const Event& other,
              const char* other_did, const void* pc);
  void uninitialized(const Region& r, std::size_t offset, std::size_t bytes, const void* pc);
  void in_flight(const Region& r, std::size_t offset, std::size_t bytes, bool store, const Shadow& s, const void* pc);
  std::string where(const Region& r, std::size_t offset) const;
  std::string thread(std::uint32_t tid) const;

  const LaunchJob* job_ = nullptr;
  Worker* worker_ = nullptr;
  BlockExec* exec_ = nullptr;
  std::uint64_t serial_ = 0;
  bool init_ = false, race_ = false;
  /// Thread t's clocks of its warp's lanes (reset at its first use in a block: cheap blocks stay cheap).
  std::array<std::uint32_t, 32>& clocks(std::uint32_t t);
  std::vector<std::array<std::uint32_t, 32>> clocks_;  ///< per thread: its warp's lanes' clocks as it knows them
  std::vector<std::uint64_t> clocks_serial_;           ///< per thread: the block its clocks_ row belongs to
  std::vector<std::uint64_t> acquired_;  ///< per thread: events with seq up to this are ordered before it
  std::uint64_t seq_ = 0;                ///< events recorded in this block
  std::vector<Shadow> dynamic_;
  std::vector<std::vector<Shadow>> static_;  ///< by registration index
  std::size_t last_static_ = 0;               ///< the static region found last (a lookup hint)
  std::size_t bounded_ = 0;                   ///< static regions that static_lo_/static_hi_ cover
  std::uintptr_t static_lo_ = 0, static_hi_ = 0;  ///< all static regions lie in [lo, hi): a quick reject
  unsigned reported_ = 0;                     ///< kinds reported in this block (one report each)
  std::uint64_t block_ = 0;                   ///< the running block's linear index
  std::vector<AtomicSync::Acquired> acquired_sync_;  ///< the block's acquires: the latest per address
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> tls_;  ///< this worker's thread-local storage
  bool tls_known_ = false;
};

/// Returns the name of the code at return address `pc` ("function file:line" with a sanitizer runtime's
/// symbolizer, else the address), or of the function at `pc` (`function`: its name only).
std::string describe_code(const void* pc, bool function = false);

}  // namespace baracuda::simt::detail
