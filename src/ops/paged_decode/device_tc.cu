// The paged_decode family's tensor-core kernel table (PagedDecodeKernel::TensorCores), compiled for both devices like
// device.cu: the tensor-core split kernel (tc_kernels.cuh) for q/o f16 and bf16, caches of q's kind, fp8e4m3 or s8,
// head dimensions 64, 96 and 128 (256: no kernel). A unit of its own so that it builds beside the CUDA-core kernels.
#include "ops/paged_decode/tables.hpp"
#include "ops/paged_decode/tc_kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace paged_decode {

template <class T, class C>
constexpr void add_tc_pair(::baracuda::detail::PagedDecodeTables& t) {
  auto& slot = t.fwd[::baracuda::detail::kind_index(kind_of<T>)][::baracuda::detail::kind_index(kind_of<C>)];
  slot[::baracuda::detail::paged_head_dim_slot(64)] = &paged_decode_tc<T, C, 64>;
  slot[::baracuda::detail::paged_head_dim_slot(96)] = &paged_decode_tc<T, C, 96>;
  slot[::baracuda::detail::paged_head_dim_slot(128)] = &paged_decode_tc<T, C, 128>;
}

template <class T>
constexpr void add_tc_kind(::baracuda::detail::PagedDecodeTables& t) {
  add_tc_pair<T, T>(t);
  add_tc_pair<T, __nv_fp8_e4m3>(t);
  add_tc_pair<T, int8_t>(t);
}

constexpr ::baracuda::detail::PagedDecodeTables make_tc_tables() {
  ::baracuda::detail::PagedDecodeTables t{};
  add_tc_kind<__half>(t);
  add_tc_kind<__nv_bfloat16>(t);
  t.variant = "split_kv_tc";
  return t;
}

}  // namespace paged_decode

BARACUDA_DEFINE_TABLE(detail::PagedDecodeTables, paged_decode_tc_tables, paged_decode::make_tc_tables())

BARACUDA_DEVICE_NAMESPACE_END
