// Internal: the int_gemm family's launch records and dispatch tables (one per device: host reference, sim,
// cuda). The sim and cuda tables hold the int8 tensor-core kernel (kernels.cuh); their f64 linear slots are
// empty (the f64 epilogue is the host reference's) and select reports an empty slot as Unsupported.
#pragma once

#include "baracuda/core/element.hpp"
#include "baracuda/ops/int_gemm.hpp"
#include "core/exec_context.hpp"
#include "device/dispatch_table.hpp"

namespace baracuda::detail {

/// The decode GEMM's K parts (tuning.hpp's int_gemm_splits) and their workspace: `splits` > 1 only on the
/// devices, with `partial` s32 [splits, M, N] and, for the asymmetric linear epilogue, `partial_colsum` s32
/// [splits, N] (both dense).
struct IntGemmSplit {
  int splits = 1;
  DynTensor partial, partial_colsum;
};

/// IntGemm: validated operands (a [M,K], b [N,K] read; c [M,N] written; K-contiguous a and b).
struct IntGemmLaunch {
  int64_t m = 0, n = 0, k = 0;
  ConstDynTensor a, b;
  DynTensor c;
  IntGemmSplit split{};
};

/// The fused W8A8 linear (QuantizedLinear and SmoothQuantLinear share it): see int_gemm.hpp's epilogue.
/// `a` is the quantized x (QuantizedLinear's, in its workspace) or x_q (SmoothQuantLinear's).
struct LinearLaunch {
  int64_t m = 0, n = 0, k = 0;
  ConstDynTensor a;             ///< [M, K] s8/u8, K-contiguous
  ConstDynTensor w;             ///< [N, K] s8, K-contiguous
  ConstDynTensor a_scale;       ///< [M] opmath kind; empty: use a_scale_scalar for every row
  double a_scale_scalar = 1.0;  ///< SmoothQuant's x_scale (a float, exactly)
  ConstDynTensor a_zero_point;  ///< [M] s32, or empty (symmetric)
  ConstDynTensor w_scale;       ///< [N] or [1] opmath kind
  ConstDynTensor bias;          ///< [N] output kind, or empty
  LinearActivation activation = LinearActivation::None;
  DynTensor y;                  ///< [M, N], written
  IntGemmSplit split{};
};

/// IntGemm functions by [A kind][B kind]; the linear GEMM + epilogue by [activation-quantized kind][output kind].
/// `wgmma`: whether the functions hand problems to the wgmma table on a compute capability 9.0 GPU
/// (kernels.cuh's wgmma_kind: a cuda table built with sm_90a kernels), which the SKU then names.
struct IntGemmTables {
  KindPairTable<IntGemmFn> int_gemm{};
  KindPairTable<LinearFn> linear{};
  /// The symmetric linear epilogue alone by output kind, over s32 sums in the launch's split.partial (the
  /// cuBLASLt SKU's second step; sim and cuda, f64 empty).
  KindTable<LinearFn> linear_epilogue{};
  bool wgmma = false;
};

/// The quantized operand kinds (A and B of IntGemm) and the linear plans' output kinds.
using IntGemmOperandTypes = type_list<int8_t, uint8_t>;
using LinearOutputTypes = FloatTypes;

/// The wgmma kernel (sm_90a) at the tiles tuning.hpp's `choose_wgmma` picks: IntGemm by [A kind][B kind] at
/// each tile, the linear epilogue by [activation-quantized kind][output kind] at the narrow tile (f64 empty,
/// as in IntGemmTables). kernels.cuh's table functions hand a problem over to it on a compute capability 9.0
/// GPU; the sim twin exists for tests/ops/int_gemm_tiles_test, which runs every entry.
struct IntGemmWgmmaTables {
  KindPairTable<IntGemmFn> int_gemm_narrow{};
  KindPairTable<IntGemmFn> int_gemm_wide{};
  KindPairTable<LinearFn> linear{};
};

}  // namespace baracuda::detail

// reference: host.cpp; sim and cuda: the kernel unit device.cu
BARACUDA_DECLARE_DEVICE_TABLE(detail::IntGemmTables, int_gemm_tables)
// sim, and cuda in builds with sm_90a kernels: the kernel unit device_wgmma.cu
BARACUDA_DECLARE_KERNEL_TABLE(detail::IntGemmWgmmaTables, int_gemm_wgmma_tables)
