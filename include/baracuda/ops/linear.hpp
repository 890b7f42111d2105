/// \file
/// \brief The dense linear layer of PyTorch's `nn.Linear`, forward and backward, composed from `GemmPlan`:
/// `LinearPlan` computes `y = act(x·Wᵀ + b)` (optionally saving the pre-activation), `LinearBackwardPlan`
/// computes `dX = dY·W`, `dW = dYᵀ·X` and `db = Σ_rows dY`, each optional. Neither has kernels of its own: a
/// plan holds the GemmPlans it selected and runs them in order. A `dynamic::` plan (kind-erased) of each, taking
/// `dynamic::LinearArgs` / `dynamic::LinearBackwardArgs`, and typed `LinearPlan<TIn, TOut, NX>` /
/// `LinearBackwardPlan<TIn, TOut, NX>`.
///
/// **Shapes.** x is `[..., K]` (rank ≥ 1; any leading dimensions, flattened to `rows` = M rows, their product),
/// W `[N, K]`, b `[N]`, y and the pre-activation `[..., N]` with x's leading dimensions. The backward's dy is
/// `[..., N]` and dx `[..., K]`, both with the same leading dimensions (x's, when x is given), dW `[N, K]`, db
/// `[N]`. M, N, K ≥ 0 (the descriptor's `rows`, `out_features`, `in_features`).
///
/// **Kinds** (GemmPlan's combinations): `input` (x, W, dy) → `output` (b, y, the pre-activation, dx, dW, db):
/// f16 → f16 | f32, bf16 → bf16 | f32, f32 → f32, f64 → f64; others are `Unsupported`. f16 → f16 and bf16 →
/// bf16 are PyTorch's (every tensor of one kind, f32 accumulation); → f32 keeps the layer's output and every
/// gradient in f32 (dy stays of the input kind, as the GEMMs read it).
///
/// **Layouts and strides** are descriptor fields, because the GemmPlans are selected with them:
/// - x, W and dy (read): `RowMajor` (element (r, c) at `r·ld + c`, ld ≥ max(1, cols); 0 means packed) or
///   `ColMajor` (`r + c·ld`, ld ≥ max(1, rows)), with (r, c) = (row, feature) for x and dy and (n, k) for W:
///   a PyTorch view `t[:, :K]` of a wider tensor is row-major with ld = its row stride, `t.t()` column-major.
///   The leading dimensions of x and dy must flatten into one row dimension without a copy (as `reshape` of a
///   view): each leading stride is the next one's stride times its extent (extent-1 dimensions excepted).
/// - y, the pre-activation, dx and dW (written) are row-major with their `ld_*` (0: packed), as GemmPlan's D.
/// - b and db are contiguous (stride 1).
/// Every view's (flattened) strides must be exactly the descriptor's (`InvalidProblem` otherwise; strides of
/// extent-1 dimensions and of empty views are not checked).
///
/// **Aliasing.** No output may overlap an input or another output (`InvalidProblem`); nothing runs in place.
///
/// **Optional operands.** b iff `has_bias`; the pre-activation iff `has_preactivation` (forward). In the
/// backward dx iff `grad_input`, dW iff `grad_weight`, db iff `grad_bias` (at least one); x is read iff dW is
/// computed and W iff dx is. A required operand left empty says "missing"; one given that the descriptor does
/// not use is `InvalidProblem`.
///
/// **Activations.** The forward applies `activation` (LinearActivation, int_gemm.hpp) after the bias, and with
/// `has_preactivation` writes the value before it (GemmPlan's aux). The backward of the same descriptor then
/// reads dy, the gradient of y, and that saved pre-activation (`preactivation`, of the output kind, row-major
/// with `ld_preactivation`), and first computes the pre-activation's gradient `dz = dy·act'(z)` with a
/// UnaryBackwardPlan (relu, silu, gelu, gelu_tanh: PyTorch's backward formulas, in f32 (f64 for f64), rounded
/// once to the input kind, as PyTorch's autograd keeps it) into the workspace; the GEMMs below read dz where
/// they read dy. This needs `input == output` (`Unsupported` otherwise). With `activation == None` dy is the
/// pre-activation's gradient itself.
///
/// **What runs** (M, N, K as above; the GemmPlan descriptor's m × n × k):
/// - forward: one GemmPlan `M × N × K`, op(A) = x, op(B) = Wᵀ (`rcr` for a row-major x and W), bias, activation
///   and aux its epilogue.
/// - dx: GemmPlan `M × K × N`, op(A) = dy, op(B) = W (`rrr` for row-major operands).
/// - dW: GemmPlan `N × K × M`, op(A) = dyᵀ, op(B) = x (`crr`); with `grad_bias`, db is that GEMM's bias_grad
///   (Σ over its k = the rows), in the same pass.
/// - db without dW: GemmPlan `N × 0 × M` with bias_grad only (gemm.hpp: N = 0 writes bias_grad and nothing
///   else): the same summation as above, no dW computed or stored.
/// The GemmPlans are selected with the caller's PlanPreference: on cuda cuBLASLt unless it cannot express the
/// GEMM (then the bespoke kernels; the db-only GEMM always, and a `CublasLt` preference makes that
/// `Unsupported`), on sim the bespoke kernels, on host the f64 reference. `gemm()`, `grad_input_gemm()`,
/// `grad_weight_gemm()` return each; their SKUs say what each runs.
///
/// **SKU.** The forward's is its GemmPlan's with op `linear`; the backward's is that of its first GemmPlan (dx,
/// else dW, else db's) with op `linear_backward`.
///
/// **Accuracy and determinism.** Each output is its GemmPlan's (gemm.hpp): on host f64 sums, on the bespoke
/// kernels (sim; cuda by `with_backend(Bespoke)`) a fixed summation order in f32 (f64 for f64) and one rounding
/// to the output kind, bit-stable run to run; cuBLASLt promises neither. `precision_guarantee()` is bit-stable
/// and deterministic only if every GemmPlan of the plan is. db's sum is in f32 (f64 for f64) in a fixed order,
/// never by atomics, on every backend but cuBLASLt (where its bias-gradient epilogue computes it).
///
/// **Workspace.** The backward with an activation: dz, M·N elements of the input kind (dense, row-major), rounded
/// up to 256 bytes, first. Then the sum of the GemmPlans' workspaces, each rounded up to 256 bytes (0 on host
/// and sim); the
/// workspace given must be 256-byte aligned when not empty. `PlanPreference::max_workspace_bytes` bounds the
/// sum: the dx GEMM is selected within it (less dz's part), the dW GEMM within what is left.
///
/// **Empty problems.** A forward with M = 0 or N = 0 writes nothing. The backward writes every requested
/// output that has elements: with M = 0, dW and db are zeros (sums of nothing), as PyTorch's.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/hash.hpp"
#include "baracuda/core/plan.hpp"
#include "baracuda/core/sku.hpp"
#include "baracuda/core/stream.hpp"
#include "baracuda/core/tensor.hpp"
#include "baracuda/core/typed_plan.hpp"
#include "baracuda/core/workspace.hpp"
#include "baracuda/ops/gemm.hpp"
#include "baracuda/ops/unary.hpp"

