/// \file
/// \brief `Int4MarlinRepackPlan` (`dynamic::` over `dynamic::Int4MarlinRepackArgs`, typed
/// `Int4MarlinRepackPlan<TScale>` over `Int4MarlinRepackArgs<TScale>`): converts a GPTQ or AWQ checkpoint's
/// int4 tensors, already in device memory, into the Marlin tensors `Int4MarlinGemmPlan` consumes — the
/// weight repacked into Marlin's tile layout (with GPTQ act-order's row sort), the scales permuted (and
/// converted to the GEMM's activation kind), AWQ's zero points unpacked, permuted and repacked. The device counterpart of the host converters
/// `gptq_to_marlin` / `awq_to_marlin` of include/baracuda/ops/int4_weights.hpp, for weights too large to
/// round-trip through the host at load time; it produces the same bytes.
///
/// **Backends.** `host` runs the host converters of int4_weights.hpp on the tensors (host memory);
/// `sim` and `cuda` run the gather kernel of src/ops/int4_marlin_repack/kernels.cuh: every output word is
/// assembled by one thread from the checkpoint nibbles its Marlin position maps to (one launch for the
/// weight, the scales and the zero points). `cuda` answers `Unsupported` when the library was built without
/// CUDA kernels.
///
/// **Formats** (the layouts of int4_weights.hpp's `GptqCheckpoint` and `AwqCheckpoint`):
/// - `Gptq`, `Symmetric` only (vLLM's gptq_marlin): `w = (q − 8)·s`. The checkpoint's qzeros are not read
///   (GPTQ v1 stores 7s, v2 8s); they may be given or left empty. **GPTQ with zero points is rejected**
///   (`Unsupported`): its stored `z − 1` nibble 15 means z = 16, which Marlin's 4-bit zero points cannot
///   hold and which only a data-dependent check can rule out — `gptq_to_marlin` on the host performs that
///   check. With `act_order` (desc_act) and more than one group, Marlin row i is checkpoint row `perm[i]`
///   (perm from `marlin_act_order_perm(g_idx)`), and the GEMM gathers the activation by the same `perm`.
/// - `Awq` (AutoAWQ GEMM format), `Asymmetric` only: `w = (q − z)·s` with the raw zero points. No act-order.
///
/// **Shapes and layouts** (G = K / group_rows; every tensor dense, row-major; no alignment beyond the
/// element's):
/// - `qweight`: s32, `Gptq` `[K/8, N]` (packed along K), `Awq` `[K, N/8]` (packed along N, AWQ's order).
/// - `qzeros`: s32 `[G, N/8]`; `Awq`: required; `Gptq`: empty or `[G, N/8]` (not read).
/// - `scales`: f16 `[G, N]` (as every checkpoint stores them).
/// - `perm`: s32 `[K]` with act-order in effect, else empty. The host and sim devices report
///   `InvalidProblem` at `run` unless it is a permutation of [0, K); cuda does not check its values (that
///   needs a synchronisation): a value outside [0, K) reads out of bounds there.
/// - `out_qweight`: s32 `[K/16, 2N]` (`marlin_pack` of the row-sorted weight).
/// - `out_scales`: `scale_element` (f16 or bf16) `[G, N]`, Marlin-permuted (`marlin_permute_scales`); a bf16
///   scale is the f16 one rounded once to nearest-even (f16 → f32 is exact), what a bf16 GEMM needs.
/// - `out_zeros`: `Awq`: s32 `[G, N/8]` (`marlin_pack_zeros`); `Gptq`: empty.
///
/// **Rules of `select`** (each a clear error): K, N ≥ 0; group ∈ {−1, 32, 64, 128}; K % 16 == 0 and
/// K % group == 0; N % 64 == 0 (`InvalidProblem`); a known format and scheme (`InvalidProblem`); `Gptq` with
/// `Asymmetric` (`Unsupported`, see above); `Awq` with `Symmetric` or with act-order (`InvalidProblem`);
/// `scale_element` f16 or bf16 (`Unsupported`). K = 0 or N = 0 is an empty problem: `run` validates and
/// returns without touching anything.
///
/// **Workspace:** none. **Aliasing:** no output may overlap an input or another output (`InvalidProblem`).
/// **Determinism:** a pure gather: every backend writes the same bytes.
#pragma once

