// The chunked prefill's 128-row table (FlashAttentionTile::Rows128, paged_prefill.hpp), compiled for both devices
// like device.cu: device_paged.cu's kernels with two m16 tiles of query rows per warp, for f16 and bf16 q over caches
// of q's kind, FP8 E4M3 or int8, head dimensions 64, 96 and 128 (256: no kernel). A unit of its own so that it builds
// beside the 64-row kernels.
#include "ops/attention/kernels.cuh"
#include "ops/attention/tables.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace attention {

template <class T, class C>
constexpr void add_paged_wide_pair(::baracuda::detail::PagedPrefillTables& t) {
  add_head_dims<T, true, C, 2>(
      t.fwd[::baracuda::detail::kind_index(kind_of<T>)][::baracuda::detail::kind_index(kind_of<C>)]);
}

constexpr ::baracuda::detail::PagedPrefillTables make_paged_wide_tables() {
  ::baracuda::detail::PagedPrefillTables t{};
  add_paged_wide_pair<__half, __half>(t);
  add_paged_wide_pair<__half, __nv_fp8_e4m3>(t);
  add_paged_wide_pair<__half, int8_t>(t);
  add_paged_wide_pair<__nv_bfloat16, __nv_bfloat16>(t);
  add_paged_wide_pair<__nv_bfloat16, __nv_fp8_e4m3>(t);
  add_paged_wide_pair<__nv_bfloat16, int8_t>(t);
  t.variant = "fa2_m16n8k16_paged_m128";
  return t;
}

}  // namespace attention

BARACUDA_DEFINE_TABLE(detail::PagedPrefillTables, paged_prefill_wide_tables, attention::make_paged_wide_tables())

BARACUDA_DEVICE_NAMESPACE_END
