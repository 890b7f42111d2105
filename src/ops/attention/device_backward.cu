// The attention backward's kernel table, compiled for both devices (cmake/BaracudaKernels.cmake globs device*.cu: by
// nvcc for cuda, by the host compiler against the SIMT emulator for sim): backward_kernels.cuh for f16 and bf16, head
// dimensions 64, 96 and 128.
#include "ops/attention/backward_kernels.cuh"
#include "ops/attention/backward_tables.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace attention {

template <class T>
constexpr void add_backward_kind(::baracuda::detail::FlashAttentionBackwardTables& t) {
  auto& slot = t.bwd[::baracuda::detail::kind_index(kind_of<T>)];
  slot[::baracuda::detail::attention_backward_head_dim_slot(64)] = &fa2_backward<T, 64>;
  slot[::baracuda::detail::attention_backward_head_dim_slot(96)] = &fa2_backward<T, 96>;
  slot[::baracuda::detail::attention_backward_head_dim_slot(128)] = &fa2_backward<T, 128>;
}

constexpr ::baracuda::detail::FlashAttentionBackwardTables make_backward_tables() {
  ::baracuda::detail::FlashAttentionBackwardTables t{};
  add_backward_kind<__half>(t);
  add_backward_kind<__nv_bfloat16>(t);
  t.variant = "fa2_bwd_m16n8k16";
  return t;
}

}  // namespace attention

BARACUDA_DEFINE_TABLE(detail::FlashAttentionBackwardTables, attention_backward_tables,
                      attention::make_backward_tables())

BARACUDA_DEVICE_NAMESPACE_END
