// FlashAttentionPlan: select (the descriptor rules of include/baracuda/ops/attention.hpp, the device's function),
// can_implement (the operands against the descriptor: kinds, shapes, strides, the optional operands, aliasing),
// run (one call of the backend with the launch record of src/ops/attention/tables.hpp). The cu_seqlens values are
// never read here: they are data in device memory.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "baracuda/ops/attention.hpp"
#include "core/plan_core.hpp"
#include "core/validate.hpp"
#include "ops/attention/plan_checks.hpp"
#include "ops/attention/tables.hpp"

namespace baracuda {
namespace {

constexpr std::string_view P = "FlashAttentionPlan";
using detail::attention_plan::n2s;
using detail::attention_plan::s;

Status check_descriptor(const FlashAttentionDescriptor& d) { return detail::attention_plan::check_descriptor(P, d); }
Status check_operand(std::string_view name, const ConstDynTensor& t, ElementKind kind, const Shape& shape,
                     detail::Access access, bool unit_last) {
  return detail::attention_plan::check_operand(P, name, t, kind, shape, access, unit_last);
}
Status check_no_self_overlap(std::string_view name, const ConstDynTensor& t) {
  return detail::attention_plan::check_no_self_overlap(P, name, t);
}
detail::FlashAttentionLaunch launch_for(const FlashAttentionDescriptor& d, const dynamic::FlashAttentionArgs& t) {
  return detail::attention_plan::make_launch(d, t, d.return_lse);
}

const detail::FlashAttentionTables* tables_for(DeviceKind dev) {
  return detail::table_for_device(dev, reference::attention_tables(), device_sim::attention_tables(),
                                  BARACUDA_CUDA_TABLE(attention_tables));
}
/// The 128-row tile's tables; the host device has its one reference.
const detail::FlashAttentionTables* wide_tables_for(DeviceKind dev) {
  return detail::table_for_device(dev, reference::attention_tables(), device_sim::attention_wide_tables(),
                                  BARACUDA_CUDA_TABLE(attention_wide_tables));
}
bool wide(const FlashAttentionDescriptor& d) {
  const int64_t b = std::max<int64_t>(d.batch, 1);
  return detail::attention_plan::use_rows128(d.tile, d.head_dim, d.tokens_q() / b, d.tokens_k() / b,
                                             d.causal || d.window_left >= 0 || d.window_right >= 0);
}

}  // namespace

namespace dynamic {

Result<FlashAttentionPlan> FlashAttentionPlan::select(const Stream& stream, const FlashAttentionDescriptor& desc,
                                                      PlanPreference pref) {
  BARACUDA_TRY(check_descriptor(desc));
  auto dev = detail::select_device(P, stream, pref, wide(desc) ? wide_tables_for : tables_for);
  if (!dev) return dev.error();
  const detail::FlashAttentionFn fn =
      dev->table->fwd[detail::kind_index(desc.element)][detail::attention_head_dim_slot(desc.head_dim)];
  if (fn == nullptr)
    return Error::unsupported(s(P) + ": " + s(to_string(desc.element)) + " with head dimension " + n2s(desc.head_dim) +
                              " has no " + (wide(desc) ? "128-row " : "") + "kernel on the " +
                              s(to_string(stream.device())) + " device");
  const MathPrecision precision = stream.device() == DeviceKind::Host ? MathPrecision::F64 : MathPrecision::F32;
  return FlashAttentionPlan(
      desc,
      dev->bind(OpCategory::Attention, "flash_attention", desc.element, std::nullopt, precision, dev->table->variant),
      fn);
}

Status FlashAttentionPlan::can_implement(const Args& t) const {
  const FlashAttentionDescriptor& d = desc_;
  using detail::Access;
  const int64_t tq = d.tokens_q(), tk = d.tokens_k();
  BARACUDA_TRY(check_operand("q", t.q, d.element, Shape{tq, d.heads, d.head_dim}, Access::Read, true));
  BARACUDA_TRY(check_operand("k", t.k, d.element, Shape{tk, d.kv_heads, d.head_dim}, Access::Read, true));
  BARACUDA_TRY(check_operand("v", t.v, d.element, Shape{tk, d.kv_heads, d.head_dim}, Access::Read, true));
  BARACUDA_TRY(detail::attention_plan::check_cu_seqlens(P, d, t.cu_seqlens_q, t.cu_seqlens_k));
  BARACUDA_TRY(check_operand("o", t.o, d.element, Shape{tq, d.heads, d.head_dim}, Access::Write, true));
  BARACUDA_TRY(check_no_self_overlap("o", t.o));
  if (d.return_lse) {
    const Shape shape = d.varlen ? Shape{d.heads, tq} : Shape{d.batch, d.heads, d.seqlen_q};
    BARACUDA_TRY(check_operand("lse", t.lse, ElementKind::F32, shape, Access::Write, false));
    BARACUDA_TRY(check_no_self_overlap("lse", t.lse));
  } else {
    BARACUDA_TRY(detail::check_absent(P, "lse", t.lse, "the descriptor writes no lse (with_lse())"));
  }
  for (const auto& [out_name, out] : {std::pair<std::string_view, const DynTensor*>{"o", &t.o}, {"lse", &t.lse}}) {
    BARACUDA_TRY(detail::check_no_overlap(P, out_name, *out, "q", t.q));
    BARACUDA_TRY(detail::check_no_overlap(P, out_name, *out, "k", t.k));
    BARACUDA_TRY(detail::check_no_overlap(P, out_name, *out, "v", t.v));
    BARACUDA_TRY(detail::check_no_overlap(P, out_name, *out, "cu_seqlens_q", t.cu_seqlens_q));
    BARACUDA_TRY(detail::check_no_overlap(P, out_name, *out, "cu_seqlens_k", t.cu_seqlens_k));
  }
  BARACUDA_TRY(detail::check_no_overlap(P, "lse", t.lse, "o", t.o));
  return {};
}

Status FlashAttentionPlan::run(const Stream& stream, Workspace, const Args& t) const {
  const FlashAttentionDescriptor& d = desc_;
  const bool empty = d.tokens_q() == 0 || d.batch == 0 || d.seqlen_q == 0;
  return detail::run_entry(
      P, binding_, stream, [&] { return can_implement(t); }, empty, fn_, [&] { return launch_for(d, t); });
}

}  // namespace dynamic
}  // namespace baracuda
