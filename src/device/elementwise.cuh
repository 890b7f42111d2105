/// \file
/// \brief The elementwise engine: `out[i] = op(in_0[i], …, in_{k-1}[i])` for any number of inputs (0 for
/// fill, 1 for cast/affine/unary math, 2–3 for binary/ternary ops), over raw pointers, extents and element
/// strides of rank ≤ 8. See docs/elementwise.md.
///
/// Paths, chosen per call by `launch_elementwise` from the coalesced geometry (elementwise_geometry.hpp):
/// - **row-vector**: every operand dense in the innermost coalesced dimension (or, for an input, constant
///   along it: a per-row scale), every outer stride a multiple of the vector width and every pointer
///   16-byte aligned. Each thread moves one `AlignedVector`
///   per operand (16 bytes of the narrowest operand, so wider operands take several 128-bit accesses),
///   then each row's scalar tail. A dense tensor is one row; padded rows (the halves of a gated
///   activation's input) and row-broadcast inputs (a bias) are several.
/// - **strided**: anything else, unaligned pointers included: any strides (stride 0 broadcasts an input;
///   negative strides are walked as given), the linear index decomposed over the coalesced dimensions;
///   32-bit index arithmetic when the element count and every operand's offsets fit in int32, 64-bit
///   otherwise.
/// All loops are grid-stride loops, so the grid size (elementwise_tuning.hpp) only affects speed.
///
/// An op is a `__host__ __device__` functor `TOut operator()(TIn... x) const` that computes in opmath
/// (f32 for 16/8-bit floats, f64 for f64) and rounds once to TOut; a functor with K > 1 outputs of one
/// type (a backward writing dA and dB) returns `Results<TOut, K>`. Aliasing: an input may be an output
/// (same pointer, same strides); each element is read and written by the same thread, inputs first.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/status.hpp"
#include "core/exec_context.hpp"
#include "device/elementwise_geometry.hpp"
#include "device/elementwise_tuning.hpp"
#include "device/strided_index.cuh"
#include "device/vector_access.cuh"
#include "sim/compat.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace elementwise {

/// Elements per thread per iteration of the vectorized path: 16 bytes of the narrowest operand.
template <class TOut, class... TIn>
inline constexpr int kVecElems = static_cast<int>(16 / std::min({sizeof(TOut), sizeof(TIn)...}));

/// What a functor with K > 1 outputs returns: one value per output, in output order. (A single-output
/// functor returns its value directly.)
template <class T, int K>
struct Results {
  T v[K];
};

/// The K output pointers of a launch.
template <class T, int K>
struct OutPointers {
  T* p[K];
};

/// Kernel parameters of the strided path: the coalesced geometry in IndexT, innermost dimension first.
/// Operands are the K outputs, then the inputs.
template <class IndexT, int NArgs>
struct StridedParams {
  int rank;
  IndexT sizes[kMaxRank];
  IndexT strides[NArgs][kMaxRank];
};

/// Writes a functor's result for element `i` of output k at out.p[k] + offset(k).
template <int K, class TOut, class R, class Offset>
__device__ __forceinline__ void store_results(const OutPointers<TOut, K>& out, const R& r, Offset offset) {
  if constexpr (K == 1) {
    out.p[0][offset(0)] = r;
  } else {
    BARACUDA_UNROLL
    for (int k = 0; k < K; ++k) out.p[k][offset(k)] = r.v[k];
  }
}

template <int V, int K, class Op, class TOut, class Offset, class... Vecs>
__device__ __forceinline__ void apply_vectors(const Op& op, const OutPointers<TOut, K>& out, Offset offset,
                                              const Vecs&... in) {
  AlignedVector<TOut, V> r[K];
  BARACUDA_UNROLL
  for (int j = 0; j < V; ++j) {
    const auto res = op(in.val[j]...);
    if constexpr (K == 1) {
      r[0].val[j] = res;
    } else {
      BARACUDA_UNROLL
      for (int k = 0; k < K; ++k) r[k].val[j] = res.v[k];
    }
  }
  BARACUDA_UNROLL
  for (int k = 0; k < K; ++k) store_vector<V>(out.p[k] + offset(k), r[k]);
}

