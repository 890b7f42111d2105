// The binary family's dispatch tables, compiled for both devices (cmake/BaracudaKernels.cmake: by nvcc for cuda, by
// the host compiler against the SIMT emulator for sim): the f32 and f64 kernels, and the merge of the parts that
// device_16bit.cu (f16, bf16) and device_int.cu (s8, u8, s32, s64) instantiate.
#include "ops/binary/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN

const ::baracuda::detail::BinaryTables& binary_tables() {
  static constexpr ::baracuda::detail::BinaryTables wide = binary::make_binary_tables<binary::WideFloatPart>();
  static const ::baracuda::detail::BinaryTables tables =
      ::baracuda::detail::merge_binary_tables({&wide, &binary::binary_tables_16bit(), &binary::binary_tables_int()});
  return tables;
}

BARACUDA_DEVICE_NAMESPACE_END
