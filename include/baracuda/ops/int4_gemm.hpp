/// \file
/// \brief The W4A16 GEMM over Marlin-packed int4 weights: `Int4MarlinGemmPlan` (`dynamic::` over
/// `dynamic::Int4MarlinGemmArgs`, and the typed `Int4MarlinGemmPlan<T>` over `Int4MarlinGemmArgs<T>`),
/// `c[M, N] = a[M, K] · dequant(W)[K, N] (+ bias[N])` with f16 or bf16 activations, f32 accumulation, group
/// sizes −1/32/64/128, symmetric (`uint4b8`, GPTQ) and zero-point (`uint4` + zeros, AWQ) weights, and GPTQ
/// act-order. The weight tensors are what include/baracuda/ops/int4_weights.hpp produces
/// (`marlin_from_int4`, `gptq_to_marlin`, `awq_to_marlin`), with the scales in the activation kind.
///
/// **Backends.** `host` runs the reference of src/ops/int4_gemm/host.cpp (a plain loop accumulating in
/// double); `sim` and `cuda` run the Marlin-style tensor-core kernel of src/ops/int4_gemm/kernels.cuh
/// (mma.m16n8k16, f32 accumulation); `cuda` answers `Unsupported` when the library was built without CUDA
/// kernels.
///
/// **The computation, exactly.** Per weight element (Marlin row k, column n), with g = k / group_rows
/// (group_rows = K for group −1, else group), s = scales[g, n] and z = the zero point (8 when symmetric):
///   1. `w = round_T((q − z) · s)` — one rounding to the activation kind T (the kernels' half2/bfloat162
///      multiply; (q − z)·s itself is exact in f32);
///   2. `acc = Σ_k a'[m, k] · w[k, n]` — each product exact in f32; devices sum in f32 (tensor-core order),
///      the host reference in double;
///   3. `acc += bias[n]` (when present), then one rounding of acc to T.
/// where a' is a, or with act-order a's columns gathered by `perm`: `a'[m, i] = a[m, perm[i]]` (Marlin row i
/// is input channel perm[i]). Devices therefore agree with the host within the f32 summation error
/// (≲ K·2⁻²⁴·Σ|a'·w|) plus one rounding of T, not bit for bit; the tests derive their tolerance from that.
///
/// **Shapes and layouts** (the fields of `dynamic::Int4MarlinGemmArgs`, T = `element`, G = K / group_rows):
/// - `a`: `[M, K]` T. Unit stride along K, row stride ≥ K and a multiple of 8 elements (16 bytes), base
///   16-byte aligned (the kernel loads 16-byte chunks) — else `MisalignedOperand`.
/// - `b_q`: the Marlin weight, s32 `[K/16, 2N]`, dense, 16-byte aligned.
/// - `scales`: `[G, N]` T, dense, 16-byte aligned, Marlin-permuted (`marlin_permute_scales`: the 64-entry
///   permutation when G > 1, the 32-entry one when G = 1). Checkpoints store f16 scales: convert them to
///   bf16 for a bf16 plan (one rounding; the weights then dequantize to slightly different values).
/// - `zeros`: Asymmetric only — Marlin's zero points s32 `[G, N/8]` (`marlin_pack_zeros`), dense, 16-byte
///   aligned; must be empty for Symmetric.
/// - `perm`: act-order only — s32 `[K]`, dense: the row permutation of `MarlinInt4Weights::perm`. Must be
///   empty otherwise. The host and sim devices report `InvalidProblem` at `run` unless it is a permutation of
///   [0, K); cuda does not check its values (that needs a synchronisation): a value outside [0, K) reads out
///   of bounds there.
///   Act-order requires equal-sized groups (GPTQ's `desc_act` always has them): sorted row k uses group
///   k / group_rows.
/// - `bias` (with `with_bias()`): `[N]` T, any stride; empty otherwise.
/// - `c`: `[M, N]` T. Unit stride along N, row stride ≥ N and a multiple of 8 elements, base 16-byte aligned.
///
/// **Act-order with a single group.** As `marlin_from_int4` and vLLM (which ignores `desc_act` with
/// group −1), act-order is in effect only when G > 1: with G = 1 (group −1, or group = K) a descriptor with
/// `act_order` is planned as without (no `perm`, no workspace) — `act_order_effective()` says which.
///
/// **Rules of `select`** (each a clear error): element f16 or bf16 (`Unsupported`); M, N, K ≥ 0, M ≤ 4194240
/// (65535 blocks of 64 rows), N, K < 2^31; group in
/// {−1, 32, 64, 128}; N % 64 == 0 (Marlin's 64-column tiles); K > 0 and K % 128 == 0 (the kernel's K block,
/// which implies K % group == 0; pad the weight with zero rows and the activation with zero columns); a
/// known scheme (all `InvalidProblem`); the workspace within `PlanPreference::max_workspace_bytes`
/// (`Unsupported`).
/// M = 0 or N = 0 is an empty problem: `run` validates and returns without touching anything.
///
/// **Workspace:** `workspace_size()` bytes: with act-order in effect M·K·sizeof(T) for the permuted
/// activation a' (dense `[M, K]`, filled by `run`); on sim/cuda, when the output gives too few blocks to
/// fill a large GPU (small M), K is cut into `splits` parts (a function of M, N, K only:
/// src/ops/int4_gemm/tables.hpp) whose f32 partial sums follow, splits·M·N·4 bytes from the next 256-byte
/// offset. The host needs none but act-order's. It must be 16-byte aligned and must not overlap any tensor.
///
/// **Aliasing:** `c` must not overlap any input (`InvalidProblem`).
///
/// **Determinism:** no atomics (the split-K parts are added in a fixed order by a second kernel); every
/// output element is one fixed sequence of operations, so every backend is deterministic and bit-stable on
/// the same hardware.
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

