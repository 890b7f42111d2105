// The chunked prefill's kernel table (paged_prefill.hpp), compiled for both devices like device.cu: the
// FlashAttention-2 forward (kernels.cuh) with K/V gathered through the block table, for f16 and bf16 q over caches
// of q's kind, FP8 E4M3 or int8, head dimensions 64, 96, 128 and 256. A unit of its own so that it builds beside
// the dense forward.
#include "ops/attention/kernels.cuh"
#include "ops/attention/tables.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace attention {

template <class T, class C>
constexpr void add_paged_pair(::baracuda::detail::PagedPrefillTables& t) {
  add_head_dims<T, true, C, 1>(
      t.fwd[::baracuda::detail::kind_index(kind_of<T>)][::baracuda::detail::kind_index(kind_of<C>)]);
}

constexpr ::baracuda::detail::PagedPrefillTables make_paged_tables() {
  ::baracuda::detail::PagedPrefillTables t{};
  add_paged_pair<__half, __half>(t);
  add_paged_pair<__half, __nv_fp8_e4m3>(t);
  add_paged_pair<__half, int8_t>(t);
  add_paged_pair<__nv_bfloat16, __nv_bfloat16>(t);
  add_paged_pair<__nv_bfloat16, __nv_fp8_e4m3>(t);
  add_paged_pair<__nv_bfloat16, int8_t>(t);
  t.variant = "fa2_m16n8k16_paged";
  return t;
}

}  // namespace attention

BARACUDA_DEFINE_TABLE(detail::PagedPrefillTables, paged_prefill_tables, attention::make_paged_tables())

BARACUDA_DEVICE_NAMESPACE_END
