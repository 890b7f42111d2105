// GatedActivationPlan / GatedActivationBackwardPlan: every GatedActivationKind (glu, reglu, swiglu, geglu,
// geglu_tanh, swiglu_clamped, ...: the family's catalog, src/ops/gated_activation/gated_activation.def, which
// a static_assert keeps in GatedActivationKind order), forward and backward, generated from the public enum:
// a new kind gets its two scenarios without an edit here. Split on the last dimension with the default
// layout (gate = second half; the layout does not change the traffic) and the descriptor's default
// parameters (swiglu_clamped: gpt-oss's alpha = 1.702, limit = 7).
// A problem's shape is the half-size one (y and dy); x and dx double its last dimension. The default cuda
// shape is a Llama-7B MLP at 8192 tokens: y [8192, 11008], x [8192, 2·11008], bf16.
// Traffic: forward reads x and writes y (3 half-size tensors), backward reads x and dy and writes dx (5).
#include <baracuda/ops/gated_activation.hpp>

#include <array>
#include <string>

#include "common.hpp"
#include "scenarios.hpp"

namespace baracuda::profiler {
namespace {

// A scenario's variant is 2·kind (+1 for the backward).
GatedActivationKind kind_of_variant(uint32_t v) { return static_cast<GatedActivationKind>(v / 2); }
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

/// The values x is drawn from: activations of O(1), as in an MLP; swiglu_clamped's reach past its clamp bound
/// (limit = 7), so that both sides of both clamps run. dy is drawn from [-1, 1]. (The f32 backward's
/// absolute error near the zeros of act'(g), and in the tanh-GELU's cancellations, is a few ulp(1)·|dy·l|, as
/// in PyTorch: with the profiler's usual [-100, 100] it exceeds the f32 tolerance's atol of 1e-5, and so does
/// geglu_tanh's with x and dy in [-5, 5]; see docs/ops/gated_activation.md.)
ValueRange x_range(const GatedActivationDescriptor& d) {
  if (d.kind == GatedActivationKind::SwiGluClamped) return ValueRange{-1.25 * d.limit, 1.25 * d.limit, false};
  return ValueRange{-5.0, 5.0, false};
}
constexpr ValueRange kDyRange{-1.0, 1.0, false};

Result<std::unique_ptr<Instance>> prepare(const Stream& s, const Problem& p) {
  const GatedActivationDescriptor d = descriptor(p);
  const ValueRange range = x_range(d);
  if (backward_variant(p.variant)) {
    auto plan = dynamic::GatedActivationBackwardPlan::select(s, d);
    if (!plan) return plan.error();
    return PlanInstance<dynamic::GatedActivationBackwardPlan, 2, 1>::make(
        s, std::move(plan).value(), p,
        {OperandSpec{p.dtype, p.shape, kDyRange}, OperandSpec{p.dtype, d.input_shape, range}},
        {OperandSpec{p.dtype, d.input_shape, {}}});  // dy, x -> dx
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

/// The scenarios' names and summaries (Scenario holds views): "<kind>", "<kind>_backward".
struct Texts {
  std::string name, summary;
};
const std::array<Texts, 2 * kNumGatedActivationKinds>& texts() {
  static const auto t = [] {
    std::array<Texts, 2 * kNumGatedActivationKinds> r;
    for (size_t i = 0; i < kNumGatedActivationKinds; ++i) {
      const std::string kind(to_string(static_cast<GatedActivationKind>(i)));
      r[2 * i] = {kind, "y = act(g)·lin(l) of " + kind + "; shape = y's, x doubles the last dim"};
      r[2 * i + 1] = {kind + "_backward", "dx of " + kind + " from x and dy; shape = dy's"};
    }
    return r;
  }();
  return t;
}

constexpr ScenarioFamily kGatedActivationFamily{"gated_activation", select_sku, prepare, traffic, default_kinds,
                                                default_shapes, OutputKind::SameAsInput, Comparison::Tolerance};

Scenario make_scenario(uint32_t variant) {
  return kGatedActivationFamily.op(texts()[variant].name, texts()[variant].summary, variant);
}

}  // namespace

void add_gated_activation_scenarios(std::vector<Scenario>& out) {
  for (uint32_t v = 0; v < 2 * kNumGatedActivationKinds; ++v) out.push_back(make_scenario(v));
}

}  // namespace baracuda::profiler
