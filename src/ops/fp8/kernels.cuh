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

constexpr ::baracuda::detail::Fp8Functions make_fp8_functions() {
  return ::baracuda::detail::make_fp8_functions(
      []<class In, class Out>(std::type_identity<In>, std::type_identity<Out>) { return &quantize_launch<In, Out>; },
      []<class In, class Out>(std::type_identity<In>, std::type_identity<Out>) { return &dequantize_launch<In, Out>; },
      &scaling_update_launch);
}

}  // namespace fp8
BARACUDA_DEVICE_NAMESPACE_END
