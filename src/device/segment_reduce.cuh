/// \file
/// \brief The segmented-reduction engine: one result per index of the kept dimensions of a shape, each
/// the reduction over the other dimensions of one or more strided inputs — the reduction counterpart of
/// the elementwise engine (per-token / per-channel / per-group / per-tensor statistics). See
/// docs/segment_reduce.md.
///
/// An op is a `__host__ __device__` functor:
/// ```
///   using Acc = ...;                         // trivially copyable accumulator
///   Acc identity() const;
///   Acc map(TIn... x) const;                 // one element's contribution
///                                            // (or Acc map_at(int64_t r, TIn... x): also given the element's
///                                            //  row-major index r over the reduced dimensions, e.g. argmax)
///   Acc combine(Acc a, Acc b) const;         // associative (need not commute): a covers earlier elements
///   void finish(int64_t segment, Acc acc) const;  // device code: writes the segment's result(s)
/// ```
/// Schedules (segment_reduce_geometry.hpp picks one from the device, the shape and the kept mask):
/// - **warp per segment** (short segments, e.g. per-token rows of a few hundred elements): lane l takes
///   reduced elements l, l+32, …, then a shuffle tree combines the lanes; lane 0 finishes.
/// - **block per segment** (long segments): thread t takes elements t, t+B, …; a shuffle tree per warp,
///   then warp 0 combines the warp results from shared memory; thread 0 finishes.
/// - **two passes** (few long segments, e.g. per-tensor): each segment is cut into `chunks` chunks, one
///   block per (segment, chunk) writes a partial to the workspace; a second kernel, one warp per segment,
///   combines the partials in chunk order and finishes.
/// Every combine happens in an order fixed by the schedule, so results are bit-identical run to run on a
/// given device. Work items are walked by grid-stride loops (no grid-size limit); offsets are 64-bit.
/// Every segment is finished exactly once, with `identity()` when it has no elements.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/status.hpp"
#include "baracuda/core/workspace.hpp"
#include "core/exec_context.hpp"
#include "device/segment_reduce_geometry.hpp"
#include "device/strided_index.cuh"
#include "sim/compat.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace segment_reduce {

inline constexpr int kWarp = 32;

/// Dimensions of one list (kept or reduced), innermost first, with each input's strides.
template <int NIn>
struct DimParams {
  int rank;
  int64_t sizes[kMaxRank];
  int64_t strides[NIn][kMaxRank];
};

template <int NIn>
struct Params {
  DimParams<NIn> kept;
  DimParams<NIn> reduced;
  int64_t segments;
  int64_t reduced_count;
  int64_t chunks;
  int64_t chunk_elements;
};

/// `__shfl_down_sync` of any trivially copyable value, 32 bits at a time.
template <class T>
__device__ __forceinline__ T shfl_down_any(const T& v, int delta) {
  static_assert(std::is_trivially_copyable_v<T>, "accumulators are trivially copyable");
  constexpr int kWords = static_cast<int>((sizeof(T) + 3) / 4);
  unsigned w[kWords] = {};
  std::memcpy(w, &v, sizeof(T));
  BARACUDA_UNROLL
  for (int j = 0; j < kWords; ++j) w[j] = __shfl_down_sync(0xffffffffu, w[j], delta);
  T r;
  std::memcpy(&r, w, sizeof(T));
  return r;
}

/// Combines the 32 lanes' values in lane order (a fixed tree: lower lanes on the left); lane 0 holds the
/// result. Every lane of the warp must call it.
template <class Op, class Acc>
__device__ __forceinline__ Acc warp_reduce(const Op& op, Acc v) {
  BARACUDA_UNROLL
  for (int delta = kWarp / 2; delta > 0; delta /= 2) {
    const Acc other = shfl_down_any(v, delta);
    // Lanes whose partner is past the warp get their own value back; only lane 0's result is used.
    v = op.combine(v, other);
  }
  return v;
}

/// Whether an op takes the element's index (`map_at`).
template <class Op, class = void>
struct maps_with_index : std::false_type {};
template <class Op>
struct maps_with_index<Op, std::void_t<decltype(&Op::map_at)>> : std::true_type {};

/// Element `r`'s contribution: the op's `map_at(r, x...)` where it has one, else `map(x...)`.
template <class Op, class... X>
__device__ __forceinline__ typename Op::Acc map_element(const Op& op, int64_t r, X... x) {
  if constexpr (maps_with_index<Op>::value)
    return op.map_at(r, x...);
  else
    return op.map(x...);
}

