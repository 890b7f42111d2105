/// \file
/// \brief The index decomposition the elementwise and segmented-reduction engines share: a linear index over
/// a list of dimensions (innermost first) to each operand's element offset.
#pragma once

#include "sim/compat.cuh"

#include <cstdint>

#include "baracuda/core/tensor.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN

/// Adds to `off[k]` operand k's offset of linear index `i` over dimensions [First, dims.rank) of `dims`
/// (`dims.sizes[d]`, `dims.strides[k][d]`, innermost first). The outermost dimension needs no division, so a
/// list of one or two dimensions needs at most one.
template <int First, int N, class Dims>
__device__ __forceinline__ void add_linear_offsets(const Dims& dims, int64_t i, int64_t (&off)[N]) {
  BARACUDA_UNROLL
  for (int d = First; d < kMaxRank; ++d) {
    if (d == dims.rank) break;
    int64_t c = i;
    if (d + 1 < dims.rank) {
      c = i % dims.sizes[d];
      i /= dims.sizes[d];
    }
    BARACUDA_UNROLL
    for (int k = 0; k < N; ++k) off[k] += c * dims.strides[k][d];
  }
}

BARACUDA_DEVICE_NAMESPACE_END
