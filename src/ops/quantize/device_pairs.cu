// The quantize family's table: quantize and dequantize over (float kind × quantized kind) compiled here, the other
// entries taken from device_float.cu; compiled for both devices (cmake/BaracudaKernels.cmake: by nvcc for cuda, by
// the host compiler against the SIMT emulator for sim).
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
