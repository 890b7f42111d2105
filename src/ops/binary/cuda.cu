// The binary family's dispatch tables for the cuda device (the kernels of kernels.cuh compiled by nvcc).
#include "ops/binary/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN

const ::baracuda::detail::BinaryTables& binary_tables() {
  static constexpr ::baracuda::detail::BinaryTables tables =
      binary::make_binary_tables<::baracuda::BinaryNumericTypes>();
  return tables;
}

BARACUDA_DEVICE_NAMESPACE_END
