// The attention forward family (FlashAttentionPlan), one family `attention_prefill` of five ops:
//   attention_prefill          padded batches, no mask, no lse (an inference prefill)
//   attention_prefill_causal   padded batches, causal (bottom-right), lse [B, H, S_q] (a training forward)
//   attention_prefill_varlen   packed batches through cu_seqlens_q / cu_seqlens_k, causal, lse [H, T_q]
//   attention_prefill_m128, attention_prefill_causal_m128
//                              the first two on the 128-row query tile (FlashAttentionTile::Rows128; d ≤ 128),
//                              whatever the shape: the others run Auto's choice, which is Rows128 at the cuda
//                              defaults and Rows64 at the host/sim ones (attention.hpp's **Query tiles**)
//   attention_prefill_m64, attention_prefill_causal_m64
//                              the same on the 64-row tile (Rows64) whatever the shape: the pair Auto chooses
//                              between, side by side
//
// Shapes (--shape): [B, S_q, S_k, H, H_kv, d] (further extents ignored); [B, S_q, S_k, H, d] has H_kv = H;
// [B, S_q, S_k, d] and [B, S_q, S_k] 32 query heads on 8 kv heads (Llama-3-8B; d = 128 unless given); [B, S] has
// S_q = S_k = S; [S] one sequence. The varlen op packs B sequences whose lengths are fixed by b alone: sequence
// b has S_q·w_b / 7 query and S_k·w_b / 7 key tokens, w_b = 7 − (5b mod 7) (7, 2, 4, 6, 1, 3, 5, 7, ...), so the
// first is the longest (max_seqlen = S_q, S_k) and the others are ragged; the offsets (s32) are uploaded once,
// when the case is prepared: valid offsets, not an operand the profiler fills with random values. The
// conformance suite therefore mutates q, k, v, o and lse; the offsets' rejections are
// tests/ops/attention_reject_test.cpp's. Operands: q [T_q, H, d], k and v [T_k, H_kv, d], o [T_q, H, d].
//
// Defaults: on cuda f16 and bf16, B × S = 8 × 2048 and 1 × 16384 with 32 query heads on 8 kv heads (GQA) and
// d = 128; on host/sim small ragged problems, S_q = 17 queries on S_k = 33 keys (bottom-right causal: every
// query sees at least one key) and 33 on 17 (the first 16 queries see no key under causal: o = 0,
// lse = +inf), d = 64, 4 query heads on 2 kv heads.
//
// Values: q and k in [-2, 2] (scores of a few units after τ = 1/√d: a softmax neither flat nor one-hot); v in
// [1, 2], so o, a convex combination of v's rows, stays in [1, 2]. The kernels round the probabilities to the
// element kind before P·V (2^-11 relative for f16, 2^-8 for bf16: docs/ops/attention.md); with positive v that
// is a relative error of o, which the tolerance table (f16 rtol 1e-3, bf16 1.6e-2) admits, whereas values of
// both signs would cancel and leave a correct o outside any relative tolerance of a small reference.
//
// Traffic: q, k, v and o once, plus lse and the offsets where there are; flops 4·H·d·Σ_b s_q·s_k (two GEMMs
// of 2·s_q·s_k·d per head), halved for causal as FlashAttention reports it. Cases above --verify-limit flops
// (every cuda default) are `timed`: the host reference would take minutes; tests/ops/attention_test.cpp checks
// the kernels. No baseline: the profiler links no attention library (PyTorch's SDPA comparison is the GPU
// session's, docs/profiler.md).
#include <baracuda/ops/attention.hpp>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "attention_dims.hpp"
#include "common.hpp"
#include "scenarios.hpp"

