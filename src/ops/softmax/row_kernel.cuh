// The softmax's single-pass row kernels. Forward: a warp (short slices) or a block owns a slice along `dim`,
// walked in 16-byte chunks of T as device/row_chunks.cuh lays out. The slice is read once into a shared-memory
// slot — x itself, or with a mask z = x/T + mask in opmath (so the mask is read once too) — reducing max z on
// the way; then Σ exp(z − max) over the slot; then y = exp(z − max) / Σ (log-softmax:
// (z − max) − log Σ, the composed path's ForwardOp::apply) written once. Two passes over the slot instead of
// the online merge: one exp per element for the sum instead of two, and the same values (max, then the sum
// relative to it). A NaN anywhere makes the max the canonical NaN, so every lane of the butterfly ends with
// the same bits and y is NaN; an infinite max gives NaN sums, as the composed path. Backward: dy and y into
// two slots (slices of up to 64 KiB for both), Σ dy·y (log-softmax: Σ dy) on the way in, dx written once.
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <cstdint>
#include <type_traits>

#include "device/convert.cuh"
#include "device/precise_math.cuh"
#include "device/row_chunks.cuh"
#include "device/vector_access.cuh"
#include "ops/softmax/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace softmax {

/// A slice's place in x, the (broadcast) mask and y, per dimension other than `dim`.
struct SliceStride {
  int64_t x, mask, y;
};

template <class T>
struct SoftmaxRows {
  using M = convert::opmath_t<T>;
  const T* x;
  const T* mask;  ///< nullptr: none
  T* y;
  int rank;  ///< dimensions other than `dim`
  int64_t sizes[kMaxRank];
  SliceStride stride[kMaxRank];
  int64_t num_rows, len, slot_bytes;
  int64_t x_step, mask_step, y_step;  ///< strides along `dim`
  M inv_t;
  bool log;
};

/// Slice r's offsets in the three tensors.
template <class T>
__device__ __forceinline__ SliceStride slice_offsets(const SoftmaxRows<T>& p, int64_t r) {
  SliceStride o{0, 0, 0};
  for (int64_t d = p.rank - 1; d >= 0; --d) {
    const int64_t c = r % p.sizes[d];
    r /= p.sizes[d];
    o.x += c * p.stride[d].x, o.mask += c * p.stride[d].mask, o.y += c * p.stride[d].y;
  }
  return o;
}

/// The slot's element: x (T) without a mask, z (opmath) with one.
template <class T, bool kMask>
using SlotOf = std::conditional_t<kMask, convert::opmath_t<T>, T>;

/// Bytes of one slot: whole chunks of V = 16 / sizeof(T) slot elements.
template <class T, bool kMask>
constexpr int64_t softmax_slot_bytes(int64_t len) {
  constexpr int64_t V = 16 / static_cast<int64_t>(sizeof(T));
  const int64_t bytes = (len + V - 1) / V * V * static_cast<int64_t>(sizeof(SlotOf<T, kMask>));
  return (bytes + 15) / 16 * 16;
}

/// max with NaN winning as the canonical NaN (commutative bit for bit, for the butterfly).
template <class M>
__device__ __forceinline__ M nan_max(M a, M b) {
  if (a != a || b != b) return static_cast<M>(NAN);
  return a > b ? a : b;
}

