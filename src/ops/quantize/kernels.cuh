// Device code of the quantize family: each op is one elementwise-engine launch over the layout's views
// (a granularity is plain broadcasting of the parameter tensors, param_views.hpp); packed 4-bit operands
// are read or written a byte — an (even, odd) pair of the last dimension — per element.
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <type_traits>

#include "device/dispatch_table.hpp"
#include "device/elementwise.cuh"
#include "device/segment_reduce.cuh"
#include "ops/quantize/dispatch.hpp"
#include "ops/quantize/functors.cuh"
#include "ops/quantize/param_views.hpp"
#include "ops/quantize/tables.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace quantize {

using ::baracuda::detail::ExecContext;
using ::baracuda::detail::pair_view;
using ::baracuda::detail::QuantizeLaunch;

template <class TQ>
inline constexpr bool kPacked = std::is_same_v<TQ, int4x2_t> || std::is_same_v<TQ, uint4x2_t>;

inline constexpr std::string_view kPlan = "QuantizePlan";

/// The range and the convention's arithmetic (static_range), or, for a scale operand that holds multipliers
/// (the dynamic-range plan's vLLM symmetric path), a multiplication.
template <class T>
Range<convert::opmath_t<T>> range_of(const QuantizeLaunch& a) {
  if (a.scale_is_multiplier) return {a.qmin, a.qmax, Scaling::Multiply, false};
  return static_range<convert::opmath_t<T>>(a.convention, a.qmin, a.qmax);
}

template <class T>
LearnableRule<convert::opmath_t<T>> learnable_rule_of(const QuantizeLaunch& a) {
  return {range_of<T>(a), a.convention == QuantConvention::PyTorch,
          a.layout.granularity.kind == QuantGranularity::Kind::PerTensor};
}

template <class T, class TQ>
Status quantize_launch(const ExecContext& ctx, const QuantizeLaunch& a) {
  using S = convert::opmath_t<T>;
  const auto& L = a.layout;
  const ConstDynTensor x = L.data_view(a.t.x), s = L.param_view(a.t.scale), z = L.param_view(a.t.zero_point);
  if constexpr (kPacked<TQ>) {
    using Op = QuantizePairOp<T>;
    return elementwise::launch_elementwise<Op, uint8_t, T, T, S, S, int32_t, int32_t>(
        kPlan, ctx, Op{range_of<T>(a)}, ::baracuda::detail::packed_bytes_view(L, a.t.y), pair_view(x, 0),
        pair_view(x, 1), pair_view(s, 0), pair_view(s, 1), pair_view(z, 0), pair_view(z, 1));
  } else {
    using Op = QuantizeOp<T, TQ>;
    return elementwise::launch_elementwise<Op, TQ, T, S, int32_t>(kPlan, ctx, Op{range_of<T>(a)}, L.data_view(a.t.y),
                                                                  x, s, z);
  }
}

template <class T, class TQ>
Status dequantize_launch(const ExecContext& ctx, const QuantizeLaunch& a) {
  using S = convert::opmath_t<T>;
  const auto& L = a.layout;
  const DynTensor y = L.data_view(a.t.y);
  const ConstDynTensor s = L.param_view(a.t.scale), z = L.param_view(a.t.zero_point);
  if constexpr (kPacked<TQ>) {
    using Op = DequantizePairOp<T, std::is_same_v<TQ, int4x2_t>>;
    return elementwise::launch_elementwise_multi<Op, 2, T, uint8_t, S, S, int32_t, int32_t>(
        kPlan, ctx, Op{}, {pair_view(y, 0), pair_view(y, 1)}, ::baracuda::detail::packed_bytes_view(L, a.t.x),
        pair_view(s, 0), pair_view(s, 1), pair_view(z, 0), pair_view(z, 1));
  } else {
    using Op = DequantizeOp<T, TQ>;
    return elementwise::launch_elementwise<Op, T, TQ, S, int32_t>(kPlan, ctx, Op{}, y, L.data_view(a.t.x), s, z);
  }
}

