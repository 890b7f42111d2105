// The fp8 family's functions (kernels.cuh), compiled for both devices (cmake/BaracudaKernels.cmake: by nvcc for
// cuda, by the host compiler against the SIMT emulator for sim).
#include "ops/fp8/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN

const ::baracuda::detail::Fp8Functions& fp8_functions() {
  static constexpr ::baracuda::detail::Fp8Functions functions = fp8::make_fp8_functions();
  return functions;
}

BARACUDA_DEVICE_NAMESPACE_END
