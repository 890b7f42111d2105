// The int8 GEMM family: IntGemmPlan (s8 × s8 → s32), SmoothQuantLinearPlan (s8 x_q with a static
// per-tensor scale, per-channel weight scale, bias, bf16/f16 out) and QuantizedLinearPlan (bf16/f16 x
// quantized per token inside the plan, symmetric, per-channel weight scale, bias, bf16/f16 out).
// a / x / x_q is [M, K], b / the weight [N, K] (nn.Linear's layout), the output [M, N]. The operands are
// each plan's Args fields in order (a, b, c; x or x_q, weight, weight_scale, bias, y).
//
// Shapes. The problem's shape is the output [M, N]; K comes from a fixed mapping: K = N rounded up to a
// multiple of 16 (a square weight; the plans need K % 16 == 0). A rank-3 shape [M, N, K] (--shape MxNxK)
// gives K explicitly, and a rank-1 shape [N] is one token (M = 1). Defaults: on cuda the LLM linear layers
// of a 7B model, M ∈ {1, 16, 128, 2048, 8192} tokens × (N, K) ∈ {(4096, 4096) (q/k/v/o), (11008, 4096)
// (gate/up), (4096, 11008) (down)}; on host/sim two tiny ragged problems ([17, 64] with K = 96, [33, 48]
// with K = 64: M and N not multiples of the sim tile), because sim runs the tensor-core GEMM thread by
// thread.
//
// Traffic: a, b, the weight scales and the bias read once, the output written once; flops = 2·M·N·K (the
// table shows TOPS). QuantizedLinear's quantized x round trip through the workspace is not counted.
// Outputs compare bit for bit with the host device (int_gemm.hpp promises it for IntGemm and for the linear
// plans without activation; these scenarios use none). Cases over --verify-limit flops (M ≥ 2048 on the
// cuda shapes) are timed only; the GPU test suite checks the same kernel bit for bit on smaller shapes.
//
// int_gemm is the default plan (on a 9.0 GPU cuBLASLt's IMMA for s8: int_gemm.hpp), int_gemm_bespoke the bespoke
// kernels by preference (cuda only; elsewhere the same kernel as int_gemm), so that one run times the library and
// the bespoke kernels side by side: the measurement the default follows.
//
// Baseline: on cuda each case also times cuBLAS fp16 GEMM of the same [M, N, K] (cublas_gemm.hpp); the
// speedup column is its time over the plan's.
//
// --strided: the profiler's strided views have stride 2 along K, which the int8 GEMM's 16-byte cp.async
// rule forbids (a/x_q and b/weight must be K-contiguous with 16-byte-aligned rows), so can_implement rejects
// them and the cases are reported `unsupported`. (QuantizedLinear's x, bias and weight scale may be strided; its
// weight may not.)
#include <algorithm>
#include <utility>

#include <baracuda/ops/int_gemm.hpp>

#include "../cublas_gemm.hpp"
#include "common.hpp"
#include "scenarios.hpp"

