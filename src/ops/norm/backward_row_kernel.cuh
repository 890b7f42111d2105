// The norm backward's single-pass dx kernel: a warp (short rows) or a block owns a row of the last dimension,
// walked in 16-byte chunks as device/row_chunks.cuh lays out. Per row:
//   1. dy and x are read once (16-byte loads where unit-stride and aligned) into the group's two slots of
//      shared memory, and (Σg, Σg·x) with g = dy · w summed on the way, each thread over its chunks in order,
//      then combined over the group in an order that depends on H alone (so dx is bit-stable and the same
//      for every alignment of the operands);
//   2. the row's coefficients (kernels.cuh's dx_coefficients, the composed path's expressions), and
//      dx = p·g + q·x + r (DxOp) from the slots, written once.
// The column sums (dweight, dbias) stay on the segmented-reduction engine (kernels.cuh's column_sums): a sum
// over the rows, not a row kernel's work.
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <cstdint>

#include "device/convert.cuh"
#include "device/row_chunks.cuh"
#include "device/vector_access.cuh"
#include "ops/norm/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace norm {

/// A row's place in each row-indexed tensor of the backward, per dimension of the rows.
struct BackwardRowStride {
  int64_t dy, x, dx;
};

template <class T>
struct NormBackwardRows {
  using M = convert::opmath_t<T>;
  const T* dy;
  const T* x;
  const T* w;  ///< nullptr: none
  T* dx;
  int rank;  ///< of the rows (x's rank − 1)
  int64_t sizes[kMaxRank];
  BackwardRowStride stride[kMaxRank];
  int64_t num_rows, len, slot_bytes;
  int64_t dy_step, x_step, dx_step, w_step;  ///< strides along the row
  bool layer;
  M inv_h;
  const M* mean;  ///< LayerNorm only
  const M* rstd;
  RowOffsets mean_at, rstd_at;
};

// At least two blocks per SM: left to itself, ptxas gave the 16-bit warp-row instances 203–213 registers (one
// block of 256 threads per SM); with the bound every instance takes 56–92, without spills (the ptxas report).
template <class T, bool kBlockRow>
__global__ void __launch_bounds__(::baracuda::detail::kRowThreads, 2) norm_backward_rows_kernel(NormBackwardRows<T> p) {
  using M = convert::opmath_t<T>;
  using Sums = typename RowSumsOp<T>::Acc;
  constexpr int V = 16 / static_cast<int>(sizeof(T));
  BARACUDA_DYNAMIC_SHARED(unsigned char, smem);
  const rows::RowGroup<kBlockRow> rg;
  const int group = rg.size, t = rg.lane;
  unsigned char* const slots = rg.slot(smem, 2 * p.slot_bytes);
  T* const dy_slot = reinterpret_cast<T*>(slots);
  T* const x_slot = reinterpret_cast<T*>(slots + p.slot_bytes);
  const int64_t chunks = (p.len + V - 1) / V;
  const T zero = convert::from_opmath<T>(M(0));
  const bool wv = p.w != nullptr && rows::vectorizable(p.w, p.w_step);
  const RowSumsOp<T> sums_op{};
  const auto combine = [&](Sums a, Sums b) { return sums_op.combine(a, b); };

  for (int64_t r = rg.first_row(); r < p.num_rows; r += rg.row_step()) {
    BackwardRowStride o{0, 0, 0};
    for (int64_t d = p.rank - 1, i = r; d >= 0; --d) {
      const int64_t c = i % p.sizes[d];
      i /= p.sizes[d];
      o.dy += c * p.stride[d].dy, o.x += c * p.stride[d].x, o.dx += c * p.stride[d].dx;
    }
    const T* dyr = p.dy + o.dy;
    const T* xr = p.x + o.x;
    T* dxr = p.dx + o.dx;
    const bool dyv = rows::vectorizable(dyr, p.dy_step), xv = rows::vectorizable(xr, p.x_step);
    const bool dxv = rows::vectorizable(dxr, p.dx_step);
    // 1. dy and x into the slots, (Σg, Σg·x) on the way.
    Sums acc = sums_op.identity();
    for (int64_t c = t; c < chunks; c += group) {
      const AlignedVector<T, V> dyc = rows::load_chunk<V>(dyr, p.dy_step, dyv, c, p.len, zero);
      const AlignedVector<T, V> xc = rows::load_chunk<V>(xr, p.x_step, xv, c, p.len, zero);
      store_vector<V>(dy_slot + c * V, dyc);
      store_vector<V>(x_slot + c * V, xc);
      AlignedVector<T, V> wc;
      if (p.w != nullptr) wc = rows::load_chunk<V>(p.w, p.w_step, wv, c, p.len, zero);
      for (int j = 0; j < V && c * V + j < p.len; ++j)
        acc = sums_op.combine(
            acc, p.w != nullptr ? sums_op.map(dyc.val[j], xc.val[j], wc.val[j]) : sums_op.map(dyc.val[j], xc.val[j]));
    }
    acc = rows::group_reduce<kBlockRow>(acc, combine, reinterpret_cast<Sums*>(smem));
    // 2. The coefficients, then dx from the slots.
    const M mu = p.layer ? p.mean[p.mean_at(r)] : M(0);
    const DxCoefficients<M> k = dx_coefficients(p.layer, mu, p.rstd[p.rstd_at(r)], acc.g, acc.gx, p.inv_h);
    for (int64_t c = t; c < chunks; c += group) {
      const AlignedVector<T, V> dyc = load_vector<V>(dy_slot + c * V);
      const AlignedVector<T, V> xc = load_vector<V>(x_slot + c * V);
      AlignedVector<T, V> wc, dxc;
      if (p.w != nullptr) wc = rows::load_chunk<V>(p.w, p.w_step, wv, c, p.len, zero);
      for (int j = 0; j < V; ++j)
        dxc.val[j] = p.w != nullptr ? DxOp<T>{}(dyc.val[j], xc.val[j], wc.val[j], k.p, k.q, k.r)
                                    : DxOp<T>{}(dyc.val[j], xc.val[j], k.p, k.q, k.r);
      rows::store_chunk<V>(dxr, p.dx_step, dxv, c, p.len, dxc);
    }
    if constexpr (kBlockRow)
      __syncthreads();  // the slots are the next row's
    else
      __syncwarp();
  }
}

