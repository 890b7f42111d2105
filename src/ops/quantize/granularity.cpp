// QuantGranularity: parameter shapes, names and hashing; and the iteration layout every quantization kernel
// uses (param_views.hpp, whose views over it are templates there).
#include "baracuda/ops/quant_granularity.hpp"

#include <string>

#include "ops/quantize/param_views.hpp"

namespace baracuda {
namespace {

std::string s(std::string_view v) { return std::string(v); }

// The axis in [0, rank), or an error naming the plan.
Result<int> normalized_axis(std::string_view plan, int axis, int rank) {
  if (axis < -rank || axis >= rank)
    return Error::invalid(s(plan) + ": quantization axis " + std::to_string(axis) + " is out of range for rank " +
                          std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

}  // namespace

Result<Shape> QuantGranularity::param_shape(std::string_view plan, const Shape& shape) const {
  if (!shape.valid()) return Error::invalid(s(plan) + ": invalid input shape");
  switch (kind) {
    case Kind::PerTensor:
      return Shape{1};
    case Kind::PerChannel: {
      auto a = normalized_axis(plan, axis, shape.rank);
      if (!a) return a.error();
      return Shape{shape[*a]};
    }
    case Kind::PerToken: {
      if (shape.rank < 2)
        return Error::invalid(s(plan) + ": per-token quantization needs rank >= 2 ([tokens, hidden]); got rank " +
                              std::to_string(shape.rank));
      Shape p = shape;
      p.rank = shape.rank - 1;
      return p;
    }
    case Kind::PerGroup: {
      auto a = normalized_axis(plan, axis, shape.rank);
      if (!a) return a.error();
      if (group_size <= 0)
        return Error::invalid(s(plan) + ": group size must be positive; got " + std::to_string(group_size));
      if (shape[*a] % group_size != 0)
        return Error::invalid(s(plan) + ": group size " + std::to_string(group_size) + " does not divide extent " +
                              std::to_string(shape[*a]) + " of axis " + std::to_string(*a) +
                              " (ragged groups are not supported)");
      Shape p = shape;
      p.dims[*a] = shape[*a] / group_size;
      return p;
    }
  }
  return Error::invalid(s(plan) + ": invalid QuantGranularity kind");
}

std::string QuantGranularity::to_string() const {
  switch (kind) {
    case Kind::PerTensor: return "per_tensor";
    case Kind::PerChannel: return "per_channel(axis=" + std::to_string(axis) + ")";
    case Kind::PerToken: return "per_token";
    case Kind::PerGroup:
      return "per_group(axis=" + std::to_string(axis) + ", size=" + std::to_string(group_size) + ")";
  }
  return "?";
}

namespace detail {

Result<QuantLayout> quant_layout(std::string_view plan, const QuantGranularity& g, const Shape& shape) {
  auto p = g.param_shape(plan, shape);
  if (!p) return p.error();
  QuantLayout l;
  l.granularity = g;
  l.shape = shape;
  l.param_shape = *p;
  l.iter = shape;
  if (g.kind == QuantGranularity::Kind::PerChannel || g.kind == QuantGranularity::Kind::PerGroup)
    l.axis = g.axis < 0 ? g.axis + shape.rank : g.axis;
  if (g.kind == QuantGranularity::Kind::PerGroup) {
    if (shape.rank + 1 > kMaxRank)
      return Error::unsupported(s(plan) + ": per-group quantization of a rank-" + std::to_string(shape.rank) +
                                " tensor needs rank " + std::to_string(shape.rank + 1) + " internally (max " +
                                std::to_string(kMaxRank) + ")");
    // Split the group axis into (groups, group_size).
    l.iter.rank = shape.rank + 1;
    for (int d = shape.rank; d > l.axis + 1; --d) l.iter.dims[d] = shape.dims[d - 1];
    l.iter.dims[l.axis] = shape[l.axis] / g.group_size;
    l.iter.dims[l.axis + 1] = g.group_size;
  }
  return l;
}

uint32_t QuantLayout::param_dims_mask() const {
  uint32_t m = 0;
  switch (granularity.kind) {
    case QuantGranularity::Kind::PerTensor: break;
    case QuantGranularity::Kind::PerChannel: m = 1u << axis; break;
    case QuantGranularity::Kind::PerToken:
      for (int d = 0; d + 1 < shape.rank; ++d) m |= 1u << d;
      break;
    case QuantGranularity::Kind::PerGroup:
      for (int d = 0; d <= shape.rank; ++d)
        if (d != axis + 1) m |= 1u << d;
      break;
  }
  return m;
}

Status check_packed_pairs(std::string_view plan, const QuantLayout& layout, ElementKind quantized) {
  if (!is_packed(quantized)) return {};
  const Shape& it = layout.iter;
  const int64_t extent = it[it.rank - 1];
  if (extent % 2 == 0) return {};
  const bool group = it.rank > layout.shape.rank && layout.axis == layout.shape.rank - 1;
  return Error::invalid(s(plan) + ": packed " + s(to_string(quantized)) +
                        " pairs elements along the last dimension, so " +
                        (group ? "the group size along it" : "its extent") + " must be even; got " +
                        std::to_string(extent));
}

}  // namespace detail
}  // namespace baracuda
