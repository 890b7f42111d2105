// Device code of the dynamic-range family: the two-pass path's first pass (each segment's (min, max) by the
// segmented reduction engine, turned into (scale, zero point) — and the Vllm symmetric multiplier — by the
// convention of dynamic_range_quantize.hpp in opmath: f32, or f64 for f64 x), and the fused single-pass row
// kernel, which reuses the same RangeOp for the parameters and the quantize step.
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <cfloat>
#include <climits>
#include <cstdint>
#include <type_traits>

#include "device/convert.cuh"
#include "device/segment_reduce.cuh"
#include "device/row_chunks.cuh"
#include "device/vector_access.cuh"
#include "ops/dynamic_range/dispatch.hpp"
#include "ops/quantize/functors.cuh"
#include "ops/quantize/tables.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace dynamic_range {

/// Offsets of a dense parameter index in the scale and zero-point tensors (their own strides).
struct ParamOffsets {
  int rank;
  int64_t sizes[kMaxRank];
  int64_t scale_stride[kMaxRank];
  int64_t zp_stride[kMaxRank];
};

/// (min, max) of a segment, then its (scale, zero point) — and for the Vllm convention's symmetric mode the
/// multiplier the quantize step uses — by the formulas of dynamic_range_quantize.hpp. PyTorch and Exact
/// propagate NaN through (min, max); Vllm skips it (`map` turns a NaN into the identity, vLLM's fminf /
/// fmaxf starting values ±FLT_MAX), so `combine` itself never meets a NaN there.
template <class T>
struct RangeOp {
  using M = convert::opmath_t<T>;  // f32, or f64 for f64
  struct Acc {
    M lo, hi;
  };
  M* scale;
  int32_t* zero_point;
  M* multiplier;  ///< dense over the parameter shape, or nullptr (written when set)
  ParamOffsets params;
  bool symmetric;
  int32_t qmin, qmax;
  QuantConvention convention;

  __host__ __device__ bool vllm() const { return convention == QuantConvention::Vllm; }
  __host__ __device__ Acc identity() const {
    if (vllm()) return {static_cast<M>(FLT_MAX), static_cast<M>(-FLT_MAX)};
    return {static_cast<M>(INFINITY), static_cast<M>(-INFINITY)};
  }
  __host__ __device__ Acc map(T x) const {
    const M v = convert::to_opmath(x);
    if (v != v && vllm()) return identity();
    return {v, v};
  }
  /// NaN wins (either side); otherwise the smaller / larger value.
  __host__ __device__ Acc combine(Acc a, Acc b) const {
    return {(a.lo != a.lo || a.lo < b.lo) ? a.lo : b.lo, (a.hi != a.hi || a.hi > b.hi) ? a.hi : b.hi};
  }
  /// A segment's parameters: the scale and zero point written out, and the operand the quantize step takes
  /// with `range()` (the scale, or the Vllm symmetric multiplier).
  struct Params {
    M s;
    int32_t zp;
    M operand;
  };
  /// The quantize step of the convention (quant_convention.hpp), over `Params::operand`.
  __host__ __device__ quantize::Range<M> range() const {
    if (vllm() && symmetric) return {qmin, qmax, quantize::Scaling::Multiply, false};
    return quantize::static_range<M>(convention, qmin, qmax);
  }
  /// vLLM's formulas (dynamic_range_quantize.hpp), over the NaN-free (lo, hi).
  __device__ Params vllm_params_of(Acc acc) const {
    if (symmetric) {
      M amax = -acc.lo > acc.hi ? -acc.lo : acc.hi;
      if (!(amax > M(0))) amax = M(0);  // +0: vLLM's fabsf / fmaxf from 0
      const M mult = amax == M(0) ? M(0) : static_cast<M>(qmax) / amax;
      return {amax / static_cast<M>(qmax), 0, mult};
    }
    M d = acc.hi - acc.lo;
    if (d == M(0)) d = M(0);  // +0 whatever the zeros' signs (−0 < +0 in the reduction order)
    const M s = d / static_cast<M>(qmax - qmin);
    M z;
    if constexpr (std::is_same_v<M, double>)
      z = rint(static_cast<M>(qmin) - acc.lo / s);
    else
      z = rintf(static_cast<M>(qmin) - acc.lo / s);
    return {s, convert::float_to_int<int32_t>(z), s};  // cvt.rzi.s32: saturating, NaN → 0
  }
  /// A segment's (scale, zero point) from its (min, max): the convention's formulas, the one place they are
  /// written (the two-pass path's `finish` and the fused row kernel both call it).
  __device__ Params params_of(Acc acc) const {
    if (vllm()) return vllm_params_of(acc);
    M s;
    int32_t zp = 0;
    if (acc.lo != acc.lo || acc.hi != acc.hi) {
      s = static_cast<M>(NAN);  // a canonical NaN, whichever element held one
    } else {
      const M lo = acc.lo < M(0) ? acc.lo : M(0);  // the range widened to include 0 (+0, never −0)
      const M hi = acc.hi > M(0) ? acc.hi : M(0);
      if (symmetric) {
        const M amax = -lo > hi ? -lo : hi;
        s = amax / static_cast<M>(qmax);
      } else {
        s = (hi - lo) / static_cast<M>(qmax - qmin);
      }
      if (s == M(0)) {
        s = M(1);  // all-zero or empty segment, or a range whose scale underflows
      } else if (!symmetric && s - s == M(0)) {  // finite s: an infinite one keeps zp = 0
        M r;                                     // half to even; |lo / s| ≤ qmax − qmin
        if constexpr (std::is_same_v<M, double>)
          r = rint(lo / s);
        else
          r = rintf(lo / s);
        const int64_t z = static_cast<int64_t>(qmin) - convert::float_to_int<int64_t>(r);
        zp = static_cast<int32_t>(z < qmin ? qmin : (z > qmax ? qmax : z));
      }
    }
    return {s, zp, s};
  }
  /// Stores segment `segment`'s parameters (row-major over the parameter shape) at their strided places.
  __device__ void write(int64_t segment, Params prm) const {
    int64_t so = 0, zo = 0, i = segment;
    for (int d = params.rank - 1; d >= 0; --d) {
      const int64_t c = i % params.sizes[d];
      i /= params.sizes[d];
      so += c * params.scale_stride[d];
      zo += c * params.zp_stride[d];
    }
    scale[so] = prm.s;
    zero_point[zo] = prm.zp;
    if (multiplier != nullptr) multiplier[segment] = prm.operand;
  }
  __device__ void finish(int64_t segment, Acc acc) const { write(segment, params_of(acc)); }
};

