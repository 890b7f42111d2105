/// \file
/// \brief Grouped GEMM (mixture-of-experts layers): `GroupedGemmPlan`, for each group (expert) e in [0, E)
/// `y[r, :] = x[r, :]·W[e]ᵀ (+ bias[e, :])` for the rows r in `[offsets[e], offsets[e + 1])`, with the row
/// offsets in device memory (read by the kernel, never by the host: no synchronisation, CUDA-graph safe).
/// A `dynamic::GroupedGemmPlan` (kind-erased) taking `dynamic::GroupedGemmArgs`, and a typed
/// `GroupedGemmPlan<TX, TY>`.
///
/// **Kinds.** x and W (`input`) → y and bias (`output`): f16 → f16 | f32, bf16 → bf16 | f32, f32 → f32, sums
/// in f32. offsets: s32 or s64 (`offsets` kind). Anything else is `Unsupported`.
///
/// **Shapes.** x `[total_M, K]` (the tokens, sorted by group), w `[E, N, K]` (one nn.Linear weight `[N, K]`
/// per group), offsets `[E + 1]`, bias `[E, N]` (optional), y `[total_M, N]`. `1 ≤ E ≤ 1024`
/// (`kGroupedGemmMaxGroups`; more is `Unsupported`); total_M, N, K ≥ 0 and below 2^31 − 256; N at most
/// 65535·64 (the kernel grid's N tiles); every operand within 2^56 elements.
///
/// **Layouts.** Every operand is a strided view whose last dimension has unit stride (K for x and w, N for y and
/// bias: each group's product is the TN form `x·Wᵀ` of the dense linear, gemm.hpp's `rcr`); the other strides
/// are non-negative, and y's row stride is at least N (rows do not overlap). offsets is contiguous.
///
/// **Alignment.** Every pointer aligned to its element's size (`MisalignedOperand`). With 16-bit inputs, x's
/// rows and each W[e]'s rows are copied in 16-byte chunks when they are 16-byte aligned (data aligned, row and
/// group strides multiples of 8 elements: K a multiple of 8 for dense operands); any other row is read element
/// by element (correct, slower).
///
/// **Offsets.** Valid offsets are non-decreasing with offsets[0] = 0 and offsets[E] = total_M; each group's rows
/// are then exactly its range, and an empty group (offsets[e] = offsets[e + 1]) computes nothing. The values are
/// data: the plan cannot check them without a synchronisation, so for any values the kernels (and the host
/// reference) use the effective offsets `o'[e] = min(total_M, max(0, offsets[0], ..., offsets[e]))` (a running
/// maximum, clamped): valid offsets are unchanged, and any others give disjoint groups inside [0, total_M).
/// Rows that no effective group covers (before o'[0], after o'[E]) are **not written**; no access ever falls
/// outside the operands' views. No error is reported for such offsets.
///
/// **Aliasing.** y may overlap no input (`InvalidProblem`).
///
/// **Workspace.** None.
///
/// **Backends, determinism and accuracy.**
/// - `host` (the reference, src/ops/grouped_gemm/host.cpp): each sum in double, k ascending (every product of
///   16-bit inputs is exact), plus the bias, one rounding to the output kind.
/// - `sim` and `cuda` (`Bespoke`/`Sim`): the tensor-core kernel (`tc_m16n8k16`, src/ops/grouped_gemm/
///   kernels.cuh: mma.sync m16n8k16, f32 accumulation); each output's sum runs over K in a fixed order and the
///   bias is added once, with no atomics: the same bits on every run of a device (sim and a GPU agree within the
///   bound, not bit for bit: the hardware's order inside one mma is not the emulation's, docs/ptx.md). Error
///   against the exact sum: at most about K·2^-24·Σ_k|x·w|, then one rounding to the output kind. f32 inputs
///   take the CUDA-core kernel (`simt`, src/ops/grouped_gemm/simt_kernels.cuh: one fma per k, k ascending,
///   exact f32 arithmetic, no TF32), with the same scheduler and bound, and the same bits on sim and cuda.
/// - cuBLASLt's grouped matmul API is not in this toolkit's headers (CUDA 13.0), so there is no cuBLASLt SKU.
///
/// **Empty problems** (total_M = 0 or N = 0) succeed and write nothing; K = 0 writes the bias (or zeros).
#pragma once

#include <cstdint>
#include <utility>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/hash.hpp"
#include "baracuda/core/plan.hpp"
#include "baracuda/core/sku.hpp"
#include "baracuda/core/stream.hpp"
#include "baracuda/core/tensor.hpp"
#include "baracuda/core/typed_plan.hpp"
#include "baracuda/core/workspace.hpp"

namespace baracuda {

/// The largest number of groups (E) a grouped GEMM takes: each block finds its group by scanning the offsets.
inline constexpr int64_t kGroupedGemmMaxGroups = 1024;

/// One grouped GEMM problem (the file comment has every rule).
struct GroupedGemmDescriptor {
  int64_t groups = 1;   ///< E
  int64_t total_m = 0;  ///< rows of x and y
  int64_t n = 0, k = 0;
  ElementKind input = ElementKind::F16;    ///< x and w
  ElementKind output = ElementKind::F16;   ///< y and bias
  ElementKind offsets = ElementKind::S64;  ///< s32 or s64
  bool has_bias = false;                   ///< + bias[e, n]

