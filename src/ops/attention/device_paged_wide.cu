// The chunked prefill's 128-row table (FlashAttentionTile::Rows128, paged_prefill.hpp), compiled for both devices
// like device.cu: device_paged.cu's kernels with two m16 tiles of query rows per warp, for f16 and bf16 q over caches
// of q's kind, FP8 E4M3 or int8, head dimensions 64, 96 and 128 (256: no kernel). A unit of its own so that it builds
// beside the 64-row kernels.
#include "ops/attention/kernels.cuh"
#include "ops/attention/tables.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN

BARACUDA_DEFINE_TABLE(detail::PagedPrefillTables, paged_prefill_wide_tables,
                      attention::make_paged_tables<2>("fa2_m16n8k16_paged_m128"))

BARACUDA_DEVICE_NAMESPACE_END
