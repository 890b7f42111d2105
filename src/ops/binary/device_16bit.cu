// The binary family's kernels for f16 and bf16 (one part of the device's tables; device.cu merges them), compiled
// for both devices (cmake/BaracudaKernels.cmake: by nvcc for cuda, by the host compiler against the SIMT emulator
// for sim).
#include "ops/binary/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN

const ::baracuda::detail::BinaryTables& binary::binary_tables_16bit() {
  static constexpr ::baracuda::detail::BinaryTables tables = binary::make_binary_tables<binary::HalfPart>();
  return tables;
}

BARACUDA_DEVICE_NAMESPACE_END
