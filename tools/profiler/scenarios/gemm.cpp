// The dense GEMM family (GemmPlan), in the three layouts of a linear layer y = x·Wᵀ + b:
//   gemm_linear  forward: d = x·Wᵀ + bias, op(A) = x [M, K] row-major, op(B) = Wᵀ (W [N, K] dense, so op(B) is
//                column-major: the "rcr" layout), bias [N]
//   gemm         dX = dY·W: both row-major ("rrr"), no epilogue (here x [M, K] · B [K, N])
//   gemm_linear_bespoke  gemm_linear with PlanPreference::with_backend(Bespoke) on cuda (the tensor-core kernel
//                for f16/bf16, the CUDA-core one for f32), beside gemm_linear's cuBLASLt
//   gemm_dw      dW = dYᵀ·X with db: op(A) = dYᵀ (dY [K, M] dense: column-major "crr"), op(B) = X [K, N], and
//                bias_grad [M] = Σ_k op(A)[m, k]
// The operands are the dense tensors each plan's caller holds (x or dY, W or B; the outputs), which the scenario
// views as op(A) and op(B) (a transpose is a view: no copy).
//
// Shapes. The problem's shape is the output [M, N]; K = N unless given: a rank-3 shape [M, N, K] (--shape
// MxNxK). Defaults: on cuda the linear layers of a 7B model, M ∈ {1, 16, 128, 2048, 8192} tokens × (N, K) ∈
// {(4096, 4096), (11008, 4096), (4096, 11008)}; on host/sim two small ragged problems ([17, 64] with K = 96,
// [33, 48] with K = 40: M and N not multiples of the kernel's 64×64 tile), because sim runs the kernel thread by
// thread. Kinds: bf16 and f16 (same output), and f32.
//
// Values: x in [-1, 1], the second operand in ±2/√K, so outputs stay O(1) and the f32 sums' rounding stays
// inside the f32 tolerance at K = 11008. Traffic: both inputs and the output once (and the bias / bias_grad);
// flops = 2·M·N·K. Outputs compare with the host reference within the per-kind tolerance table (the kernel sums
// in f32, the host in f64). Cases over --verify-limit flops are timed only.
//
// Baseline: on cuda each case also times cuBLAS fp16 GEMM of the same [M, N, K] (cublas_gemm.hpp; the same fp16
// GEMM for every kind); the speedup column is its time over the plan's.
//
// --strided: the profiler's strided views are not the descriptor's packed layouts, so can_implement rejects them
// and the cases are reported `unsupported`.
#include <algorithm>
#include <baracuda/ops/gemm.hpp>
#include <cmath>
#include <utility>

#include "../cublas_gemm.hpp"
#include "common.hpp"
#include "scenarios.hpp"

