/// \file
/// \brief Internal to the runtime: cp.async's copies in flight, per CUDA thread of the running block.
///
/// A copy lands (its bytes reach shared memory) when its thread's cp.async.wait_group retires its group, or at
/// cp.async.wait_all, or when the thread exits: the latest moment the PTX memory model allows, so a kernel that
/// reads a stage without waiting for it reads the stage's old bytes, as a GPU may. The source is read at landing
/// too. Racecheck (memcheck.hpp) also reports any access to a destination while its copy is in flight.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace baracuda::simt::detail {

class MemCheck;

class AsyncCopies {
 public:
  /// A block of `nthreads` threads starts: every queue is empty (an abandoned block's copies never land).
  void begin_block(unsigned nthreads);
  /// Thread `tid` issued a copy of the first `src_bytes` bytes of `src` into `dst`, zero-filling the rest of its
  /// `cp_size` bytes; `pc`: the instruction's code address (racecheck's reports).
  void issue(unsigned tid, void* dst, const void* src, int cp_size, int src_bytes, const void* pc);
  /// cp.async.commit_group: the thread's copies since its last commit form a group (an empty one counts too).
  void commit(unsigned tid);
  /// cp.async.wait_group n: lands every committed group of the thread but the n most recent; n < 0
  /// (cp.async.wait_all, and a thread's exit) lands every copy, committed or not. Returns the copies landed.
  std::size_t land(unsigned tid, int n, MemCheck* m);

  /// The bytes a copy reads: src_bytes clamped to [0, cp_size].
  static int source_bytes(int cp_size, int src_bytes) { return src_bytes < 0 ? 0 : std::min(src_bytes, cp_size); }
  /// Writes a copy's bytes: the first source_bytes() bytes of `src`, the rest of the cp_size bytes zero.
  static void perform(void* dst, const void* src, int cp_size, int src_bytes);

 private:
  struct Copy {
    void* dst;
    const void* src;
    int cp_size, src_bytes;
    const void* pc;
  };
  struct Queue {
    std::vector<Copy> copies;       ///< issued, not landed, oldest first
    std::vector<std::size_t> ends;  ///< per committed group, oldest first: its end in `copies`
  };
  std::vector<Queue> queues_;  ///< by linear thread index; kept across blocks (their capacity too)
};

}  // namespace baracuda::simt::detail
