// The binary family's kernels for s8, u8, s32 and s64 (one part of the device's tables; device.cu merges them),
// compiled for both devices (cmake/BaracudaKernels.cmake: by nvcc for cuda, by the host compiler against the SIMT
// emulator for sim).
#include "ops/binary/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN

const ::baracuda::detail::BinaryTables& binary::binary_tables_int() {
  static constexpr ::baracuda::detail::BinaryTables tables = binary::make_binary_tables<binary::IntegerPart>();
  return tables;
}

BARACUDA_DEVICE_NAMESPACE_END
