// The affine family's dispatch table for the sim device (the kernels of kernels.cuh compiled against the SIMT
// emulator).
#include "ops/affine/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN

const ::baracuda::detail::AffineTable& affine_table() {
  static constexpr ::baracuda::detail::AffineTable table = affine::make_affine_table();
  return table;
}

BARACUDA_DEVICE_NAMESPACE_END