/// Fills a NormBackwardRows from a launch.
template <class T>
NormBackwardRows<T> backward_rows_params(const detail::NormLaunch& a) {
  using M = convert::opmath_t<T>;
  const Shape& s = a.x.shape;
  const int last = s.rank - 1;
  NormBackwardRows<T> p{};
  p.dy = static_cast<const T*>(a.dy.data);
  p.x = static_cast<const T*>(a.x.data);
  p.w = static_cast<const T*>(a.weight.data);
  p.dx = static_cast<T*>(a.dx.data);
  p.rank = last;
  p.num_rows = 1;
  for (int d = 0; d < last; ++d) {
    p.sizes[d] = s.dims[d];
    p.stride[d] = {a.dy.stride[d], a.x.stride[d], a.dx.stride[d]};
    p.num_rows *= s.dims[d];
  }
  p.len = s.dims[last];
  p.slot_bytes = rows::slot_bytes(p.len, sizeof(T));
  p.dy_step = a.dy.stride[last], p.x_step = a.x.stride[last], p.dx_step = a.dx.stride[last];
  p.w_step = a.weight.stride[0];
  p.layer = a.op == NormOp::LayerNorm;
  p.inv_h = M(1) / static_cast<M>(p.len);
  p.mean = static_cast<const M*>(a.mean.data);
  p.rstd = static_cast<const M*>(a.rstd.data);
  p.mean_at = row_offsets(a.mean);
  p.rstd_at = row_offsets(a.rstd);
  return p;
}

/// The backward's row-kernel entry: dx by the row kernel (when asked for), then the column sums.
template <class T>
Status rows_backward(const ::baracuda::detail::ExecContext& ctx, const detail::NormLaunch& a) {
  if (a.dx.data != nullptr) {
    const NormBackwardRows<T> p = backward_rows_params<T>(a);
    BARACUDA_TRY(rows::launch_rows(ctx, p, p.num_rows, p.len, 2 * static_cast<int64_t>(sizeof(T)), 2 * p.slot_bytes,
                                   "NormBackwardPlan", &norm_backward_rows_kernel<T, true>,
                                   &norm_backward_rows_kernel<T, false>));
  }
  return column_sums<T>(ctx, a);
}

}  // namespace norm
BARACUDA_DEVICE_NAMESPACE_END
