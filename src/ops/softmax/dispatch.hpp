// Internal: the softmax family's launch record and its tables (forward and backward), by element kind.
#pragma once

#include <cstdint>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/workspace.hpp"
#include "baracuda/ops/softmax.hpp"
#include "core/exec_context.hpp"
#include "device/dispatch_table.hpp"

namespace baracuda::detail {

/// What a softmax function receives, all views over one shape (the mask, when present, already broadcast
/// to it): forward `in = x`, `aux = mask` (empty: none), `out = y`; backward `in = dy`, `aux = y`,
/// `out = dx`. `dim` is the normalized dimension (0 ≤ dim < rank), `stats` the workspace's per-slice values
/// (opmath pairs, row-major over the other dimensions), `partials` the rest of the workspace.
struct SoftmaxLaunch {
  SoftmaxOp op = SoftmaxOp::Softmax;
  ConstDynTensor in;
  ConstDynTensor aux;
  DynTensor out;
  int dim = 0;
  double inv_temperature = 1;
  void* stats = nullptr;
  Workspace partials;
};

/// Bytes of the per-slice statistics: two opmath values per slice (the forward's max and Σ exp(z − max);
/// the backward uses the first), rounded up to 256.
inline size_t softmax_stats_bytes(ElementKind k, const Shape& shape, int dim) {
  int64_t slices = 1;
  for (int d = 0; d < shape.rank; ++d)
    if (d != dim) slices *= shape.dims[d];
  const size_t bytes = 2 * static_cast<size_t>(slices) * (k == ElementKind::F64 ? 8 : 4);
  return (bytes + 255) / 256 * 256;
}

/// Indexed by the element kind; nullptr = Unsupported.
using SoftmaxTable = KindTable<SoftmaxFn>;
using SoftmaxTypes = FloatTypes;

}  // namespace baracuda::detail

// reference: host.cpp; sim and cuda: the kernel unit device.cu
BARACUDA_DECLARE_DEVICE_TABLE(detail::SoftmaxTable, softmax_forward_table)
BARACUDA_DECLARE_DEVICE_TABLE(detail::SoftmaxTable, softmax_backward_table)
// sim and cuda only (the kernel unit device.cu): the single-pass row kernels (row_kernel.cuh).
BARACUDA_DECLARE_KERNEL_TABLE(detail::SoftmaxTable, softmax_rows_table)
BARACUDA_DECLARE_KERNEL_TABLE(detail::SoftmaxTable, softmax_backward_rows_table)
