/// \file
/// \brief Dense GEMM: `GemmPlan`, `D = act(α·op(A)·op(B) + β·C + bias)` per batch, with an optional
/// pre-activation output `aux` and the bias gradient `bias_grad[m] = Σ_k op(A)[m, k]` (cuBLASLt's epilogues).
/// A `dynamic::GemmPlan` (kind-erased) taking `dynamic::GemmArgs`, and a typed `GemmPlan<TAB, TCD, N>`.
///
/// **Kinds** (cuBLASLt's combinations): input (A, B) → output (C, D, bias, aux, bias_grad):
/// f16 → f16 | f32, bf16 → bf16 | f32, f32 → f32, f64 → f64. Anything else is `Unsupported`.
///
/// **Shapes.** op(A) is `[M, K]`, op(B) `[K, N]`, C, D and aux `[M, N]`, bias `[N]`, bias_grad `[M]`. With
/// `batch == 1` the matrices are rank-2 views; otherwise rank-3 `[batch, rows, cols]` views (a rank-2
/// view with batch ≠ 1, or a rank-3 one with batch == 1, is `InvalidProblem`). bias and bias_grad are
/// shared by every batch; bias_grad needs `batch == 1` (`Unsupported` otherwise, as in cuBLASLt).
/// M, N, K ≥ 0, `0 ≤ batch ≤ 65535`; M·N, M·K, K·N and each matrix's storage (rows of storage × ld) at most
/// 2^56 elements (the view limit), and fewer than 2^31 tiles of 64×64 in D (`InvalidProblem` otherwise).
///
/// **Layouts, leading dimensions and batch strides** are part of the descriptor (so that a library backend
/// builds its matrix layouts once, at select), and each view's strides must be exactly what the descriptor
/// says (`InvalidProblem` otherwise; strides of dimensions of extent 1 are not checked):
/// - op(A) `[M, K]`: `RowMajor` puts element (m, k) at `m·lda + k` (lda ≥ max(1, K); 0 means packed: K);
///   `ColMajor` at `m + k·lda` (lda ≥ max(1, M); packed: M). A `ColMajor` op(A) is a transposed row-major
///   matrix: `x.t()` of a PyTorch tensor x `[K, M]` is exactly such a view. Likewise op(B) `[K, N]`
///   (RowMajor: `k·ldb + n`, ldb ≥ N; ColMajor: `k + n·ldb`, ldb ≥ K): nn.Linear's weight W `[N, K]` is op(B)
///   = Wᵀ, `ColMajor` with ldb = K, so `y = x·Wᵀ` is (RowMajor, ColMajor), dX = dY·W is (RowMajor, RowMajor)
///   and dW = dYᵀ·X is (ColMajor, RowMajor).
/// - C, D and aux are row-major: element (m, n) at `m·ld + n`, ld ≥ max(1, N) (0: packed, N).
/// - Batch strides in elements: `kPackedBatchStride` (the default) means packed (rows of storage × ld: M·lda
///   for a RowMajor op(A), K·lda for a ColMajor one; M·ldd for D); 0 broadcasts one matrix to every batch
///   (A, B or C only: D and aux need batch strides ≥ M·ld, so that batches do not overlap); any other value
///   ≥ 0 is taken as given. Negative strides are `InvalidProblem`.
/// - bias and bias_grad are contiguous (stride 1).
///
/// **Alignment.** Every pointer aligned to its element's size (`MisalignedOperand`). The bespoke kernels need
/// nothing more. A plan on the cuBLASLt backend needs every pointer 16-byte aligned (`MisalignedOperand` from
/// can_implement and run): select a Bespoke plan (`PlanPreference::with_backend`) for other pointers.
///
/// **Aliasing.** No output may overlap an input or another output (`InvalidProblem`), with one exception:
/// D may be C exactly (the same pointer, and the same ld and batch stride: `beta != 0` in place). Every
/// element of C is read by the thread that then writes that element of D.
///
/// **Optional operands.** c is given iff `beta != 0` (β = 0 never reads C, so a NaN there does not
/// propagate, as in BLAS); bias iff `has_bias`; aux iff `has_aux`; bias_grad iff `bias_grad`. A missing
/// required operand says "missing"; one given where the descriptor has none is `InvalidProblem`.
///
/// **The epilogue, exactly.** Per output element, in the opmath type M (f32; f64 for f64 inputs), with
/// `acc = Σ_k op(A)[m, k]·op(B)[k, n]` (the inputs converted exactly to M):
///   1. `v = α·acc` (α and β rounded to M once, at select),
///   2. `v = fma(β, c[m, n], v)` when β ≠ 0,
///   3. `v = v + bias[n]` when `has_bias`,
///   4. `aux[m, n] = round(v)` when `has_aux` (the pre-activation value, for the activation's backward),
///   5. `d[m, n] = round(act(v))`, act one of LinearActivation's functions (int_gemm.hpp; ReLU keeps NaN).
/// Each `round` is one rounding to nearest even to the output kind. K = 0 gives acc = 0 (the epilogue still
/// runs). bias_grad[m] = round(Σ_k op(A)[m, k]) in M (it does not depend on B, α or the activation: in the
/// dW = dYᵀ·X GEMM of a linear layer it is db).
///
/// **Backends and accuracy.**
/// - `host` (the reference, src/ops/gemm/host.cpp): acc and bias_grad summed in double for f16/bf16/f32
///   inputs (every product exact) and in long double for f64, the epilogue in long double, one rounding to
///   the output kind. Deterministic.
/// - `cuda`, `CublasLt` (the default; SKU variant `cublaslt`, src/ops/gemm/cublaslt.hpp): cuBLASLt with the
///   matrix layouts, epilogue and algorithm chosen at select, f32 compute (f64 for f64; TF32 tensor cores for
///   f32 inputs only with `allow_tf32`), its workspace part of `workspace_size()`. Where cuBLASLt cannot express
///   the problem (SiLU, GELU-erf, aux without GELU-tanh, bias_grad with anything else, K = 0, ...), select
///   takes the bespoke kernels instead; a `CublasLt` preference then answers `Unsupported`. cuBLASLt documents
///   no summation order, so these plans promise neither bit stability nor determinism. Its epilogue rounds its
///   partial results (α·A·B, + β·C, + bias) to the output kind in between, where the bespoke kernels round once: a
///   16-bit output may be off by about an ulp of each partial, which is many of its own ulps where β·C or the bias
///   cancels most of α·A·B (up to 16 ulps of an f16 output on an H100, docs/perf/2026-11-27-h100, run 9).
/// - `sim` and `cuda` with `PlanPreference::with_backend(Bespoke)` (sim: `Sim`): the bespoke kernels, which
///   run every layout and stride. f16/bf16 inputs: the tensor-core kernel (`tc_m16n8k16`,
///   src/ops/gemm/tc_kernels.cuh: mma.sync, f32 accumulation); f32 and f64 inputs, and f16/bf16 problems with
///   M, N or K above 2^31 − 256: the CUDA-core kernel (`simt`, src/ops/gemm/simt_kernels.cuh), each output's
///   sum in the opmath type with one `fma` per k, k ascending (f32 inputs are exact f32 arithmetic: no TF32).
///   Both have a fixed summation order and no atomics: the same bits on every run of a device. The CUDA-core
///   kernel gives the same bits on sim and cuda (up to the ulp of SiLU/GELU's libm calls); the tensor-core
///   kernel's may differ between them, because the emulated mma.sync matches the hardware only where every
///   partial sum is exact (docs/ptx.md). Error against the exact sum: at most about K·u_M·Σ_k|a·b| (u_M: 2^-24
///   for f32, 2^-53 for f64), then one rounding to the output kind. bias_grad likewise in a fixed order.
/// - `allow_tf32` (f32 inputs only; `InvalidProblem` otherwise) permits a backend to round A and B to TF32
///   (10-bit mantissa) in its tensor cores; it never requires it, and the SKU's precision says which ran.
///
/// **Workspace.** None for host and the bespoke kernels; the cuBLASLt algorithm's (256-byte aligned) on cuda.
///
/// **Empty problems** (M, N or batch = 0) succeed and write nothing, except that N = 0 with `bias_grad` still
/// writes bias_grad (which does not depend on N).
#pragma once

