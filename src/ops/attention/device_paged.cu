// The chunked prefill's kernel table (paged_prefill.hpp), compiled for both devices like device.cu: the
// FlashAttention-2 forward (kernels.cuh) with K/V gathered through the block table, for f16 and bf16 q over caches
// of q's kind, FP8 E4M3 or int8, head dimensions 64, 96, 128 and 256. A unit of its own so that it builds beside
// the dense forward.
#include "ops/attention/kernels.cuh"
#include "ops/attention/tables.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN

BARACUDA_DEFINE_TABLE(detail::PagedPrefillTables, paged_prefill_tables,
                      attention::make_paged_tables<1>("fa2_m16n8k16_paged"))

BARACUDA_DEVICE_NAMESPACE_END