#include <cstdint>
#include <utility>

#include "baracuda/core/hash.hpp"
#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/plan.hpp"
#include "baracuda/core/sku.hpp"
#include "baracuda/core/stream.hpp"
#include "baracuda/core/tensor.hpp"
#include "baracuda/core/typed_plan.hpp"
#include "baracuda/core/workspace.hpp"
#include "baracuda/ops/int4_weights.hpp"

namespace baracuda {

/// The checkpoint format a repack reads: one enumerator per `BARACUDA_INT4_CHECKPOINT` line of the catalog
/// `baracuda/ops/int4_formats.def` — `Gptq`, AutoGPTQ: qweight `[K/8, N]` packed along K, qzeros stored as
/// z − 1, g_idx / act-order; `Awq`, AutoAWQ GEMM: qweight `[K, N/8]` packed along N in the interleaved order,
/// raw zero points.
enum class Int4CheckpointFormat : uint8_t {
#define BARACUDA_INT4_CHECKPOINT(name, Enum, scheme_rule, doc) Enum,
#include "baracuda/ops/int4_formats.def"
#undef BARACUDA_INT4_CHECKPOINT
};
/// The number of formats (valid values are 0 .. kNumInt4CheckpointFormats − 1).
inline constexpr size_t kNumInt4CheckpointFormats = 0
#define BARACUDA_INT4_CHECKPOINT(name, Enum, scheme_rule, doc) +1
#include "baracuda/ops/int4_formats.def"
#undef BARACUDA_INT4_CHECKPOINT
    ;
/// "gptq", "awq"; "?" outside the catalog.
std::string_view to_string(Int4CheckpointFormat f);

/// The repack problem: a `[K, N]` int4 weight (K = in_features, N = out_features) in `format`.
struct Int4RepackDescriptor {
  int64_t k = 0, n = 0;
  int64_t group = 128;                              ///< K rows per scale group: −1, 32, 64, 128
  Int4CheckpointFormat format = Int4CheckpointFormat::Gptq;
  Int4Scheme scheme = Int4Scheme::Symmetric;        ///< Gptq: Symmetric; Awq: Asymmetric
  bool act_order = false;                           ///< Gptq desc_act
  ElementKind scale_element = ElementKind::F16;     ///< the kind of out_scales: the GEMM's activation kind

  Int4RepackDescriptor& with_shape(int64_t k_, int64_t n_) { k = k_, n = n_; return *this; }
  Int4RepackDescriptor& with_group(int64_t g) { group = g; return *this; }
  /// GPTQ, symmetric; `act_order` as the checkpoint's desc_act.
  Int4RepackDescriptor& gptq(bool act_order_ = false) {
    format = Int4CheckpointFormat::Gptq, scheme = Int4Scheme::Symmetric, act_order = act_order_;
    return *this;
  }
  /// AWQ GEMM format (zero points, no act-order).
  Int4RepackDescriptor& awq() {
    format = Int4CheckpointFormat::Awq, scheme = Int4Scheme::Asymmetric, act_order = false;
    return *this;
  }
  Int4RepackDescriptor& with_scale_element(ElementKind e) { scale_element = e; return *this; }

