// The fp8 family's functions for the sim device (the kernels of kernels.cuh compiled against the SIMT emulator).
#include "ops/fp8/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN

const ::baracuda::detail::Fp8Functions& fp8_functions() {
  static constexpr ::baracuda::detail::Fp8Functions functions = fp8::make_fp8_functions();
  return functions;
}

BARACUDA_DEVICE_NAMESPACE_END