  GroupedGemmDescriptor& with_shape(int64_t e, int64_t total_m_, int64_t n_, int64_t k_) {
    groups = e, total_m = total_m_, n = n_, k = k_;
    return *this;
  }
  GroupedGemmDescriptor& with_kinds(ElementKind in, ElementKind out) {
    input = in, output = out;
    return *this;
  }
  GroupedGemmDescriptor& with_offsets_kind(ElementKind k_) {
    offsets = k_;
    return *this;
  }
  GroupedGemmDescriptor& with_bias(bool b = true) {
    has_bias = b;
    return *this;
  }

  friend bool operator==(const GroupedGemmDescriptor&, const GroupedGemmDescriptor&) = default;
  size_t hash() const { return detail::hash_fields(groups, total_m, n, k, input, output, offsets, has_bias); }
};

namespace detail {
struct GroupedGemmLaunch;
using GroupedGemmFn = Status (*)(const ExecContext&, const GroupedGemmLaunch&);
}  // namespace detail

namespace dynamic {

/// The operands of `dynamic::GroupedGemmPlan`, inputs then outputs (shapes and strides: the file comment).
struct GroupedGemmArgs {
  ConstDynTensor x;          ///< [total_M, K] of `input`, read
  ConstDynTensor w;          ///< [E, N, K] of `input`, read
  ConstDynTensor offsets;    ///< [E + 1] of `offsets` (s32 or s64), device memory, read by the kernel only
  ConstDynTensor bias = {};  ///< [E, N] of `output`, read; empty unless `has_bias`
  DynTensor y = {};          ///< [total_M, N] of `output`, written
};

/// Grouped GEMM. SKU `gemm/<input>-><output>/rcr/<identity|bias>/<backend>/<precision>/<variant>`, op
/// `grouped_gemm`, variant `reference` (host), `tc_m16n8k16` (sim and cuda, 16-bit inputs) or `simt` (f32).
class GroupedGemmPlan : public detail::BoundFnPlan<GroupedGemmDescriptor, detail::GroupedGemmFn> {
  using BoundFnPlan::BoundFnPlan;

 public:
  using Args = GroupedGemmArgs;
  /// The descriptor's rules (kinds, shape, group count), then the stream's device and the preference's backend.
  static Result<GroupedGemmPlan> select(const Stream& stream, const GroupedGemmDescriptor& desc,
                                        PlanPreference pref = {});
  /// Kinds, shapes and strides against the descriptor, the optional bias, alignment and aliasing.
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return 0; }
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  /// Re-validates, then one launch (no synchronisation; the offsets are not read by the host).
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;
};

}  // namespace dynamic

// ------------------------------------------------------------------------------------------------------
// Typed wrapper
// ------------------------------------------------------------------------------------------------------

/// Arguments of a typed GroupedGemmPlan: TX the kind of x and w, TY of y and bias, TO of the offsets.
template <class TX, class TY, class TO = int64_t>
struct GroupedGemmArgs {
  TensorRef<TX, 2> x;
  TensorRef<TX, 3> w;
  TensorRef<TO, 1> offsets;
  TensorRef<TY, 2> bias{};  ///< or default (no bias)
  TensorMut<TY, 2> y{};
  dynamic::GroupedGemmArgs erased() const {
    return {ConstDynTensor::of(x), ConstDynTensor::of(w), ConstDynTensor::of(offsets),
            bias.data != nullptr ? ConstDynTensor::of(bias) : ConstDynTensor{}, DynTensor::of(y)};
  }
};

/// Typed GroupedGemmPlan: TX is the descriptor's `input`, TY its `output`, TO its `offsets`.
template <class TX, class TY, class TO = int64_t>
class GroupedGemmPlan : public detail::TypedPlan<dynamic::GroupedGemmPlan, GroupedGemmArgs<TX, TY, TO>> {
  using Base = detail::TypedPlan<dynamic::GroupedGemmPlan, GroupedGemmArgs<TX, TY, TO>>;
  friend Base;
  using Base::Base;

 public:
  static Result<GroupedGemmPlan> select(const Stream& stream, const GroupedGemmDescriptor& desc,
                                        PlanPreference pref = {}) {
    BARACUDA_TRY(detail::check_typed_element("GroupedGemmPlan", "x and w", desc.input, kind_of<TX>));
    BARACUDA_TRY(detail::check_typed_element("GroupedGemmPlan", "y and bias", desc.output, kind_of<TY>));
    BARACUDA_TRY(detail::check_typed_element("GroupedGemmPlan", "offsets", desc.offsets, kind_of<TO>));
    auto p = dynamic::GroupedGemmPlan::select(stream, desc, pref);
    if (!p) return p.error();
    return GroupedGemmPlan(std::move(p).value());
  }
};

}  // namespace baracuda
