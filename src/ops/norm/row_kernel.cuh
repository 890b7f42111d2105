// The norm forward's single-pass row kernel: a warp (short rows) or a block owns a row of the last dimension,
// walked in 16-byte chunks as device/row_chunks.cuh lays out (chunk c belongs to thread c mod group in every
// phase, so the phases need no barrier but the reductions'). Per row:
//   1. h = x (+ residual, rounded once to T) into the slot, written out with a residual; 16-byte loads and
//      stores where a tensor is unit-stride and 16-byte aligned, element accesses otherwise;
//   2. the statistics from the slot — RmsNorm Σh², LayerNorm Σh then Σ(h − mean)² — each thread summing its
//      chunks in order, then a butterfly over the warp and (block rows) the warps' sums in order: the order
//      depends on H alone, never on the operands' alignment or on the fused output, so the plain and the
//      fused plans compute the same statistics and y bit for bit;
//   3. y = ForwardOp (kernels.cuh: the composed path's formula), written when asked for, and the fused
//      output: Static and Fp8 quantize y directly; Dynamic keeps y in the slot, reduces its (min, max) like
//      the dynamic-range kernel, derives (scale, zero point) with its RangeOp and quantizes from the slot.
// The quantize steps are the quantize, dynamic-range and FP8 families' own functors, so q equals the plain
// plan followed by the quantize plan. FP8's amax: a running maximum of f32 bit patterns per thread, one
// atomicMax per block (order-free), after the reset kernel of the FP8 family.
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "device/convert.cuh"
#include "device/precise_math.cuh"
#include "device/row_chunks.cuh"
#include "device/vector_access.cuh"
#include "ops/dynamic_range/kernels.cuh"
#include "ops/fp8/block_max.cuh"
#include "ops/fp8/quantize_kernels.cuh"
#include "ops/norm/kernels.cuh"
#include "ops/quantize/functors.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace norm {

/// A row's place in each row-indexed tensor, per dimension of the rows.
struct RowStride {
  int64_t x, residual, h, y, q;
};

template <class T>
struct NormRows {
  using M = convert::opmath_t<T>;
  const T* x;
  const T* residual;  ///< nullptr: none (h = x)
  T* h;
  T* y;  ///< nullptr: not written
  const T* w;
  const T* b;
  void* q;
  int rank;  ///< of the rows (x's rank − 1)
  int64_t sizes[kMaxRank];
  RowStride stride[kMaxRank];
  int64_t num_rows, len, slot_bytes;
  int64_t x_step, residual_step, h_step, y_step, q_step, w_step, b_step;  ///< strides along the row
  bool layer;
  M eps, inv_h;
  M* mean;  ///< nullptr: not written
  M* rstd;
  RowOffsets mean_at, rstd_at;
  quantize::Range<M> range;  ///< Static
  M scale;                   ///< Static: the per-tensor scale, read on the host side of the launch? no: below
  const M* static_scale;
  const int32_t* static_zp;           ///< nullptr: 0
  dynamic_range::RangeOp<T> dynamic;  ///< Dynamic
  const float* fp8_scale;             ///< Fp8
  float* amax;
};

