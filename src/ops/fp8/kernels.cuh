// Device code of the fp8 family: builds one device's function table from the quantize, dequantize and
// scaling-update kernels (the kernel unit device.cu instantiates it for both devices).
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include "ops/fp8/dequantize_kernels.cuh"
#include "ops/fp8/dispatch.hpp"
#include "ops/fp8/quantize_kernels.cuh"
#include "ops/fp8/scaling_update_kernel.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace fp8 {

template <class TIn, class TOut>
struct QuantizeEntry {
  static constexpr ::baracuda::detail::Fp8QuantizeFn fn = &quantize_launch<TIn, TOut>;
};
template <class TIn, class TOut>
struct DequantizeEntry {
  static constexpr ::baracuda::detail::Fp8DequantizeFn fn = &dequantize_launch<TIn, TOut>;
};

constexpr ::baracuda::detail::Fp8Functions make_fp8_functions() {
  ::baracuda::detail::Fp8Functions f{};
  ::baracuda::detail::add_kind_pair_entries<::baracuda::detail::Fp8QuantizeFn, QuantizeEntry>(
      f.quantize, ::baracuda::FloatTypes{}, ::baracuda::Fp8Types{});
  ::baracuda::detail::add_kind_pair_entries<::baracuda::detail::Fp8DequantizeFn, DequantizeEntry>(
      f.dequantize, ::baracuda::Fp8Types{}, ::baracuda::FloatTypes{});
  f.scaling_update = &scaling_update_launch;
  return f;
}

}  // namespace fp8
BARACUDA_DEVICE_NAMESPACE_END
