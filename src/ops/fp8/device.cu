// The fp8 family's functions (kernels.cuh), compiled for both devices (cmake/BaracudaKernels.cmake: by nvcc for
// cuda, by the host compiler against the SIMT emulator for sim).
#include "ops/fp8/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN

BARACUDA_DEFINE_TABLE(detail::Fp8Functions, fp8_functions, fp8::make_fp8_functions())

BARACUDA_DEVICE_NAMESPACE_END
