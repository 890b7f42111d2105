/// \file
/// \brief Host-side launchers of the emulator self-test kernels (*_kernels.cu). Every launcher takes device
/// pointers (host memory under the emulator), launches, waits, and returns the launch error; the kernel
/// files compile with nvcc as well, so the same launchers can drive a GPU.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstddef>
#include <cstdint>

#include "sim/launch_error.hpp"

namespace simtest {

using baracuda::launch::LaunchError;

// ---- warp_kernels.cu ----
enum ShflMode : int { kShflIdx = 0, kShflUp = 1, kShflDown = 2, kShflXor = 3 };

/// One block of `threads` threads. Lanes outside `mask` return at once; the others call the shuffle of
/// `mode` with operand b[i] (srcLane, delta or laneMask) and `width`, and write the result to out[i].
template <class T>
LaunchError shfl(int mode, const T* in, T* out, const int* b, int width, unsigned mask, int threads);

/// Per thread i (lanes outside `mask` return at once), out[i*8 + k] for k =
/// 0 __ballot_sync, 1 __any_sync, 2 __all_sync, 3 __match_any_sync(unsigned), 4 __match_all_sync's mask,
/// 5 its predicate, 6 __match_any_sync on the value as a 64-bit integer, 7 __match_any_sync on it as float.
LaunchError vote(const int* pred, unsigned* out, unsigned mask, int threads);

/// out[i*9 + k] = __reduce_{add,min,max}_sync on (unsigned)v[i], then on (int)v[i], then
/// __reduce_{and,or,xor}_sync on (unsigned)v[i], for the lanes in `mask`.
LaunchError reduce(const int* v, unsigned* out, unsigned mask, int threads);

/// Lanes >= keep[warp] return; the rest write __activemask() to out[i] (and 0 is left elsewhere), then
/// synchronize with __syncwarp(that mask).
LaunchError activemask(const int* keep, unsigned* out, int threads);

/// Lanes that are in `mask` exit first; the others run __shfl_xor_sync(0xffffffff, v, 1) (strict mode
/// must flag the mask naming exited lanes; without strict the exited lanes are left out).
LaunchError shfl_exited_lanes(const int* in, int* out, unsigned exit_mask);

/// Lane 0 calls __shfl_sync with a mask without itself (strict: "not in its own mask").
LaunchError shfl_not_in_own_mask(int* out);

/// Lanes 0-15 call __ballot_sync(0xffffffff), lanes 16-31 __shfl_sync(0xffffffff): a deadlock, and in
/// strict mode a "lanes disagree" violation.
LaunchError warp_disagree(int* out);

/// blockDim (8, 4, 2): out[linear] = {threadIdx.x, .y, .z, lane from __shfl_sync of the linear id}.
LaunchError thread_layout(int* out);

// ---- block_kernels.cu ----
/// Threads i >= n return before a barrier; the rest exchange values through shared memory:
/// out[i] = in[i ^ 1] (if that partner is live, else in[i]) + __syncthreads_count(in[i] > 0) * 1000.
LaunchError early_exit_barrier(const int* in, int* out, int n, int threads);

/// out[t*3 + {0,1,2}] = __syncthreads_count/and/or(pred[t]) over threads t < live (the others exit).
LaunchError barrier_predicates(const int* pred, int* out, int live, int threads);

/// `blocks` blocks of `threads` threads; each writes block-dependent values to __shared__ arrays of a
/// template kernel <float,64>/<double,128> and of a __device__ function template, crosses `rounds`
/// barriers re-checking them, and counts mismatches into errors[0].
LaunchError shared_isolation(int blocks, int rounds, int* errors);

/// Block sum in dynamic shared memory: out[block] = sum of in over the block (threads per block = t).
LaunchError dynamic_smem_sum(const float* in, float* out, int blocks, int threads);

/// Thread 0 spins with __nanosleep on a shared flag that the last thread sets: out[b] = 42 + b.
LaunchError nanosleep_flag(int* out, int blocks, int threads);

/// Every thread increments counter[0] and spins (without __nanosleep) until all have: fine on a GPU, a
/// hang under the emulator that its watchdog must turn into an abort.
LaunchError spin_without_sleep(int* counter);

/// Block reductions in shared memory where the last thread sums all values: out[b] = sum over the block.
/// with_barrier = false omits the __syncthreads between the writes and the read (a planted race).
LaunchError last_thread_sum(const int* in, int* out, int blocks, int threads, bool with_barrier);

/// Warp 0 waits at __syncthreads while warp 1's lanes 0-15 wait in __shfl_sync(0xffffffff) and lanes
/// 16-31 at __syncthreads: a deadlock.
LaunchError barrier_vs_shuffle_deadlock(int* out);

/// Thread 5 of block 3 calls __trap(); every thread writes 1 to out[global id] before.
LaunchError trap_in_block(int* out, int blocks);

/// The 1M-element reduction: shuffles, a barrier and one atomicAdd per block. out[0] += sum(in).
LaunchError block_reduce_sum(const float* in, float* out, int n, int blocks, int threads);

/// A trivial kernel with an explicit configuration, for invalid-configuration tests.
LaunchError config_probe(int* out, unsigned gx, unsigned bx, unsigned by, unsigned bz, std::size_t smem);

// ---- atomic_kernels.cu ----
struct AtomicCounters {
  int i_add, i_sub, i_max, i_min, i_and, i_or, i_xor, i_exch_sum;
  unsigned u_add, u_inc, u_dec, u_max, u_min;
  unsigned long long ull_add, ull_cas_mul, ull_max;
  long long ll_min, ll_max;
  float f_add;
  double d_add;
  __half2 h2_add;
  __half h_add;
  __nv_bfloat16 bf_add;
  __nv_bfloat162 bf2_add;
  int i_cas_add;
  int exch_slot;
};
/// `blocks` x `threads` threads hammer the counters (see atomic_kernels.cu for the exact operations).
LaunchError atomics_contention(AtomicCounters* c, int blocks, int threads);

// ---- math_kernels.cu ----
/// out[i*kIntOps + k]: integer intrinsics of (a[i], b[i], s[i]).
inline constexpr int kIntOps = 20;
LaunchError int_intrinsics(const unsigned* a, const unsigned* b, const unsigned* s, unsigned long long* out, int n);

/// out[i*kFloatOps + k]: float conversions and directed-rounding arithmetic of (x[i], y[i]).
inline constexpr int kFloatOps = 24;
LaunchError float_intrinsics(const float* x, const float* y, double* out, int n);

/// out[i] = __hfma(a[i], b[i], c[i]) (and the bf16 one into outb), plus h2 versions checked elementwise.
LaunchError half_fma(const __half* a, const __half* b, const __half* c, __half* out, const __nv_bfloat16* ab,
                     const __nv_bfloat16* bb, const __nv_bfloat16* cb, __nv_bfloat16* outb, int n);

/// out[i*kHalfOps + k]: 16-bit math and conversions of h[i] / bf[i] (as float), see math_kernels.cu.
inline constexpr int kHalfOps = 16;
LaunchError half_math(const __half* h, const __nv_bfloat16* bf, float* out, int n);

}  // namespace simtest