/// V elements of an input at `p`: a 16-byte-aligned vector load, or — for an input constant along the row
/// (`splat`) — one element repeated.
template <int V, class T>
__device__ __forceinline__ AlignedVector<T, V> load_or_splat(const T* p, bool splat) {
  if (!splat) return load_vector<V>(p);
  AlignedVector<T, V> r;
  const T v = *p;
  BARACUDA_UNROLL
  for (int j = 0; j < V; ++j) r.val[j] = v;
  return r;
}

template <int V, class Op, int K, int N, class TOut, class... TIn, size_t... Is>
__device__ __forceinline__ void apply_vector_at(const Op& op, const int64_t (&off)[N], std::index_sequence<Is...>,
                                                uint32_t row_broadcast, const OutPointers<TOut, K>& out,
                                                const TIn*... in) {
  apply_vectors<V, K>(op, out, [&off](int k) { return off[k]; },
                      load_or_splat<V>(in + off[K + Is], ((row_broadcast >> Is) & 1u) != 0)...);
}

template <class Op, int K, class IndexT, int NArgs, class TOut, class... TIn, size_t... Is>
__device__ __forceinline__ void apply_at(const Op& op, const IndexT (&off)[NArgs], std::index_sequence<Is...>,
                                         const OutPointers<TOut, K>& out, const TIn*... in) {
  store_results<K>(out, op(in[off[K + Is]]...), [&off](int k) { return off[k]; });
}

/// Rows of 16-byte vectors (`row_vectorizable` geometry, 16-byte-aligned pointers): `rows` rows of
/// `p.sizes[0]` dense elements, each walked as `vectors_per_row` `AlignedVector`s and then a scalar tail of
/// `tail_per_row` elements. A dense tensor is the one-row case; padded rows (a gated activation's halves)
/// and row-broadcast inputs (a bias) are the others. Consecutive threads take consecutive vectors of a row,
/// so accesses coalesce. Inputs flagged in `row_broadcast` (bit i: input i has stride 0 along the row) are
/// read as one element per vector. Every input of an element is loaded before any output of it is stored.
template <class Op, int K, class TOut, class... TIn>
__global__ void row_vector_kernel(Op op, StridedParams<int64_t, K + sizeof...(TIn)> p, int64_t rows,
                                  int64_t vectors_per_row, int64_t tail_per_row, uint32_t row_broadcast,
                                  OutPointers<TOut, K> out, const TIn*... in) {
  constexpr int V = kVecElems<TOut, TIn...>;
  constexpr int N = K + static_cast<int>(sizeof...(TIn));
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t nthreads = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t nvec = rows * vectors_per_row;
  // 32-bit division whenever the vector count allows (the usual case): 64-bit division is emulated.
  const bool narrow = nvec <= static_cast<int64_t>(UINT32_MAX);
  for (int64_t v = tid; v < nvec; v += nthreads) {
    int64_t row = 0, col = v;
    if (rows > 1) {
      row = narrow ? static_cast<int64_t>(static_cast<uint32_t>(v) / static_cast<uint32_t>(vectors_per_row))
                   : v / vectors_per_row;
      col = v - row * vectors_per_row;
    }
    int64_t off[N];
    BARACUDA_UNROLL
    for (int k = 0; k < N; ++k) off[k] = col * V * p.strides[k][0];  // stride 1, or 0 for a row broadcast
    add_linear_offsets<1>(p, row, off);  // dimensions 1.. of the row geometry; 0 is the dense row
    apply_vector_at<V, Op, K>(op, off, std::index_sequence_for<TIn...>{}, row_broadcast, out, in...);
  }
  const int64_t ntail = rows * tail_per_row;
  for (int64_t t = tid; t < ntail; t += nthreads) {
    const int64_t row = t / tail_per_row;
    int64_t off[N];
    BARACUDA_UNROLL
    for (int k = 0; k < N; ++k) off[k] = (vectors_per_row * V + (t - row * tail_per_row)) * p.strides[k][0];
    add_linear_offsets<1>(p, row, off);
    apply_at<Op, K>(op, off, std::index_sequence_for<TIn...>{}, out, in...);
  }
}