/// The W4A16 problem: `c[M, N] = a[M, K] · dequant(W)[K, N] (+ bias)`.
struct Int4GemmDescriptor {
  int64_t m = 0, n = 0, k = 0;
  int64_t group = 128;                         ///< K rows per scale group: −1 (per channel), 32, 64, 128
  Int4Scheme scheme = Int4Scheme::Symmetric;   ///< Symmetric (uint4b8) or Asymmetric (zero points)
  bool act_order = false;                      ///< GPTQ desc_act: the weight rows are sorted by group
  ElementKind element = ElementKind::F16;      ///< a, scales, bias and c: f16 or bf16
  bool has_bias = false;

  Int4GemmDescriptor& with_shape(int64_t m_, int64_t n_, int64_t k_) { m = m_, n = n_, k = k_; return *this; }
  Int4GemmDescriptor& with_group(int64_t g) { group = g; return *this; }
  Int4GemmDescriptor& with_scheme(Int4Scheme s) { scheme = s; return *this; }
  Int4GemmDescriptor& with_act_order(bool a = true) { act_order = a; return *this; }
  Int4GemmDescriptor& with_element(ElementKind e) { element = e; return *this; }
  Int4GemmDescriptor& with_bias(bool b = true) { has_bias = b; return *this; }

  /// The weight's shape for the int4_weights functions.
  Int4Shape weight_shape() const { return Int4Shape{k, n, group}; }
  /// Whether act-order applies: `act_order` and more than one group (see the file comment).
  bool act_order_effective() const { return act_order && weight_shape().num_groups() > 1; }
  friend bool operator==(const Int4GemmDescriptor&, const Int4GemmDescriptor&) = default;
  size_t hash() const { return detail::hash_fields(m, n, k, group, scheme, act_order, element, has_bias); }
};

namespace detail {
struct Int4GemmLaunch;
struct PermuteColumnsLaunch;
using Int4GemmFn = Status (*)(const ExecContext&, const Int4GemmLaunch&);
using PermuteColumnsFn = Status (*)(const ExecContext&, const PermuteColumnsLaunch&);
}  // namespace detail

