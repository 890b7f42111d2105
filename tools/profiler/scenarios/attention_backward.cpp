// The attention backward family (FlashAttentionBackwardPlan), one op `attention_backward`: padded batches, causal
// (bottom-right); inputs q, k, v, o, dO [.., d] and lse [B, H, S_q] (f32), outputs dq [B·S_q, H, d], dk and dv
// [B·S_k, H_kv, d]; the workspace (D, f32 [H, T_q]) is the plan's.
//
// Shapes (--shape) as attention_prefill's (tools/profiler/scenarios/attention_prefill.cpp): [B, S_q, S_k, H, H_kv,
// d], with the shorter forms meaning the same. Defaults: on cuda f16 and bf16, 8 × 2048 and 1 × 16384, 32 query heads
// on 8 kv heads, d = 128; on host/sim S_q = 17 on S_k = 33 and 33 on 17 (under causal the first 16 queries see no key: dq = 0),
// d = 64, 4 query heads on 2 kv heads.
//
// Values: o and lse are inputs here (the profiler does not run the forward), so they are drawn where every term of
// the gradients is positive and no rounding cancels: q, k, v, dO in [0.5, 1], o in [-1, 0] (dP − D = dO·(v − o) > 0),
// lse in [12, 13] (above every score τ·q·k ≤ τ·d: P ≤ 1 for d ≤ 128, so P and dS stay far inside f16's range).
// Then dq, dk, dv are sums of positive terms and the tolerance table's relative bounds apply.
//
// Traffic: q, k, v, o, dO, dq, dk, dv once, lse, D written and read; flops 10·H·d·Σ s_q·s_k (five GEMMs of
// 2·s_q·s_k·d per head: S and dP in both the dK/dV and the dQ kernels are counted once, as FlashAttention reports
// its backward, 2.5× the forward), halved for causal. Cases above --verify-limit (every cuda default) are `timed`.
#include <baracuda/ops/attention_backward.hpp>
#include <memory>
#include <utility>
#include <vector>

#include "attention_dims.hpp"
#include "common.hpp"
#include "scenarios.hpp"

namespace baracuda::profiler {
namespace {

using attention_shape::Dims;
using attention_shape::default_shapes;
using attention_shape::dims;

FlashAttentionDescriptor descriptor(const Problem& p) {
  const Dims d = dims(p);
  return FlashAttentionDescriptor{}.with_shape(d.b, d.s_q, d.s_k, d.h, d.h_kv, d.d).with_element(p.dtype).with_causal();
}

/// The plan's operands in PlanInstance order: q, k, v, o, dO, lse, then dq, dk, dv (no cu_seqlens: padded).
struct Bind {
  template <class Plan>
  static dynamic::FlashAttentionBackwardArgs bind(const Plan&, const DynTensor& q, const DynTensor& k,
                                                  const DynTensor& v, const DynTensor& o, const DynTensor& d_o,
                                                  const DynTensor& lse, const DynTensor& dq, const DynTensor& dk,
                                                  const DynTensor& dv) {
    dynamic::FlashAttentionBackwardArgs a{q, k, v, o, d_o, lse};
    a.dq = dq, a.dk = dk, a.dv = dv;
    return a;
  }
};
using BoundPlan = PositionalPlan<dynamic::FlashAttentionBackwardPlan, Bind>;

Result<dynamic::FlashAttentionBackwardPlan> select_plan(const Stream& s, const Problem& p) {
  return dynamic::FlashAttentionBackwardPlan::select(s, descriptor(p));
}

Result<std::unique_ptr<Instance>> prepare(const Stream& s, const Problem& p) {
  auto plan = select_plan(s, p);
  if (!plan) return plan.error();
  const Dims d = dims(p);
  const FlashAttentionDescriptor desc = descriptor(p);
  const int64_t t_q = desc.tokens_q(), t_k = desc.tokens_k();
  const ValueRange pos{0.5, 1, false};
  const OperandSpec q{p.dtype, Shape{t_q, d.h, d.d}, pos};
  const OperandSpec kv{p.dtype, Shape{t_k, d.h_kv, d.d}, pos};
  const OperandSpec o{p.dtype, Shape{t_q, d.h, d.d}, ValueRange{-1, 0, false}};
  const OperandSpec lse{ElementKind::F32, Shape{d.b, d.h, d.s_q}, ValueRange{12, 13, false}};
  const OperandSpec dq{p.dtype, Shape{t_q, d.h, d.d}, {}};
  const OperandSpec dkv{p.dtype, Shape{t_k, d.h_kv, d.d}, {}};
  return PlanInstance<BoundPlan, 6, 3>::make(s, BoundPlan{std::move(plan).value()}, p, {q, kv, kv, o, q, lse},
                                             {dq, dkv, dkv});
}

Traffic traffic(const Problem& p) {
  const Dims d = dims(p);
  const double t_q = static_cast<double>(d.b * d.s_q), t_k = static_cast<double>(d.b * d.s_k);
  const double hd = static_cast<double>(d.h) * static_cast<double>(d.d);
  const double hkvd = static_cast<double>(d.h_kv) * static_cast<double>(d.d);
  const double elem = static_cast<double>(storage_bytes(p.dtype, 1));
  const double bytes = elem * (4 * t_q * hd + 4 * t_k * hkvd) + 12.0 * static_cast<double>(d.h) * t_q;
  const double pairs = static_cast<double>(d.b) * static_cast<double>(d.s_q) * static_cast<double>(d.s_k);
  return Traffic{bytes, 10.0 * hd * pairs * 0.5};
}

std::vector<Problem> kinds(uint32_t variant) { return same_kinds({ElementKind::F16, ElementKind::Bf16}, variant); }

constexpr ScenarioFamily kAttentionBackward{
    "attention_backward",    select_with<select_plan>, prepare, traffic, kinds, default_shapes,
    OutputKind::SameAsInput, Comparison::Tolerance};

}  // namespace

void add_attention_backward_scenarios(std::vector<Scenario>& out) {
  out.push_back(kAttentionBackward.op("attention_backward",
                                      "dq, dk, dv of causal attention from q, k, v, o, dO, lse (padded batches; "
                                      "q [B*S_q, H, d], k, v [B*S_k, H_kv, d])"));
}

}  // namespace baracuda::profiler