template <class T, bool kMask, bool kBlockRow>
__global__ void softmax_rows_kernel(SoftmaxRows<T> p) {
  using M = convert::opmath_t<T>;
  using S = SlotOf<T, kMask>;
  constexpr int V = 16 / static_cast<int>(sizeof(T));
  BARACUDA_DYNAMIC_SHARED(unsigned char, smem);
  const rows::RowGroup<kBlockRow> rg;
  const int group = rg.size, t = rg.lane;
  M* scratch = reinterpret_cast<M*>(smem);
  S* slot = reinterpret_cast<S*>(rg.slot(smem, p.slot_bytes));
  const ForwardOp<T, kMask> fwd{p.inv_t, p.log};
  const int64_t chunks = (p.len + V - 1) / V;
  const T zero = convert::from_opmath<T>(M(0));
  const auto z_of = [&](const S& s) -> M {
    if constexpr (kMask)
      return s;
    else
      return logit(s, p.inv_t);
  };

  for (int64_t r = rg.first_row(); r < p.num_rows; r += rg.row_step()) {
    const SliceStride o = slice_offsets(p, r);
    const T* xr = p.x + o.x;
    const bool xv = rows::vectorizable(xr, p.x_step);
    // 1. The slice into the slot, its max on the way.
    M mx = static_cast<M>(-INFINITY);
    for (int64_t c = t; c < chunks; c += group) {
      const AlignedVector<T, V> x = rows::load_chunk<V>(xr, p.x_step, xv, c, p.len, zero);
      if constexpr (kMask) {
        const T* mr = p.mask + o.mask;
        const AlignedVector<T, V> m =
            rows::load_chunk<V>(mr, p.mask_step, rows::vectorizable(mr, p.mask_step), c, p.len, zero);
        AlignedVector<M, V> z;
        for (int j = 0; j < V; ++j) z.val[j] = logit(x.val[j], p.inv_t) + convert::to_opmath(m.val[j]);
        store_vector<V>(slot + c * V, z);
      } else {
        store_vector<V>(slot + c * V, x);
      }
      const AlignedVector<S, V> s = load_vector<V>(slot + c * V);
      for (int j = 0; j < V && c * V + j < p.len; ++j) mx = nan_max(mx, z_of(s.val[j]));
    }
    mx = rows::group_reduce<kBlockRow>(
        mx, [](M a, M b) { return nan_max(a, b); }, scratch);
    // 2. Σ exp(z − max).
    M sum = M(0);
    for (int64_t c = t; c < chunks; c += group) {
      const AlignedVector<S, V> s = load_vector<V>(slot + c * V);
      for (int j = 0; j < V && c * V + j < p.len; ++j) sum += pmath::exp(z_of(s.val[j]) - mx);
    }
    sum = rows::group_reduce<kBlockRow>(
        sum, [](M a, M b) { return a + b; }, scratch);
    // 3. y.
    T* yr = p.y + o.y;
    const bool yv = rows::vectorizable(yr, p.y_step);
    for (int64_t c = t; c < chunks; c += group) {
      const AlignedVector<S, V> s = load_vector<V>(slot + c * V);
      AlignedVector<T, V> y;
      for (int j = 0; j < V; ++j) y.val[j] = fwd.apply(z_of(s.val[j]), mx, sum);
      rows::store_chunk<V>(yr, p.y_step, yv, c, p.len, y);
    }
    if constexpr (kBlockRow)
      __syncthreads();  // the slot is the next slice's
    else
      __syncwarp();
  }
}

/// The backward over two slots (dy, y) of whole chunks: Σ dy·y (log-softmax: Σ dy) on the way in, then
/// dx = BackwardOp (the composed path's formula) written once. `x`, `mask` and `y` of SoftmaxRows hold dy, y
/// and dx.
template <class T, bool kBlockRow>
__global__ void softmax_backward_rows_kernel(SoftmaxRows<T> p) {
  using M = convert::opmath_t<T>;
  constexpr int V = 16 / static_cast<int>(sizeof(T));
  BARACUDA_DYNAMIC_SHARED(unsigned char, smem);
  const rows::RowGroup<kBlockRow> rg;
  const int group = rg.size, t = rg.lane;
  M* scratch = reinterpret_cast<M*>(smem);
  T* dy_slot = reinterpret_cast<T*>(rg.slot(smem, p.slot_bytes));
  T* y_slot = dy_slot + p.slot_bytes / 2 / static_cast<int64_t>(sizeof(T));
  const DotOp<T> dot{p.log, nullptr};
  const BackwardOp<T> bwd{p.inv_t, p.log};
  const int64_t chunks = (p.len + V - 1) / V;
  const T zero = convert::from_opmath<T>(M(0));
  for (int64_t r = rg.first_row(); r < p.num_rows; r += rg.row_step()) {
    const SliceStride o = slice_offsets(p, r);
    const T* dyr = p.x + o.x;
    const T* yr = p.mask + o.mask;
    const bool dyv = rows::vectorizable(dyr, p.x_step), yv = rows::vectorizable(yr, p.mask_step);
    M sum = M(0);
    for (int64_t c = t; c < chunks; c += group) {
      const AlignedVector<T, V> dy = rows::load_chunk<V>(dyr, p.x_step, dyv, c, p.len, zero);
      const AlignedVector<T, V> y = rows::load_chunk<V>(yr, p.mask_step, yv, c, p.len, zero);
      store_vector<V>(dy_slot + c * V, dy);
      store_vector<V>(y_slot + c * V, y);
      for (int j = 0; j < V && c * V + j < p.len; ++j) sum += dot.map(dy.val[j], y.val[j]);
    }
    sum = rows::group_reduce<kBlockRow>(
        sum, [](M a, M b) { return a + b; }, scratch);
    T* dxr = p.y + o.y;
    const bool dxv = rows::vectorizable(dxr, p.y_step);
    for (int64_t c = t; c < chunks; c += group) {
      const AlignedVector<T, V> dy = load_vector<V>(dy_slot + c * V), y = load_vector<V>(y_slot + c * V);
      AlignedVector<T, V> dx;
      for (int j = 0; j < V; ++j) dx.val[j] = bwd(dy.val[j], y.val[j], sum);
      rows::store_chunk<V>(dxr, p.y_step, dxv, c, p.len, dx);
    }
    if constexpr (kBlockRow)
      __syncthreads();  // the slots are the next slice's
    else
      __syncwarp();
  }
}

