// RopePlan over q [tokens, heads, head_dim] and k [tokens, max(1, heads / 4),
// head_dim] (GQA), out of place, with s64 positions in [0, 4096): NeoX with
// in-kernel cos/sin and Llama 3's scaling, GPT-J with YaRN's, NeoX from an f32
// cos_sin_cache [4096, rot_dim], and the backward (the inverse rotation) with
// partial rotary (half the head). The shape is [tokens, heads, head_dim] (a
// shorter one takes 4 heads of 64); an odd head_dim rotates its even part. GB/s
// counts q and k read and written once, the positions, and the cache rows read.
#include <baracuda/ops/rope.hpp>

#include "common.hpp"
#include "scenarios.hpp"

namespace baracuda::profiler {
namespace {

constexpr int64_t kMaxPosition = 4096;

// Variants: 0 NeoX llama3, 1 GPT-J YaRN, 2 NeoX from a cache, 3 NeoX partial
// rotary backward.
RopeDescriptor descriptor(const Problem &p) {
  const Shape &s = p.shape;
  const int64_t tokens = s.rank > 0 ? s.dims[0] : 1,
                heads = s.rank > 1 ? s.dims[1] : 4,
                dim = s.rank > 2 ? s.dims[2] : 64;
  RopeDescriptor d =
      RopeDescriptor()
          .with_style(p.variant == 1 ? RopeStyle::GptJ : RopeStyle::NeoX)
          .with_element(p.dtype)
          .with_position_kind(ElementKind::S64)
          .with_shape(tokens, heads, heads / 4 > 1 ? heads / 4 : 1, dim)
          .with_rot_dim(p.variant == 3 ? (dim / 2) / 2 * 2 : dim / 2 * 2);
  switch (p.variant) {
  case 0:
    return d.with_theta(500000).with_llama3(8, 1, 4, 8192);
  case 1:
    return d.with_theta(10000).with_yarn(4, 4096);
  case 2:
    return d.with_cache(ElementKind::F32, kMaxPosition);
  default:
    return d.with_theta(10000).with_inverse(true);
  }
}

Shape q_shape(const RopeDescriptor &d) {
  return Shape{d.num_tokens, d.num_heads, d.head_dim};
}
Shape k_shape(const RopeDescriptor &d) {
  return Shape{d.num_tokens, d.num_kv_heads, d.head_dim};
}

Result<dynamic::RopePlan> select_plan(const Stream &s, const Problem &p) {
  return dynamic::RopePlan::select(s, descriptor(p));
}

/// Computed cos/sin: (positions, q, k; q_out, k_out).
struct BindComputed {
  static dynamic::RopeArgs bind(const dynamic::RopePlan &, const DynTensor &pos,
                                const DynTensor &q, const DynTensor &k,
                                const DynTensor &q_out,
                                const DynTensor &k_out) {
    return {pos, {}, q, k, q_out, k_out};
  }
};

Result<std::unique_ptr<Instance>> prepare(const Stream &s, const Problem &p) {
  auto plan = select_plan(s, p);
  if (!plan)
    return plan.error();
  const RopeDescriptor d = descriptor(p);
  const OperandSpec pos{ElementKind::S64, Shape{d.num_tokens},
                        ValueRange{0, kMaxPosition - 1, true}};
  const OperandSpec q{p.dtype, q_shape(d), ValueRange{-4, 4, false}},
      k{p.dtype, k_shape(d), ValueRange{-4, 4, false}};
  const OperandSpec qo{p.dtype, q_shape(d), {}}, ko{p.dtype, k_shape(d), {}};
  if (d.source == CosSinSource::Cache) {
    const OperandSpec cache{ElementKind::F32,
                            Shape{kMaxPosition, d.rotary_dim()},
                            ValueRange{-1, 1, false}};
    return PlanInstance<dynamic::RopePlan, 4, 2>::make(
        s, std::move(plan).value(), p, {pos, cache, q, k}, {qo, ko});
  }
  using Plan = PositionalPlan<dynamic::RopePlan, BindComputed>;
  return PlanInstance<Plan, 3, 2>::make(s, Plan{std::move(plan).value()}, p,
                                        {pos, q, k}, {qo, ko});
}

Traffic traffic(const Problem &p) {
  const RopeDescriptor d = descriptor(p);
  const double qk = static_cast<double>(
      storage_bytes(p.dtype, q_shape(d).numel() + k_shape(d).numel()));
  const double cache =
      d.source == CosSinSource::Cache
          ? 4.0 * static_cast<double>(d.num_tokens * d.rotary_dim())
          : 0;
  return Traffic{2 * qk + 8.0 * static_cast<double>(d.num_tokens) + cache, 0};
}

std::vector<Problem> kinds(uint32_t variant) {
  using K = ElementKind;
  return same_kinds({K::Bf16, K::F16, K::F32}, variant);
}

std::vector<Shape> default_shapes(DeviceKind device) {
  if (device == DeviceKind::Cuda)
    return {Shape{8192, 32, 128}, Shape{256, 32, 128}, Shape{8192, 64, 64}};
  return {Shape{37, 4, 64}, Shape{5, 3, 80}};
}

constexpr ScenarioFamily kRope{"rope",
                               select_with<select_plan>,
                               prepare,
                               traffic,
                               kinds,
                               default_shapes,
                               OutputKind::SameAsInput,
                               Comparison::Tolerance};

} // namespace

void add_rope_scenarios(std::vector<Scenario> &out) {
  out.push_back(kRope.op("rope_neox",
                         "rotary embedding of q and k, NeoX pairs, cos/sin "
                         "from theta with llama3 scaling",
                         0));
  out.push_back(kRope.op(
      "rope_gptj",
      "rotary embedding of q and k, GPT-J pairs, cos/sin from theta with YaRN",
      1));
  out.push_back(kRope.op(
      "rope_neox_cache",
      "rotary embedding of q and k, NeoX pairs, from an f32 cos_sin_cache", 2));
  out.push_back(kRope.op(
      "rope_backward",
      "the inverse rotation (dq, dk), NeoX pairs, rotary over half the head",
      3));
}

} // namespace baracuda::profiler
