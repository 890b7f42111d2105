// The attention family's kernel table, compiled for both devices (cmake/BaracudaKernels.cmake: by nvcc for cuda, by
// the host compiler against the SIMT emulator for sim): the FlashAttention-2 forward (kernels.cuh) for f16 and bf16,
// head dimensions 64, 96, 128 and 256.
#include "ops/attention/kernels.cuh"
#include "ops/attention/tables.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN

BARACUDA_DEFINE_TABLE(detail::FlashAttentionTables, attention_tables, attention::make_forward_tables<1>("fa2_m16n8k16"))

BARACUDA_DEVICE_NAMESPACE_END