namespace baracuda {

/// One linear layer's problem, forward and backward (the file comment has every rule). Leading dimensions 0
/// mean packed. The forward reads the fields up to `ld_preactivation`; the backward the others, the shape, the
/// kinds, x's and W's layouts, and `activation` and `ld_preactivation` (an activation's backward).
struct LinearDescriptor {
  int64_t rows = 0;                       ///< M: the product of x's (and dy's) leading dimensions
  int64_t in_features = 0;                ///< K
  int64_t out_features = 0;               ///< N
  ElementKind input = ElementKind::F16;   ///< x, W, dy
  ElementKind output = ElementKind::F16;  ///< b, y, the pre-activation, dx, dW, db
  MatrixLayout layout_x = MatrixLayout::RowMajor;
  MatrixLayout layout_w = MatrixLayout::RowMajor;
  int64_t ld_x = 0, ld_w = 0;
  // The forward.
  bool has_bias = false;
  LinearActivation activation = LinearActivation::None;
  bool has_preactivation = false;  ///< write act's argument (x·Wᵀ + b)
  int64_t ld_y = 0, ld_preactivation = 0;
  // The backward.
  MatrixLayout layout_dy = MatrixLayout::RowMajor;
  int64_t ld_dy = 0, ld_dx = 0, ld_dw = 0;
  bool grad_input = true;   ///< compute dx
  bool grad_weight = true;  ///< compute dW
  bool grad_bias = false;   ///< compute db
  bool allow_tf32 = false;  ///< f32 inputs: TF32 permitted (GemmDescriptor::allow_tf32)

