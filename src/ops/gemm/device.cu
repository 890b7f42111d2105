// The gemm family's kernel table (simt_kernels.cuh: the CUDA-core kernel, every kind combination), compiled for
// both devices (cmake/BaracudaKernels.cmake: by nvcc for cuda, by the host compiler against the SIMT emulator
// for sim).
#include "ops/gemm/simt_kernels.cuh"
#include "ops/gemm/tables.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace gemm {

constexpr ::baracuda::detail::GemmTables make_tables() {
  ::baracuda::detail::GemmTables t{};
  ::baracuda::detail::for_each_gemm_kinds([&]<class TAB, class TCD>(std::type_identity<TAB>, std::type_identity<TCD>) {
    using ::baracuda::detail::kind_index;
    t.gemm[kind_index(kind_of<TAB>)][kind_index(kind_of<TCD>)] = &simt<TAB, TCD>;
    t.variant[kind_index(kind_of<TAB>)][kind_index(kind_of<TCD>)] = "simt";
  });
  return t;
}

}  // namespace gemm

BARACUDA_DEFINE_TABLE(detail::GemmTables, gemm_tables, gemm::make_tables())

BARACUDA_DEVICE_NAMESPACE_END