/// The parameter-pass fields of a RangeOp from a launch (everything but the reduction).
template <class T>
RangeOp<T> range_op_of(const ::baracuda::detail::DynamicRangeLaunch& a) {
  using M = convert::opmath_t<T>;
  RangeOp<T> op{};
  op.scale = static_cast<M*>(a.scale.data);
  op.zero_point = static_cast<int32_t*>(a.zero_point.data);
  op.multiplier = static_cast<M*>(a.multiplier.data);
  op.params.rank = a.layout.param_shape.rank;
  for (int d = 0; d < op.params.rank; ++d) {
    op.params.sizes[d] = a.layout.param_shape.dims[d];
    op.params.scale_stride[d] = a.scale.stride[d];
    op.params.zp_stride[d] = a.zero_point.stride[d];
  }
  op.symmetric = a.mode == DynamicRangeMode::Symmetric;
  op.qmin = a.qmin;
  op.qmax = a.qmax;
  op.convention = a.convention;
  return op;
}

template <class T>
Status params_launch(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::DynamicRangeLaunch& a) {
  const RangeOp<T> op = range_op_of<T>(a);
  return segment_reduce::launch_segment_reduce<RangeOp<T>, T>("DynamicRangeQuantizePlan", ctx, op, a.layout.iter,
                                                              a.layout.param_dims_mask(), a.workspace,
                                                              a.layout.data_view(a.x));
}


// ---------------------------------------------------------------------------------------------------------
// The fused single-pass path: a warp (short rows) or the whole block (long rows) owns a row of iter's last
// dimension. It copies the row into its shared-memory slot (16-byte vector loads when x is unit-stride and
// the row 16-byte aligned, else element loads), reducing (min, max) on the way; combines the lanes
// (butterfly: every lane ends with the row's range, which is independent of the combine order once the
// parameters are computed — NaN is canonicalised and ±0 widen to +0; under Vllm a zero amax or range is
// +0); computes (s, zp, and vLLM's multiplier) with RangeOp::params_of; writes them; then quantizes from
// shared memory with the quantize family's functors and the convention's step (RangeOp::range) and writes
// q (16-byte vector stores when q is unit-stride and aligned). Offsets are 64-bit.