#include <cstdint>
#include <memory>
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
#include "baracuda/ops/int_gemm.hpp"  // LinearActivation

namespace baracuda {

/// How a matrix operand is stored (see the file comment for the element addresses).
enum class MatrixLayout : uint8_t { RowMajor = 0, ColMajor = 1 };
/// "row_major", "col_major"; "?" for a value outside the enumeration.
std::string_view to_string(MatrixLayout l);

/// A descriptor batch stride meaning "packed" (rows of storage × leading dimension).
inline constexpr int64_t kPackedBatchStride = -1;

/// One GEMM problem (the file comment has every rule). Leading dimensions 0 mean packed.
struct GemmDescriptor {
  int64_t m = 0, n = 0, k = 0;
  int64_t batch = 1;
  ElementKind input = ElementKind::F16;   ///< A and B
  ElementKind output = ElementKind::F16;  ///< C, D, bias, aux and bias_grad
  MatrixLayout layout_a = MatrixLayout::RowMajor;  ///< of op(A) [M, K]
  MatrixLayout layout_b = MatrixLayout::RowMajor;  ///< of op(B) [K, N]
  int64_t lda = 0, ldb = 0, ldc = 0, ldd = 0, ld_aux = 0;
  int64_t batch_stride_a = kPackedBatchStride, batch_stride_b = kPackedBatchStride,
          batch_stride_c = kPackedBatchStride, batch_stride_d = kPackedBatchStride,
          batch_stride_aux = kPackedBatchStride;
  double alpha = 1.0, beta = 0.0;
  bool has_bias = false;                                 ///< + bias[n] (step 3)
  LinearActivation activation = LinearActivation::None;  ///< step 5
  bool has_aux = false;                                  ///< write the pre-activation value (step 4)
  bool bias_grad = false;                                ///< write Σ_k op(A)[m, k] (batch == 1)
  bool allow_tf32 = false;                               ///< f32 inputs: TF32 permitted, never required

