// The gemm family's kernel table, compiled for both devices (cmake/BaracudaKernels.cmake: by nvcc for cuda, by the
// host compiler against the SIMT emulator for sim): f16/bf16 inputs on the tensor-core kernel (tc_kernels.cuh,
// mma.sync m16n8k16), every kind pair on the CUDA-core kernel (simt_kernels.cuh), which is the f32 and f64 path and
// takes the f16/bf16 shapes the tensor-core kernel does not (tables.hpp's gemm_tc_takes).
#include "ops/gemm/simt_kernels.cuh"
#include "ops/gemm/tables.hpp"
#include "ops/gemm/tc_kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace gemm {

constexpr ::baracuda::detail::GemmTables make_tables() {
  ::baracuda::detail::GemmTables t{};
  ::baracuda::detail::for_each_gemm_kinds([&]<class TAB, class TCD>(std::type_identity<TAB>, std::type_identity<TCD>) {
    using ::baracuda::detail::kind_index;
    const size_t i = kind_index(kind_of<TAB>), o = kind_index(kind_of<TCD>);
    t.simt[i][o] = &simt<TAB, TCD>;
    if constexpr (std::is_same_v<TAB, __half> || std::is_same_v<TAB, __nv_bfloat16>) {
      t.gemm[i][o] = &tensor_core<TAB, TCD>;
      t.variant[i][o] = "tc_m16n8k16";
    } else {
      t.gemm[i][o] = &simt<TAB, TCD>;
      t.variant[i][o] = "simt";
    }
  });
  return t;
}

}  // namespace gemm

BARACUDA_DEFINE_TABLE(detail::GemmTables, gemm_tables, gemm::make_tables())

BARACUDA_DEVICE_NAMESPACE_END