template <class T, NormQuant Q, bool kBlockRow, bool kSkipNan>
__global__ void norm_rows_kernel(NormRows<T> p) {
  using M = convert::opmath_t<T>;
  using TQ = std::conditional_t<Q == NormQuant::Fp8, __nv_fp8_e4m3, int8_t>;
  using RangeAcc = typename dynamic_range::RangeOp<T>::Acc;
  constexpr int V = 16 / static_cast<int>(sizeof(T));
  static_assert(sizeof(RangeAcc) <= 16 && sizeof(M) <= 16, "a warp's value must fit its scratch slot");
  BARACUDA_DYNAMIC_SHARED(unsigned char, smem);
  const rows::RowGroup<kBlockRow> rg;
  const int group = rg.size, t = rg.lane;
  unsigned char* scratch = smem;
  T* slot = reinterpret_cast<T*>(rg.slot(smem, p.slot_bytes));
  const ForwardOp<T> fwd{p.layer, p.w != nullptr};
  const int64_t chunks = (p.len + V - 1) / V;
  const T zero = convert::from_opmath<T>(M(0));
  int32_t amax_bits = 0;  // Fp8: the running max |y| as f32 bits (+0: the identity)
  M static_scale = M(0);  // Static: read once (the q stores could alias it for the compiler)
  int32_t static_zp = 0;
  if constexpr (Q == NormQuant::Static) {
    static_scale = *p.static_scale;
    if (p.static_zp != nullptr) static_zp = *p.static_zp;
  }

  for (int64_t r = rg.first_row(); r < p.num_rows; r += rg.row_step()) {
    RowStride o{0, 0, 0, 0, 0};
    for (int64_t d = p.rank - 1, i = r; d >= 0; --d) {
      const int64_t c = i % p.sizes[d];
      i /= p.sizes[d];
      o.x += c * p.stride[d].x, o.residual += c * p.stride[d].residual, o.h += c * p.stride[d].h;
      o.y += c * p.stride[d].y, o.q += c * p.stride[d].q;
    }
    const T* xr = p.x + o.x;
    const T* rr = p.residual != nullptr ? p.residual + o.residual : nullptr;
    T* hr = p.residual != nullptr ? p.h + o.h : nullptr;
    const bool xv = rows::vectorizable(xr, p.x_step);
    const bool rv = rr != nullptr && rows::vectorizable(rr, p.residual_step);
    const bool hv = hr != nullptr && rows::vectorizable(hr, p.h_step);
    // 1. h into the slot; the first statistic on the way.
    M s1 = M(0);
    for (int64_t c = t; c < chunks; c += group) {
      AlignedVector<T, V> h = rows::load_chunk<V>(xr, p.x_step, xv, c, p.len, zero);
      if (rr != nullptr) {
        const AlignedVector<T, V> res = rows::load_chunk<V>(rr, p.residual_step, rv, c, p.len, zero);
        for (int j = 0; j < V; ++j) h.val[j] = ResidualAddOp<T>{}(h.val[j], res.val[j]);
        rows::store_chunk<V>(hr, p.h_step, hv, c, p.len, h);
      }
      store_vector<V>(slot + c * V, h);
      for (int j = 0; j < V && c * V + j < p.len; ++j) {
        const M v = convert::to_opmath(h.val[j]);
        s1 += p.layer ? v : v * v;
      }
    }
    const auto add = [](M a, M b) { return a + b; };
    s1 = rows::group_reduce<kBlockRow>(s1, add, reinterpret_cast<M*>(scratch));
    // 2. The statistics (the same expressions as RowStatsOp::finish).
    M mean = M(0), m2 = s1;
    if (p.layer) {
      mean = s1 * p.inv_h;
      M s2 = M(0);
      for (int64_t c = t; c < chunks; c += group) {
        const AlignedVector<T, V> h = load_vector<V>(slot + c * V);
        for (int j = 0; j < V && c * V + j < p.len; ++j) {
          const M d = convert::to_opmath(h.val[j]) - mean;
          s2 += d * d;
        }
      }
      m2 = rows::group_reduce<kBlockRow>(s2, add, reinterpret_cast<M*>(scratch));
    }
    const M rstd = M(1) / pmath::sqrt(m2 * p.inv_h + p.eps);
    if (t == 0) {
      if (p.mean != nullptr) p.mean[p.mean_at(r)] = mean;
      if (p.rstd != nullptr) p.rstd[p.rstd_at(r)] = rstd;
    }
    // 3. y and the fused output.
    T* yr = p.y != nullptr ? p.y + o.y : nullptr;
    unsigned char* qr = static_cast<unsigned char*>(p.q) + o.q;
    const bool yv = yr != nullptr && rows::vectorizable(yr, p.y_step);
    const bool wv = p.w != nullptr && rows::vectorizable(p.w, p.w_step);
    const bool bv = p.b != nullptr && rows::vectorizable(p.b, p.b_step);
    RangeAcc range_acc = p.dynamic.identity();
    for (int64_t c = t; c < chunks; c += group) {
      const AlignedVector<T, V> h = load_vector<V>(slot + c * V);
      AlignedVector<T, V> w, b, y;
      if (p.w != nullptr) w = rows::load_chunk<V>(p.w, p.w_step, wv, c, p.len, zero);
      if (p.b != nullptr) b = rows::load_chunk<V>(p.b, p.b_step, bv, c, p.len, zero);
      for (int j = 0; j < V; ++j) {
        if (p.w != nullptr && p.b != nullptr)
          y.val[j] = fwd(h.val[j], mean, rstd, w.val[j], b.val[j]);
        else if (p.w != nullptr || p.b != nullptr)
          y.val[j] = fwd(h.val[j], mean, rstd, p.w != nullptr ? w.val[j] : b.val[j]);
        else
          y.val[j] = fwd(h.val[j], mean, rstd);
      }
      if (yr != nullptr) rows::store_chunk<V>(yr, p.y_step, yv, c, p.len, y);
      if constexpr (Q == NormQuant::Dynamic) {
        store_vector<V>(slot + c * V, y);
        for (int j = 0; j < V && c * V + j < p.len; ++j)
          range_acc = p.dynamic.combine(range_acc, p.dynamic.map(y.val[j]));
      } else if constexpr (Q != NormQuant::None) {
        unsigned char bytes[V];
        for (int j = 0; j < V; ++j) {
          TQ v{};
          if constexpr (Q == NormQuant::Static)
            v = quantize::QuantizeOp<T, TQ>{p.range}(y.val[j], static_scale, static_zp);
          else if (c * V + j < p.len)
            v = fp8::quantize_element<T, TQ, kSkipNan>(p.fp8_scale)(y.val[j], amax_bits);
          std::memcpy(&bytes[j], &v, 1);
        }
        rows::store_bytes<V>(qr, p.q_step, c, p.len, bytes);
      }
    }
    if constexpr (Q == NormQuant::Dynamic) {
      const auto combine = [&](RangeAcc a, RangeAcc b) { return p.dynamic.combine(a, b); };
      range_acc = rows::group_reduce<kBlockRow>(range_acc, combine, reinterpret_cast<RangeAcc*>(scratch));
      const auto prm = p.dynamic.params_of(range_acc);
      if (t == 0) p.dynamic.write(r, prm);
      const auto range = p.dynamic.range();
      for (int64_t c = t; c < chunks; c += group) {
        const AlignedVector<T, V> y = load_vector<V>(slot + c * V);
        unsigned char bytes[V];
        for (int j = 0; j < V; ++j) {
          const int8_t v = quantize::QuantizeOp<T, int8_t>{range}(y.val[j], prm.operand, prm.zp);
          std::memcpy(&bytes[j], &v, 1);
        }
        rows::store_bytes<V>(qr, p.q_step, c, p.len, bytes);
      }
    }
    if constexpr (kBlockRow)
      __syncthreads();  // the slot is the next row's
    else
      __syncwarp();
  }
  if constexpr (Q == NormQuant::Fp8) fp8::block_max_to_global(amax_bits, reinterpret_cast<int32_t*>(p.amax));
}

