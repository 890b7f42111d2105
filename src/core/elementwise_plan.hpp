// Internal: what the plans of the broadcasting elementwise families (binary, ternary) share in plan.cpp:
// viewing an operand over the output shape, and the Unsupported message for an (op, kind) pair a device's
// table leaves empty.
#pragma once

#include <string>
#include <string_view>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/element.hpp"
#include "baracuda/core/status.hpp"
#include "core/plan_core.hpp"
#include "device/dispatch_table.hpp"

namespace baracuda::detail {

/// `t` viewed over `out` (a shape it broadcasts to): leading dimensions added, stride 0 where t has extent 1
/// and the output does not.
template <class V>
BasicDynTensor<V> broadcast_view(const BasicDynTensor<V>& t, const Shape& out) {
  BasicDynTensor<V> v = t;
  v.shape = out;
  v.stride = {};
  const int lead = out.rank - t.shape.rank;
  for (int d = 0; d < out.rank; ++d) {
    const int src = d - lead;
    if (src < 0) continue;
    v.stride[d] = (t.shape.dims[src] == 1 && out.dims[d] != 1) ? 0 : t.stride[src];
  }
  return v;
}

}  // namespace baracuda::detail
