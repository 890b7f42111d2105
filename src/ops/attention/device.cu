// The attention family's kernel table, compiled for both devices (cmake/BaracudaKernels.cmake: by nvcc for cuda, by
// the host compiler against the SIMT emulator for sim): the FlashAttention-2 forward (kernels.cuh) for f16 and bf16,
// head dimensions 64, 96, 128 and 256.
#include "ops/attention/kernels.cuh"
#include "ops/attention/tables.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace attention {

template <class T>
constexpr void add_kind(::baracuda::detail::FlashAttentionTables& t) {
  add_head_dims<T, false, T, 1>(t.fwd[::baracuda::detail::kind_index(kind_of<T>)]);
}

constexpr ::baracuda::detail::FlashAttentionTables make_tables() {
  ::baracuda::detail::FlashAttentionTables t{};
  add_kind<__half>(t);
  add_kind<__nv_bfloat16>(t);
  t.variant = "fa2_m16n8k16";
  return t;
}

}  // namespace attention

BARACUDA_DEFINE_TABLE(detail::FlashAttentionTables, attention_tables, attention::make_tables())

BARACUDA_DEVICE_NAMESPACE_END