/// Fills a NormRows from a launch.
template <class T>
NormRows<T> rows_params(const detail::NormLaunch& a) {
  using M = convert::opmath_t<T>;
  const auto& qa = a.quant;
  const Shape& s = a.x.shape;
  const int last = s.rank - 1;
  NormRows<T> p{};
  p.x = static_cast<const T*>(a.x.data);
  p.residual = static_cast<const T*>(a.residual.data);
  p.h = static_cast<T*>(a.h.data);
  p.y = static_cast<T*>(a.y.data);
  p.w = static_cast<const T*>(a.weight.data);
  p.b = static_cast<const T*>(a.bias.data);
  p.q = qa.q.data;
  p.rank = last;
  p.num_rows = 1;
  for (int d = 0; d < last; ++d) {
    p.sizes[d] = s.dims[d];
    p.stride[d] = {a.x.stride[d], a.residual.stride[d], a.h.stride[d], a.y.stride[d], qa.q.stride[d]};
    p.num_rows *= s.dims[d];
  }
  p.len = s.dims[last];
  p.slot_bytes = rows::slot_bytes(p.len, sizeof(T));
  p.x_step = a.x.stride[last], p.residual_step = a.residual.stride[last], p.h_step = a.h.stride[last];
  p.y_step = a.y.stride[last], p.q_step = qa.q.stride[last];
  p.w_step = a.weight.stride[0], p.b_step = a.bias.stride[0];
  p.layer = a.op == NormOp::LayerNorm;
  p.eps = static_cast<M>(a.eps);
  p.inv_h = M(1) / static_cast<M>(p.len);
  p.mean = static_cast<M*>(a.mean.data);
  p.rstd = static_cast<M*>(a.rstd.data);
  p.mean_at = row_offsets(a.mean);
  p.rstd_at = row_offsets(a.rstd);
  p.range = quantize::static_range<M>(qa.convention, qa.qmin, qa.qmax);
  p.static_scale = static_cast<const M*>(qa.scale.data);
  p.static_zp = static_cast<const int32_t*>(qa.zero_point.data);
  auto& dyn = p.dynamic;
  dyn.scale = static_cast<M*>(qa.q_scale.data);
  dyn.zero_point = static_cast<int32_t*>(qa.q_zero_point.data);
  dyn.multiplier = nullptr;
  dyn.params.rank = last;
  for (int d = 0; d < last; ++d) {
    dyn.params.sizes[d] = s.dims[d];
    dyn.params.scale_stride[d] = qa.q_scale.stride[d];
    dyn.params.zp_stride[d] = qa.q_zero_point.stride[d];
  }
  dyn.symmetric = qa.mode == DynamicRangeMode::Symmetric;
  dyn.qmin = qa.qmin, dyn.qmax = qa.qmax, dyn.convention = qa.convention;
  p.fp8_scale = static_cast<const float*>(qa.scale.data);
  p.amax = static_cast<float*>(qa.amax.data);
  return p;
}