  LinearDescriptor& with_shape(int64_t m, int64_t in, int64_t out) {
    rows = m, in_features = in, out_features = out;
    return *this;
  }
  LinearDescriptor& with_kinds(ElementKind in, ElementKind out) {
    input = in, output = out;
    return *this;
  }
  LinearDescriptor& with_x(MatrixLayout l, int64_t ld = 0) {
    layout_x = l, ld_x = ld;
    return *this;
  }
  LinearDescriptor& with_w(MatrixLayout l, int64_t ld = 0) {
    layout_w = l, ld_w = ld;
    return *this;
  }
  LinearDescriptor& with_dy(MatrixLayout l, int64_t ld = 0) {
    layout_dy = l, ld_dy = ld;
    return *this;
  }
  LinearDescriptor& with_bias(bool b = true) {
    has_bias = b;
    return *this;
  }
  LinearDescriptor& with_activation(LinearActivation a) {
    activation = a;
    return *this;
  }
  LinearDescriptor& with_preactivation(bool b = true) {
    has_preactivation = b;
    return *this;
  }
  LinearDescriptor& with_ld_y(int64_t v) {
    ld_y = v;
    return *this;
  }
  LinearDescriptor& with_ld_preactivation(int64_t v) {
    ld_preactivation = v;
    return *this;
  }
  LinearDescriptor& with_ld_dx(int64_t v) {
    ld_dx = v;
    return *this;
  }
  LinearDescriptor& with_ld_dw(int64_t v) {
    ld_dw = v;
    return *this;
  }
  /// Which gradients the backward computes.
  LinearDescriptor& with_gradients(bool dx, bool dw, bool db) {
    grad_input = dx, grad_weight = dw, grad_bias = db;
    return *this;
  }
  LinearDescriptor& with_tf32(bool b = true) {
    allow_tf32 = b;
    return *this;
  }

