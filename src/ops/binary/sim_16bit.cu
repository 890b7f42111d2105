// The binary family's sim kernels for f16 and bf16 (one part of the device's tables; sim.cu merges them).
#include "ops/binary/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN

const ::baracuda::detail::BinaryTables& binary::binary_tables_16bit() {
  static constexpr ::baracuda::detail::BinaryTables tables = binary::make_binary_tables<binary::HalfPart>();
  return tables;
}

BARACUDA_DEVICE_NAMESPACE_END
