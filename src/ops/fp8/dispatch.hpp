// Internal: the fp8 family's launch records, dispatch-table types and the three devices' tables.
#pragma once

#include <string_view>

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

/// One device's functions: `quantize(std::type_identity<In>{}, std::type_identity<Out>{})` (a generic
/// lambda naming the device's quantize function template, as add_kind_pair_fns takes), likewise `dequantize`,
/// at the kind pairs the catalog's line of each table (baracuda/ops/fp8_ops.def) names. The catalog's `table`
/// column names both the table and the parameter that fills it.
template <class QuantizeMake, class DequantizeMake>
constexpr Fp8Functions make_fp8_functions(QuantizeMake quantize, DequantizeMake dequantize,
                                          Fp8ScalingUpdateFn scaling_update) {
  Fp8Functions f{};
#define BARACUDA_FP8_PLAN(name, Plan, table, inputs, outputs, doc) \
  add_kind_pair_fns(f.table, inputs{}, outputs{}, table);
#include "baracuda/ops/fp8_ops.def"
#undef BARACUDA_FP8_PLAN
  f.scaling_update = scaling_update;
  return f;
}

/// Each plan's line of the catalog: `Fp8PlanInfo<dynamic::Fp8QuantizePlan>::op` (the SKU's op name), `::plan`
/// (the name in messages) and `::member` (its table in Fp8Functions).
template <class Plan>
struct Fp8PlanInfo;
#define BARACUDA_FP8_PLAN(name, Plan, table, inputs, outputs, doc) \
  template <>                                                      \
  struct Fp8PlanInfo<dynamic::Plan> {                              \
    static constexpr std::string_view op = #name, plan = #Plan;   \
    static constexpr auto member = &Fp8Functions::table;           \
  };
#include "baracuda/ops/fp8_ops.def"
#undef BARACUDA_FP8_PLAN

}  // namespace baracuda::detail

// reference: host.cpp; sim and cuda: the kernel unit device.cu
BARACUDA_DECLARE_DEVICE_TABLE(detail::Fp8Functions, fp8_functions)