  GemmDescriptor& with_shape(int64_t m_, int64_t n_, int64_t k_) { m = m_, n = n_, k = k_; return *this; }
  GemmDescriptor& with_batch(int64_t b) { batch = b; return *this; }
  GemmDescriptor& with_kinds(ElementKind in, ElementKind out) { input = in, output = out; return *this; }
  GemmDescriptor& with_layouts(MatrixLayout a, MatrixLayout b) { layout_a = a, layout_b = b; return *this; }
  GemmDescriptor& with_lda(int64_t v) { lda = v; return *this; }
  GemmDescriptor& with_ldb(int64_t v) { ldb = v; return *this; }
  GemmDescriptor& with_ldc(int64_t v) { ldc = v; return *this; }
  GemmDescriptor& with_ldd(int64_t v) { ldd = v; return *this; }
  GemmDescriptor& with_ld_aux(int64_t v) { ld_aux = v; return *this; }
  GemmDescriptor& with_batch_stride_a(int64_t v) { batch_stride_a = v; return *this; }
  GemmDescriptor& with_batch_stride_b(int64_t v) { batch_stride_b = v; return *this; }
  GemmDescriptor& with_batch_stride_c(int64_t v) { batch_stride_c = v; return *this; }
  GemmDescriptor& with_batch_stride_d(int64_t v) { batch_stride_d = v; return *this; }
  GemmDescriptor& with_batch_stride_aux(int64_t v) { batch_stride_aux = v; return *this; }
  GemmDescriptor& with_alpha_beta(double a, double b) { alpha = a, beta = b; return *this; }
  GemmDescriptor& with_bias(bool b = true) { has_bias = b; return *this; }
  GemmDescriptor& with_activation(LinearActivation a) { activation = a; return *this; }
  GemmDescriptor& with_aux(bool b = true) { has_aux = b; return *this; }
  GemmDescriptor& with_bias_grad(bool b = true) { bias_grad = b; return *this; }
  GemmDescriptor& with_tf32(bool b = true) { allow_tf32 = b; return *this; }

  friend bool operator==(const GemmDescriptor&, const GemmDescriptor&) = default;
  size_t hash() const {
    return detail::hash_fields(m, n, k, batch, input, output, layout_a, layout_b, lda, ldb, ldc, ldd, ld_aux,
                               batch_stride_a, batch_stride_b, batch_stride_c, batch_stride_d, batch_stride_aux, alpha,
                               beta, has_bias, activation, has_aux, bias_grad, allow_tf32);
  }
};

namespace detail {
struct GemmLaunch;
class CublasLtGemm;
using GemmFn = Status (*)(const ExecContext&, const GemmLaunch&);
}  // namespace detail

namespace dynamic {

/// The operands of `dynamic::GemmPlan`, inputs then outputs (shapes and strides: the file comment).
struct GemmArgs {
  ConstDynTensor a;          ///< op(A): [M, K] or [batch, M, K] of `input`, read
  ConstDynTensor b;          ///< op(B): [K, N] or [batch, K, N] of `input`, read
  ConstDynTensor c = {};     ///< [M, N] or [batch, M, N] of `output`, read; empty when β == 0
  ConstDynTensor bias = {};  ///< [N] of `output`, read; empty unless `has_bias`
  DynTensor d = {};          ///< [M, N] or [batch, M, N] of `output`, written (may be c exactly)
  DynTensor aux = {};        ///< like d, written: the pre-activation value; empty unless `has_aux`
  DynTensor bias_grad = {};  ///< [M] of `output`, written: Σ_k op(A)[m, k]; empty unless `bias_grad`
};

/// Dense GEMM. SKU `gemm/<input>-><output>/<layout>/<epilogue>/<backend>/<precision>/<variant>`: layout the
/// letters of op(A), op(B) and D (`rcr` for y = x·Wᵀ); variant `reference` (host), `cublaslt`, `tc_m16n8k16`
/// (the bespoke tensor-core kernel) or `simt` (the bespoke CUDA-core kernel).
class GemmPlan : public detail::BoundFnPlan<GemmDescriptor, detail::GemmFn> {
  using BoundFnPlan::BoundFnPlan;

