/// \file
/// \brief The host device's loop over an elementwise iteration space: every logical index of a shape in
/// row-major order, with each operand's element offset; and strided element access for the references. Plain C++ for the reference implementations: no
/// coalescing, no vectors, no reordering (it is meant to be obviously right, not fast).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/tensor.hpp"

namespace baracuda::detail {

/// Calls `f(offsets)` for every index of `shape`, row-major, where offsets[k] = Σ_d index[d]·strides[k][d].
template <size_t N, class F>
void for_each_strided(const Shape& shape, const std::array<const int64_t*, N>& strides, F&& f) {
  if (shape.numel() == 0) return;
  std::array<int64_t, kMaxRank> index{};
  std::array<int64_t, N> off{};
  for (;;) {
    f(off);
    int d = shape.rank - 1;
    for (; d >= 0; --d) {
      if (++index[d] < shape.dims[d]) {
        for (size_t k = 0; k < N; ++k) off[k] += strides[k][d];
        break;
      }
      for (size_t k = 0; k < N; ++k) off[k] -= (shape.dims[d] - 1) * strides[k][d];
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

/// Element (i, j) of a rank-2 view of element type T, by its strides (the GEMM references' matrix access).
template <class T>
const T& at2(const ConstDynTensor& t, int64_t i, int64_t j) {
  return static_cast<const T*>(t.data)[i * t.stride[0] + j * t.stride[1]];
}

}  // namespace baracuda::detail
