// The quantize family's sim entries over the float kind alone (backward passes, fake-quantize).
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
