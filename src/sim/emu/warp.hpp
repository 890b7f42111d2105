/// \file
/// \brief The generic warp-collective primitive of the emulator. Every warp-level operation (__shfl*_sync,
/// __ballot_sync, __match_*_sync, __reduce_*_sync, __syncwarp, and the emulated mma.sync / ldmatrix of the
/// PTX wrapper header) is built on warp_collective():
///
///   struct In { float a; int b; };                  // what each lane contributes
///   In in{x, k};  float out;                        // live on the lane's own stack while it waits
///   baracuda::simt::warp_collective(mask, &in, &out, [](const baracuda::simt::WarpGroup& g) {
///     for (int l = 0; l < 32; ++l)
///       if (g.has(l)) g.output<float>(l) = g.input<In>(l).a * 2;   // any function of all inputs
///   }, "my_op");
///
/// Semantics. Each lane of `mask` calls warp_collective with the same mask, the same operation (the same Op
/// type and name) from the same call site (`site`, the caller's location by default; an Op with
/// `static constexpr bool kAnyCallSite = true` rendezvouses across call sites, as bar.warp.sync does on
/// sm_70+; one with `static constexpr bool kOrdersMemory = true` orders the lanes' memory accesses for
/// racecheck, as only __syncwarp does). Lanes block until every lane of the group has arrived; then the op runs exactly once, on
/// one lane (normally the last arriver), reading every member's `in` and writing every member's `out`, and
/// all members continue. Exited lanes (and lanes that do not exist because blockDim is not a multiple of
/// 32) are left out of the group: they are never waited for, `g.has()` is false for them, and strict mode
/// reports the mask that named them. A lane that is not in its own mask runs the collective alone, as a
/// group of one (strict mode reports it). Lanes of the group that wait in a different collective, or with a different mask, leave the group
/// incomplete; when nothing else can run, the block is reported as deadlocked with every lane's wait state.
///
/// The op must depend on the lanes only through `in`: give every per-lane value (shuffle source lane,
/// matrix fragment, ...) as input. It must not block (no barrier, collective or __nanosleep inside).
#pragma once

#include <string>
#include <type_traits>

#include "state.hpp"

namespace baracuda::simt {

/// The lanes of one completed collective, as seen by its op.
struct WarpGroup {
  unsigned mask;       ///< lanes taking part: the requested mask minus exited lanes (or the caller alone)
  unsigned requested;  ///< the membermask the lanes passed
  unsigned exited;     ///< lanes of this warp that have exited or do not exist
  int warp;            ///< warp index within the block (linear thread id / 32)
  int leader;          ///< the lane running the op
  const void* in[32];  ///< each member's `in` (null for non-members)
  void* out[32];       ///< each member's `out` (null for non-members)

  bool has(int lane) const { return (mask >> lane) & 1u; }
  template <class T>
  const T& input(int lane) const {
    return *static_cast<const T*>(in[lane]);
  }
  template <class T>
  T& output(int lane) const {
    return *static_cast<T*>(out[lane]);
  }
  /// Records a strict-mode violation (no effect unless strict mode is on), naming this warp.
  void violation(const std::string& what) const;
};

namespace detail {

template <class Op>
inline constexpr char op_tag = 0;

template <class Op>
concept AnyCallSite = Op::kAnyCallSite;
template <class Op>
concept OrdersMemory = Op::kOrdersMemory;

/// Registers the calling lane. Returns the group if the caller must run the op on it and then call
/// collective_finish(); null once another lane has run it (the caller's `out` is then written). The group
/// is scratch storage of the block, valid until collective_finish(). `site` null: any call site. `fence`: the
/// collective orders the lanes' memory accesses (racecheck).
WarpGroup* collective_arrive(unsigned mask, const void* in, void* out, const void* tag, const char* name,
                             const CallSite* site, bool fence);
void collective_finish(const WarpGroup& g);

}  // namespace detail

/// Runs `op(const WarpGroup&)` once for the group of lanes named by `mask`; see the file comment.
/// `name` appears in deadlock and strict-mode reports. Lanes agree on the operation when their Op types,
/// names and call sites are the same.
template <class Op>
void warp_collective(unsigned mask, const void* in, void* out, Op&& op, const char* name = "warp collective",
                     const CallSite& site = {}) {
  using O = std::decay_t<Op>;
  const CallSite* any_or_site = detail::AnyCallSite<O> ? nullptr : &site;
  if (WarpGroup* g =
          detail::collective_arrive(mask, in, out, &detail::op_tag<O>, name, any_or_site, detail::OrdersMemory<O>)) {
    op(static_cast<const WarpGroup&>(*g));
    detail::collective_finish(*g);
  }
}

/// Lane index (0..31) and warp index of the calling CUDA thread, by the linear thread id
/// x + y*blockDim.x + z*blockDim.x*blockDim.y as on the hardware.
int lane_id();
int warp_id();

}  // namespace baracuda::simt
