// The binary family's sim kernels for s8, u8, s32 and s64 (one part of the device's tables; sim.cu merges them).
#include "ops/binary/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN

const ::baracuda::detail::BinaryTables& binary::binary_tables_int() {
  static constexpr ::baracuda::detail::BinaryTables tables = binary::make_binary_tables<binary::IntegerPart>();
  return tables;
}

BARACUDA_DEVICE_NAMESPACE_END
