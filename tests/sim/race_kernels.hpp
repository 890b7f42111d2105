/// \file
/// \brief Launchers of racecheck's probes (race_kernels.cu), most on global memory: each kernel written correctly
/// and, where a flag says so, with the planted bug that racecheck must report (test_checkers.cpp).
#pragma once

#include "sim/launch_error.hpp"

namespace simtest {

using baracuda::launch::LaunchError;

/// One block of `threads`: thread t writes data[t]; then thread 0 sums data[0..threads) into out[0], after
/// a __syncthreads only if `with_barrier`.
LaunchError global_sum_after_writes(int* data, int* out, int threads, bool with_barrier);

/// One warp: lane l writes data[l], then reads data[(l + 1) % 32] into out[l], with a __syncwarp between only
/// if `with_syncwarp`.
LaunchError global_neighbour_in_warp(int* data, int* out, bool with_syncwarp);

/// `blocks` blocks of 64 threads: each block writes its partial sum of in[64 b .. 64 b + 64) to partial[b];
/// the last block sums the partials into out[0]. With `with_atomic` the last block is the one whose
/// atomicAdd on *counter (0 before the launch) returns blocks - 1, after a __threadfence (the Guide's
/// "Memory Fence Functions" example); without it, it is block blocks - 1, which nothing orders after the others.
LaunchError last_block_sum(const int* in, int* partial, unsigned* counter, int* out, int blocks, bool with_atomic);

/// One block of 64 threads: thread 32 writes *data = 7 and sets *flag; thread 0 waits for the flag, then
/// copies *data to *out. With `atomic_flag` the flag is set with atomicExch and polled with atomicAdd(flag, 0);
/// otherwise through volatile accesses with __threadfence (which racecheck cannot tell from plain ones).
LaunchError flag_handshake(int* data, int* flag, int* out, bool atomic_flag);

/// `blocks` blocks of 32 threads: thread t of block b writes (b * 32 + t) & 0xff to bytes[b * 32 + t], one byte
/// each: neighbouring threads and blocks share words, and no two write one byte.
LaunchError byte_per_thread(unsigned char* bytes, int blocks);

/// One block of 2 warps streams `steps` tiles of 8 rows × 16 bytes (tile s: the words in[32 s .. 32 s + 32), 16-byte
/// aligned) through two stages of dynamic shared memory: warp 1's lanes 0..7 copy tile s + 1 by cp.async while warp 0
/// reads tile s by ldmatrix, lane l adding word l of every tile into out[l]. Correct: each step waits for its copies,
/// passes one __syncthreads, then requests the next tile into the stage the step before read. With
/// `refill_before_barrier` the request comes before that barrier (the planted bug: a WAR on the stage).
LaunchError double_buffered_tiles(const unsigned* in, unsigned* out, int steps, bool refill_before_barrier);

/// One block of 64 threads: thread t copies in[4 t .. 4 t + 4) into its 16 bytes of dynamic shared memory by cp.async,
/// passes a __syncthreads, and writes the first word of thread (t + 1) % 64's bytes to out[t]. Correct with `wait`
/// (cp.async.wait_all before the barrier); without it, the planted bug: the neighbour's copy may be in flight.
LaunchError neighbour_copy(const unsigned* in, unsigned* out, bool wait);

}  // namespace simtest