/// Launches the block-row or the warp-row kernel over the slices, with `slot_element` bytes of shared memory
/// per element for the schedule (the one select found) and `slot_bytes` per slice.
template <class T>
Status launch_rows(const ::baracuda::detail::ExecContext& ctx, SoftmaxRows<T> p, int64_t slot_element,
                   int64_t slot_bytes, std::string_view plan, void (*block_kernel)(SoftmaxRows<T>),
                   void (*warp_kernel)(SoftmaxRows<T>)) {
  p.slot_bytes = slot_bytes;
  return rows::launch_rows(ctx, p, p.num_rows, p.len, slot_element, slot_bytes, plan, block_kernel, warp_kernel);
}

/// The row kernels' entry: the slices along `dim`, the other dimensions row-major; forward (in = x, aux =
/// mask, out = y) or backward (in = dy, aux = y, out = dx).
template <class T, bool kBackward>
Status rows_entry(const ::baracuda::detail::ExecContext& ctx, const detail::SoftmaxLaunch& a) {
  SoftmaxRows<T> p{};
  const Shape& s = a.in.shape;
  p.x = static_cast<const T*>(a.in.data);
  p.mask = static_cast<const T*>(a.aux.data);
  p.y = static_cast<T*>(a.out.data);
  p.num_rows = 1;
  for (int d = 0; d < s.rank; ++d) {
    if (d == a.dim) continue;
    p.sizes[p.rank] = s.dims[d];
    p.stride[p.rank] = {a.in.stride[d], a.aux.stride[d], a.out.stride[d]};
    p.num_rows *= s.dims[d];
    ++p.rank;
  }
  p.len = s.dims[a.dim];
  p.x_step = a.in.stride[a.dim], p.mask_step = a.aux.stride[a.dim], p.y_step = a.out.stride[a.dim];
  p.inv_t = static_cast<convert::opmath_t<T>>(a.inv_temperature);
  p.log = a.op == SoftmaxOp::LogSoftmax;
  const auto element = static_cast<int64_t>(sizeof(T));
  if constexpr (kBackward)
    return launch_rows<T>(ctx, p, 2 * element, 2 * rows::slot_bytes(p.len, element), "SoftmaxBackwardPlan",
                          &softmax_backward_rows_kernel<T, true>, &softmax_backward_rows_kernel<T, false>);
  if (p.mask != nullptr)
    return launch_rows<T>(ctx, p, sizeof(SlotOf<T, true>), softmax_slot_bytes<T, true>(p.len), "SoftmaxPlan",
                          &softmax_rows_kernel<T, true, true>, &softmax_rows_kernel<T, true, false>);
  return launch_rows<T>(ctx, p, element, softmax_slot_bytes<T, false>(p.len), "SoftmaxPlan",
                        &softmax_rows_kernel<T, false, true>, &softmax_rows_kernel<T, false, false>);
}
template <class T>
Status rows_forward(const ::baracuda::detail::ExecContext& ctx, const detail::SoftmaxLaunch& a) {
  return rows_entry<T, false>(ctx, a);
}
template <class T>
Status rows_backward(const ::baracuda::detail::ExecContext& ctx, const detail::SoftmaxLaunch& a) {
  return rows_entry<T, true>(ctx, a);
}

}  // namespace softmax
BARACUDA_DEVICE_NAMESPACE_END
