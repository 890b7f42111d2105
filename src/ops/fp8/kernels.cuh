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
  return ::baracuda::detail::Fp8TableBuilder<QuantizeEntry, DequantizeEntry>::build(&scaling_update_launch);
}

}  // namespace fp8
BARACUDA_DEVICE_NAMESPACE_END
