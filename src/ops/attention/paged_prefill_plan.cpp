// PagedPrefillPlan: select (the descriptor rules of include/baracuda/ops/paged_prefill.hpp, the device's function),
// can_implement (the operands against the descriptor), run (one call of the backend with the attention family's
// launch record, its paged fields set: src/ops/attention/tables.hpp). cu_seqlens_q, context_lens and the block
// table are device data and never read here.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "baracuda/ops/paged_prefill.hpp"
#include "core/plan_core.hpp"
#include "core/validate.hpp"
#include "ops/attention/plan_checks.hpp"
#include "ops/attention/tables.hpp"
#include "ops/paged_decode/paged_checks.hpp"

namespace baracuda {
namespace {

constexpr std::string_view P = "PagedPrefillPlan";
using detail::attention_plan::kMaxTokens;
using detail::attention_plan::n2s;
using detail::attention_plan::s;
using detail::attention_plan::used_stride;

Error invalid(const std::string& why) { return Error::invalid(s(P) + ": " + why); }
Error unsupported(const std::string& why) { return Error::unsupported(s(P) + ": " + why); }

Status check_descriptor(const PagedPrefillDescriptor& d) {
  BARACUDA_TRY(detail::paged::check_descriptor(P, d));
  BARACUDA_TRY(detail::attention_plan::check_tile(P, d.tile));
  if (d.total_q < 0 || d.total_q >= kMaxTokens || d.max_seqlen_q < 0 || d.max_seqlen_q >= kMaxTokens)
    return invalid("total_q and max_seqlen_q must be in [0, 2^30); got " + n2s(d.total_q) + " and " +
                   n2s(d.max_seqlen_q));
  BARACUDA_TRY(detail::check_shape(P, "q's shape", d.q_shape()));
  return detail::check_shape(P, "the caches' shape", d.cache_shape());
}

Status check_operand(std::string_view name, const ConstDynTensor& t, ElementKind kind, const Shape& shape,
                     detail::Access access, bool unit_last) {
  return detail::attention_plan::check_operand(P, name, t, kind, shape, access, unit_last);
}

const detail::PagedPrefillTables* tables_for(DeviceKind dev) {
  return detail::table_for_device(dev, reference::paged_prefill_tables(), device_sim::paged_prefill_tables(),
                                  BARACUDA_CUDA_TABLE(paged_prefill_tables));
}
/// The 128-row tile's tables; the host device has its one reference.
const detail::PagedPrefillTables* wide_tables_for(DeviceKind dev) {
  return detail::table_for_device(dev, reference::paged_prefill_tables(), device_sim::paged_prefill_wide_tables(),
                                  BARACUDA_CUDA_TABLE(paged_prefill_wide_tables));
}
/// The keys: the longest context the block table addresses (the lengths are on the device).
bool wide(const PagedPrefillDescriptor& d) {
  return detail::attention_plan::use_rows128(d.tile, d.head_dim, d.total_q / std::max<int64_t>(d.batch, 1),
                                             d.max_blocks_per_seq * d.block_size, d.causal || d.window_left >= 0);
}

detail::FlashAttentionLaunch launch_for(const PagedPrefillDescriptor& d, const dynamic::PagedPrefillArgs& t) {
  detail::FlashAttentionLaunch l;
  l.element = d.element, l.cache_kind = d.cache_kind;
  l.batch = static_cast<int>(d.batch), l.heads = static_cast<int>(d.heads);
  l.kv_heads = static_cast<int>(d.kv_heads), l.head_dim = static_cast<int>(d.head_dim);
  l.seqlen_q = static_cast<int>(d.max_seqlen_q), l.total_q = static_cast<int>(d.total_q);
  l.window_left = detail::attention_plan::clamp_window(d.window_left);
  l.window_right = d.causal ? 0 : -1;
  l.scale = d.softmax_scale == 0 ? static_cast<float>(1.0 / std::sqrt(static_cast<double>(d.head_dim)))
                                 : static_cast<float>(d.softmax_scale);
  l.q = t.q.data, l.q_tok = used_stride(t.q, 0), l.q_head = used_stride(t.q, 1);
  l.k = t.key_cache.data, l.k_block = used_stride(t.key_cache, 0), l.k_tok = used_stride(t.key_cache, 1);
  l.k_head = used_stride(t.key_cache, 2);
  l.v = t.value_cache.data, l.v_block = used_stride(t.value_cache, 0), l.v_tok = used_stride(t.value_cache, 1);
  l.v_head = used_stride(t.value_cache, 2);
  l.cu_q = static_cast<const int32_t*>(t.cu_seqlens_q.data);
  l.block_tables = static_cast<const int32_t*>(t.block_tables.data);
  l.bt_seq = used_stride(t.block_tables, 0), l.bt_page = used_stride(t.block_tables, 1);
  l.context_lens = static_cast<const int32_t*>(t.context_lens.data), l.cl_stride = used_stride(t.context_lens, 0);
  if (d.quantized()) {
    l.k_scale = static_cast<const float*>(t.k_scale.data), l.v_scale = static_cast<const float*>(t.v_scale.data);
    if (d.scale_layout == KvScaleLayout::PerHead)
      l.k_scale_stride = used_stride(t.k_scale, 0), l.v_scale_stride = used_stride(t.v_scale, 0);
  }
  l.num_blocks = d.num_blocks, l.block_size = static_cast<int>(d.block_size);
  l.max_blocks = static_cast<int>(d.max_blocks_per_seq);
  l.o = t.o.data, l.o_tok = used_stride(t.o, 0), l.o_head = used_stride(t.o, 1);
  if (d.return_lse)
    l.lse = static_cast<float*>(t.lse.data), l.lse_head = used_stride(t.lse, 0), l.lse_tok = used_stride(t.lse, 1);
  return l;
}

}  // namespace

namespace dynamic {

Result<PagedPrefillPlan> PagedPrefillPlan::select(const Stream& stream, const PagedPrefillDescriptor& desc,
                                                  PlanPreference pref) {
  BARACUDA_TRY(check_descriptor(desc));
  auto dev = detail::select_device(P, stream, pref, wide(desc) ? wide_tables_for : tables_for);
  if (!dev) return dev.error();
  const detail::FlashAttentionFn fn =
      dev->table->fwd[detail::kind_index(desc.element)][detail::kind_index(desc.cache_kind)]
                     [detail::attention_head_dim_slot(desc.head_dim)];
  if (fn == nullptr)
    return unsupported(s(to_string(desc.element)) + " over a " + s(to_string(desc.cache_kind)) +
                       " cache with head dimension " + n2s(desc.head_dim) + " has no " +
                       (wide(desc) ? "128-row " : "") + "kernel on the " + s(to_string(stream.device())) + " device");
  const MathPrecision precision = stream.device() == DeviceKind::Host ? MathPrecision::F64 : MathPrecision::F32;
  return PagedPrefillPlan(
      desc,
      dev->bind(OpCategory::Attention, "paged_prefill", desc.element, desc.cache_kind, precision, dev->table->variant),
      fn);
}

Status PagedPrefillPlan::can_implement(const Args& t) const {
  const PagedPrefillDescriptor& d = desc_;
  using detail::Access;
  BARACUDA_TRY(check_operand("q", t.q, d.element, d.q_shape(), Access::Read, true));
  BARACUDA_TRY(detail::paged::check_cache_operands(P, d, t));
  BARACUDA_TRY(
      detail::check_tensor(P, "cu_seqlens_q", t.cu_seqlens_q, ElementKind::S32, Shape{d.batch + 1}, Access::Read));
  if (d.batch > 0 && t.cu_seqlens_q.stride[0] != 1)
    return invalid("cu_seqlens_q must be contiguous (stride 1); its stride is " + n2s(t.cu_seqlens_q.stride[0]));
  BARACUDA_TRY(check_operand("o", t.o, d.element, d.q_shape(), Access::Write, true));
  BARACUDA_TRY(detail::attention_plan::check_no_self_overlap(P, "o", t.o));
  if (d.return_lse) {
    BARACUDA_TRY(check_operand("lse", t.lse, ElementKind::F32, Shape{d.heads, d.total_q}, Access::Write, false));
    BARACUDA_TRY(detail::attention_plan::check_no_self_overlap(P, "lse", t.lse));
  } else {
    BARACUDA_TRY(detail::check_absent(P, "lse", t.lse, "the descriptor writes no lse (with_lse())"));
  }
  const std::pair<std::string_view, ConstDynTensor> ins[] = {{"q", t.q},
                                                             {"key_cache", t.key_cache},
                                                             {"value_cache", t.value_cache},
                                                             {"block_tables", t.block_tables},
                                                             {"context_lens", t.context_lens},
                                                             {"cu_seqlens_q", t.cu_seqlens_q},
                                                             {"k_scale", t.k_scale},
                                                             {"v_scale", t.v_scale}};
  for (const auto& [out_name, out] : {std::pair<std::string_view, const DynTensor*>{"o", &t.o}, {"lse", &t.lse}})
    for (const auto& [in_name, in] : ins) BARACUDA_TRY(detail::check_no_overlap(P, out_name, *out, in_name, in));
  return detail::check_no_overlap(P, "lse", t.lse, "o", t.o);
}

Status PagedPrefillPlan::run(const Stream& stream, Workspace, const Args& t) const {
  const PagedPrefillDescriptor& d = desc_;
  const bool empty = d.batch == 0 || d.total_q == 0 || d.max_seqlen_q == 0;
  return detail::run_entry(
      P, binding_, stream, [&] { return can_implement(t); }, empty, fn_, [&] { return launch_for(d, t); });
}

}  // namespace dynamic
}  // namespace baracuda
