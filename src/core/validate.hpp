// Internal: argument checks shared by every family, so each rule is written (and worded) once.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string_view>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/status.hpp"
#include "baracuda/core/workspace.hpp"

namespace baracuda::detail {

/// Descriptor shape: rank in [0, kMaxRank], non-negative extents, at most `kMaxElements` elements
/// (`Shape::valid`), each rule with its own message.
Status check_shape(std::string_view plan, std::string_view what, const Shape& shape);

/// A view's strides reach at most `kMaxElements` elements from its base (Σ (extent − 1)·|stride|), so every
/// offset a kernel computes fits in int64; `InvalidProblem` naming the operand otherwise.
Status check_reach(std::string_view plan, std::string_view name, const ConstDynTensor& t);

enum class Access : uint8_t { Read, Write };

/// A tensor argument: present (not a default view, nor a rank-0 one with null data, where `expected` has
/// elements: "<name> is missing"), kind, shape equal to `expected`, non-null data when non-empty, strides within reach
/// (`check_reach`), pointer aligned to the element size, packed 4-bit only contiguous, and (for `Write`) no
/// stride-0 dimension of extent > 1.
Status check_tensor(std::string_view plan, std::string_view name, const ConstDynTensor& t, ElementKind kind,
                    const Shape& expected, Access access);

/// In-place rule of elementwise plans: when `in` and `out` share a data pointer, their strides and element
/// sizes must be equal.
Status check_alias(std::string_view plan, const ConstDynTensor& in, const ConstDynTensor& out);

/// The operands of an elementwise map `out = f(in)` over one shape: check_tensor on `in` (read) and `out`
/// (written), then check_alias. The messages name them "in" and "out".
Status check_map(std::string_view plan, const ConstDynTensor& in, ElementKind in_kind, const ConstDynTensor& out,
                 ElementKind out_kind, const Shape& shape);

/// Out-of-place rule (GEMMs, whose outputs are written while inputs are still read): the byte spans of
/// `out` and `in` must not intersect; empty or null tensors never overlap. `InvalidProblem` naming both.
Status check_no_overlap(std::string_view plan, std::string_view out_name, const ConstDynTensor& out,
                        std::string_view in_name, const ConstDynTensor& in);

/// An argument the descriptor says is absent (e.g. a zero-point tensor of a symmetric scheme) must be the
/// empty `DynTensor{}`: `InvalidProblem` "<plan>: <name> must be empty: <why>" otherwise.
Status check_absent(std::string_view plan, std::string_view name, const ConstDynTensor& t, std::string_view why);

/// check_tensor, and a non-empty tensor must be dense (row-major contiguous): `InvalidProblem` naming
/// `where_from` ("as checkpoints store it") otherwise. For operands a kernel indexes as packed arrays.
Status check_dense(std::string_view plan, std::string_view name, const ConstDynTensor& t, ElementKind kind,
                   const Shape& expected, Access access, std::string_view where_from);

/// A tensor by the name the plan's messages give it.
struct NamedTensor {
  std::string_view name;
  ConstDynTensor tensor;
};

/// The workspace a plan's run was given: at least `bytes` (`WorkspaceTooSmall`, "<plan>: workspace too
/// small (<contents>)"), and when the plan needs one, `align`-byte aligned (`MisalignedOperand`) and
/// overlapping none of `tensors` (`InvalidProblem`, "the workspace overlaps <name>").
Status check_workspace(std::string_view plan, const Workspace& ws, size_t bytes, size_t align,
                       std::string_view contents, std::initializer_list<NamedTensor> tensors);

}  // namespace baracuda::detail
