// The quantize family's sim table: quantize and dequantize over (float kind × quantized kind) compiled
// here, the other entries taken from sim_float.cu.
#include "ops/quantize/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN

const ::baracuda::detail::QuantizeTables& quantize_tables() {
  static const ::baracuda::detail::QuantizeTables tables = [] {
    ::baracuda::detail::QuantizeTables t = quantize::quantize_float_tables();
    quantize::add_pair_entries(t);
    return t;
  }();
  return tables;
}

BARACUDA_DEVICE_NAMESPACE_END