/// Any strides: each linear index is decomposed over the coalesced dimensions (innermost first).
template <class Op, int K, class IndexT, class TOut, class... TIn>
__global__ void strided_kernel(Op op, StridedParams<IndexT, K + sizeof...(TIn)> p, std::make_unsigned_t<IndexT> n,
                               OutPointers<TOut, K> out, const TIn*... in) {
  using U = std::make_unsigned_t<IndexT>;
  constexpr int N = K + static_cast<int>(sizeof...(TIn));
  const U tid = static_cast<U>(blockIdx.x) * blockDim.x + threadIdx.x;
  const U nthreads = static_cast<U>(gridDim.x) * blockDim.x;
  for (U i = tid; i < n; i += nthreads) {
    IndexT off[N];
    BARACUDA_UNROLL
    for (int k = 0; k < N; ++k) off[k] = 0;
    U rem = i;
    BARACUDA_UNROLL
    for (int d = 0; d < kMaxRank; ++d) {
      if (d == p.rank) break;
      const U size = static_cast<U>(p.sizes[d]);
      const U c = rem % size;
      rem /= size;
      BARACUDA_UNROLL
      for (int k = 0; k < N; ++k) off[k] += static_cast<IndexT>(c) * p.strides[k][d];
    }
    apply_at<Op, K>(op, off, std::index_sequence_for<TIn...>{}, out, in...);
  }
}

inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

inline ::baracuda::detail::ElementwiseTuning tuning_for(const ::baracuda::detail::ExecContext& ctx) {
  return ctx.device == DeviceKind::Sim ? ::baracuda::detail::kElementwiseTuningSim
                                       : ::baracuda::detail::elementwise_tuning_for_sm(ctx.sm);
}

inline unsigned grid_for(const ::baracuda::detail::ElementwiseTuning& t, const ::baracuda::detail::ExecContext& ctx,
                         int64_t work) {
  const int64_t per_block = static_cast<int64_t>(t.threads_per_block) * t.items_per_thread;
  const int64_t wanted = (work + per_block - 1) / per_block;
  const int64_t cap = static_cast<int64_t>(t.max_blocks_per_sm) * std::max(1, ctx.multiprocessor_count);
  return static_cast<unsigned>(std::clamp<int64_t>(wanted, 1, cap));
}

template <class IndexT, int NArgs>
StridedParams<IndexT, NArgs> strided_params(const ::baracuda::detail::ElementwiseGeometry<NArgs>& g) {
  StridedParams<IndexT, NArgs> p{};
  p.rank = g.rank;
  for (int d = 0; d < g.rank; ++d) {
    p.sizes[d] = static_cast<IndexT>(g.sizes[d]);
    for (int k = 0; k < NArgs; ++k) p.strides[k][d] = static_cast<IndexT>(g.strides[k][d]);
  }
  return p;
}

inline Status launch_status(std::string_view plan) {
  const auto e = launch::take_last_error();
  if (!e.failed) return {};
  return Error::device(std::string(plan) + ": kernel launch failed: " + e.message, e.code);
}