namespace dynamic {

/// The operands of `dynamic::Int4MarlinGemmPlan` (shapes, kinds and layouts in the file comment).
struct Int4MarlinGemmArgs {
  ConstDynTensor a;       ///< [M, K] T, read; unit stride along K, 16-byte aligned rows
  ConstDynTensor b_q;     ///< [K/16, 2N] s32, Marlin-packed, read; dense, 16-byte aligned
  ConstDynTensor scales;  ///< [G, N] T, Marlin-permuted, read; dense, 16-byte aligned
  ConstDynTensor zeros;   ///< [G, N/8] s32, read; Asymmetric only, empty otherwise
  ConstDynTensor perm;    ///< [K] s32, read; act-order in effect only, empty otherwise
  ConstDynTensor bias;    ///< [N] T, read; with_bias only, empty otherwise
  DynTensor c;            ///< [M, N] T, written; unit stride along N, 16-byte aligned rows
};

/// W4A16 GEMM over Marlin-packed int4 weights. SKU `int4_marlin_gemm/<f16|bf16>->u4/...` (layout Rrr,
/// epilogue Identity or Bias; variant names the backend, the scheme and act-order).
class Int4MarlinGemmPlan : public detail::BoundPlan<Int4GemmDescriptor> {
  using BoundPlan::BoundPlan;

 public:
  using Args = Int4MarlinGemmArgs;
  /// The descriptor rules of the file comment; the device's function (the host reference, or the
  /// tensor-core kernel on sim/cuda; `Unsupported` on cuda in a build without CUDA kernels).
  static Result<Int4MarlinGemmPlan> select(const Stream& stream, const Int4GemmDescriptor& desc,
                                           PlanPreference pref = {});
  /// Kinds, shapes, strides and alignment of every tensor, presence of zeros/perm/bias as the descriptor
  /// says, no overlap of c with an input.
  Status can_implement(const Args& args) const;
  /// Act-order's permuted activation and, on sim/cuda with K split, the partial sums (file comment).
  size_t workspace_size() const { return workspace_bytes_; }
  PrecisionGuarantee precision_guarantee() const;
  /// Re-validates; with act-order gathers a's columns into the workspace; then the GEMM.
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;

 private:
  size_t workspace_bytes_ = 0;
  int splits_ = 1;             ///< parts of K on the devices (tables.hpp's int4_gemm_splits)
  size_t partial_offset_ = 0;  ///< where the split-K partial sums start in the workspace
  detail::Int4GemmFn gemm_ = nullptr;
  detail::PermuteColumnsFn permute_ = nullptr;
};

}  // namespace dynamic

/// Arguments of a typed Int4MarlinGemmPlan (the fields of `dynamic::Int4MarlinGemmArgs`); leave `zeros`,
/// `perm` and `bias` default (null data) where the descriptor has none.
template <class T>
struct Int4MarlinGemmArgs {
  TensorRef<T, 2> a;            ///< [M, K]
  TensorRef<int32_t, 2> b_q;    ///< [K/16, 2N]
  TensorRef<T, 2> scales;       ///< [G, N]
  TensorRef<int32_t, 2> zeros;  ///< [G, N/8], or default
  TensorRef<int32_t, 1> perm;   ///< [K], or default
  TensorRef<T, 1> bias;         ///< [N], or default
  TensorMut<T, 2> c;            ///< [M, N]
  dynamic::Int4MarlinGemmArgs erased() const {
    return {ConstDynTensor::of(a),
            ConstDynTensor::of(b_q),
            ConstDynTensor::of(scales),
            zeros.data != nullptr ? ConstDynTensor::of(zeros) : ConstDynTensor{},
            perm.data != nullptr ? ConstDynTensor::of(perm) : ConstDynTensor{},
            bias.data != nullptr ? ConstDynTensor::of(bias) : ConstDynTensor{},
            DynTensor::of(c)};
  }
};

/// Typed Int4MarlinGemmPlan: T (`__half` or `__nv_bfloat16`) is the descriptor's `element`.
template <class T>
class Int4MarlinGemmPlan : public detail::TypedPlan<dynamic::Int4MarlinGemmPlan, Int4MarlinGemmArgs<T>> {
  using Base = detail::TypedPlan<dynamic::Int4MarlinGemmPlan, Int4MarlinGemmArgs<T>>;
  friend Base;
  using Base::Base;

 public:
  static Result<Int4MarlinGemmPlan> select(const Stream& stream, const Int4GemmDescriptor& desc,
                                           PlanPreference pref = {}) {
    BARACUDA_TRY(detail::check_typed_element("Int4MarlinGemmPlan", "a/scales/bias/c", desc.element, kind_of<T>));
    auto p = dynamic::Int4MarlinGemmPlan::select(stream, desc, pref);
    if (!p) return p.error();
    return Int4MarlinGemmPlan(std::move(p).value());
  }
};

}  // namespace baracuda
