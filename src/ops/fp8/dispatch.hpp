// Internal: the fp8 family's launch records, dispatch-table types and the three devices' tables.
#pragma once

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/ops/fp8.hpp"
#include "core/exec_context.hpp"
#include "device/dispatch_table.hpp"

namespace baracuda::detail {

/// Validated views; x may be empty (the amax is still written unless accumulating, and scale_inv when
/// given). `scale_inv.data` null: no scale_inv output. `skip_nan_amax`: NaN elements leave the amax
/// unchanged (TransformerEngine's fmaxf), else one NaN makes it the quiet NaN (PyTorch, Exact).
struct Fp8QuantizeLaunch {
  ConstDynTensor x;
  ConstDynTensor scale;
  DynTensor y;
  DynTensor amax;
  bool accumulate_amax = false;
  DynTensor scale_inv;
  bool skip_nan_amax = false;
};

/// Validated, non-empty views.
struct Fp8DequantizeLaunch {
  ConstDynTensor x;
  ConstDynTensor scale_inv;
  DynTensor y;
};

/// Validated views (all three written; the history and the scale also read); `scaled_max` =
/// fp8_max · 2^−margin (exact in f32 for |margin| ≤ 64).
struct Fp8ScalingUpdateLaunch {
  DynTensor amax_history;
  DynTensor scale;
  DynTensor scale_inv;
  AmaxComputeAlgo algo = AmaxComputeAlgo::Max;
  float scaled_max = 448.0f;
};

/// Quantize: [input kind][fp8 kind]; dequantize: [fp8 kind][output kind]; nullptr = Unsupported.
using Fp8QuantizeTable = KindPairTable<Fp8QuantizeFn>;
using Fp8DequantizeTable = KindPairTable<Fp8DequantizeFn>;

/// One device's functions of the family.
struct Fp8Functions {
  Fp8QuantizeTable quantize{};
  Fp8DequantizeTable dequantize{};
  Fp8ScalingUpdateFn scaling_update = nullptr;
};

}  // namespace baracuda::detail

// reference: host.cpp; sim and cuda: the kernel unit device.cu
BARACUDA_DECLARE_DEVICE_TABLE(detail::Fp8Functions, fp8_functions)