/// Thread `t` of a group of `group` threads accumulates reduced elements [begin, end) of segment `seg`
/// with stride `group`, in increasing order.
template <class Op, int NIn, class... TIn, size_t... Is>
__device__ __forceinline__ typename Op::Acc accumulate(const Op& op, const Params<NIn>& p, int64_t seg, int64_t begin,
                                                       int64_t end, int64_t t, int64_t group,
                                                       std::index_sequence<Is...>, const TIn*... in) {
  int64_t base[NIn];
  BARACUDA_UNROLL
  for (int k = 0; k < NIn; ++k) base[k] = 0;
  add_linear_offsets<0>(p.kept, seg, base);
  typename Op::Acc acc = op.identity();
  if (p.reduced.rank <= 1) {  // one reduced dimension (after merging): no division per element
    int64_t stride[NIn];
    BARACUDA_UNROLL
    for (int k = 0; k < NIn; ++k) stride[k] = p.reduced.rank == 1 ? p.reduced.strides[k][0] : 0;
    for (int64_t r = begin + t; r < end; r += group)
      acc = op.combine(acc, map_element(op, r, in[base[Is] + r * stride[Is]]...));
  } else {
    for (int64_t r = begin + t; r < end; r += group) {
      int64_t off[NIn];
      BARACUDA_UNROLL
      for (int k = 0; k < NIn; ++k) off[k] = base[k];
      add_linear_offsets<0>(p.reduced, r, off);
      acc = op.combine(acc, map_element(op, r, in[off[Is]]...));
    }
  }
  return acc;
}

/// Warp per segment, one pass: warp w of the grid takes segments w, w + warps, …
template <class Op, int NIn, class... TIn>
__global__ void warp_segment_kernel(Op op, Params<NIn> p, const TIn*... in) {
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const int64_t warps_per_block = blockDim.x / kWarp;
  const int64_t warp = static_cast<int64_t>(blockIdx.x) * warps_per_block + threadIdx.x / kWarp;
  const int64_t nwarps = static_cast<int64_t>(gridDim.x) * warps_per_block;
  for (int64_t seg = warp; seg < p.segments; seg += nwarps) {
    auto acc = accumulate<Op, NIn, TIn...>(op, p, seg, 0, p.reduced_count, lane, kWarp,
                                           std::index_sequence_for<TIn...>{}, in...);
    acc = warp_reduce(op, acc);
    if (lane == 0) op.finish(seg, acc);
  }
}

/// Block per (segment, chunk): block b of the grid takes work items b, b + blocks, …; item i is chunk
/// i % chunks of segment i / chunks. One pass (`partials` null) finishes the segment; two passes store
/// the chunk's partial at partials[i].
template <class Op, int NIn, class... TIn>
__global__ void block_segment_kernel(Op op, Params<NIn> p, typename Op::Acc* partials, const TIn*... in) {
  using Acc = typename Op::Acc;
  BARACUDA_DYNAMIC_SHARED(Acc, warp_results);
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const int warp = static_cast<int>(threadIdx.x) / kWarp;
  const int nwarps = static_cast<int>(blockDim.x) / kWarp;
  const int64_t items = p.segments * p.chunks;
  for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const int64_t seg = item / p.chunks;
    const int64_t chunk = item - seg * p.chunks;
    const int64_t begin = chunk * p.chunk_elements;
    const int64_t end = begin + p.chunk_elements < p.reduced_count ? begin + p.chunk_elements : p.reduced_count;
    Acc acc = accumulate<Op, NIn, TIn...>(op, p, seg, begin, end, threadIdx.x, blockDim.x,
                                          std::index_sequence_for<TIn...>{}, in...);
    acc = warp_reduce(op, acc);
    if (lane == 0) warp_results[warp] = acc;
    __syncthreads();
    if (warp == 0) {
      acc = lane < nwarps ? warp_results[lane] : op.identity();
      acc = warp_reduce(op, acc);
      if (lane == 0) {
        if (partials != nullptr)
          partials[item] = acc;
        else
          op.finish(seg, acc);
      }
    }
    __syncthreads();  // warp_results is reused by the next item
  }
}

/// Second pass: warp per segment combines its `chunks` partials in chunk order and finishes.
template <class Op>
__global__ void combine_partials_kernel(Op op, const typename Op::Acc* partials, int64_t segments, int64_t chunks) {
  using Acc = typename Op::Acc;
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const int64_t warps_per_block = blockDim.x / kWarp;
  const int64_t warp = static_cast<int64_t>(blockIdx.x) * warps_per_block + threadIdx.x / kWarp;
  const int64_t nwarps = static_cast<int64_t>(gridDim.x) * warps_per_block;
  for (int64_t seg = warp; seg < segments; seg += nwarps) {
    Acc acc = op.identity();
    for (int64_t c = lane; c < chunks; c += kWarp) acc = op.combine(acc, partials[seg * chunks + c]);
    acc = warp_reduce(op, acc);
    if (lane == 0) op.finish(seg, acc);
  }
}

template <int NIn>
DimParams<NIn> dim_params(const typename ::baracuda::detail::SegmentReduceGeometry<NIn>::Dims& d) {
  DimParams<NIn> p{};
  p.rank = d.rank;
  for (int i = 0; i < d.rank; ++i) {
    p.sizes[i] = d.sizes[i];
    for (int k = 0; k < NIn; ++k) p.strides[k][i] = d.strides[k][i];
  }
  return p;
}

