// The grouped_gemm family's kernel table, compiled for both devices (cmake/BaracudaKernels.cmake: by nvcc for
// cuda, by the host compiler against the SIMT emulator for sim): f16/bf16 inputs on the tensor-core kernel
// (kernels.cuh, mma.sync m16n8k16), f32 on the CUDA-core kernel (simt_kernels.cuh).
#include "ops/grouped_gemm/kernels.cuh"
#include "ops/grouped_gemm/simt_kernels.cuh"
#include "ops/grouped_gemm/tables.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace grouped_gemm {

constexpr ::baracuda::detail::GroupedGemmTables make_tables() {
  ::baracuda::detail::GroupedGemmTables t{};
  ::baracuda::detail::for_each_grouped_gemm_kinds(
      [&]<class TX, class TY>(std::type_identity<TX>, std::type_identity<TY>) {
        using ::baracuda::detail::kind_index;
        const size_t i = kind_index(kind_of<TX>), o = kind_index(kind_of<TY>);
        if constexpr (std::is_same_v<TX, float>) {
          t.gemm[i][o] = &simt<TX, TY>;
          t.variant[i][o] = "simt";
        } else {
          t.gemm[i][o] = &tensor_core<TX, TY>;
          t.variant[i][o] = "tc_m16n8k16";
        }
      });
  return t;
}

}  // namespace grouped_gemm

BARACUDA_DEFINE_TABLE(detail::GroupedGemmTables, grouped_gemm_tables, grouped_gemm::make_tables())

BARACUDA_DEVICE_NAMESPACE_END
