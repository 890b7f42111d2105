// Internal: the dynamic-range family's first pass (range → scale, zero point): its launch record, its
// dispatch-table type and the three devices' tables. The second pass is the quantize family's function.
#pragma once

#include <cstdint>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/workspace.hpp"
#include "baracuda/ops/dynamic_range_quantize.hpp"
#include "core/exec_context.hpp"
#include "device/dispatch_table.hpp"
#include "ops/quantize/param_views.hpp"

namespace baracuda::detail {

/// What a parameter function receives: the layout, x (as given, of `layout.shape`), the scale and zero
/// point to write (of `layout.param_shape`; the zero point may be workspace memory), the mode and range,
/// and the workspace for the reduction's partials.
struct DynamicRangeLaunch {
  QuantLayout layout;
  DynTensor x;
  DynTensor scale;
  DynTensor zero_point;
  DynamicRangeMode mode = DynamicRangeMode::Symmetric;
  int32_t qmin = 0;
  int32_t qmax = 0;
  Workspace workspace;
};

using DynamicRangeParamsFn = Status (*)(const ExecContext&, const DynamicRangeLaunch&);
/// Indexed by x's element kind; nullptr = Unsupported.
using DynamicRangeParamsTable = KindTable<DynamicRangeParamsFn>;

/// The element kinds of x.
using DynamicRangeTypes = FloatTypes;

}  // namespace baracuda::detail

namespace baracuda {
namespace reference {
const detail::DynamicRangeParamsTable& dynamic_range_params_table();  // host.cpp
}
inline namespace device_sim {
const detail::DynamicRangeParamsTable& dynamic_range_params_table();  // sim.cu
}
#if BARACUDA_HAVE_CUDA_KERNELS
inline namespace device_cuda {
const detail::DynamicRangeParamsTable& dynamic_range_params_table();  // cuda.cu
}
#endif
}  // namespace baracuda