template <class T>
Status dequantize_backward_launch(const ExecContext& ctx, const QuantizeLaunch& a) {
  using S = convert::opmath_t<T>;
  const auto& L = a.layout;
  using Op = DequantizeBackwardOp<T>;
  return elementwise::launch_elementwise<Op, T, S, T>(kPlan, ctx, Op{}, L.data_view(a.t.dx), L.param_view(a.t.scale),
                                                      L.data_view(a.t.dy));
}

/// A backward (x, scale, zero point, dy) → dx: the straight-through estimators (ZP = int32) and the
/// learnable variant's dx (ZP = S).
template <class T, class ZP, class Op>
Status backward_dx_launch(const ExecContext& ctx, const QuantizeLaunch& a, const Op& op) {
  using S = convert::opmath_t<T>;
  const auto& L = a.layout;
  return elementwise::launch_elementwise<Op, T, T, S, ZP, T>(kPlan, ctx, op, L.data_view(a.t.dx), L.data_view(a.t.x),
                                                             L.param_view(a.t.scale), L.param_view(a.t.zero_point),
                                                             L.data_view(a.t.dy));
}

template <class T>
Status quantize_backward_launch(const ExecContext& ctx, const QuantizeLaunch& a) {
  return backward_dx_launch<T, int32_t>(ctx, a, QuantizeBackwardOp<T>{range_of<T>(a)});
}

/// FakeQuantize (ZP = int32) and its learnable variant (ZP = S; PyTorch's per-tensor one reads the zero point
/// as f32).
template <class T, class ZP>
Status fake_quantize_launch(const ExecContext& ctx, const QuantizeLaunch& a) {
  using S = convert::opmath_t<T>;
  const auto& L = a.layout;
  using Op = FakeQuantizeOp<T, ZP>;
  const bool zp_as_f32 = learnable_rule_of<T>(a).pytorch && L.granularity.kind == QuantGranularity::Kind::PerTensor;
  return elementwise::launch_elementwise<Op, T, T, S, ZP>(kPlan, ctx, Op{range_of<T>(a), zp_as_f32},
                                                          L.data_view(a.t.y), L.data_view(a.t.x),
                                                          L.param_view(a.t.scale), L.param_view(a.t.zero_point));
}

template <class T>
Status fake_quantize_backward_launch(const ExecContext& ctx, const QuantizeLaunch& a) {
  return backward_dx_launch<T, int32_t>(ctx, a, FakeQuantizeBackwardOp<T>{range_of<T>(a)});
}

/// dx of the learnable backward.
template <class T>
Status learnable_backward_dx_launch(const ExecContext& ctx, const QuantizeLaunch& a) {
  return backward_dx_launch<T, convert::opmath_t<T>>(ctx, a, LearnableBackwardOp<T>{learnable_rule_of<T>(a)});
}

/// Where the row-major parameter number `seg` lives in dscale and dzp (strided param_shape tensors).
struct ParamIndex {
  int rank;
  int64_t dims[kMaxRank];
  int64_t ds_stride[kMaxRank];
  int64_t dz_stride[kMaxRank];
};

/// The learnable backward's dscale and dzp: per-element terms (learnable_grads) summed per parameter in
/// f64 in the engine's fixed order, times `sum_factor` (grad_factor, or 1 where the convention applies it
/// per element), rounded once to the scale's type.
template <class T>
struct LearnableGradsReduce {
  using S = convert::opmath_t<T>;
  struct Acc {
    double ds;
    double dzp;
  };
  LearnableRule<S> rule;
  S element_factor;  ///< grad_factor on each term (PyTorch), else 1
  double sum_factor;  ///< grad_factor on each sum (Exact), else 1
  S* dscale;
  S* dzp;
  ParamIndex index;

