/// \file
/// \brief The iteration space of an elementwise op over several operands, simplified once on the host:
/// extent-1 dimensions dropped, dimensions ordered by the output's strides, and adjacent dimensions
/// merged wherever they are contiguous for every operand (as PyTorch's TensorIterator coalesces).
///
/// Plain host C++ (no device code): the engine's launcher and the tests use it.
#pragma once

#include <array>
#include <cstdint>
#include <limits>

#include "baracuda/core/tensor.hpp"

namespace baracuda::detail {

/// Operand 0 is the output; operands 1.. are inputs. Dimensions are stored **innermost first**.
template <int NArgs>
struct ElementwiseGeometry {
  int rank = 0;  ///< after coalescing; 0 means one element (or none, see numel)
  int64_t numel = 0;
  std::array<int64_t, kMaxRank> sizes{};
  std::array<std::array<int64_t, kMaxRank>, NArgs> strides{};

  /// Rows of whole 16-byte vectors: every operand is dense (stride 1) in the innermost dimension and every
  /// outer stride is a multiple of `v` elements, so with 16-byte-aligned base pointers each row starts
  /// aligned and can be walked `v` elements at a time (a per-row scalar tail takes `sizes[0] % v`); an
  /// input (operand index ≥ `outputs`) may instead be constant along the row (innermost stride 0: a
  /// per-row scale, a scalar), read once per vector whatever its alignment. Rows narrower than `v` are left
  /// to the strided path. A single dense dimension is the one-row case.
  bool row_vectorizable(int v, int outputs = 1) const {
    if (rank == 0) return false;
    if (rank > 1 && sizes[0] < v) return false;
    for (int k = 0; k < NArgs; ++k) {
      if (k >= outputs && strides[k][0] == 0) continue;
      if (strides[k][0] != 1) return false;
      for (int d = 1; d < rank; ++d)
        if (strides[k][d] % v != 0) return false;
    }
    return true;
  }
  /// The element count and every operand's largest |offset| fit in int32 (the 32-bit index path).
  bool fits_int32() const {
    constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
    if (numel > kMax) return false;
    for (int k = 0; k < NArgs; ++k) {
      int64_t span = 0;
      for (int d = 0; d < rank; ++d) {
        const int64_t s = strides[k][d] < 0 ? -strides[k][d] : strides[k][d];
        if (s != 0 && sizes[d] - 1 > kMax / s) return false;
        span += (sizes[d] - 1) * s;
        if (span > kMax) return false;
      }
    }
    return true;
  }
};

/// Builds the coalesced geometry of a problem of `shape` whose operand k has element strides `strides[k]`
/// (outermost first, as in `DynTensor`). The shape must be valid (rank ≤ kMaxRank, extents ≥ 0).
template <int NArgs>
ElementwiseGeometry<NArgs> coalesce(const Shape& shape, const std::array<const int64_t*, NArgs>& strides) {
  ElementwiseGeometry<NArgs> g;
  g.numel = shape.numel();
  if (g.numel == 0) return g;

  // 1. Keep the dimensions of extent > 1, innermost first.
  int r = 0;
  std::array<int64_t, kMaxRank> size{};
  std::array<std::array<int64_t, kMaxRank>, NArgs> st{};
  for (int d = shape.rank - 1; d >= 0; --d) {
    if (shape.dims[d] == 1) continue;
    size[r] = shape.dims[d];
    for (int k = 0; k < NArgs; ++k) st[k][r] = strides[k][d];
    ++r;
  }

  // 2. Order dimensions by the output's |stride|, smallest innermost (a stable insertion sort: equal
  //    strides keep their order), so the innermost loop walks the output densely.
  auto abs64 = [](int64_t v) { return v < 0 ? -v : v; };
  for (int i = 1; i < r; ++i) {
    for (int j = i; j > 0 && abs64(st[0][j]) < abs64(st[0][j - 1]); --j) {
      std::swap(size[j], size[j - 1]);
      for (int k = 0; k < NArgs; ++k) std::swap(st[k][j], st[k][j - 1]);
    }
  }

  // 3. Merge dimension d into the last kept one when, for every operand, stride[d] == (the kept dimension's
  //    stride)·(its size so far): the kept one's own stride, not that of the d-1 before the merges.
  int out = 0;
  for (int d = 0; d < r; ++d) {
    if (out > 0) {
      bool mergeable = true;
      for (int k = 0; k < NArgs; ++k)
        if (st[k][d] != g.strides[k][out - 1] * g.sizes[out - 1]) mergeable = false;
      if (mergeable) {
        g.sizes[out - 1] *= size[d];
        continue;
      }
    }
    g.sizes[out] = size[d];
    for (int k = 0; k < NArgs; ++k) g.strides[k][out] = st[k][d];
    ++out;
  }
  g.rank = out;
  return g;
}

}  // namespace baracuda::detail