namespace baracuda::profiler {
namespace {

/// The mask and operands (bits 0-1), and a query tile by name (bits 2-3; none: Auto's).
enum Variant : uint32_t { kPrefill = 0, kCausal = 1, kVarlen = 2, kRows128 = 4, kRows64 = 8 };

using attention_shape::Dims;
using attention_shape::default_shapes;
using attention_shape::dims;

/// Sequence b's share of the longest length, in sevenths.
int64_t weight(int64_t b) { return 7 - (5 * b) % 7; }

/// The B + 1 offsets of the varlen op's sequences of at most `s` tokens (the caller keeps B and s in the
/// descriptor's limits: B ≤ 65535, s < 2^30).
std::vector<int64_t> offsets_of(int64_t batch, int64_t s) {
  std::vector<int64_t> r = {0};
  for (int64_t b = 0; b < batch; ++b) r.push_back(r.back() + s * weight(b) / 7);
  return r;
}

/// Whether the varlen op's packed batch fits the descriptor's limits (else select sees B·S tokens and rejects).
bool packable(const Dims& d) {
  return d.b >= 0 && d.b <= 65535 && d.s_q >= 0 && d.s_k >= 0 && d.s_q < (1 << 30) && d.s_k < (1 << 30) &&
         offsets_of(d.b, d.s_q).back() < (1 << 30) && offsets_of(d.b, d.s_k).back() < (1 << 30);
}

FlashAttentionDescriptor descriptor(const Problem& p) {
  const Dims d = dims(p);
  FlashAttentionDescriptor r =
      FlashAttentionDescriptor{}.with_shape(d.b, d.s_q, d.s_k, d.h, d.h_kv, d.d).with_element(p.dtype);
  if ((p.variant & kRows128) != 0) r.with_tile(FlashAttentionTile::Rows128);
  if ((p.variant & kRows64) != 0) r.with_tile(FlashAttentionTile::Rows64);
  const uint32_t mask = p.variant & 3;
  if (mask == kPrefill) return r;
  r.with_causal().with_lse();
  if (mask == kVarlen && packable(d))
    r.with_varlen(offsets_of(d.b, d.s_q).back(), offsets_of(d.b, d.s_k).back(), d.s_q, d.s_k);
  else if (mask == kVarlen)
    r.with_varlen(int64_t{1} << 30, int64_t{1} << 30, d.s_q, d.s_k);  // past the limits: select rejects it
  return r;
}

Result<dynamic::FlashAttentionPlan> select_plan(const Stream& s, const Problem& p) {
  return dynamic::FlashAttentionPlan::select(s, descriptor(p));
}

/// The plan with its offsets bound (PlanInstance's operands are q, k, v, o and, when written, lse).
struct BoundPlan {
  dynamic::FlashAttentionPlan plan;
  std::shared_ptr<Buffer> cu_q, cu_k;  // varlen only
  ConstDynTensor cu_q_view, cu_k_view;

