/// \file
/// \brief The multi-stage cp.async pipeline of the tensor-core GEMMs: K is streamed in slices through ST
/// shared-memory stages, slice s in stage s % ST, one commit group per slice (an empty group past the end,
/// so the group count stays uniform and `wait_group ST − 2` always means "slice s has landed").
///
/// Use: `pipeline_prologue<ST>(slices, load)` once, then per slice s `const int stage =
/// pipeline_advance<ST>(s, slices, load);` before reading the stage. `load(stage, slice)` issues the
/// cp.async copies of one slice into one stage.
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include "device/ptx/cp_async.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN

/// Starts slices 0 .. ST − 2.
template <int ST, class Load>
__device__ __forceinline__ void pipeline_prologue(int slices, Load&& load) {
  static_assert(ST >= 2, "at least two stages");
BARACUDA_UNROLL
  for (int s = 0; s < ST - 1; ++s) {
    if (s < slices) load(s, s);
    ptx::cp_async_commit();
  }
}

/// Waits until slice s is in shared memory for the whole block, then refills the stage that slice s − 1
/// used (every thread is past it: the barrier) with slice s + ST − 1. Returns slice s's stage.
template <int ST, class Load>
__device__ __forceinline__ int pipeline_advance(int s, int slices, Load&& load) {
  ptx::cp_async_wait<ST - 2>();  // this thread's copies of slice s have landed
  __syncthreads();               // everyone's have; and everyone is done with the stage refilled below
  const int next = s + ST - 1;
  if (next < slices) load(next % ST, next);
  ptx::cp_async_commit();
  return s % ST;
}

BARACUDA_DEVICE_NAMESPACE_END
