// GroupNorm's single-pass forward: a group (n, g) — its C/G channels × S spatial elements, L in all — is a
// row, owned by a warp (short groups) or a block, and walked in 16-byte chunks as device/row_chunks.cuh lays
// out. Per group: x is read once into the group's shared-memory slot (16-byte loads where the group is one
// unit-stride run, as in a dense [N, C, S...] x, and 16-byte aligned; element accesses otherwise), the mean
// and then Σ(x − mean)² are reduced from the slot in an order fixed by L alone, (mean, rstd) are written, and
// y = (x − mean) · rstd · w + b (kernels.cuh's ForwardOp) is written once. Groups longer than the row
// kernels' limit take the composed path (kernels.cuh's forward).
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <cstdint>

#include "device/convert.cuh"
#include "device/precise_math.cuh"
#include "device/row_chunks.cuh"
#include "device/vector_access.cuh"
#include "ops/channel_norm/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace channel_norm {

/// How a tensor of x's shape `[N, C, S...]` is walked within a group: element e (channel e / S, spatial
/// index e mod S) at `n·batch + (g·C/G + e / S)·channel + spatial(e mod S)`. `flat`: the group is one run of
/// uniform stride `step` (spatial dimensions that collapse to one stride, and channel = S·step when a group
/// has more than one channel), so element e is at e·step from the group's first.
struct GroupWalk {
  int64_t batch, channel;
  int spatial_rank;
  int64_t spatial_sizes[kMaxRank], spatial_strides[kMaxRank];
  bool flat;
  int64_t step;
};

inline GroupWalk group_walk(const ::baracuda::detail::DynTensorLayout& t, int64_t per_group) {
  GroupWalk w{};
  w.batch = t.stride[0], w.channel = t.stride[1];
  w.spatial_rank = t.shape.rank - 2;
  int64_t run = 1, step = 1;
  bool flat = true;
  for (int d = t.shape.rank - 1, i = w.spatial_rank - 1; d >= 2; --d, --i) {
    w.spatial_sizes[i] = t.shape.dims[d], w.spatial_strides[i] = t.stride[d];
    if (t.shape.dims[d] == 1) continue;  // any stride: never stepped over
    if (run == 1) step = t.stride[d];
    flat = flat && t.stride[d] == run * step;
    run *= t.shape.dims[d];
  }
  if (per_group > 1) {  // the group steps over channels too
    if (run == 1) step = t.stride[1];
    flat = flat && t.stride[1] == run * step;
  }
  w.flat = flat;
  w.step = step;
  return w;
}

/// The offset of element e of a group from the group's first element.
__device__ __forceinline__ int64_t group_offset(const GroupWalk& w, int64_t e, int64_t spatial) {
  if (w.flat) return e * w.step;
  int64_t s = e % spatial, o = (e / spatial) * w.channel;
  for (int i = w.spatial_rank - 1; i >= 0; --i) {
    o += (s % w.spatial_sizes[i]) * w.spatial_strides[i];
    s /= w.spatial_sizes[i];
  }
  return o;
}

template <class T>
struct GroupRows {
  using M = convert::opmath_t<T>;
  const T* x;
  T* y;
  const T* w;  ///< nullptr: none
  const T* b;
  GroupWalk xw, yw;
  int64_t groups, per_group, spatial;  ///< G, C/G, S
  int64_t num_rows, len, slot_bytes;   ///< N·G, (C/G)·S
  int64_t w_step, b_step;
  M eps, inv_len;
  M* mean;
  M* rstd;
  Offsets mean_at, rstd_at;
};

/// Chunk c of a group's tensor: a vector (flat unit-stride and aligned) or element accesses.
template <int V, class T>
__device__ __forceinline__ AlignedVector<T, V> load_group_chunk(const T* p, const GroupWalk& w, bool vec, int64_t c,
                                                                int64_t len, int64_t spatial, T fill) {
  if (w.flat) return rows::load_chunk<V>(p, w.step, vec, c, len, fill);
  AlignedVector<T, V> v;
  for (int j = 0; j < V; ++j) v.val[j] = c * V + j < len ? p[group_offset(w, c * V + j, spatial)] : fill;
  return v;
}