  friend bool operator==(const LinearDescriptor&, const LinearDescriptor&) = default;
  size_t hash() const {
    return detail::hash_fields(rows, in_features, out_features, input, output, layout_x, layout_w, ld_x, ld_w, has_bias,
                               activation, has_preactivation, ld_y, ld_preactivation, layout_dy, ld_dy, ld_dx, ld_dw,
                               grad_input, grad_weight, grad_bias, allow_tf32);
  }
};

namespace dynamic {

/// The operands of `dynamic::LinearPlan`, inputs then outputs.
struct LinearArgs {
  ConstDynTensor x;              ///< [..., K] of `input`, read
  ConstDynTensor w;              ///< [N, K] of `input`, read
  ConstDynTensor bias = {};      ///< [N] of `output`, read; empty unless `has_bias`
  DynTensor y = {};              ///< [..., N] of `output`, written
  DynTensor preactivation = {};  ///< like y, written; empty unless `has_preactivation`
};

/// The operands of `dynamic::LinearBackwardPlan`, inputs then outputs.
struct LinearBackwardArgs {
  ConstDynTensor dy;                  ///< [..., N] of `input`, read: the gradient of y (see "Activations")
  ConstDynTensor x = {};              ///< [..., K] of `input`, read; empty unless `grad_weight`
  ConstDynTensor w = {};              ///< [N, K] of `input`, read; empty unless `grad_input`
  ConstDynTensor preactivation = {};  ///< like dy, of `output`, read: the forward's; iff `activation` != None
  DynTensor dx = {};                  ///< [..., K] of `output`, written; empty unless `grad_input`
  DynTensor dw = {};                  ///< [N, K] of `output`, written; empty unless `grad_weight`
  DynTensor db = {};                  ///< [N] of `output`, written; empty unless `grad_bias`
};

/// `y = act(x·Wᵀ + b)`: one GemmPlan. SKU: the GemmPlan's with op `linear`.
class LinearPlan : public detail::BoundPlan<LinearDescriptor> {
 public:
  using Args = LinearArgs;
  LinearPlan() = default;
  /// The descriptor's rules, then the GemmPlan (its errors prefixed "LinearPlan: the forward GEMM: ").
  static Result<LinearPlan> select(const Stream& stream, const LinearDescriptor& desc, PlanPreference pref = {});
  /// Kinds, shapes and strides against the descriptor, the optional operands, aliasing, then the GemmPlan's
  /// own checks (its backend's alignment).
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return workspace_bytes_; }
  PrecisionGuarantee precision_guarantee() const;
  /// Re-validates (and the workspace), then runs the GemmPlan.
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;
  /// The forward's GemmPlan.
  const GemmPlan& gemm() const { return *gemm_; }

 private:
  std::optional<GemmPlan> gemm_;
  size_t workspace_bytes_ = 0;
};

/// `dX = dY·W`, `dW = dYᵀ·X`, `db = Σ_rows dY`, each when the descriptor asks: up to two GemmPlans. SKU: its
/// first GemmPlan's with op `linear_backward`.
class LinearBackwardPlan : public detail::BoundPlan<LinearDescriptor> {
 public:
  using Args = LinearBackwardArgs;
  LinearBackwardPlan() = default;
  /// The descriptor's rules, then the GemmPlans (errors prefixed "LinearBackwardPlan: the dx GEMM: ", ...).
  static Result<LinearBackwardPlan> select(const Stream& stream, const LinearDescriptor& desc,
                                           PlanPreference pref = {});
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return workspace_bytes_; }
  PrecisionGuarantee precision_guarantee() const;
  /// Re-validates (and the workspace), then the dx GEMM, then the dW (and db) GEMM.
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;
  /// The dx GEMM (null without `grad_input`).
  const GemmPlan* grad_input_gemm() const { return dx_ ? &*dx_ : nullptr; }
  /// The dW GEMM, or db's alone (`N × 0 × M`) with `grad_bias` but not `grad_weight`; null when neither.
  const GemmPlan* grad_weight_gemm() const { return dw_ ? &*dw_ : nullptr; }
  /// The activation's backward (null without an activation).
  const UnaryBackwardPlan* activation_backward() const { return act_ ? &*act_ : nullptr; }

 private:
  std::optional<GemmPlan> dx_, dw_;
  std::optional<UnaryBackwardPlan> act_;
  size_t act_workspace_ = 0;  ///< dz's part of the workspace (256-byte aligned), first
  size_t dx_workspace_ = 0;   ///< dx's part of the workspace (256-byte aligned), after dz's; dW's follows
  size_t workspace_bytes_ = 0;
};

}  // namespace dynamic

// ------------------------------------------------------------------------------------------------------
// Typed wrappers
// ------------------------------------------------------------------------------------------------------