/// Runs `(out_0, …, out_{K-1}) = op(in...)` elementwise on the context's device (cuda or sim). Outputs and
/// inputs are views already validated by the plan (same shape — inputs may broadcast with stride 0 —,
/// storage types TOut / TIn..., in place only with equal strides). A functor with K > 1 returns
/// `Results<TOut, K>`. Returns the launch error, if any, as `DeviceError` naming `plan`.
template <class Op, int K, class TOut, class... TIn, class... Tensors>
Status launch_elementwise_multi(std::string_view plan, const ::baracuda::detail::ExecContext& ctx, const Op& op,
                                const std::array<DynTensor, K>& outs, const Tensors&... in) {
  static_assert(K >= 1, "at least one output");
  static_assert(sizeof...(TIn) == sizeof...(Tensors), "one DynTensor per input type");
  static_assert(((std::is_same_v<Tensors, ConstDynTensor> || std::is_same_v<Tensors, DynTensor>) && ...),
                "inputs are erased views");
  constexpr int N = K + static_cast<int>(sizeof...(TIn));
  std::array<const int64_t*, N> strides{};
  for (int k = 0; k < K; ++k) strides[k] = outs[k].stride.data();
  if constexpr (sizeof...(TIn) > 0) {
    const std::array<const int64_t*, sizeof...(TIn)> in_strides{in.stride.data()...};
    for (size_t i = 0; i < in_strides.size(); ++i) strides[K + i] = in_strides[i];
  }
  const ::baracuda::detail::ElementwiseGeometry<N> g = ::baracuda::detail::coalesce<N>(outs[0].shape, strides);
  if (g.numel == 0) return {};

  const ::baracuda::detail::ElementwiseTuning t = tuning_for(ctx);
  const dim3 block(static_cast<unsigned>(t.threads_per_block));
  OutPointers<TOut, K> o{};
  bool outs_aligned = true;
  for (int k = 0; k < K; ++k) {
    o.p[k] = static_cast<TOut*>(outs[k].data);
    outs_aligned = outs_aligned && aligned16(o.p[k]);
  }

  constexpr int V = kVecElems<TOut, TIn...>;
  // Inputs constant along the row are read one element per vector and need no alignment.
  static_assert(sizeof...(TIn) <= 32, "row_broadcast has one bit per input");
  uint32_t row_broadcast = 0;
  bool ins_aligned = true;
  if constexpr (sizeof...(TIn) > 0) {
    const std::array<const void*, sizeof...(TIn)> in_data{in.data...};
    for (size_t i = 0; i < in_data.size(); ++i) {
      const bool splat = g.rank > 0 && g.strides[K + i][0] == 0;
      row_broadcast |= splat ? (1u << i) : 0u;  // lint: shift < width: i < sizeof...(TIn) <= 32
      ins_aligned = ins_aligned && (splat || aligned16(in_data[i]));
    }
  }
  if (outs_aligned && ins_aligned && g.row_vectorizable(V, K)) {
    const int64_t cols = g.sizes[0];
    const int64_t rows = g.numel / cols;
    const int64_t vectors_per_row = cols / V, tail_per_row = cols % V;
    const dim3 grid(grid_for(t, ctx, rows * (vectors_per_row + tail_per_row)));
    BARACUDA_LAUNCH(grid, block, 0, ctx.stream, row_vector_kernel<Op, K, TOut, TIn...>)
    (op, strided_params<int64_t>(g), rows, vectors_per_row, tail_per_row, row_broadcast, o,
     static_cast<const TIn*>(in.data)...);
  } else if (g.fits_int32()) {
    const dim3 grid(grid_for(t, ctx, g.numel));
    BARACUDA_LAUNCH(grid, block, 0, ctx.stream, strided_kernel<Op, K, int32_t, TOut, TIn...>)
    (op, strided_params<int32_t>(g), static_cast<uint32_t>(g.numel), o, static_cast<const TIn*>(in.data)...);
  } else {
    const dim3 grid(grid_for(t, ctx, g.numel));
    BARACUDA_LAUNCH(grid, block, 0, ctx.stream, strided_kernel<Op, K, int64_t, TOut, TIn...>)
    (op, strided_params<int64_t>(g), static_cast<uint64_t>(g.numel), o, static_cast<const TIn*>(in.data)...);
  }
  return launch_status(plan);
}

/// Runs `out = op(in...)` elementwise: `launch_elementwise_multi` with one output.
template <class Op, class TOut, class... TIn, class... Tensors>
Status launch_elementwise(std::string_view plan, const ::baracuda::detail::ExecContext& ctx, const Op& op,
                          const DynTensor& out, const Tensors&... in) {
  return launch_elementwise_multi<Op, 1, TOut, TIn...>(plan, ctx, op, std::array<DynTensor, 1>{out}, in...);
}

}  // namespace elementwise
BARACUDA_DEVICE_NAMESPACE_END
