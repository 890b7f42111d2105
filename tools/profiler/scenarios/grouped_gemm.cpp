// The grouped GEMM family (GroupedGemmPlan, a mixture-of-experts layer): y[rows of e] = x[rows of e]·W[e]ᵀ
//   grouped_gemm       no bias (the MoE experts' usual form)
//   grouped_gemm_bias  + bias[e, n]
//
// Shapes: [total_M, N, K, E] (--shape MxNxKxE); [total_M, N, K] has E = 8, [total_M, N] K = N. The group sizes
// are uneven and fixed by E and total_M alone (group e weighs 1 + (5e mod 7); at small total_M some groups are
// empty), and the offsets (s32) are uploaded once, when the case is prepared: they are valid offsets, not an
// operand the profiler fills with random values. The conformance suite therefore mutates x, w, bias and y; the
// offsets' rejections are tests/ops/grouped_gemm_reject_test.cpp's. Defaults: on cuda Mixtral-like experts,
// E ∈ {8, 64}, total_M ∈ {128, 4096} tokens × (N, K) ∈ {(14336, 4096), (4096, 14336)}; on host/sim two small
// ragged problems (sim runs the kernel thread by thread). Kinds: bf16 and f16 (same output), bf16 → f32,
// f32 (the CUDA-core kernel).
//
// Values: x in [-1, 1], w in ±2/√K. Traffic: x, every expert's weight, y (and the bias) once; flops 2·M·N·K.
// Baseline (cuda): cuBLAS f16 GEMM of each non-empty group's [M_e, N, K], timed one by one and summed (a loop of
// GEMMs over the experts, without the launch gaps between them).
#include <algorithm>
#include <baracuda/ops/grouped_gemm.hpp>
#include <cmath>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "../cublas_gemm.hpp"
#include "common.hpp"
#include "scenarios.hpp"

namespace baracuda::profiler {
namespace {

struct Dims {
  int64_t m = 0, n = 0, k = 0, e = 8;
};

Dims dims(const Problem& p) {
  const Shape& s = p.shape;
  if (s.rank == 0) return {1, 1, 1, 1};
  if (s.rank == 1) return {1, s[0], s[0], 8};
  if (s.rank == 2) return {s[0], s[1], s[1], 8};
  if (s.rank == 3) return {s[0], s[1], s[2], 8};
  return {s[0], s[1], s[2], s[3]};
}

/// E + 1 valid offsets over total_M rows: group e weighs 1 + (5e mod 7).
std::vector<int32_t> offsets_of(int64_t m, int64_t e) {
  std::vector<int64_t> cum = {0};
  for (int64_t i = 0; i < e; ++i) cum.push_back(cum.back() + 1 + (5 * i) % 7);
  std::vector<int32_t> r;
  for (int64_t i = 0; i <= e; ++i) r.push_back(static_cast<int32_t>(m * cum[i] / cum.back()));
  return r;
}

GroupedGemmDescriptor descriptor(const Problem& p) {
  const Dims d = dims(p);
  return GroupedGemmDescriptor{}
      .with_shape(d.e, d.m, d.n, d.k)
      .with_kinds(p.dtype, p.out_dtype)
      .with_offsets_kind(ElementKind::S32)
      .with_bias(p.variant == 1);
}

Result<dynamic::GroupedGemmPlan> select_plan(const Stream& s, const Problem& p) {
  return dynamic::GroupedGemmPlan::select(s, descriptor(p));
}
Result<KernelSku> select_sku(const Stream& s, const Problem& p) { return sku_of(select_plan(s, p)); }

/// The plan with its offsets bound (PlanInstance's operands are x, w, [bias,] y).
struct BoundPlan {
  dynamic::GroupedGemmPlan plan;
  std::shared_ptr<Buffer> offsets;
  ConstDynTensor offsets_view;