/// The rows: iter's dimensions but the last, with x's and q's strides (q in bytes for packed kinds).
struct RowDims {
  int rank;
  int64_t sizes[kMaxRank];
  int64_t x_stride[kMaxRank];
  int64_t q_stride[kMaxRank];
};

template <class T>
struct FusedRows {
  RangeOp<T> op;
  const T* x;
  void* q;
  RowDims rows;
  int64_t num_rows;
  int64_t len;     ///< elements per row
  int64_t x_step;  ///< x's stride along the row
  int64_t q_step;  ///< q's stride along the row (packed: bytes, always 1)
  int64_t slot_bytes;
};


template <class T, class TQ, bool kBlockRow>
__global__ void fused_rows_kernel(FusedRows<T> p) {
  using Acc = typename RangeOp<T>::Acc;
  constexpr bool kPacked = std::is_same_v<TQ, int4x2_t> || std::is_same_v<TQ, uint4x2_t>;
  using Out = std::conditional_t<kPacked, uint8_t, TQ>;  // one stored unit: a byte (pair) or an element
  constexpr int kOutPer = kPacked ? 2 : 1;                // elements per stored unit
  constexpr int V = 16 / static_cast<int>(sizeof(T));     // x elements per 16-byte load
  constexpr int W = 16 / static_cast<int>(sizeof(Out));   // stored units per 16-byte store
  constexpr int64_t kAccBytes = (static_cast<int64_t>(sizeof(Acc)) * (::baracuda::detail::kFusedThreads / 32) + 15) / 16 * 16;
  BARACUDA_DYNAMIC_SHARED(unsigned char, smem);
  const RangeOp<T>& op = p.op;
  const int group = kBlockRow ? static_cast<int>(blockDim.x) : 32;
  const int t = static_cast<int>(threadIdx.x) % group;
  const int g = static_cast<int>(threadIdx.x) / group;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int nwarps = static_cast<int>(blockDim.x) / 32;
  const int64_t groups_per_block = blockDim.x / group;
  Acc* warp_acc = reinterpret_cast<Acc*>(smem);
  T* row = reinterpret_cast<T*>(smem + (kBlockRow ? kAccBytes : 0) + g * p.slot_bytes);

  for (int64_t r = static_cast<int64_t>(blockIdx.x) * groups_per_block + g; r < p.num_rows;
       r += static_cast<int64_t>(gridDim.x) * groups_per_block) {
    int64_t xo = 0, qo = 0, i = r;
    for (int d = p.rows.rank - 1; d >= 0; --d) {
      const int64_t c = i % p.rows.sizes[d];
      i /= p.rows.sizes[d];
      xo += c * p.rows.x_stride[d];
      qo += c * p.rows.q_stride[d];
    }
    // 1. The row into shared memory, reducing on the way.
    const T* xr = p.x + xo;
    Acc acc = op.identity();
    int64_t done = 0;
    if (p.x_step == 1 && reinterpret_cast<uintptr_t>(xr) % 16 == 0) {
      const int64_t nv = p.len / V;
      for (int64_t v = t; v < nv; v += group) {
        const AlignedVector<T, V> vec = load_vector<V>(xr + v * V);
        store_vector<V>(row + v * V, vec);
        for (int j = 0; j < V; ++j) acc = op.combine(acc, op.map(vec.val[j]));
      }
      done = nv * V;
    }
    for (int64_t e = done + t; e < p.len; e += group) {
      const T v = xr[e * p.x_step];
      row[e] = v;
      acc = op.combine(acc, op.map(v));
    }
    // 2. The row's range on every thread of its group.
    for (int m = 16; m > 0; m /= 2) acc = op.combine(acc, rows::shfl_xor_any(acc, m));
    if constexpr (kBlockRow) {
      if (lane == 0) warp_acc[warp] = acc;
      __syncthreads();  // also publishes the row slot
      acc = warp_acc[0];
      for (int w = 1; w < nwarps; ++w) acc = op.combine(acc, warp_acc[w]);
    } else {
      __syncwarp();
    }
    // 3. Parameters (the convention's single implementation), written by the group's first thread.
    const typename RangeOp<T>::Params prm = op.params_of(acc);
    if (t == 0) op.write(r, prm);
    // 4. Quantize from shared memory with the convention's step (the scale, or vLLM's multiplier).
    const auto range = op.range();
    const auto unit = [&](int64_t u) -> Out {
      if constexpr (kPacked)
        return quantize::QuantizePairOp<T>{range}(row[2 * u], row[2 * u + 1], prm.operand, prm.operand, prm.zp,
                                                   prm.zp);
      else
        return quantize::QuantizeOp<T, TQ>{range}(row[u], prm.operand, prm.zp);
    };
    Out* qr = static_cast<Out*>(p.q) + qo;
    const int64_t units = p.len / kOutPer;
    done = 0;
    if (p.q_step == 1 && reinterpret_cast<uintptr_t>(qr) % 16 == 0) {
      const int64_t nv = units / W;
      for (int64_t v = t; v < nv; v += group) {
        AlignedVector<Out, W> out;
        for (int j = 0; j < W; ++j) out.val[j] = unit(v * W + j);
        store_vector<W>(qr + v * W, out);
      }
      done = nv * W;
    }
    for (int64_t u = done + t; u < units; u += group) qr[u * p.q_step] = unit(u);
    if constexpr (kBlockRow)
      __syncthreads();  // the slot and warp_acc are reused by the next row
    else
      __syncwarp();
  }
}

