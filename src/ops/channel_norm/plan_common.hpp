// Internal: what the channel_norm plans (group_norm_plan.cpp, batch_norm_plan.cpp) share: the descriptor's
// common checks, the select of a direction, the reductions' workspace, optional operands and the overlap rule.
#pragma once

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <string>
#include <utility>

#include "core/plan_core.hpp"
#include "core/validate.hpp"
#include "device/segment_reduce_geometry.hpp"
#include "ops/channel_norm/dispatch.hpp"

namespace baracuda::detail::channel_norm_plan {

inline constexpr size_t kAlign = 256;

inline std::string s(std::string_view v) { return std::string(v); }
inline size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }
inline size_t opmath_bytes(ElementKind k) { return k == ElementKind::F64 ? 8 : 4; }
/// Welford's (mean, m2, n) accumulator, and the two-sum ones.
inline size_t moments_bytes(ElementKind k) { return 2 * opmath_bytes(k) + 8; }
inline size_t sums_bytes(ElementKind k) { return 2 * opmath_bytes(k); }

/// The checks both ops make: kind, shape (rank 2 to `max_rank`), eps.
inline Status check_common(std::string_view plan, ElementKind element, const Shape& shape, double eps, int max_rank) {
  BARACUDA_TRY(check_shape(plan, "the descriptor's shape", shape));
  BARACUDA_TRY(check_kinds(plan, {element}));
  if (!is_floating(element))
    return Error::unsupported(s(plan) + ": takes f16, bf16, f32 and f64, not " + s(to_string(element)));
  if (shape.rank < 2 || shape.rank > max_rank)
    return Error::invalid(s(plan) + ": x must be [N, C, *] of rank 2 to " + std::to_string(max_rank) + ", got rank " +
                          std::to_string(shape.rank));
  if (!(eps >= 0) || !std::isfinite(eps))
    return Error::invalid(s(plan) + ": eps must be finite and >= 0, got " + std::to_string(eps));
  return {};
}

/// The largest two-pass workspace of the reductions `(mask, accumulator bytes)` over `view` on `stream`.
inline Result<size_t> partials_bytes(const Stream& stream, const Shape& view,
                                     std::initializer_list<std::pair<uint32_t, size_t>> reductions) {
  if (stream.device() == DeviceKind::Host) return size_t{0};
  auto ctx = make_exec_context(stream);
  if (!ctx) return ctx.error();
  size_t bytes = 0;
  for (const auto& [mask, acc] : reductions)
    bytes = std::max(bytes, segment_reduce_workspace_bytes(*ctx, view, mask, acc));
  return align_up(bytes);
}

/// Either direction's select, once the descriptor is checked: the device's table, its entry and the binding.
/// `rows`: the row kernel's table when the problem takes it (its entry replaces the composed one), `variant`
/// then its SKU variant.
template <class Plan, class Desc, class Tables>
Result<Plan> select_plan(std::string_view plan, const Stream& stream, const Desc& desc, PlanPreference pref,
                         Tables&& tables, std::string_view op, const ChannelNormTable* rows = nullptr,
                         std::string_view variant = {}) {
  auto dev = select_device(plan, stream, pref, tables);
  if (!dev) return dev.error();
  const auto fn = kind_entry(plan, op, rows != nullptr ? *rows : *dev->table, desc.element);
  if (!fn) return fn.error();
  return PlanAccess::make<Plan>(
      desc,
      dev->bind(OpCategory::Normalization, op, desc.element, std::nullopt, opmath_precision(desc.element),
                rows != nullptr ? variant : "segment_reduce+elementwise"),
      *fn);
}

/// A tensor the descriptor says is present (checked as `expected`), or absent (must be empty).
inline Status check_optional(std::string_view plan, std::string_view name, const ConstDynTensor& t, bool present,
                             ElementKind kind, const Shape& expected, Access access, std::string_view why) {
  if (!present) return check_absent(plan, name, t, why);
  return check_tensor(plan, name, t, kind, expected, access);
}

inline bool wanted(const ConstDynTensor& t) { return t.data != nullptr; }

using Named = std::pair<const char*, ConstDynTensor>;

/// No output overlaps an input or another output, but y may be exactly x (same data and strides).
inline Status check_overlaps(std::string_view plan, std::initializer_list<Named> outs,
                             std::initializer_list<Named> ins) {
  for (const auto& [name, out] : outs) {
    for (const auto& [in_name, in] : ins) {
      if (std::string_view(name) == "y" && std::string_view(in_name) == "x" && out.data != nullptr &&
          out.data == in.data && out.stride == in.stride)
        continue;
      BARACUDA_TRY(check_no_overlap(plan, name, out, in_name, in));
    }
    for (const auto& [other_name, other] : outs)
      if (std::string_view(other_name) < std::string_view(name))
        BARACUDA_TRY(check_no_overlap(plan, name, out, other_name, other));
  }
  return {};
}

/// The launch record holds the backward's read-only statistics as DynTensor fields.
inline DynTensor as_record(const ConstDynTensor& t) {
  DynTensor d;
  static_cast<DynTensorLayout&>(d) = t;
  d.data = const_cast<void*>(t.data);
  return d;
}

}  // namespace baracuda::detail::channel_norm_plan
