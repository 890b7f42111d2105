/// \file
/// \brief The row kernels' shared pieces (the norm forward and backward, softmax, GroupNorm): a warp or a block
/// owns a row and walks it in chunks of 16 bytes of the element type; chunk c belongs to thread c mod group in
/// every phase, so a thread only touches its own chunks of its shared-memory slot and phases need no barrier but
/// the reductions'. The order of every per-thread sum (chunks ascending, elements ascending) and of the group's
/// combine (a butterfly, then the warps in order) depends on the row length alone: never on the operands'
/// alignment, which only decides between vector and element accesses.
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "baracuda/core/status.hpp"
#include "core/exec_context.hpp"
#include "device/row_schedule.hpp"
#include "device/shared_bytes.cuh"
#include "device/vector_access.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace rows {

/// Bytes of the block rows' reduction scratch: one 16-byte value per warp.
inline constexpr int64_t kScratchBytes = 16 * (::baracuda::detail::kRowThreads / 32);

/// Shared-memory bytes of one row slot: whole 16-byte chunks, so every slot is 16-byte aligned.
__host__ __device__ constexpr int64_t slot_bytes(int64_t len, int64_t elem_bytes) {
  return (len * elem_bytes + 15) / 16 * 16;
}

/// `__shfl_xor_sync` of any trivially copyable value, 32 bits at a time.
template <class A>
__device__ __forceinline__ A shfl_xor_any(const A& v, int mask) {
  constexpr int kWords = static_cast<int>((sizeof(A) + 3) / 4);
  unsigned w[kWords] = {};
  std::memcpy(w, &v, sizeof(A));
  for (int j = 0; j < kWords; ++j) w[j] = __shfl_xor_sync(0xffffffffu, w[j], mask);
  A r;
  std::memcpy(&r, w, sizeof(A));
  return r;
}

/// The calling thread's place in a row kernel: its group (the block for block rows, else its warp) owns one
/// row at a time — rows `first_row()`, then every `row_step()` — and `lane` is the thread's index in it.
template <bool kBlockRow>
struct RowGroup {
  int size, lane, index;
  int64_t per_block;
  __device__ __forceinline__ RowGroup()
      : size(kBlockRow ? static_cast<int>(blockDim.x) : 32),
        lane(static_cast<int>(threadIdx.x) % size),
        index(static_cast<int>(threadIdx.x) / size),
        per_block(static_cast<int64_t>(blockDim.x) / size) {}
  __device__ __forceinline__ int64_t first_row() const { return static_cast<int64_t>(blockIdx.x) * per_block + index; }
  __device__ __forceinline__ int64_t row_step() const { return static_cast<int64_t>(gridDim.x) * per_block; }
  /// The group's `slot_bytes` of dynamic shared memory, after the block rows' reduction scratch.
  __device__ __forceinline__ unsigned char* slot(unsigned char* smem, int64_t slot_bytes) const {
    return smem + (kBlockRow ? kScratchBytes : 0) + index * slot_bytes;
  }
};

