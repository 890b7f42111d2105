// GatedActivationPlan / GatedActivationBackwardPlan: SwiGLU and GeGLU (erf), forward and backward, split on
// the last dimension with the default layout (gate = second half; the layout does not change the traffic).
// A problem's shape is the half-size one (y and dy); x and dx double its last dimension. The default cuda
// shape is a Llama-7B MLP at 8192 tokens: y [8192, 11008], x [8192, 2·11008], bf16.
// Traffic: forward reads x and writes y (3 half-size tensors), backward reads x and dy and writes dx (5).
#include <baracuda/ops/gated_activation.hpp>

#include "common.hpp"
#include "scenarios.hpp"

namespace baracuda::profiler {
namespace {

/// The profiled kinds; a scenario's variant is 2·index (+1 for the backward).
constexpr GatedActivationKind kProfiled[] = {GatedActivationKind::SwiGlu, GatedActivationKind::GeGlu};

GatedActivationKind kind_of_variant(uint32_t v) { return kProfiled[v / 2]; }
bool backward_variant(uint32_t v) { return v % 2 == 1; }

/// x's shape: the problem's with the last dimension doubled.
Shape input_shape(const Shape& half) {
  Shape s = half;
  if (s.rank > 0) s.dims[s.rank - 1] *= 2;
  return s;
}

GatedActivationDescriptor descriptor(const Problem& p) {
  return GatedActivationDescriptor()
      .with_kind(kind_of_variant(p.variant))
      .with_element(p.dtype)
      .with_input_shape(input_shape(p.shape))
      .with_split_dim(-1);
}

Result<KernelSku> select_sku(const Stream& s, const Problem& p) {
  if (backward_variant(p.variant)) return sku_of(dynamic::GatedActivationBackwardPlan::select(s, descriptor(p)));
  return sku_of(dynamic::GatedActivationPlan::select(s, descriptor(p)));
}

Result<std::unique_ptr<Instance>> prepare(const Stream& s, const Problem& p) {
  const GatedActivationDescriptor d = descriptor(p);
  // Activations of O(1), as in an MLP. (With the profiler's usual [-100, 100], dy·l reaches 10^4 and the f32
  // backward's absolute error near the zeros of act'(g), about ulp(1)·|dy·l| as in PyTorch, exceeds the f32
  // tolerance's atol of 1e-5; see docs/ops/gated_activation.md.)
  const ValueRange range{-5.0, 5.0, false};
  if (backward_variant(p.variant)) {
    auto plan = dynamic::GatedActivationBackwardPlan::select(s, d);
    if (!plan) return plan.error();
    return PlanInstance<dynamic::GatedActivationBackwardPlan, 2, 1>::make(
        s, std::move(plan).value(), p,
        {OperandSpec{p.dtype, p.shape, range}, OperandSpec{p.dtype, d.input_shape, range}},  // dy, x
        {OperandSpec{p.dtype, d.input_shape, {}}});                                           // dx
  }
  auto plan = dynamic::GatedActivationPlan::select(s, d);
  if (!plan) return plan.error();
  return PlanInstance<dynamic::GatedActivationPlan, 1, 1>::make(s, std::move(plan).value(), p,
                                                                {OperandSpec{p.dtype, d.input_shape, range}},
                                                                {OperandSpec{p.dtype, p.shape, {}}});
}

Traffic traffic(const Problem& p) {
  const double half = static_cast<double>(storage_bytes(p.dtype, p.shape.numel()));
  return Traffic{(backward_variant(p.variant) ? 5.0 : 3.0) * half, 0};
}

std::vector<Problem> default_kinds(uint32_t variant) {
  std::vector<Problem> r;
  for (ElementKind k : {ElementKind::Bf16, ElementKind::F32}) r.push_back({k, k, {}, false, variant});
  return r;
}

std::vector<Shape> default_shapes(DeviceKind device) {
  if (device == DeviceKind::Cuda) return {Shape{8192, 11008}};
  return {Shape{257, 259}, Shape{64, 1024}};
}

Scenario make_scenario(uint32_t variant, std::string_view name, std::string_view summary) {
  return Scenario{
      .name = name,
      .family = "gated_activation",
      .summary = summary,
      .variant = variant,
      .output = OutputKind::SameAsInput,
      .comparison = Comparison::Tolerance,
      .default_kinds = default_kinds,
      .default_shapes = default_shapes,
      .select = select_sku,
      .prepare = prepare,
      .traffic = traffic,
  };
}

}  // namespace

void add_gated_activation_scenarios(std::vector<Scenario>& out) {
  out.push_back(make_scenario(0, "swiglu", "y = silu(g) * l; shape = y's, x doubles the last dim"));
  out.push_back(make_scenario(1, "swiglu_backward", "dx of swiglu from x and dy; shape = dy's"));
  out.push_back(make_scenario(2, "geglu", "y = gelu(g) * l (erf); shape = y's, x doubles the last dim"));
  out.push_back(make_scenario(3, "geglu_backward", "dx of geglu from x and dy; shape = dy's"));
}

}  // namespace baracuda::profiler