  Int4Shape weight_shape() const { return Int4Shape{k, n, group}; }
  /// Whether act-order applies: `act_order` and more than one group (as `Int4GemmDescriptor`).
  bool act_order_effective() const { return act_order && weight_shape().num_groups() > 1; }
  friend bool operator==(const Int4RepackDescriptor&, const Int4RepackDescriptor&) = default;
  size_t hash() const { return detail::hash_fields(k, n, group, format, scheme, act_order, scale_element); }
};

namespace detail {
struct Int4RepackLaunch;
using Int4RepackFn = Status (*)(const ExecContext&, const Int4RepackLaunch&);
}  // namespace detail

namespace dynamic {

/// The operands of `dynamic::Int4MarlinRepackPlan` (shapes and kinds in the file comment; every one dense).
struct Int4MarlinRepackArgs {
  ConstDynTensor qweight;  ///< checkpoint weight, s32 (Gptq [K/8, N], Awq [K, N/8]), read
  ConstDynTensor qzeros;   ///< checkpoint zero points, s32 [G, N/8], read; Awq: required; Gptq: empty or not read
  ConstDynTensor scales;   ///< checkpoint scales, f16 [G, N], read
  ConstDynTensor perm;     ///< act-order row permutation, s32 [K], read; empty unless act-order is in effect
  DynTensor out_qweight;   ///< Marlin weight, s32 [K/16, 2N], written
  DynTensor out_scales;    ///< Marlin scales, scale_element [G, N], written
  DynTensor out_zeros;     ///< Marlin zero points, s32 [G, N/8], written; Awq only, empty for Gptq
};

/// GPTQ / AWQ checkpoint → Marlin tensors on the device. SKU `int4_marlin_repack/<f16|bf16>->u4/<variant>`
/// (the scale kind; variant: backend × format × act-order).
class Int4MarlinRepackPlan : public detail::BoundPlan<Int4RepackDescriptor> {
  using BoundPlan::BoundPlan;

 public:
  using Args = Int4MarlinRepackArgs;
  /// The descriptor rules of the file comment; the device's function.
  static Result<Int4MarlinRepackPlan> select(const Stream& stream, const Int4RepackDescriptor& desc,
                                             PlanPreference pref = {});
  /// Kinds, shapes and density of every tensor, presence as the descriptor says, no overlap of an output
  /// with any other tensor.
  Status can_implement(const Args& args) const;
  /// Always 0.
  size_t workspace_size() const { return 0; }
  PrecisionGuarantee precision_guarantee() const { return binding_.uniform_guarantee(); }
  /// Re-validates, then writes the three outputs.
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;

 private:
  detail::Int4RepackFn repack_ = nullptr;
};

}  // namespace dynamic

/// Arguments of a typed Int4MarlinRepackPlan (the fields of `dynamic::Int4MarlinRepackArgs`); leave `qzeros`,
/// `perm` and `out_zeros` default (null data) where the format has none.
template <class TScale>
struct Int4MarlinRepackArgs {
  TensorRef<int32_t, 2> qweight;      ///< Gptq [K/8, N], Awq [K, N/8]
  TensorRef<int32_t, 2> qzeros;       ///< [G, N/8], or default
  TensorRef<__half, 2> scales;        ///< [G, N]
  TensorRef<int32_t, 1> perm;         ///< [K], or default
  TensorMut<int32_t, 2> out_qweight;  ///< [K/16, 2N]
  TensorMut<TScale, 2> out_scales;    ///< [G, N]
  TensorMut<int32_t, 2> out_zeros;    ///< [G, N/8], or default
  dynamic::Int4MarlinRepackArgs erased() const {
    return {ConstDynTensor::of(qweight),
            qzeros.data != nullptr ? ConstDynTensor::of(qzeros) : ConstDynTensor{},
            ConstDynTensor::of(scales),
            perm.data != nullptr ? ConstDynTensor::of(perm) : ConstDynTensor{},
            DynTensor::of(out_qweight),
            DynTensor::of(out_scales),
            out_zeros.data != nullptr ? DynTensor::of(out_zeros) : DynTensor{}};
  }
};

/// Typed Int4MarlinRepackPlan: TScale (`__half` or `__nv_bfloat16`) is the descriptor's `scale_element`.
template <class TScale>
class Int4MarlinRepackPlan : public detail::TypedPlan<dynamic::Int4MarlinRepackPlan, Int4MarlinRepackArgs<TScale>> {
  using Base = detail::TypedPlan<dynamic::Int4MarlinRepackPlan, Int4MarlinRepackArgs<TScale>>;
  friend Base;
  using Base::Base;

 public:
  static Result<Int4MarlinRepackPlan> select(const Stream& stream, const Int4RepackDescriptor& desc,
                                             PlanPreference pref = {}) {
    BARACUDA_TRY(
        detail::check_typed_element("Int4MarlinRepackPlan", "out_scales", desc.scale_element, kind_of<TScale>));
    auto p = dynamic::Int4MarlinRepackPlan::select(stream, desc, pref);
    if (!p) return p.error();
    return Int4MarlinRepackPlan(std::move(p).value());
  }
};

}  // namespace baracuda