template <class T, bool kBlockRow>
__global__ void group_norm_rows_kernel(GroupRows<T> p) {
  using M = convert::opmath_t<T>;
  constexpr int V = 16 / static_cast<int>(sizeof(T));
  BARACUDA_DYNAMIC_SHARED(unsigned char, smem);
  const rows::RowGroup<kBlockRow> rg;
  const int group = rg.size, t = rg.lane;
  T* const slot = reinterpret_cast<T*>(rg.slot(smem, p.slot_bytes));
  M* const scratch = reinterpret_cast<M*>(smem);
  const int64_t chunks = (p.len + V - 1) / V;
  const T zero = convert::from_opmath<T>(M(0));
  const ForwardOp<T, M> fwd{M(0), false, p.w != nullptr};
  const auto add = [](M a, M b) { return a + b; };

  for (int64_t r = rg.first_row(); r < p.num_rows; r += rg.row_step()) {
    const int64_t n = r / p.groups, first_channel = (r % p.groups) * p.per_group;
    const T* xr = p.x + n * p.xw.batch + first_channel * p.xw.channel;
    T* yr = p.y + n * p.yw.batch + first_channel * p.yw.channel;
    const bool xv = p.xw.flat && rows::vectorizable(xr, p.xw.step);
    const bool yv = p.yw.flat && rows::vectorizable(yr, p.yw.step);
    // 1. x into the slot, Σx on the way; 2. Σ(x − mean)² from the slot.
    M s1 = M(0);
    for (int64_t c = t; c < chunks; c += group) {
      const AlignedVector<T, V> xc = load_group_chunk<V>(xr, p.xw, xv, c, p.len, p.spatial, zero);
      store_vector<V>(slot + c * V, xc);
      for (int j = 0; j < V && c * V + j < p.len; ++j) s1 += convert::to_opmath(xc.val[j]);
    }
    const M mean = rows::group_reduce<kBlockRow>(s1, add, scratch) * p.inv_len;
    M s2 = M(0);
    for (int64_t c = t; c < chunks; c += group) {
      const AlignedVector<T, V> xc = load_vector<V>(slot + c * V);
      for (int j = 0; j < V && c * V + j < p.len; ++j) {
        const M d = convert::to_opmath(xc.val[j]) - mean;
        s2 += d * d;
      }
    }
    const M m2 = rows::group_reduce<kBlockRow>(s2, add, scratch);
    const M rstd = M(1) / pmath::sqrt(m2 * p.inv_len + p.eps);
    if (t == 0) p.mean[p.mean_at(r)] = mean, p.rstd[p.rstd_at(r)] = rstd;
    // 3. y, with the channel's w and b.
    for (int64_t c = t; c < chunks; c += group) {
      const AlignedVector<T, V> xc = load_vector<V>(slot + c * V);
      AlignedVector<T, V> yc;
      for (int j = 0; j < V; ++j) {
        const int64_t ch = first_channel + (c * V + j < p.len ? (c * V + j) / p.spatial : 0);
        if (p.w != nullptr && p.b != nullptr)
          yc.val[j] = fwd(xc.val[j], mean, rstd, p.w[ch * p.w_step], p.b[ch * p.b_step]);
        else if (p.w != nullptr || p.b != nullptr)
          yc.val[j] = fwd(xc.val[j], mean, rstd, p.w != nullptr ? p.w[ch * p.w_step] : p.b[ch * p.b_step]);
        else
          yc.val[j] = fwd(xc.val[j], mean, rstd);
      }
      if (p.yw.flat) {
        rows::store_chunk<V>(yr, p.yw.step, yv, c, p.len, yc);
      } else {
        for (int j = 0; j < V && c * V + j < p.len; ++j) yr[group_offset(p.yw, c * V + j, p.spatial)] = yc.val[j];
      }
    }
    if constexpr (kBlockRow)
      __syncthreads();  // the slot is the next group's
    else
      __syncwarp();
  }
}

/// GroupNorm's forward on the row kernel (the plan chose it for groups within the row kernels' limit).
template <class T>
Status group_rows_forward(const ::baracuda::detail::ExecContext& ctx, const detail::ChannelNormLaunch& a) {
  using M = convert::opmath_t<T>;
  const Shape& s = a.x.shape;
  GroupRows<T> p{};
  p.x = static_cast<const T*>(a.x.data);
  p.y = static_cast<T*>(a.y.data);
  p.w = static_cast<const T*>(a.weight.data);
  p.b = static_cast<const T*>(a.bias.data);
  p.groups = a.groups, p.per_group = s.dims[1] / a.groups;
  p.xw = group_walk(a.x, p.per_group), p.yw = group_walk(a.y, p.per_group);
  p.spatial = 1;
  for (int d = 2; d < s.rank; ++d) p.spatial *= s.dims[d];
  p.num_rows = s.dims[0] * a.groups, p.len = p.per_group * p.spatial;
  p.slot_bytes = rows::slot_bytes(p.len, sizeof(T));
  p.w_step = a.weight.stride[0], p.b_step = a.bias.stride[0];
  p.eps = static_cast<M>(a.eps), p.inv_len = M(1) / static_cast<M>(p.len);
  p.mean = static_cast<M*>(a.mean.data), p.rstd = static_cast<M*>(a.rstd.data);
  p.mean_at = offsets_of(a.mean), p.rstd_at = offsets_of(a.rstd);
  return rows::launch_rows(ctx, p, p.num_rows, p.len, sizeof(T), p.slot_bytes, "GroupNormPlan",
                           &group_norm_rows_kernel<T, true>, &group_norm_rows_kernel<T, false>);
}

}  // namespace channel_norm
BARACUDA_DEVICE_NAMESPACE_END
