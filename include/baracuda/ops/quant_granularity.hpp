/// \file
/// \brief `QuantGranularity`: which elements of a tensor share one quantization scale and zero point, and the
/// shape of the scale / zero-point tensors that follows from it. Every quantization plan (quantize,
/// dequantize, fake-quantize, dynamic-range quantize) takes one.
///
/// | granularity | one (scale, zero point) per | parameter shape for an input of shape `[d0, …, d(r−1)]` |
/// |---|---|---|
/// | `per_tensor()` | the whole tensor | `[1]` |
/// | `per_channel(axis)` | index along `axis` (PyTorch's `quantize_per_channel`) | `[d_axis]` |
/// | `per_token()` | row of the last dimension (LLM activations `[tokens, hidden]`) | `[d0, …, d(r−2)]` (rank ≥ 2) |
/// | `per_group(axis, g)` | run of `g` consecutive elements along `axis`, per index of the other axes | the input's shape with `d_axis` replaced by `d_axis / g` |
///
/// `axis` may be negative (counted from the end, as in PyTorch). A group size must be positive and divide
/// the axis' extent (`InvalidProblem` otherwise: a ragged last group is never guessed). Parameter tensors
/// may have any strides (a per-channel scale may be a strided view); they are read, never written, by
/// quantize/dequantize plans.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "baracuda/core/hash.hpp"
#include "baracuda/core/status.hpp"
#include "baracuda/core/tensor.hpp"

namespace baracuda {

struct QuantGranularity {
  enum class Kind : uint8_t { PerTensor = 0, PerChannel = 1, PerToken = 2, PerGroup = 3 };

  Kind kind = Kind::PerTensor;
  int axis = 0;            ///< PerChannel and PerGroup: the axis, in [−rank, rank)
  int64_t group_size = 0;  ///< PerGroup: elements per group along `axis`

  static constexpr QuantGranularity per_tensor() { return {Kind::PerTensor, 0, 0}; }
  static constexpr QuantGranularity per_channel(int axis) { return {Kind::PerChannel, axis, 0}; }
  static constexpr QuantGranularity per_token() { return {Kind::PerToken, 0, 0}; }
  static constexpr QuantGranularity per_group(int axis, int64_t group_size) {
    return {Kind::PerGroup, axis, group_size};
  }

  /// The shape of the scale and zero-point tensors for an input of `shape`; `InvalidProblem` naming `plan`
  /// when the granularity does not fit the shape (axis out of range, per-token on rank < 2, group size ≤ 0
  /// or not dividing the axis, an invalid kind).
  Result<Shape> param_shape(std::string_view plan, const Shape& shape) const;
  /// "per_tensor", "per_channel(axis=1)", "per_token", "per_group(axis=-1, size=128)".
  std::string to_string() const;

  friend bool operator==(const QuantGranularity&, const QuantGranularity&) = default;
  size_t hash() const { return detail::hash_fields(kind, axis, group_size); }
};

}  // namespace baracuda
