// Device code of the quantize family: each op is one elementwise-engine launch over the layout's views
// (a granularity is plain broadcasting of the parameter tensors, param_views.hpp); packed 4-bit operands
// are read or written a byte — an (even, odd) pair of the last dimension — per element.
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <type_traits>

#include "device/dispatch_table.hpp"
#include "device/elementwise.cuh"
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

template <class T>
Range<convert::opmath_t<T>> range_of(const QuantizeLaunch& a) {
  return {a.qmin, a.qmax};
}

template <class T, class TQ>
Status quantize_launch(const ExecContext& ctx, const QuantizeLaunch& a) {
  using S = convert::opmath_t<T>;
  const auto& L = a.layout;
  const DynTensor x = L.data_view(a.t.x), s = L.param_view(a.t.scale), z = L.param_view(a.t.zero_point);
  if constexpr (kPacked<TQ>) {
    using Op = QuantizePairOp<T>;
    return elementwise::launch_elementwise<Op, uint8_t, T, T, S, S, int32_t, int32_t>(
        kPlan, ctx, Op{range_of<T>(a)}, ::baracuda::detail::packed_bytes_view(L, a.t.q), pair_view(x, 0),
        pair_view(x, 1), pair_view(s, 0), pair_view(s, 1), pair_view(z, 0), pair_view(z, 1));
  } else {
    using Op = QuantizeOp<T, TQ>;
    return elementwise::launch_elementwise<Op, TQ, T, S, int32_t>(kPlan, ctx, Op{range_of<T>(a)}, L.data_view(a.t.q),
                                                                  x, s, z);
  }
}

template <class T, class TQ>
Status dequantize_launch(const ExecContext& ctx, const QuantizeLaunch& a) {
  using S = convert::opmath_t<T>;
  const auto& L = a.layout;
  const DynTensor y = L.data_view(a.t.y), s = L.param_view(a.t.scale), z = L.param_view(a.t.zero_point);
  if constexpr (kPacked<TQ>) {
    using Op = DequantizePairOp<T, std::is_same_v<TQ, int4x2_t>>;
    return elementwise::launch_elementwise_multi<Op, 2, T, uint8_t, S, S, int32_t, int32_t>(
        kPlan, ctx, Op{}, {pair_view(y, 0), pair_view(y, 1)}, ::baracuda::detail::packed_bytes_view(L, a.t.q),
        pair_view(s, 0), pair_view(s, 1), pair_view(z, 0), pair_view(z, 1));
  } else {
    using Op = DequantizeOp<T, TQ>;
    return elementwise::launch_elementwise<Op, T, TQ, S, int32_t>(kPlan, ctx, Op{}, y, L.data_view(a.t.q), s, z);
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

template <class T>
Status quantize_backward_launch(const ExecContext& ctx, const QuantizeLaunch& a) {
  using S = convert::opmath_t<T>;
  const auto& L = a.layout;
  using Op = QuantizeBackwardOp<T>;
  return elementwise::launch_elementwise<Op, T, T, S, int32_t, T>(
      kPlan, ctx, Op{range_of<T>(a)}, L.data_view(a.t.dx), L.data_view(a.t.x), L.param_view(a.t.scale),
      L.param_view(a.t.zero_point), L.data_view(a.t.dy));
}

/// FakeQuantize (ZP = int32) and its learnable variant (ZP = S).
template <class T, class ZP>
Status fake_quantize_launch(const ExecContext& ctx, const QuantizeLaunch& a) {
  using S = convert::opmath_t<T>;
  const auto& L = a.layout;
  using Op = FakeQuantizeOp<T, ZP>;
  return elementwise::launch_elementwise<Op, T, T, S, ZP>(kPlan, ctx, Op{range_of<T>(a)}, L.data_view(a.t.y),
                                                          L.data_view(a.t.x), L.param_view(a.t.scale),
                                                          L.param_view(a.t.zero_point));
}

template <class T, class ZP>
Status fake_quantize_backward_launch(const ExecContext& ctx, const QuantizeLaunch& a) {
  using S = convert::opmath_t<T>;
  const auto& L = a.layout;
  using Op = FakeQuantizeBackwardOp<T, ZP>;
  return elementwise::launch_elementwise<Op, T, T, S, ZP, T>(
      kPlan, ctx, Op{range_of<T>(a)}, L.data_view(a.t.dx), L.data_view(a.t.x), L.param_view(a.t.scale),
      L.param_view(a.t.zero_point), L.data_view(a.t.dy));
}

/// The entries over (float kind × quantized kind): quantize and dequantize.
constexpr void add_pair_entries(::baracuda::detail::QuantizeTables& t) {
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
constexpr void add_float_entries(::baracuda::detail::QuantizeTables& t) {
  for_each_type(::baracuda::detail::QuantizeFloatTypes{}, [&]<class T>() {
    using S = convert::opmath_t<T>;
    const size_t e = ::baracuda::detail::kind_index(kind_of<T>);
    t.quantize_backward[e] = &quantize_backward_launch<T>;
    t.dequantize_backward[e] = &dequantize_backward_launch<T>;
    t.fake_quantize[e] = &fake_quantize_launch<T, int32_t>;
    t.fake_quantize_backward[e] = &fake_quantize_backward_launch<T, int32_t>;
    t.learnable[e] = &fake_quantize_launch<T, S>;
    t.learnable_backward_dx[e] = &fake_quantize_backward_launch<T, S>;
  });
}

/// Defined by the device's float-entries translation unit (compiled apart from the pair entries, so nvcc
/// works on two files in parallel).
::baracuda::detail::QuantizeTables quantize_float_tables();

}  // namespace quantize
BARACUDA_DEVICE_NAMESPACE_END
