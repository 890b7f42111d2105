// The int4_marlin_repack family's table for the sim device: kernels.cuh (the GPTQ / AWQ → Marlin gather kernel)
// compiled as C++ against the SIMT emulator.
#include "ops/int4_marlin_repack/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN

const ::baracuda::detail::Int4RepackTables& int4_marlin_repack_tables() {
  static constexpr ::baracuda::detail::Int4RepackTables t = int4_marlin_repack::make_tables();
  return t;
}

BARACUDA_DEVICE_NAMESPACE_END
