// FlashAttentionBackwardPlan: select (the forward's descriptor rules, plan_checks.hpp, and the backward's head
// dimensions), can_implement (q, k, v, o, dO, lse, cu_seqlens, dq, dk, dv against the descriptor; aliasing), run (the
// workspace's D, then one call of the backend with the launch record of backward_tables.hpp).
#include <cstdint>
#include <string>
#include <utility>

#include "baracuda/ops/attention_backward.hpp"
#include "core/plan_core.hpp"
#include "core/validate.hpp"
#include "ops/attention/backward_tables.hpp"
#include "ops/attention/plan_checks.hpp"

namespace baracuda {
namespace {

constexpr std::string_view P = "FlashAttentionBackwardPlan";
using detail::attention_plan::n2s;
using detail::attention_plan::s;
using detail::attention_plan::used_stride;

const detail::FlashAttentionBackwardTables* tables_for(DeviceKind dev) {
  return detail::table_for_device(dev, reference::attention_backward_tables(), device_sim::attention_backward_tables(),
                                  BARACUDA_CUDA_TABLE(attention_backward_tables));
}

Status check_operand(std::string_view name, const ConstDynTensor& t, ElementKind kind, const Shape& shape,
                     detail::Access access, bool unit_last) {
  return detail::attention_plan::check_operand(P, name, t, kind, shape, access, unit_last);
}

}  // namespace

namespace dynamic {

Result<FlashAttentionBackwardPlan> FlashAttentionBackwardPlan::select(const Stream& stream,
                                                                      const FlashAttentionDescriptor& desc,
                                                                      PlanPreference pref) {
  BARACUDA_TRY(detail::attention_plan::check_descriptor(P, desc));
  const int slot = detail::attention_backward_head_dim_slot(desc.head_dim);
  if (slot < 0)
    return Error::unsupported(s(P) + ": head dimension " + n2s(desc.head_dim) +
                              " has no backward kernel (64, 96 and 128 do)");
  auto dev = detail::select_device(P, stream, pref, tables_for);
  if (!dev) return dev.error();
  const detail::FlashAttentionBackwardFn fn = dev->table->bwd[detail::kind_index(desc.element)][slot];
  if (fn == nullptr)
    return Error::unsupported(s(P) + ": " + s(to_string(desc.element)) + " with head dimension " + n2s(desc.head_dim) +
                              " has no kernel on the " + s(to_string(stream.device())) + " device");
  const MathPrecision precision = stream.device() == DeviceKind::Host ? MathPrecision::F64 : MathPrecision::F32;
  return FlashAttentionBackwardPlan(desc,
                                    dev->bind(OpCategory::Attention, "flash_attention_backward", desc.element,
                                              std::nullopt, precision, dev->table->variant),
                                    fn);
}

size_t FlashAttentionBackwardPlan::workspace_size() const {
  return detail::attention_backward_workspace_bytes(desc_.heads, desc_.tokens_q());
}

Status FlashAttentionBackwardPlan::can_implement(const Args& t) const {
  const FlashAttentionDescriptor& d = desc_;
  using detail::Access;
  const int64_t tq = d.tokens_q(), tk = d.tokens_k();
  const Shape qs{tq, d.heads, d.head_dim}, ks{tk, d.kv_heads, d.head_dim};
  BARACUDA_TRY(check_operand("q", t.q, d.element, qs, Access::Read, true));
  BARACUDA_TRY(check_operand("k", t.k, d.element, ks, Access::Read, true));
  BARACUDA_TRY(check_operand("v", t.v, d.element, ks, Access::Read, true));
  BARACUDA_TRY(check_operand("o", t.o, d.element, qs, Access::Read, true));
  BARACUDA_TRY(check_operand("dO", t.d_o, d.element, qs, Access::Read, true));
  const Shape ls = d.varlen ? Shape{d.heads, tq} : Shape{d.batch, d.heads, d.seqlen_q};
  BARACUDA_TRY(check_operand("lse", t.lse, ElementKind::F32, ls, Access::Read, false));
  BARACUDA_TRY(detail::attention_plan::check_cu_seqlens(P, d, t.cu_seqlens_q, t.cu_seqlens_k));
  const std::pair<std::string_view, const DynTensor*> outs[] = {{"dq", &t.dq}, {"dk", &t.dk}, {"dv", &t.dv}};
  for (const auto& [name, out] : outs) {
    BARACUDA_TRY(check_operand(name, *out, d.element, name == "dq" ? qs : ks, Access::Write, true));
    BARACUDA_TRY(detail::attention_plan::check_no_self_overlap(P, name, *out));
    const std::pair<std::string_view, const ConstDynTensor*> ins[] = {{"q", &t.q},
                                                                      {"k", &t.k},
                                                                      {"v", &t.v},
                                                                      {"o", &t.o},
                                                                      {"dO", &t.d_o},
                                                                      {"lse", &t.lse},
                                                                      {"cu_seqlens_q", &t.cu_seqlens_q},
                                                                      {"cu_seqlens_k", &t.cu_seqlens_k}};
    for (const auto& [in_name, in] : ins) BARACUDA_TRY(detail::check_no_overlap(P, name, *out, in_name, *in));
  }
  BARACUDA_TRY(detail::check_no_overlap(P, "dk", t.dk, "dq", t.dq));
  BARACUDA_TRY(detail::check_no_overlap(P, "dv", t.dv, "dq", t.dq));
  BARACUDA_TRY(detail::check_no_overlap(P, "dv", t.dv, "dk", t.dk));
  return {};
}

Status FlashAttentionBackwardPlan::run(const Stream& stream, Workspace ws, const Args& t) const {
  const FlashAttentionDescriptor& d = desc_;
  const bool empty = d.batch == 0 || (d.tokens_q() == 0 && d.tokens_k() == 0);  // no rows of any output
  const detail::WorkspaceNeed need{ws,
                                   workspace_size(),
                                   16,
                                   "D, f32 [H, T_q]",
                                   {{"q", t.q},
                                    {"k", t.k},
                                    {"v", t.v},
                                    {"o", t.o},
                                    {"dO", t.d_o},
                                    {"lse", t.lse},
                                    {"dq", t.dq},
                                    {"dk", t.dk},
                                    {"dv", t.dv}}};
  const auto ctx = detail::begin_run(
      P, binding_, stream, [&] { return can_implement(t); }, need, empty);
  if (!ctx) return ctx.status();
  detail::FlashAttentionBackwardLaunch l;
  l.f = detail::attention_plan::make_launch(d, t, true);
  l.d_o = t.d_o.data, l.do_tok = used_stride(t.d_o, 0), l.do_head = used_stride(t.d_o, 1);
  l.dq = t.dq.data, l.dq_tok = used_stride(t.dq, 0), l.dq_head = used_stride(t.dq, 1);
  l.dk = t.dk.data, l.dk_tok = used_stride(t.dk, 0), l.dk_head = used_stride(t.dk, 1);
  l.dv = t.dv.data, l.dv_tok = used_stride(t.dv, 0), l.dv_head = used_stride(t.dv, 1);
  l.dsum = static_cast<float*>(ws.data);
  return fn_(*ctx, l);
}

}  // namespace dynamic
}  // namespace baracuda
