// The gated-activation family's backward dispatch table (kernels.cuh), compiled for both devices
// (cmake/BaracudaKernels.cmake: by nvcc for cuda, by the host compiler against the SIMT emulator for sim). Forward
// and backward are separate translation units so that they compile in parallel.
#include "ops/gated_activation/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN

const ::baracuda::detail::GatedBackwardTable& gated_backward_table() {
  return gated::device_gated_table<::baracuda::detail::GatedBackwardTable>();
}

BARACUDA_DEVICE_NAMESPACE_END