  dynamic::GroupedGemmArgs args(const DynTensor& x, const DynTensor& w, const DynTensor& bias,
                                const DynTensor& y) const {
    return {x, w, offsets_view, bias, y};
  }
  Status can_implement(const DynTensor& x, const DynTensor& w, const DynTensor& y) const {
    return plan.can_implement(args(x, w, {}, y));
  }
  Status can_implement(const DynTensor& x, const DynTensor& w, const DynTensor& b, const DynTensor& y) const {
    return plan.can_implement(args(x, w, b, y));
  }
  Status run(const Stream& s, Workspace ws, const DynTensor& x, const DynTensor& w, const DynTensor& y) const {
    return plan.run(s, ws, args(x, w, {}, y));
  }
  Status run(const Stream& s, Workspace ws, const DynTensor& x, const DynTensor& w, const DynTensor& b,
             const DynTensor& y) const {
    return plan.run(s, ws, args(x, w, b, y));
  }
  size_t workspace_size() const { return plan.workspace_size(); }
  KernelSku sku() const { return plan.sku(); }
};

Result<std::unique_ptr<Instance>> prepare(const Stream& s, const Problem& p) {
  const Dims d = dims(p);
  auto plan = select_plan(s, p);
  if (!plan) return plan.error();
  const std::vector<int32_t> off = offsets_of(d.m, d.e);
  auto buf = Buffer::from_host(s, std::span<const int32_t>(off));
  if (!buf) return buf.error();
  BoundPlan bound{std::move(plan).value(), std::make_shared<Buffer>(std::move(buf).value()), {}};
  bound.offsets_view = ConstDynTensor::dense(bound.offsets->data(), ElementKind::S32, Shape{d.e + 1});
  const double wr = 2.0 / std::sqrt(static_cast<double>(std::max<int64_t>(d.k, 1)));
  const OperandSpec x{p.dtype, Shape{d.m, d.k}, ValueRange{-1, 1, false}};
  const OperandSpec w{p.dtype, Shape{d.e, d.n, d.k}, ValueRange{-wr, wr, false}};
  const OperandSpec y{p.out_dtype, Shape{d.m, d.n}, {}};
  if (p.variant == 1)
    return PlanInstance<BoundPlan, 3, 1>::make(
        s, std::move(bound), p, {x, w, OperandSpec{p.out_dtype, Shape{d.e, d.n}, ValueRange{-1, 1, false}}}, {y});
  return PlanInstance<BoundPlan, 2, 1>::make(s, std::move(bound), p, {x, w}, {y});
}

Traffic traffic(const Problem& p) {
  const Dims d = dims(p);
  const double x = static_cast<double>(storage_bytes(p.dtype, d.m * d.k));
  const double w = static_cast<double>(storage_bytes(p.dtype, d.e * d.n * d.k));
  const double y = static_cast<double>(storage_bytes(p.out_dtype, d.m * d.n));
  const double b = p.variant == 1 ? static_cast<double>(storage_bytes(p.out_dtype, d.e * d.n)) : 0.0;
  return Traffic{x + w + y + b + 4.0 * static_cast<double>(d.e + 1),
                 2.0 * static_cast<double>(d.m) * static_cast<double>(d.n) * static_cast<double>(d.k)};
}

std::vector<Shape> default_shapes(DeviceKind device) {
  if (device == DeviceKind::Cuda) {
    std::vector<Shape> r;
    for (int64_t e : {8, 64})
      for (int64_t m : {128, 4096})
        for (auto [n, k] : {std::pair<int64_t, int64_t>{14336, 4096}, {4096, 14336}}) r.push_back(Shape{m, n, k, e});
    return r;
  }
  return {Shape{37, 40, 48, 3}, Shape{20, 24, 32, 8}};
}

Result<double> cublas_baseline(const Stream& s, const Problem& p, int warmup, int repeat) {
  const Dims d = dims(p);
  const std::vector<int32_t> off = offsets_of(d.m, d.e);
  std::map<int64_t, double> by_rows;  // groups of equal size are timed once
  double total = 0;
  for (int64_t e = 0; e < d.e; ++e) {
    const int64_t rows = off[e + 1] - off[e];
    if (rows == 0) continue;
    if (!by_rows.count(rows)) {
      auto t = cublas_f16_gemm_seconds(s, rows, d.n, d.k, warmup, repeat);
      if (!t) return t.error();
      by_rows[rows] = *t;
    }
    total += by_rows[rows];
  }
  return total;
}

std::vector<Problem> kinds(uint32_t v) {
  return kind_pairs({{ElementKind::Bf16, ElementKind::Bf16},
                     {ElementKind::F16, ElementKind::F16},
                     {ElementKind::Bf16, ElementKind::F32},
                     {ElementKind::F32, ElementKind::F32}},
                    v);
}

constexpr ScenarioFamily kGroupedGemmFamily{"grouped_gemm",
                                            select_sku,
                                            prepare,
                                            traffic,
                                            kinds,
                                            default_shapes,
                                            OutputKind::Chosen,
                                            Comparison::Tolerance,
                                            "cuBLAS f16 GEMM per group (sum)",
                                            cublas_baseline};

}  // namespace

void add_grouped_gemm_scenarios(std::vector<Scenario>& out) {
  out.push_back(kGroupedGemmFamily.op(
      "grouped_gemm", "y[rows of e] = x[rows of e] * W[e]^T (x [M, K], W [E, N, K], offsets [E + 1] on the device)",
      0));
  out.push_back(kGroupedGemmFamily.op("grouped_gemm_bias", "grouped_gemm + bias[e] (bias [E, N])", 1));
}

}  // namespace baracuda::profiler
