// The attention family's 128-row forward table (FlashAttentionTile::Rows128), compiled for both devices like
// device.cu: the FlashAttention-2 forward (kernels.cuh) with two m16 tiles of query rows per warp, for f16 and bf16,
// head dimensions 64, 96 and 128 (256: no kernel, O alone would take 256 registers). A unit of its own so that it
// builds beside the 64-row kernels.
#include "ops/attention/kernels.cuh"
#include "ops/attention/tables.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN

BARACUDA_DEFINE_TABLE(detail::FlashAttentionTables, attention_wide_tables,
                      attention::make_forward_tables<2>("fa2_m16n8k16_m128"))

BARACUDA_DEVICE_NAMESPACE_END
