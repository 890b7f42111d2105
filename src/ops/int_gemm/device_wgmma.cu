// The int_gemm family's wgmma table (tables.hpp's IntGemmWgmmaTables): wgmma_kernels.cuh at the tiles of
// tuning.hpp's choose_wgmma, for every operand and output kind of the family's own table. Compiled by nvcc
// for sm_90a alone (baracuda_add_kernel_sources ... SM90A, in builds for sm_90) and against the emulator.
#include "ops/int_gemm/launch_params.cuh"
#include "ops/int_gemm/wgmma_kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace int_gemm {
namespace {

using ::baracuda::detail::IntGemmWgmmaTile;

template <class TA, class TB, IntGemmWgmmaTile kT>
Status wgmma_int_gemm_fn(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::IntGemmLaunch& l) {
  return launch_wgmma_tile<TA, TB, int32_t, false, kT>(ctx, gemm_params(l), "IntGemmPlan");
}

template <class TA, class T>
Status wgmma_linear_fn(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::LinearLaunch& l) {
  constexpr IntGemmWgmmaTile kT = ::baracuda::detail::kIntGemmWgmmaNarrow;
  constexpr const char* kPlan = "QuantizedLinearPlan/SmoothQuantLinearPlan";
  const GemmParams p = linear_params(l);
  if (p.a_zp != nullptr) return launch_wgmma_tile<TA, int8_t, T, true, kT>(ctx, p, kPlan);
  return launch_wgmma_tile<TA, int8_t, T, false, kT>(ctx, p, kPlan);
}

constexpr ::baracuda::detail::IntGemmWgmmaTables make_wgmma_tables() {
  using namespace ::baracuda::detail;
  IntGemmWgmmaTables t{};
  add_kind_pair_fns(t.int_gemm_narrow, IntGemmOperandTypes{}, IntGemmOperandTypes{},
                    []<class TA, class TB>(std::type_identity<TA>, std::type_identity<TB>) {
                      return &wgmma_int_gemm_fn<TA, TB, kIntGemmWgmmaNarrow>;
                    });
  add_kind_pair_fns(t.int_gemm_wide, IntGemmOperandTypes{}, IntGemmOperandTypes{},
                    []<class TA, class TB>(std::type_identity<TA>, std::type_identity<TB>) {
                      return &wgmma_int_gemm_fn<TA, TB, kIntGemmWgmmaWide>;
                    });
  // the f64 epilogue is the host reference's alone: its slots stay empty
  add_kind_pair_fns(t.linear, IntGemmOperandTypes{}, LinearOutputTypes{},
                    []<class TA, class T>(std::type_identity<TA>, std::type_identity<T>) {
                      if constexpr (std::is_same_v<T, double>)
                        return LinearFn{};
                      else
                        return LinearFn{&wgmma_linear_fn<TA, T>};
                    });
  return t;
}

}  // namespace
}  // namespace int_gemm

BARACUDA_DEFINE_TABLE(detail::IntGemmWgmmaTables, int_gemm_wgmma_tables, int_gemm::make_wgmma_tables())

BARACUDA_DEVICE_NAMESPACE_END