inline unsigned grid_blocks(int64_t wanted, const ::baracuda::detail::ExecContext& ctx,
                            const ::baracuda::detail::SegmentReduceTuning& t) {
  const int64_t cap = static_cast<int64_t>(t.max_blocks_per_sm) * (ctx.multiprocessor_count > 0 ? ctx.multiprocessor_count : 1);
  return static_cast<unsigned>(wanted < 1 ? 1 : (wanted < cap ? wanted : cap));
}

inline Status segment_launch_status(std::string_view plan) {
  const auto e = launch::take_last_error();
  if (!e.failed) return {};
  return Error::device(std::string(plan) + ": kernel launch failed: " + e.message, e.code);
}

/// Reduces the inputs `in` (DynTensor views over `shape`, storage types TIn..., any strides, stride 0
/// allowed) over the dimensions of `shape` not in `kept_mask` (bit d = dimension d, outermost first), and
/// calls `op.finish(segment, acc)` once per segment, segments numbered row-major over the kept dimensions.
/// `ws` must hold `segment_reduce_workspace_bytes(ctx, shape, kept_mask, sizeof(Op::Acc))` bytes aligned
/// for Acc (`WorkspaceTooSmall` / `MisalignedOperand` naming `plan` otherwise); launch failures are
/// `DeviceError` naming `plan`.
template <class Op, class... TIn, class... Tensors>
Status launch_segment_reduce(std::string_view plan, const ::baracuda::detail::ExecContext& ctx, const Op& op,
                             const Shape& shape, uint32_t kept_mask, Workspace ws, const Tensors&... in) {
  using Acc = typename Op::Acc;
  constexpr int NIn = static_cast<int>(sizeof...(TIn));
  static_assert(NIn >= 1, "at least one input");
  static_assert(sizeof...(TIn) == sizeof...(Tensors), "one DynTensor per input type");
  static_assert(((std::is_same_v<Tensors, ConstDynTensor> || std::is_same_v<Tensors, DynTensor>) && ...),
                "inputs are erased views");
  static_assert(std::is_trivially_copyable_v<Acc>, "the accumulator is trivially copyable");

  const ::baracuda::detail::SegmentReduceSchedule s = ::baracuda::detail::segment_reduce_schedule(ctx, shape, kept_mask);
  if (s.segments == 0) return {};
  const ::baracuda::detail::SegmentReduceTuning& t = ::baracuda::detail::segment_reduce_tuning(ctx);

  const std::array<const int64_t*, NIn> strides{in.stride.data()...};
  const auto g = ::baracuda::detail::segment_reduce_geometry<NIn>(shape, kept_mask, strides);
  Params<NIn> p{};
  p.kept = dim_params<NIn>(g.kept);
  p.reduced = dim_params<NIn>(g.reduced);
  p.segments = s.segments;
  p.reduced_count = s.reduced;
  p.chunks = s.chunks;
  p.chunk_elements = s.chunk_elements;

  const dim3 block(static_cast<unsigned>(s.threads_per_block));
  const int64_t warps_per_block = s.threads_per_block / kWarp;
  if (!s.block_per_segment) {
    const dim3 grid(grid_blocks((s.segments + warps_per_block - 1) / warps_per_block, ctx, t));
    BARACUDA_LAUNCH(grid, block, 0, ctx.stream, warp_segment_kernel<Op, NIn, TIn...>)
    (op, p, static_cast<const TIn*>(in.data)...);
    return segment_launch_status(plan);
  }

  const size_t smem = static_cast<size_t>(warps_per_block) * sizeof(Acc);
  Acc* partials = nullptr;
  if (s.two_pass()) {
    const size_t needed = static_cast<size_t>(s.segments) * static_cast<size_t>(s.chunks) * sizeof(Acc);
    if (ws.size < needed || ws.data == nullptr)
      return Error::workspace_too_small(std::string(plan) + ": the segmented reduction needs " +
                                            std::to_string(needed) + " bytes of workspace; got " +
                                            std::to_string(ws.data == nullptr ? 0 : ws.size),
                                        needed, ws.data == nullptr ? 0 : ws.size);
    if (reinterpret_cast<uintptr_t>(ws.data) % alignof(Acc) != 0)
      return Error::misaligned(std::string(plan) + ": the workspace is not aligned to " +
                               std::to_string(alignof(Acc)) + " bytes");
    partials = static_cast<Acc*>(ws.data);
  }
  const dim3 grid(grid_blocks(s.segments * s.chunks, ctx, t));
  BARACUDA_LAUNCH(grid, block, smem, ctx.stream, block_segment_kernel<Op, NIn, TIn...>)
  (op, p, partials, static_cast<const TIn*>(in.data)...);
  BARACUDA_TRY(segment_launch_status(plan));
  if (!s.two_pass()) return {};
  const dim3 grid2(grid_blocks((s.segments + warps_per_block - 1) / warps_per_block, ctx, t));
  BARACUDA_LAUNCH(grid2, block, 0, ctx.stream, combine_partials_kernel<Op>)
  (op, static_cast<const Acc*>(partials), s.segments, s.chunks);
  return segment_launch_status(plan);
}

}  // namespace segment_reduce
BARACUDA_DEVICE_NAMESPACE_END
