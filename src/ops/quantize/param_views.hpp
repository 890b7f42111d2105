// Internal: the iteration space shared by every quantization kernel. A granularity becomes plain
// broadcasting: the input is iterated over `iter` (its own shape, with a per-group axis split into
// (groups, group_size)), and a scale or zero-point tensor of `param_shape` is viewed over `iter` with
// stride 0 along every dimension it does not vary in. The elementwise engine then needs no notion of
// granularity, and a segmented reduction over the dimensions outside `param_dims_mask()` computes one
// value per parameter (dynamic range, learnable fake-quantize gradients).
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/ops/quant_granularity.hpp"

namespace baracuda::detail {

struct QuantLayout {
  QuantGranularity granularity;
  Shape shape;        ///< the input's shape
  Shape param_shape;  ///< the scale / zero-point shape (QuantGranularity::param_shape)
  Shape iter;         ///< the iteration shape: `shape`, the group axis split for PerGroup
  int axis = 0;       ///< normalized axis (PerChannel, PerGroup)

  /// A tensor of `shape` (input, output, gradient) as a view over `iter` (read-only or writable as given).
  template <class V>
  BasicDynTensor<V> data_view(const BasicDynTensor<V>& t) const {
    BasicDynTensor<V> v = t;
    v.shape = iter;
    if (granularity.kind == QuantGranularity::Kind::PerGroup) {
      for (int d = shape.rank; d > axis + 1; --d) v.stride[d] = t.stride[d - 1];
      v.stride[axis] = t.stride[axis] * granularity.group_size;
      v.stride[axis + 1] = t.stride[axis];
    }
    return v;
  }
  /// A tensor of `param_shape` as a broadcast view over `iter`.
  template <class V>
  BasicDynTensor<V> param_view(const BasicDynTensor<V>& p) const {
    BasicDynTensor<V> v = p;
    v.shape = iter;
    for (int d = 0; d < kMaxRank; ++d) v.stride[d] = 0;
    switch (granularity.kind) {
      case QuantGranularity::Kind::PerTensor: break;
      case QuantGranularity::Kind::PerChannel: v.stride[axis] = p.stride[0]; break;
      case QuantGranularity::Kind::PerToken:
        for (int d = 0; d + 1 < shape.rank; ++d) v.stride[d] = p.stride[d];
        break;
      case QuantGranularity::Kind::PerGroup:
        for (int d = 0; d < shape.rank; ++d) v.stride[d <= axis ? d : d + 1] = p.stride[d];
        break;
    }
    return v;
  }
  /// Bit d set when dimension d of `iter` indexes the parameters (the dimensions a per-parameter reduction
  /// keeps); the others are reduced. Parameters are numbered row-major over the kept dimensions, which is
  /// the row-major order of a dense `param_shape` tensor.
  uint32_t param_dims_mask() const;
};

/// The even (`which` = 0) or odd (1) elements along the last dimension of a view: the last extent halved
/// (it must be even), the last stride doubled. Packed 4-bit kernels read a pair per byte this way.
template <class V>
BasicDynTensor<V> pair_view(const BasicDynTensor<V>& t, int which) {
  using Byte = std::conditional_t<std::is_const_v<V>, const char, char>;
  BasicDynTensor<V> v = t;
  const int last = t.shape.rank - 1;
  v.shape.dims[last] = t.shape[last] / 2;
  v.stride[last] = t.stride[last] * 2;
  if (which == 1) v.data = static_cast<Byte*>(t.data) + t.stride[last] * (element_bits(t.kind) / 8);
  return v;
}
/// A contiguous packed 4-bit tensor of logical shape `layout.shape` as bytes (kind U8) over `layout.iter`
/// with the last extent halved: byte j of a row holds elements 2j (low nibble) and 2j + 1 (high nibble).
template <class V>
BasicDynTensor<V> packed_bytes_view(const QuantLayout& layout, const BasicDynTensor<V>& packed) {
  Shape bytes = layout.iter;
  bytes.dims[bytes.rank - 1] /= 2;
  return BasicDynTensor<V>::dense(packed.data, ElementKind::U8, bytes);
}

/// A packed 4-bit tensor (s4, u4) pairs elements along the last dimension of `layout.iter`: its extent — the
/// last dimension, or the group size of a per-group granularity along the last axis — must be even, so
/// that no byte straddles two rows or two groups. `InvalidProblem` naming `plan` otherwise; other kinds pass.
Status check_packed_pairs(std::string_view plan, const QuantLayout& layout, ElementKind quantized);

/// The layout of `g` over an input of `shape`, or the granularity's `InvalidProblem` naming `plan`.
Result<QuantLayout> quant_layout(std::string_view plan, const QuantGranularity& g, const Shape& shape);

}  // namespace baracuda::detail