 public:
  using Args = GemmArgs;
  /// The descriptor's rules (kinds, shape, layouts, leading dimensions, batch strides, flags), then the
  /// stream's device and the preference's backend (`Unsupported` for one that cannot serve).
  static Result<GemmPlan> select(const Stream& stream, const GemmDescriptor& desc, PlanPreference pref = {});
  /// Kinds, shapes and strides against the descriptor, the optional operands, alignment and aliasing.
  Status can_implement(const Args& args) const;
  size_t workspace_size() const { return workspace_bytes_; }
  PrecisionGuarantee precision_guarantee() const;
  /// Re-validates, then one call of the backend.
  Status run(const Stream& stream, Workspace workspace, const Args& args) const;

 private:
  std::shared_ptr<const detail::CublasLtGemm> lt_;  ///< the library backend, when it serves the plan
  size_t workspace_bytes_ = 0;
};

}  // namespace dynamic

// ------------------------------------------------------------------------------------------------------
// Typed wrapper
// ------------------------------------------------------------------------------------------------------

/// Arguments of a typed GemmPlan: TAB is the input type, TCD the output type, N the matrices' rank (2 for
/// batch == 1, 3 for batched). Leave an optional operand default (null data) when it is absent.
template <class TAB, class TCD, size_t N = 2>
struct GemmArgs {
  TensorRef<TAB, N> a;          ///< op(A)
  TensorRef<TAB, N> b;          ///< op(B)
  TensorRef<TCD, N> c{};        ///< or default (β == 0)
  TensorRef<TCD, 1> bias{};     ///< [N] or default
  TensorMut<TCD, N> d{};        ///< the output
  TensorMut<TCD, N> aux{};      ///< or default
  TensorMut<TCD, 1> bias_grad{};  ///< [M] or default
  dynamic::GemmArgs erased() const {
    auto in = [](const auto& t) { return t.data != nullptr ? ConstDynTensor::of(t) : ConstDynTensor{}; };
    auto out = [](const auto& t) { return t.data != nullptr ? DynTensor::of(t) : DynTensor{}; };
    return {ConstDynTensor::of(a), ConstDynTensor::of(b), in(c), in(bias), DynTensor::of(d), out(aux),
            out(bias_grad)};
  }
};

/// Typed GemmPlan: TAB is the descriptor's `input`, TCD its `output`; N is 2 when batch == 1, else 3.
template <class TAB, class TCD, size_t N = 2>
class GemmPlan : public detail::TypedPlan<dynamic::GemmPlan, GemmArgs<TAB, TCD, N>> {
  using Base = detail::TypedPlan<dynamic::GemmPlan, GemmArgs<TAB, TCD, N>>;
  friend Base;
  using Base::Base;

 public:
  static Result<GemmPlan> select(const Stream& stream, const GemmDescriptor& desc, PlanPreference pref = {}) {
    BARACUDA_TRY(detail::check_typed_element("GemmPlan", "a and b", desc.input, kind_of<TAB>));
    BARACUDA_TRY(detail::check_typed_element("GemmPlan", "c and d", desc.output, kind_of<TCD>));
    BARACUDA_TRY(detail::check_typed_rank("GemmPlan", desc.batch == 1 ? 2 : 3, static_cast<int>(N)));
    auto p = dynamic::GemmPlan::select(stream, desc, pref);
    if (!p) return p.error();
    return GemmPlan(std::move(p).value());
  }
};

}  // namespace baracuda