template <class T, class TQ>
Status fused_launch(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::DynamicRangeLaunch& a) {
  using ::baracuda::detail::FusedRowSchedule;
  constexpr bool kPacked = std::is_same_v<TQ, int4x2_t> || std::is_same_v<TQ, uint4x2_t>;
  const auto& L = a.layout;
  const FusedRowSchedule sched = ::baracuda::detail::fused_row_schedule(L, sizeof(T));
  if (sched == FusedRowSchedule::None)
    return Error::internal("DynamicRangeQuantizePlan: the fused path was chosen for a layout it does not serve");
  FusedRows<T> p{};
  p.op = range_op_of<T>(a);
  p.op.multiplier = nullptr;  // the multiplier stays in registers
  const ConstDynTensor x = L.data_view(a.x);
  const DynTensor q = kPacked ? ::baracuda::detail::packed_bytes_view(L, a.y) : L.data_view(a.y);
  const int r = L.iter.rank;
  p.x = static_cast<const T*>(x.data);
  p.q = q.data;
  p.rows.rank = r - 1;
  p.num_rows = 1;
  for (int d = 0; d < r - 1; ++d) {
    p.rows.sizes[d] = L.iter[d];
    p.rows.x_stride[d] = x.stride[d];
    p.rows.q_stride[d] = q.stride[d];
    p.num_rows *= L.iter[d];
  }
  p.len = L.iter[r - 1];
  p.x_step = x.stride[r - 1];
  p.q_step = q.stride[r - 1];
  p.slot_bytes = ::baracuda::detail::fused_row_slot_bytes(p.len, sizeof(T));
  if (p.num_rows == 0) return {};
  constexpr int kWarps = ::baracuda::detail::kFusedThreads / 32;
  const bool block_row = sched == FusedRowSchedule::BlockPerRow;
  const int64_t rows_per_block = block_row ? 1 : kWarps;
  const size_t smem = static_cast<size_t>(
      block_row ? (static_cast<int64_t>(sizeof(typename RangeOp<T>::Acc)) * kWarps + 15) / 16 * 16 + p.slot_bytes
                : kWarps * p.slot_bytes);
  const int64_t wanted = (p.num_rows + rows_per_block - 1) / rows_per_block;
  const int64_t cap = static_cast<int64_t>(ctx.multiprocessor_count > 0 ? ctx.multiprocessor_count : 1) * 32;
  const dim3 grid(static_cast<unsigned>(wanted < cap ? wanted : cap));
  const dim3 block(static_cast<unsigned>(::baracuda::detail::kFusedThreads));
  if (block_row)
    BARACUDA_LAUNCH(grid, block, smem, ctx.stream, fused_rows_kernel<T, TQ, true>)(p);
  else
    BARACUDA_LAUNCH(grid, block, smem, ctx.stream, fused_rows_kernel<T, TQ, false>)(p);
  const auto e = launch::take_last_error();
  if (!e.failed) return {};
  return Error::device(std::string("DynamicRangeQuantizePlan: kernel launch failed: ") + e.message, e.code);
}

constexpr ::baracuda::detail::DynamicRangeFusedTable make_fused_table() {
  ::baracuda::detail::DynamicRangeFusedTable t{};
  ::baracuda::detail::add_kind_pair_fns(
      t, ::baracuda::detail::DynamicRangeTypes{}, ::baracuda::detail::QuantizedTypes{},
      []<class T, class TQ>(std::type_identity<T>, std::type_identity<TQ>) { return &fused_launch<T, TQ>; });
  return t;
}

}  // namespace dynamic_range
BARACUDA_DEVICE_NAMESPACE_END
