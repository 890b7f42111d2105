// The linear layer (LinearPlan, LinearBackwardPlan: include/baracuda/ops/linear.hpp), nn.Linear's forward and
// backward composed from GemmPlans:
//   linear           y = x·Wᵀ + b (x [M, K], W [N, K], b [N]; one GEMM, rcr)
//   linear_backward  dx = dy·W, dW = dyᵀ·x, db = Σ_rows dy (dy [M, N], x [M, K], W [N, K]; two GEMMs, rrr and
//                    crr, db the second one's bias_grad)
// The operands are dense tensors, as nn.Linear's callers hold them.
//
// Shapes. The problem's shape is [M, N] with K = N, or [M, N, K] (--shape MxNxK). Defaults: on cuda the linear
// layers of a 7B model (M ∈ {16, 2048} tokens × (N, K) ∈ {(4096, 4096), (11008, 4096)}); on host/sim one small
// ragged problem ([17, 33] with K = 48: M and N not multiples of the kernels' tiles), because sim runs the
// kernels thread by thread. Kinds: bf16 and f16 (same output), bf16 → f32, f32.
//
// Values: x and dy in [-1, 1], W in ±2/√K. Traffic: every operand once; flops 2·M·N·K (forward) and 4·M·N·K
// (backward). Outputs compare with the host reference within the per-kind tolerance table.
//
// --strided: the profiler's strided views are not the descriptor's packed layouts: can_implement rejects them
// and the cases are reported `unsupported`.
#include <algorithm>
#include <baracuda/ops/linear.hpp>
#include <cmath>
#include <utility>

#include "common.hpp"
#include "scenarios.hpp"

namespace baracuda::profiler {
namespace {

enum Variant : uint32_t { kForward = 0, kBackward = 1 };

using Mnk = GemmExtents;

/// The problem's [M, N, K] (common.hpp's gemm_extents).
Mnk mnk(const Problem& p) { return gemm_extents(p.shape); }

LinearDescriptor descriptor(const Problem& p) {
  const Mnk d = mnk(p);
  return LinearDescriptor{}
      .with_shape(d.m, d.k, d.n)
      .with_kinds(p.dtype, p.out_dtype)
      .with_bias()
      .with_gradients(true, true, true);
}

Result<dynamic::LinearPlan> select_forward(const Stream& s, const Problem& p) {
  return dynamic::LinearPlan::select(s, descriptor(p));
}
Result<dynamic::LinearBackwardPlan> select_backward(const Stream& s, const Problem& p) {
  return dynamic::LinearBackwardPlan::select(s, descriptor(p));
}
Result<KernelSku> select_sku(const Stream& s, const Problem& p) {
  return p.variant == kForward ? sku_of(select_forward(s, p)) : sku_of(select_backward(s, p));
}

/// The backward's operands in PlanInstance's order (dy, x, W; dx, dW, db) as its Args, which also hold the
/// saved pre-activation (absent here: no activation).
struct BindBackward {
  static dynamic::LinearBackwardArgs bind(const dynamic::LinearBackwardPlan&, const DynTensor& dy, const DynTensor& x,
                                          const DynTensor& w, const DynTensor& dx, const DynTensor& dw,
                                          const DynTensor& db) {
    return {dy, x, w, {}, dx, dw, db};
  }
};

Result<std::unique_ptr<Instance>> prepare(const Stream& s, const Problem& p) {
  const Mnk d = mnk(p);
  const double w = 2.0 / std::sqrt(static_cast<double>(std::max<int64_t>(d.k, 1)));
  const ElementKind in = p.dtype, out = p.out_dtype;
  const ValueRange unit{-1, 1, false}, scaled{-w, w, false};
  const OperandSpec x{in, Shape{d.m, d.k}, unit}, wt{in, Shape{d.n, d.k}, scaled};
  if (p.variant == kForward) {
    auto plan = select_forward(s, p);
    if (!plan) return plan.error();
    return PlanInstance<dynamic::LinearPlan, 3, 1>::make(s, std::move(plan).value(), p,
                                                         {x, wt, OperandSpec{out, Shape{d.n}, unit}},
                                                         {OperandSpec{out, Shape{d.m, d.n}, {}}});
  }
  auto plan = select_backward(s, p);
  if (!plan) return plan.error();
  using Plan = PositionalPlan<dynamic::LinearBackwardPlan, BindBackward>;
  return PlanInstance<Plan, 3, 3>::make(
      s, Plan{std::move(plan).value()}, p, {OperandSpec{in, Shape{d.m, d.n}, unit}, x, wt},
      {OperandSpec{out, Shape{d.m, d.k}, {}}, OperandSpec{out, Shape{d.n, d.k}, {}}, OperandSpec{out, Shape{d.n}, {}}});
}

Traffic traffic(const Problem& p) {
  const Mnk d = mnk(p);
  const auto in = [&](int64_t n) { return static_cast<double>(storage_bytes(p.dtype, n)); };
  const auto out = [&](int64_t n) { return static_cast<double>(storage_bytes(p.out_dtype, n)); };
  const double mnk_flops = 2.0 * static_cast<double>(d.m) * static_cast<double>(d.n) * static_cast<double>(d.k);
  if (p.variant == kForward) return Traffic{in(d.m * d.k) + in(d.n * d.k) + out(d.n) + out(d.m * d.n), mnk_flops};
  // dx reads dy and W, dW reads dy and x; writes dx, dW, db.
  return Traffic{2 * in(d.m * d.n) + in(d.n * d.k) + in(d.m * d.k) + out(d.m * d.k) + out(d.n * d.k) + out(d.n),
                 2 * mnk_flops};
}

std::vector<Shape> default_shapes(DeviceKind device) {
  if (device == DeviceKind::Cuda) {
    std::vector<Shape> r;
    for (int64_t m : {16, 2048})
      for (auto [n, k] : {std::pair<int64_t, int64_t>{4096, 4096}, {11008, 4096}}) r.push_back(Shape{m, n, k});
    return r;
  }
  return {Shape{17, 33, 48}};
}

std::vector<Problem> linear_kinds(uint32_t v) {
  return kind_pairs({{ElementKind::Bf16, ElementKind::Bf16},
                     {ElementKind::F16, ElementKind::F16},
                     {ElementKind::Bf16, ElementKind::F32},
                     {ElementKind::F32, ElementKind::F32}},
                    v);
}

constexpr ScenarioFamily kLinearFamily{
    "linear", select_sku, prepare, traffic, linear_kinds, default_shapes, OutputKind::Chosen, Comparison::Tolerance};

}  // namespace

void add_linear_scenarios(std::vector<Scenario>& out) {
  out.push_back(kLinearFamily.op("linear", "y = x * W^T + b (x [M, K], W [N, K]; nn.Linear's forward)", kForward));
  out.push_back(kLinearFamily.op("linear_backward",
                                 "dx = dy * W, dW = dy^T * x, db = sum_rows dy (nn.Linear's backward)", kBackward));
}

}  // namespace baracuda::profiler