  __host__ __device__ Acc identity() const { return {0.0, 0.0}; }
  __host__ __device__ Acc map(T x, S s, S z, T dy) const {
    const LearnableGrads<S> g = learnable_grads<T>(rule, x, s, z, dy, element_factor);
    return {static_cast<double>(g.ds), static_cast<double>(g.dzp)};
  }
  __host__ __device__ Acc combine(Acc a, Acc b) const { return {a.ds + b.ds, a.dzp + b.dzp}; }
  __device__ void finish(int64_t seg, Acc acc) const {
    int64_t o_ds = 0, o_dz = 0;
    for (int d = index.rank - 1; d >= 0; --d) {
      const int64_t c = seg % index.dims[d];
      seg /= index.dims[d];
      o_ds += c * index.ds_stride[d];
      o_dz += c * index.dz_stride[d];
    }
    dscale[o_ds] = static_cast<S>(acc.ds * sum_factor);
    dzp[o_dz] = static_cast<S>(acc.dzp * sum_factor);
  }
};

template <class T>
Status learnable_backward_grads_launch(const ExecContext& ctx, const QuantizeLaunch& a) {
  using S = convert::opmath_t<T>;
  const auto& L = a.layout;
  const LearnableRule<S> rule = learnable_rule_of<T>(a);
  LearnableGradsReduce<T> op{rule,
                             rule.pytorch ? static_cast<S>(a.grad_factor) : S(1),
                             rule.pytorch ? 1.0 : a.grad_factor,
                             static_cast<S*>(a.t.dscale.data),
                             static_cast<S*>(a.t.dzero_point.data),
                             {}};
  op.index.rank = L.param_shape.rank;
  for (int d = 0; d < L.param_shape.rank; ++d) {
    op.index.dims[d] = L.param_shape[d];
    op.index.ds_stride[d] = a.t.dscale.stride[d];
    op.index.dz_stride[d] = a.t.dzero_point.stride[d];
  }
  return segment_reduce::launch_segment_reduce<LearnableGradsReduce<T>, T, S, S, T>(
      kPlan, ctx, op, L.iter, L.param_dims_mask(), a.workspace, L.data_view(a.t.x), L.param_view(a.t.scale),
      L.param_view(a.t.zero_point), L.data_view(a.t.dy));
}

/// The entries over (float kind × quantized kind): quantize and dequantize. (A template, like
/// add_float_entries, so that only the translation unit calling it instantiates its kernels.)
template <class Tables>
constexpr void add_pair_entries(Tables& t) {
  for_each_type(::baracuda::detail::QuantizeFloatTypes{}, [&]<class T>() {
    const size_t e = ::baracuda::detail::kind_index(kind_of<T>);
    for_each_type(::baracuda::detail::QuantizedTypes{}, [&]<class TQ>() {
      const size_t q = ::baracuda::detail::kind_index(kind_of<TQ>);
      t.quantize[e][q] = &quantize_launch<T, TQ>;
      t.dequantize[e][q] = &dequantize_launch<T, TQ>;
    });
  });
}

/// The entries over the float kind alone: the backward passes and fake-quantize.
template <class Tables>
constexpr void add_float_entries(Tables& t) {
  for_each_type(::baracuda::detail::QuantizeFloatTypes{}, [&]<class T>() {
    using S = convert::opmath_t<T>;
    const size_t e = ::baracuda::detail::kind_index(kind_of<T>);
    t.quantize_backward[e] = &quantize_backward_launch<T>;
    t.dequantize_backward[e] = &dequantize_backward_launch<T>;
    t.fake_quantize[e] = &fake_quantize_launch<T, int32_t>;
    t.fake_quantize_backward[e] = &fake_quantize_backward_launch<T>;
    t.learnable[e] = &fake_quantize_launch<T, S>;
    t.learnable_backward_dx[e] = &learnable_backward_dx_launch<T>;
    t.learnable_backward_grads[e] = &learnable_backward_grads_launch<T>;
  });
}

/// Defined by the device's float-entries translation unit (compiled apart from the pair entries, so nvcc
/// works on two files in parallel).
::baracuda::detail::QuantizeTables quantize_float_tables();

}  // namespace quantize
BARACUDA_DEVICE_NAMESPACE_END