/// Whether `p` can move 16-byte vectors: unit stride and 16-byte aligned.
template <class E>
__device__ __forceinline__ bool vectorizable(const E* p, int64_t step) {
  return step == 1 && reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

/// Chunk c (elements [cV, cV + V) ∩ [0, len)) of a row; the elements past len are `fill`.
template <int V, class T>
__device__ __forceinline__ AlignedVector<T, V> load_chunk(const T* p, int64_t step, bool vec, int64_t c, int64_t len,
                                                          T fill) {
  const int64_t base = c * V;
  if (vec && base + V <= len) return load_vector<V>(p + base);
  AlignedVector<T, V> v;
  for (int j = 0; j < V; ++j) v.val[j] = base + j < len ? p[(base + j) * step] : fill;
  return v;
}

template <int V, class T>
__device__ __forceinline__ void store_chunk(T* p, int64_t step, bool vec, int64_t c, int64_t len,
                                            const AlignedVector<T, V>& v) {
  const int64_t base = c * V;
  if (vec && base + V <= len) return store_vector<V>(p + base, v);
  for (int j = 0; j < V && base + j < len; ++j) p[(base + j) * step] = v.val[j];
}

/// V one-byte values of chunk c: one V-byte store where `p` is unit-stride and V-byte aligned.
template <int V>
__device__ __forceinline__ void store_bytes(unsigned char* p, int64_t step, int64_t c, int64_t len,
                                            const unsigned char (&v)[V]) {
  using Word = std::conditional_t<V == 8, uint64_t, std::conditional_t<V == 4, uint32_t, uint16_t>>;
  const int64_t base = c * V;
  if (step == 1 && reinterpret_cast<uintptr_t>(p + base) % V == 0 && base + V <= len) {
    Word w;
    std::memcpy(&w, v, V);
    *reinterpret_cast<Word*>(p + base) = w;
    return;
  }
  for (int j = 0; j < V && base + j < len; ++j) p[(base + j) * step] = v[j];
}

/// A value combined over the row's group: a butterfly over the warp (every lane ends with the same bits when
/// `combine` is commutative: each step combines the same two values), then for block rows the warps'
/// values in warp order. `scratch` holds one value per warp (kScratchBytes).
template <bool kBlockRow, class A, class Combine>
__device__ __forceinline__ A group_reduce(A v, Combine combine, A* scratch) {
  static_assert(sizeof(A) <= 16, "a warp's value must fit its scratch slot");
  for (int m = 16; m > 0; m /= 2) v = combine(v, shfl_xor_any(v, m));
  if constexpr (kBlockRow) {
    const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    v = scratch[0];
    for (int w = 1; w < static_cast<int>(blockDim.x) / 32; ++w) v = combine(v, scratch[w]);
    __syncthreads();  // scratch is reused by the next reduction
  } else {
    __syncwarp();
  }
  return v;
}

/// The launch geometry of a row kernel: kRowThreads per block, one row per block (block rows) or per warp,
/// at most a few waves of blocks (the kernels loop over rows).
struct RowLaunch {
  dim3 grid, block;
  size_t smem;
};
inline RowLaunch row_launch(int multiprocessors, int64_t num_rows, int64_t slot, bool block_row) {
  constexpr int kThreads = ::baracuda::detail::kRowThreads;
  const int64_t rows_per_block = block_row ? 1 : kThreads / 32;
  const auto smem = static_cast<size_t>(block_row ? kScratchBytes + slot : rows_per_block * slot);
  const int64_t wanted = (num_rows + rows_per_block - 1) / rows_per_block;
  const int64_t per_sm = block_row ? 8 : 4;  // blocks resident per SM at most, by threads and shared memory
  const int64_t cap = static_cast<int64_t>(multiprocessors > 0 ? multiprocessors : 1) * per_sm * 4;
  return {dim3(static_cast<unsigned>(wanted < cap ? (wanted > 0 ? wanted : 1) : cap)),
          dim3(static_cast<unsigned>(kThreads)), smem};
}

/// Launches a row kernel, its block-row or warp-row instance by the schedule of rows of `len` elements with
/// `slot_element` bytes of shared memory per element (the rule select applied), `slot` bytes of slots per row.
template <class P>
::baracuda::Status launch_rows(const ::baracuda::detail::ExecContext& ctx, const P& p, int64_t num_rows, int64_t len,
                               int64_t slot_element, int64_t slot, std::string_view plan, void (*block_kernel)(P),
                               void (*warp_kernel)(P)) {
  using ::baracuda::detail::RowSchedule;
  const RowSchedule sched = ::baracuda::detail::row_schedule(len, slot_element);
  if (sched == RowSchedule::None)
    return ::baracuda::Error::internal(std::string(plan) + ": the row kernel was chosen for rows it does not serve");
  const bool block_row = sched == RowSchedule::BlockPerRow;
  const RowLaunch g = row_launch(ctx.multiprocessor_count, num_rows, slot, block_row);
  auto* kernel = block_row ? block_kernel : warp_kernel;
  BARACUDA_TRY(launch::allow_shared_bytes(kernel, g.smem, plan));
  BARACUDA_LAUNCH(g.grid, g.block, g.smem, ctx.stream, kernel)(p);
  const auto e = launch::take_last_error();
  if (!e.failed) return {};
  return ::baracuda::Error::device(std::string(plan) + ": kernel launch failed: " + e.message, e.code);
}

}  // namespace rows
BARACUDA_DEVICE_NAMESPACE_END