namespace baracuda::profiler {
namespace {

enum Variant : uint32_t { kIntGemm = 0, kSmoothQuant = 1, kQuantized = 2, kIntGemmBespoke = 3 };

/// int_gemm_bespoke: IntGemmPlan on the bespoke kernels (PlanPreference::with_backend(Bespoke)) on cuda; on host
/// and sim, the device's own kernel (the same row as int_gemm).
PlanPreference preference(const Stream& s, const Problem& p) {
  PlanPreference pref;
  if (p.variant == kIntGemmBespoke && s.device() == DeviceKind::Cuda) pref.with_backend(BackendKind::Bespoke);
  return pref;
}

/// The static per-tensor scale of x that SmoothQuantLinear's descriptor carries (x_scale).
constexpr float kXScale = 0.0125f;

using Mnk = GemmExtents;

/// The problem's [M, N, K] (common.hpp's gemm_extents: K a multiple of 16, as the plans need).
Mnk mnk(const Problem& p) { return gemm_extents(p.shape, 16); }

IntGemmDescriptor int_gemm_descriptor(const Problem& p) {
  const Mnk d = mnk(p);
  IntGemmDescriptor r = IntGemmDescriptor().with_shape(d.m, d.n, d.k).with_kinds(p.dtype, p.dtype);
  r.c = p.out_dtype;
  return r;
}

SmoothQuantLinearDescriptor smooth_quant_descriptor(const Problem& p) {
  const Mnk d = mnk(p);
  SmoothQuantLinearDescriptor r = SmoothQuantLinearDescriptor()
                                      .with_shape(d.m, d.n, d.k)
                                      .with_x_scale(kXScale)
                                      .with_output(p.out_dtype)
                                      .with_weight_scale_granularity(WeightScaleGranularity::PerChannel)
                                      .with_bias();
  r.x_quantized = p.dtype;
  return r;
}

QuantizedLinearDescriptor quantized_descriptor(const Problem& p) {
  const Mnk d = mnk(p);
  return QuantizedLinearDescriptor()
      .with_shape(d.m, d.n, d.k)
      .with_element(p.dtype)
      .with_output(p.out_dtype)
      .with_x_quantized(ElementKind::S8)
      .with_mode(DynamicRangeMode::Symmetric)
      .with_weight_scale_granularity(WeightScaleGranularity::PerChannel)
      .with_bias();
}

/// The weight-scale kind the linear plans want (f64 only with an f64 output).
ElementKind scale_kind(const Problem& p) { return p.out_dtype == ElementKind::F64 ? ElementKind::F64 : ElementKind::F32; }

Result<KernelSku> select_sku(const Stream& s, const Problem& p) {
  switch (p.variant) {
    case kIntGemm:
    case kIntGemmBespoke:
      return sku_of(dynamic::IntGemmPlan::select(s, int_gemm_descriptor(p), preference(s, p)));
    case kSmoothQuant: return sku_of(dynamic::SmoothQuantLinearPlan::select(s, smooth_quant_descriptor(p)));
    default: return sku_of(dynamic::QuantizedLinearPlan::select(s, quantized_descriptor(p)));
  }
}

/// An int8 operand's values: the full s8 range (u8: 0..255).
ValueRange int8_range(ElementKind k) {
  return k == ElementKind::U8 ? ValueRange{0, 255, true} : ValueRange{-128, 127, true};
}

Result<std::unique_ptr<Instance>> prepare(const Stream& s, const Problem& p) {
  const Mnk d = mnk(p);
  const Shape a_shape{d.m, d.k}, w_shape{d.n, d.k}, y_shape{d.m, d.n}, n_shape{d.n};
  // Symmetric weights (-127..127, as quantizers produce); scales so that y stays O(1)..O(100).
  const OperandSpec weight{ElementKind::S8, w_shape, ValueRange{-127, 127, true}};
  const OperandSpec w_scale{scale_kind(p), n_shape, ValueRange{0.0005, 0.004, false}};
  const OperandSpec bias{p.out_dtype, n_shape, ValueRange{-2, 2, false}};
  const OperandSpec y{p.out_dtype, y_shape, {}};
  switch (p.variant) {
    case kIntGemm:
    case kIntGemmBespoke: {
      auto plan = dynamic::IntGemmPlan::select(s, int_gemm_descriptor(p), preference(s, p));
      if (!plan) return plan.error();
      return PlanInstance<dynamic::IntGemmPlan, 2, 1>::make(
          s, std::move(plan).value(), p,
          {OperandSpec{p.dtype, a_shape, int8_range(p.dtype)}, OperandSpec{p.dtype, w_shape, int8_range(p.dtype)}},
          {OperandSpec{p.out_dtype, y_shape, {}}});
    }
    case kSmoothQuant: {
      auto plan = dynamic::SmoothQuantLinearPlan::select(s, smooth_quant_descriptor(p));
      if (!plan) return plan.error();
      return PlanInstance<dynamic::SmoothQuantLinearPlan, 4, 1>::make(
          s, std::move(plan).value(), p,
          {OperandSpec{p.dtype, a_shape, int8_range(p.dtype)}, weight, w_scale, bias}, {y});
    }
    default: {
      auto plan = dynamic::QuantizedLinearPlan::select(s, quantized_descriptor(p));
      if (!plan) return plan.error();
      return PlanInstance<dynamic::QuantizedLinearPlan, 4, 1>::make(
          s, std::move(plan).value(), p,
          {OperandSpec{p.dtype, a_shape, ValueRange{-6, 6, false}}, weight, w_scale, bias}, {y});
    }
  }
}

Traffic traffic(const Problem& p) {
  const Mnk d = mnk(p);
  const double a = static_cast<double>(storage_bytes(p.dtype, d.m * d.k));
  const bool plain = p.variant == kIntGemm || p.variant == kIntGemmBespoke;
  const double w = static_cast<double>(storage_bytes(plain ? p.dtype : ElementKind::S8, d.n * d.k));
  const double y = static_cast<double>(storage_bytes(p.out_dtype, d.m * d.n));
  const double params = plain ? 0.0
                                              : static_cast<double>(storage_bytes(scale_kind(p), d.n) +
                                                                    storage_bytes(p.out_dtype, d.n));
  return Traffic{a + w + y + params, 2.0 * static_cast<double>(d.m) * static_cast<double>(d.n) * static_cast<double>(d.k)};
}

std::vector<Shape> default_shapes(DeviceKind device) {
  return llm_linear_shapes(device, {Shape{17, 64, 96}, Shape{33, 48, 64}});
}

/// cuBLAS fp16 GEMM of the same [M, N, K]: the half-precision linear layer these plans replace.
Result<double> cublas_baseline(const Stream& s, const Problem& p, int warmup, int repeat) {
  const Mnk d = mnk(p);
  return cublas_f16_gemm_seconds(s, d.m, d.n, d.k, warmup, repeat);
}

std::vector<Problem> int_gemm_kinds(uint32_t v) { return {{ElementKind::S8, ElementKind::S32, {}, false, v}}; }
std::vector<Problem> smooth_quant_kinds(uint32_t v) {
  return {{ElementKind::S8, ElementKind::Bf16, {}, false, v}, {ElementKind::S8, ElementKind::F16, {}, false, v}};
}
std::vector<Problem> quantized_kinds(uint32_t v) {
  return {{ElementKind::Bf16, ElementKind::Bf16, {}, false, v}, {ElementKind::F16, ElementKind::F16, {}, false, v}};
}

constexpr ScenarioFamily kIntGemmFamily{"int_gemm", select_sku, prepare, traffic, nullptr, default_shapes,
                                        OutputKind::Chosen, Comparison::Exact, "cuBLAS f16 GEMM", cublas_baseline};

Scenario make(uint32_t variant, std::string_view name, std::string_view summary,
              std::vector<Problem> (*kinds)(uint32_t)) {
  Scenario s = kIntGemmFamily.op(name, summary, variant);
  s.default_kinds = kinds;
  return s;
}

}  // namespace

void add_int_gemm_scenarios(std::vector<Scenario>& out) {
  out.push_back(make(kIntGemm, "int_gemm", "C[m, n] = sum_k A[m, k] * B[n, k], s8 x s8 -> s32, exact", int_gemm_kinds));
  out.push_back(make(kIntGemmBespoke, "int_gemm_bespoke",
                     "int_gemm on the bespoke kernels (cuda: by preference; elsewhere int_gemm's)", int_gemm_kinds));
  out.push_back(make(kSmoothQuant, "smooth_quant_linear",
                     "y = x_scale * (s_w[n] * sum_k x_q[m, k] * w[n, k]) + bias[n], s8 x_q and weight",
                     smooth_quant_kinds));
  out.push_back(make(kQuantized, "quantized_linear",
                     "y = s_a[m] * (s_w[n] * sum_k q(x)[m, k] * w[n, k]) + bias[n], x quantized per token (symmetric)",
                     quantized_kinds));
}

}  // namespace baracuda::profiler