namespace detail {
template <class T, size_t N>
ConstDynTensor optional_in(const TensorRef<T, N>& t) {
  return t.data != nullptr ? ConstDynTensor::of(t) : ConstDynTensor{};
}
template <class T, size_t N>
DynTensor optional_out(const TensorMut<T, N>& t) {
  return t.data != nullptr ? DynTensor::of(t) : DynTensor{};
}
}  // namespace detail

/// Arguments of a typed LinearPlan: TIn the input kind's type, TOut the output's, NX the rank of x and y.
/// Leave an optional operand default (null data) when it is absent.
template <class TIn, class TOut, size_t NX = 2>
struct LinearArgs {
  TensorRef<TIn, NX> x;
  TensorRef<TIn, 2> w;
  TensorRef<TOut, 1> bias{};
  TensorMut<TOut, NX> y{};
  TensorMut<TOut, NX> preactivation{};
  dynamic::LinearArgs erased() const {
    return {ConstDynTensor::of(x), ConstDynTensor::of(w), detail::optional_in(bias), DynTensor::of(y),
            detail::optional_out(preactivation)};
  }
};

/// Arguments of a typed LinearBackwardPlan (NX: the rank of dy, x and dx). Leave what is not used default.
template <class TIn, class TOut, size_t NX = 2>
struct LinearBackwardArgs {
  TensorRef<TIn, NX> dy;
  TensorRef<TIn, NX> x{};
  TensorRef<TIn, 2> w{};
  TensorRef<TOut, NX> preactivation{};
  TensorMut<TOut, NX> dx{};
  TensorMut<TOut, 2> dw{};
  TensorMut<TOut, 1> db{};
  dynamic::LinearBackwardArgs erased() const {
    return {
        ConstDynTensor::of(dy),   detail::optional_in(x),   detail::optional_in(w),  detail::optional_in(preactivation),
        detail::optional_out(dx), detail::optional_out(dw), detail::optional_out(db)};
  }
};

/// Typed LinearPlan: TIn is the descriptor's `input`, TOut its `output`.
template <class TIn, class TOut, size_t NX = 2>
class LinearPlan : public detail::TypedPlan<dynamic::LinearPlan, LinearArgs<TIn, TOut, NX>> {
  using Base = detail::TypedPlan<dynamic::LinearPlan, LinearArgs<TIn, TOut, NX>>;
  friend Base;
  using Base::Base;

 public:
  static Result<LinearPlan> select(const Stream& stream, const LinearDescriptor& desc, PlanPreference pref = {}) {
    BARACUDA_TRY(detail::check_typed_element("LinearPlan", "x and w", desc.input, kind_of<TIn>));
    BARACUDA_TRY(detail::check_typed_element("LinearPlan", "y", desc.output, kind_of<TOut>));
    auto p = dynamic::LinearPlan::select(stream, desc, pref);
    if (!p) return p.error();
    return LinearPlan(std::move(p).value());
  }
};

/// Typed LinearBackwardPlan: TIn is the descriptor's `input` (dy, x, w), TOut its `output` (the gradients).
template <class TIn, class TOut, size_t NX = 2>
class LinearBackwardPlan : public detail::TypedPlan<dynamic::LinearBackwardPlan, LinearBackwardArgs<TIn, TOut, NX>> {
  using Base = detail::TypedPlan<dynamic::LinearBackwardPlan, LinearBackwardArgs<TIn, TOut, NX>>;
  friend Base;
  using Base::Base;

 public:
  static Result<LinearBackwardPlan> select(const Stream& stream, const LinearDescriptor& desc,
                                           PlanPreference pref = {}) {
    BARACUDA_TRY(detail::check_typed_element("LinearBackwardPlan", "dy, x and w", desc.input, kind_of<TIn>));
    BARACUDA_TRY(detail::check_typed_element("LinearBackwardPlan", "the gradients", desc.output, kind_of<TOut>));
    auto p = dynamic::LinearBackwardPlan::select(stream, desc, pref);
    if (!p) return p.error();
    return LinearBackwardPlan(std::move(p).value());
  }
};

}  // namespace baracuda