template <class T, NormQuant Q, bool kSkipNan>
Status rows_launch(const ::baracuda::detail::ExecContext& ctx, const NormRows<T>& p) {
  return rows::launch_rows(ctx, p, p.num_rows, p.len, sizeof(T), p.slot_bytes, "NormPlan",
                           &norm_rows_kernel<T, Q, true, kSkipNan>, &norm_rows_kernel<T, Q, false, kSkipNan>);
}

/// The row kernel's entry: the schedule by H and T, the fused output's instance, and for FP8 the amax reset
/// first (the FP8 family's kernel).
template <class T>
Status rows_forward(const ::baracuda::detail::ExecContext& ctx, const detail::NormLaunch& a) {
  const NormRows<T> p = rows_params<T>(a);
  switch (a.quant.kind) {
    case NormQuant::Static:
      return rows_launch<T, NormQuant::Static, false>(ctx, p);
    case NormQuant::Dynamic:
      return rows_launch<T, NormQuant::Dynamic, false>(ctx, p);
    case NormQuant::Fp8: {
      BARACUDA_LAUNCH(dim3(1), dim3(1), 0, ctx.stream, fp8::amax_reset_kernel<>)(p.amax, p.fp8_scale, nullptr);
      const auto e = launch::take_last_error();
      if (e.failed) return Error::device(std::string("NormPlan: kernel launch failed: ") + e.message, e.code);
      if (a.quant.convention == QuantConvention::TransformerEngine) return rows_launch<T, NormQuant::Fp8, true>(ctx, p);
      return rows_launch<T, NormQuant::Fp8, false>(ctx, p);
    }
    default:
      return rows_launch<T, NormQuant::None, false>(ctx, p);
  }
}

}  // namespace norm
BARACUDA_DEVICE_NAMESPACE_END
