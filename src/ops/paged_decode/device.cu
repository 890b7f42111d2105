// The paged_decode family's kernel table, compiled for both devices (cmake/BaracudaKernels.cmake: by nvcc for cuda,
// by the host compiler against the SIMT emulator for sim): the split-KV decode (kernels.cuh) for q/o f16 and bf16,
// caches of q's kind, fp8e4m3 or s8, head dimensions 64, 96, 128 and 256.
#include "ops/paged_decode/kernels.cuh"
#include "ops/paged_decode/tables.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace paged_decode {

template <class T, class C>
constexpr void add_pair(::baracuda::detail::PagedDecodeTables& t) {
  auto& slot = t.fwd[::baracuda::detail::kind_index(kind_of<T>)][::baracuda::detail::kind_index(kind_of<C>)];
  slot[::baracuda::detail::paged_head_dim_slot(64)] = &paged_decode<T, C, 64>;
  slot[::baracuda::detail::paged_head_dim_slot(96)] = &paged_decode<T, C, 96>;
  slot[::baracuda::detail::paged_head_dim_slot(128)] = &paged_decode<T, C, 128>;
  slot[::baracuda::detail::paged_head_dim_slot(256)] = &paged_decode<T, C, 256>;
}

template <class T>
constexpr void add_kind(::baracuda::detail::PagedDecodeTables& t) {
  add_pair<T, T>(t);
  add_pair<T, __nv_fp8_e4m3>(t);
  add_pair<T, int8_t>(t);
}

constexpr ::baracuda::detail::PagedDecodeTables make_tables() {
  ::baracuda::detail::PagedDecodeTables t{};
  add_kind<__half>(t);
  add_kind<__nv_bfloat16>(t);
  t.variant = "split_kv_simt";
  return t;
}

}  // namespace paged_decode

BARACUDA_DEFINE_TABLE(detail::PagedDecodeTables, paged_decode_tables, paged_decode::make_tables())

BARACUDA_DEVICE_NAMESPACE_END
