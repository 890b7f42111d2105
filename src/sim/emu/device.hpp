/// \file
/// \brief Built-in variables, block barriers, sleep, trap, fences and clocks for kernels compiled against the
/// emulator. Names and signatures are CUDA's.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "state.hpp"

namespace baracuda::simt {
namespace detail {
inline uint3 thread_idx() { return t_cur.thread_idx; }
inline uint3 block_idx() { return t_cur.block_idx; }
inline dim3 block_dim() { return t_cur.block_dim; }
inline dim3 grid_dim() { return t_cur.grid_dim; }
/// This block's dynamic shared memory (BARACUDA_DYNAMIC_SHARED): an exact-size heap buffer per worker and
/// launch, filled with 0xCD at the start of every block, 16-byte aligned.
inline unsigned char* dynamic_smem() { return t_cur.dynamic_smem; }
}  // namespace detail

namespace device_api {

inline constexpr int warpSize = 32;

// The call site (a defaulted last parameter) is what synccheck compares.
inline void __syncthreads(CallSite site = {}) {
  detail::barrier(0, detail::BarrierOp::Plain, site);
}
inline int __syncthreads_count(int predicate, CallSite site = {}) {
  return detail::barrier(predicate, detail::BarrierOp::Count, site);
}
inline int __syncthreads_and(int predicate, CallSite site = {}) {
  return detail::barrier(predicate, detail::BarrierOp::And, site);
}
inline int __syncthreads_or(int predicate, CallSite site = {}) {
  return detail::barrier(predicate, detail::BarrierOp::Or, site);
}

/// Yields to the other threads of the block (a spin-wait must call it to let the waited-for thread run).
inline void __nanosleep(unsigned int /*ns*/) { detail::yield(); }

/// Abandons the launch; take_last_error() then reports cudaErrorLaunchFailure naming the thread.
[[noreturn]] inline void __trap() { detail::trap("__trap() called"); }
[[noreturn]] inline void __brkpt() { detail::trap("__brkpt() called"); }

inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence_block() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence_system() { std::atomic_thread_fence(std::memory_order_seq_cst); }

/// Nanoseconds of a monotonic clock (clock() is the C library's, which is also monotonic per process).
inline long long int clock64() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace device_api
}  // namespace baracuda::simt

// threadIdx/blockIdx are `uint3`, blockDim/gridDim `dim3` values (not lvalues), read from the scheduler's
// per-worker state.
#define threadIdx (::baracuda::simt::detail::thread_idx())
#define blockIdx (::baracuda::simt::detail::block_idx())
#define blockDim (::baracuda::simt::detail::block_dim())
#define gridDim (::baracuda::simt::detail::grid_dim())
