// The quantize family's entries over the float kind alone (backward passes, fake-quantize), compiled for both
// devices (cmake/BaracudaKernels.cmake: by nvcc for cuda, by the host compiler against the SIMT emulator for sim).
#include "ops/quantize/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace quantize {

::baracuda::detail::QuantizeTables quantize_float_tables() {
  ::baracuda::detail::QuantizeTables t{};
  add_float_entries(t);
  return t;
}

}  // namespace quantize
BARACUDA_DEVICE_NAMESPACE_END
