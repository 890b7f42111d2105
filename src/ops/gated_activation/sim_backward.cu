// The gated-activation family's backward dispatch table for the sim device (kernels.cuh compiled against the SIMT emulator).
// Forward and backward are separate translation units so that they compile in parallel.
#include "ops/gated_activation/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN

const ::baracuda::detail::GatedBackwardTable& gated_backward_table() {
  static constexpr ::baracuda::detail::GatedBackwardTable table = gated::make_backward_table();
  return table;
}

BARACUDA_DEVICE_NAMESPACE_END