  dynamic::FlashAttentionArgs args(const DynTensor& q, const DynTensor& k, const DynTensor& v, const DynTensor& o,
                                   const DynTensor& lse) const {
    return {q, k, v, cu_q_view, cu_k_view, o, lse};
  }
  Status can_implement(const DynTensor& q, const DynTensor& k, const DynTensor& v, const DynTensor& o) const {
    return plan.can_implement(args(q, k, v, o, {}));
  }
  Status can_implement(const DynTensor& q, const DynTensor& k, const DynTensor& v, const DynTensor& o,
                       const DynTensor& lse) const {
    return plan.can_implement(args(q, k, v, o, lse));
  }
  Status run(const Stream& s, Workspace ws, const DynTensor& q, const DynTensor& k, const DynTensor& v,
             const DynTensor& o) const {
    return plan.run(s, ws, args(q, k, v, o, {}));
  }
  Status run(const Stream& s, Workspace ws, const DynTensor& q, const DynTensor& k, const DynTensor& v,
             const DynTensor& o, const DynTensor& lse) const {
    return plan.run(s, ws, args(q, k, v, o, lse));
  }
  size_t workspace_size() const { return plan.workspace_size(); }
  KernelSku sku() const { return plan.sku(); }
};

Result<std::shared_ptr<Buffer>> upload(const Stream& s, const std::vector<int64_t>& offsets) {
  const std::vector<int32_t> narrow(offsets.begin(), offsets.end());  // < 2^30: select checked the totals
  auto buf = Buffer::from_host(s, std::span<const int32_t>(narrow));
  if (!buf) return buf.error();
  return std::make_shared<Buffer>(std::move(buf).value());
}

Result<std::unique_ptr<Instance>> prepare(const Stream& s, const Problem& p) {
  auto plan = select_plan(s, p);
  if (!plan) return plan.error();
  const Dims d = dims(p);
  const FlashAttentionDescriptor desc = descriptor(p);
  BoundPlan bound{std::move(plan).value(), nullptr, nullptr, {}, {}};
  if (desc.varlen) {
    auto cu_q = upload(s, offsets_of(d.b, d.s_q)), cu_k = upload(s, offsets_of(d.b, d.s_k));
    if (!cu_q) return cu_q.error();
    if (!cu_k) return cu_k.error();
    bound.cu_q = std::move(cu_q).value(), bound.cu_k = std::move(cu_k).value();
    bound.cu_q_view = ConstDynTensor::dense(bound.cu_q->data(), ElementKind::S32, Shape{d.b + 1});
    bound.cu_k_view = ConstDynTensor::dense(bound.cu_k->data(), ElementKind::S32, Shape{d.b + 1});
  }
  const int64_t t_q = desc.tokens_q(), t_k = desc.tokens_k();
  const OperandSpec q{p.dtype, Shape{t_q, d.h, d.d}, ValueRange{-2, 2, false}};
  const OperandSpec k{p.dtype, Shape{t_k, d.h_kv, d.d}, ValueRange{-2, 2, false}};
  const OperandSpec v{p.dtype, Shape{t_k, d.h_kv, d.d}, ValueRange{1, 2, false}};
  const OperandSpec o{p.dtype, Shape{t_q, d.h, d.d}, {}};
  if (!desc.return_lse) return PlanInstance<BoundPlan, 3, 1>::make(s, std::move(bound), p, {q, k, v}, {o});
  const OperandSpec lse{ElementKind::F32, desc.varlen ? Shape{d.h, t_q} : Shape{d.b, d.h, d.s_q}, {}};
  return PlanInstance<BoundPlan, 3, 2>::make(s, std::move(bound), p, {q, k, v}, {o, lse});
}

Traffic traffic(const Problem& p) {
  const Dims d = dims(p);
  const FlashAttentionDescriptor desc = descriptor(p);
  const double t_q = static_cast<double>(desc.tokens_q()), t_k = static_cast<double>(desc.tokens_k());
  const double hd = static_cast<double>(d.h) * static_cast<double>(d.d);
  const double hkvd = static_cast<double>(d.h_kv) * static_cast<double>(d.d);
  const double elem = static_cast<double>(storage_bytes(p.dtype, 1));
  double bytes = elem * (2 * t_q * hd + 2 * t_k * hkvd);
  if (desc.return_lse) bytes += 4.0 * static_cast<double>(d.h) * t_q;
  double pairs = 0;  // Σ_b s_q·s_k
  if (desc.varlen) {
    bytes += 8.0 * static_cast<double>(d.b + 1);
    for (int64_t b = 0; b < d.b; ++b)
      pairs += static_cast<double>(d.s_q * weight(b) / 7) * static_cast<double>(d.s_k * weight(b) / 7);
  } else {
    pairs = static_cast<double>(d.b) * static_cast<double>(d.s_q) * static_cast<double>(d.s_k);
  }
  const double flops = 4.0 * hd * pairs * (desc.causal ? 0.5 : 1.0);
  return Traffic{bytes, flops};
}

std::vector<Problem> kinds(uint32_t variant) { return same_kinds({ElementKind::F16, ElementKind::Bf16}, variant); }

constexpr ScenarioFamily kAttention{
    "attention_prefill",     select_with<select_plan>, prepare, traffic, kinds, default_shapes,
    OutputKind::SameAsInput, Comparison::Tolerance};

}  // namespace

void add_attention_prefill_scenarios(std::vector<Scenario>& out) {
  out.push_back(kAttention.op("attention_prefill",
                              "o = softmax(q k^T / sqrt(d)) v, padded batches (q [B*S_q, H, d], k, v [B*S_k, H_kv, d])",
                              kPrefill));
  out.push_back(kAttention.op("attention_prefill_causal",
                              "attention_prefill, causal (bottom-right), with lse [B, H, S_q]", kCausal));
  out.push_back(kAttention.op("attention_prefill_varlen",
                              "attention_prefill_causal on packed batches (cu_seqlens_q/k [B + 1] on the device), "
                              "lse [H, T_q]",
                              kVarlen));
  out.push_back(kAttention.op("attention_prefill_m128",
                              "attention_prefill on the 128-row query tile (FlashAttentionTile::Rows128: "
                              "32 query rows per warp), whatever the shape",
                              kPrefill | kRows128));
  out.push_back(kAttention.op("attention_prefill_causal_m128",
                              "attention_prefill_causal on the 128-row query tile (FlashAttentionTile::Rows128)",
                              kCausal | kRows128));
  out.push_back(kAttention.op("attention_prefill_m64",
                              "attention_prefill on the 64-row query tile (FlashAttentionTile::Rows64: 16 query rows "
                              "per warp), whatever the shape",
                              kPrefill | kRows64));
  out.push_back(kAttention.op("attention_prefill_causal_m64",
                              "attention_prefill_causal on the 64-row query tile (FlashAttentionTile::Rows64)",
                              kCausal | kRows64));
}

}  // namespace baracuda::profiler