namespace baracuda::profiler {
namespace {

enum Variant : uint32_t { kLinear = 0, kGemm = 1, kDw = 2, kLinearBespoke = 3 };

using Mnk = GemmExtents;

/// The problem's [M, N, K] (common.hpp's gemm_extents).
Mnk mnk(const Problem& p) { return gemm_extents(p.shape); }

GemmDescriptor descriptor(const Problem& p) {
  const Mnk d = mnk(p);
  constexpr MatrixLayout R = MatrixLayout::RowMajor, C = MatrixLayout::ColMajor;
  GemmDescriptor g = GemmDescriptor{}.with_shape(d.m, d.n, d.k).with_kinds(p.dtype, p.out_dtype);
  switch (p.variant) {
    case kLinear:
    case kLinearBespoke:
      return g.with_layouts(R, C).with_bias();
    case kGemm:
      return g.with_layouts(R, R);
    default:
      return g.with_layouts(C, R).with_bias_grad();
  }
}

/// gemm_linear_bespoke asks cuda for the bespoke kernels (elsewhere they are the only ones).
Result<dynamic::GemmPlan> select_plan(const Stream& s, const Problem& p) {
  PlanPreference pref;
  if (p.variant == kLinearBespoke && s.device() == DeviceKind::Cuda) pref.with_backend(BackendKind::Bespoke);
  return dynamic::GemmPlan::select(s, descriptor(p), pref);
}
Result<KernelSku> select_sku(const Stream& s, const Problem& p) { return sku_of(select_plan(s, p)); }

/// A rank-2 view transposed (a default view stays one, so that a missing operand stays missing).
DynTensor transposed(DynTensor t) {
  if (t.rank() != 2) return t;
  std::swap(t.shape.dims[0], t.shape.dims[1]);
  std::swap(t.stride[0], t.stride[1]);
  return t;
}

struct BindLinear {  // x, W, bias; d
  static dynamic::GemmArgs bind(const dynamic::GemmPlan&, const DynTensor& x, const DynTensor& w, const DynTensor& bias,
                                const DynTensor& d) {
    return {x, transposed(w), {}, bias, d};
  }
};
struct BindGemm {  // a, b; d
  static dynamic::GemmArgs bind(const dynamic::GemmPlan&, const DynTensor& a, const DynTensor& b, const DynTensor& d) {
    return {a, b, {}, {}, d};
  }
};
struct BindDw {  // dY [K, M], X [K, N]; dW [M, N], db [M]
  static dynamic::GemmArgs bind(const dynamic::GemmPlan&, const DynTensor& dy, const DynTensor& x, const DynTensor& dw,
                                const DynTensor& db) {
    return {transposed(dy), x, {}, {}, dw, {}, db};
  }
};

template <class Bind, size_t NIn, size_t NOut>
Result<std::unique_ptr<Instance>> make(const Stream& s, const Problem& p, const std::array<OperandSpec, NIn>& in,
                                       const std::array<OperandSpec, NOut>& out) {
  auto plan = select_plan(s, p);
  if (!plan) return plan.error();
  using Plan = PositionalPlan<dynamic::GemmPlan, Bind>;
  return PlanInstance<Plan, NIn, NOut>::make(s, Plan{std::move(plan).value()}, p, in, out);
}

Result<std::unique_ptr<Instance>> prepare(const Stream& s, const Problem& p) {
  const Mnk d = mnk(p);
  const double w = 2.0 / std::sqrt(static_cast<double>(std::max<int64_t>(d.k, 1)));
  const ElementKind in = p.dtype, out = p.out_dtype;
  const ValueRange unit{-1, 1, false}, scaled{-w, w, false};
  const OperandSpec dout{out, Shape{d.m, d.n}, {}};
  switch (p.variant) {
    case kLinear:
    case kLinearBespoke:
      return make<BindLinear, 3, 1>(s, p,
                                    {OperandSpec{in, Shape{d.m, d.k}, unit}, OperandSpec{in, Shape{d.n, d.k}, scaled},
                                     OperandSpec{out, Shape{d.n}, unit}},
                                    {dout});
    case kGemm:
      return make<BindGemm, 2, 1>(
          s, p, {OperandSpec{in, Shape{d.m, d.k}, unit}, OperandSpec{in, Shape{d.k, d.n}, scaled}}, {dout});
    default:
      return make<BindDw, 2, 2>(s, p,
                                {OperandSpec{in, Shape{d.k, d.m}, scaled}, OperandSpec{in, Shape{d.k, d.n}, unit}},
                                {dout, OperandSpec{out, Shape{d.m}, {}}});
  }
}

Traffic traffic(const Problem& p) {
  const Mnk d = mnk(p);
  const double a = static_cast<double>(storage_bytes(p.dtype, d.m * d.k));
  const double b = static_cast<double>(storage_bytes(p.dtype, d.k * d.n));
  const double y = static_cast<double>(storage_bytes(p.out_dtype, d.m * d.n));
  const double vec = p.variant == kLinear || p.variant == kLinearBespoke
                         ? static_cast<double>(storage_bytes(p.out_dtype, d.n))
                     : p.variant == kDw ? static_cast<double>(storage_bytes(p.out_dtype, d.m))
                                        : 0.0;
  return Traffic{a + b + y + vec, 2.0 * static_cast<double>(d.m) * static_cast<double>(d.n) * static_cast<double>(d.k)};
}

std::vector<Shape> default_shapes(DeviceKind device) {
  return llm_linear_shapes(device, {Shape{17, 64, 96}, Shape{33, 48, 40}});
}

Result<double> cublas_baseline(const Stream& s, const Problem& p, int warmup, int repeat) {
  const Mnk d = mnk(p);
  return cublas_f16_gemm_seconds(s, d.m, d.n, d.k, warmup, repeat);
}

std::vector<Problem> gemm_kinds(uint32_t v) {
  return kind_pairs({{ElementKind::Bf16, ElementKind::Bf16},
                     {ElementKind::F16, ElementKind::F16},
                     {ElementKind::F32, ElementKind::F32}},
                    v);
}

constexpr ScenarioFamily kGemmFamily{"gemm",
                                     select_sku,
                                     prepare,
                                     traffic,
                                     gemm_kinds,
                                     default_shapes,
                                     OutputKind::Chosen,
                                     Comparison::Tolerance,
                                     "cuBLAS f16 GEMM",
                                     cublas_baseline};

}  // namespace

void add_gemm_scenarios(std::vector<Scenario>& out) {
  out.push_back(kGemmFamily.op("gemm_linear", "d = x * W^T + bias (x [M, K], W [N, K]; rcr)", kLinear));
  out.push_back(kGemmFamily.op("gemm", "d = a * b (a [M, K], b [K, N]; rrr)", kGemm));
  out.push_back(kGemmFamily.op("gemm_linear_bespoke",
                               "gemm_linear on the bespoke kernels (cuda: by preference; tensor cores for 16-bit)",
                               kLinearBespoke));
  out.push_back(kGemmFamily.op("gemm_dw", "dW = dY^T * X, db = sum_k dY^T (dY [K, M], X [K, N]; crr)", kDw));
}

}  // namespace baracuda::profiler
