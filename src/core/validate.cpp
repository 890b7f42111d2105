#include "core/validate.hpp"

#include <cstdint>
#include <string>

namespace baracuda::detail {
namespace {
std::string s(std::string_view v) { return std::string(v); }
}  // namespace

Status check_shape(std::string_view plan, std::string_view what, const Shape& shape) {
  if (shape.rank < 0 || shape.rank > kMaxRank)
    return Error::invalid(s(plan) + ": " + s(what) + " has rank " + std::to_string(shape.rank) +
                          "; ranks 0.." + std::to_string(kMaxRank) + " are supported");
  for (int i = 0; i < shape.rank; ++i)
    if (shape.dims[i] < 0)
      return Error::invalid(s(plan) + ": " + s(what) + " " + to_string(shape) + " has a negative extent");
  if (!shape.valid())
    return Error::invalid(s(plan) + ": " + s(what) + " " + to_string(shape) +
                          " has more elements than 64-bit sizes and offsets address (at most 2^56)");
  return {};
}

Status check_reach(std::string_view plan, std::string_view name, const ConstDynTensor& t) {
  // Σ (extent − 1)·|stride| over non-empty views: the farthest element from the base, in elements.
  int64_t reach = 0;
  bool ok = t.shape.valid();
  for (int i = 0; ok && i < t.shape.rank; ++i) {
    if (t.shape.dims[i] <= 1) continue;
    const int64_t step = t.stride[i] < 0 ? (t.stride[i] == INT64_MIN ? INT64_MAX : -t.stride[i]) : t.stride[i];
    int64_t term = 0;
    ok = !__builtin_mul_overflow(t.shape.dims[i] - 1, step, &term) && !__builtin_add_overflow(reach, term, &reach) &&
         reach < kMaxElements;
  }
  if (!ok)
    return Error::invalid(s(plan) + ": " + s(name) + "'s strides reach farther than 64-bit offsets address (at most "
                          "2^56 elements from its base)");
  return {};
}

Status check_tensor(std::string_view plan, std::string_view name, const ConstDynTensor& t, ElementKind kind,
                    const Shape& expected, Access access) {
  // An operand left as a default view where the descriptor needs one: say that, not that its defaults differ
  // (for a scalar operand the default view has the right kind and shape, and only its null data tells).
  if (t.data == nullptr && t.shape.rank == 0 && expected.numel() > 0)
    return Error::invalid(s(plan) + ": " + s(name) + " is missing (an empty view); the descriptor says " +
                          s(to_string(kind)) + " " + to_string(expected));
  if (t.kind != kind)
    return Error::invalid(s(plan) + ": " + s(name) + " has element kind " + s(to_string(t.kind)) +
                          ", the descriptor says " + s(to_string(kind)));
  if (!(t.shape == expected))
    return Error::invalid(s(plan) + ": " + s(name) + " has shape " + to_string(t.shape) +
                          ", the descriptor says " + to_string(expected));
  if (t.numel() == 0) return {};
  if (t.data == nullptr) return Error::invalid(s(plan) + ": " + s(name) + " is null but not empty");
  BARACUDA_TRY(check_reach(plan, name, t));
  if (is_packed(kind)) {
    if (!t.is_contiguous())
      return Error::unsupported(s(plan) + ": " + s(name) + " holds packed " + s(to_string(kind)) +
                                " values and must be contiguous");
    return {};
  }
  const auto align = static_cast<uintptr_t>(element_bits(kind) / 8);
  if (reinterpret_cast<uintptr_t>(t.data) % align != 0)
    return Error::misaligned(s(plan) + ": " + s(name) + " is not aligned to its " + std::to_string(align) +
                             "-byte element size");
  if (access == Access::Write)
    for (int i = 0; i < t.shape.rank; ++i)
      if (t.shape.dims[i] > 1 && t.stride[i] == 0)
        return Error::invalid(s(plan) + ": " + s(name) + " has stride 0 in dimension " + std::to_string(i) +
                              " (extent " + std::to_string(t.shape.dims[i]) + "): an output may not alias itself");
  return {};
}

Status check_alias(std::string_view plan, const ConstDynTensor& in, const ConstDynTensor& out) {
  if (in.data != out.data || in.data == nullptr || out.numel() == 0) return {};
  if (element_bits(in.kind) != element_bits(out.kind))
    return Error::invalid(s(plan) + ": in-place operation needs equal element sizes (" + s(to_string(in.kind)) +
                          " vs " + s(to_string(out.kind)) + ")");
  for (int i = 0; i < out.shape.rank; ++i)
    if (out.shape.dims[i] > 1 && in.stride[i] != out.stride[i])
      return Error::invalid(s(plan) + ": in-place operation needs equal input and output strides");
  return {};
}

Status check_map(std::string_view plan, const ConstDynTensor& in, ElementKind in_kind, const ConstDynTensor& out,
                 ElementKind out_kind, const Shape& shape) {
  BARACUDA_TRY(check_tensor(plan, "in", in, in_kind, shape, Access::Read));
  BARACUDA_TRY(check_tensor(plan, "out", out, out_kind, shape, Access::Write));
  return check_alias(plan, in, out);
}

Status check_no_overlap(std::string_view plan, std::string_view out_name, const ConstDynTensor& out,
                        std::string_view in_name, const ConstDynTensor& in) {
  if (out.numel() == 0 || in.numel() == 0 || out.data == nullptr || in.data == nullptr) return {};
  const auto o = reinterpret_cast<uintptr_t>(out.data), i = reinterpret_cast<uintptr_t>(in.data);
  const auto oe = o + static_cast<uintptr_t>(out.span_bytes()), ie = i + static_cast<uintptr_t>(in.span_bytes());
  if (o < ie && i < oe)
    return Error::invalid(s(plan) + ": " + s(out_name) + " overlaps " + s(in_name) + " (no aliasing is allowed)");
  return {};
}

Status check_absent(std::string_view plan, std::string_view name, const ConstDynTensor& t, std::string_view why) {
  if (t.data != nullptr || t.shape.rank != 0)
    return Error::invalid(s(plan) + ": " + s(name) + " must be empty: " + s(why));
  return {};
}

Status check_dense(std::string_view plan, std::string_view name, const ConstDynTensor& t, ElementKind kind,
                   const Shape& expected, Access access, std::string_view where_from) {
  BARACUDA_TRY(check_tensor(plan, name, t, kind, expected, access));
  if (t.numel() > 0 && !t.is_contiguous())
    return Error::invalid(s(plan) + ": " + s(name) + " must be dense (row-major contiguous), " + s(where_from));
  return {};
}

Status check_workspace(std::string_view plan, const Workspace& ws, size_t bytes, size_t align,
                       std::string_view contents, std::initializer_list<NamedTensor> tensors) {
  if (ws.size < bytes || (bytes > 0 && ws.data == nullptr))
    return Error::workspace_too_small(s(plan) + ": workspace too small (" + s(contents) + ")", bytes,
                                      ws.data == nullptr ? 0 : ws.size);
  if (bytes == 0) return {};
  if (reinterpret_cast<uintptr_t>(ws.data) % align != 0)
    return Error::misaligned(s(plan) + ": the workspace must be " + std::to_string(align) + "-byte aligned");
  const DynTensor view = DynTensor::dense(ws.data, ElementKind::U8, Shape{static_cast<int64_t>(bytes)});
  for (const NamedTensor& t : tensors) BARACUDA_TRY(check_no_overlap(plan, "the workspace", view, t.name, t.tensor));
  return {};
}

}  // namespace baracuda::detail
