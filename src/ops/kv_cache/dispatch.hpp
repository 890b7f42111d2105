// Internal: the kv_cache family's launch record, its dispatch-table type and the three tables' accessors.
#pragma once

#include <cstdint>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/ops/kv_cache.hpp"
#include "core/exec_context.hpp"
#include "device/dispatch_table.hpp"

namespace baracuda::detail {

/// What an append function receives: the validated operands (the scales empty for a copy) and the sizes.
struct KvCacheAppendLaunch {
  int64_t tokens = 0, heads = 0, head_dim = 0, num_blocks = 0, block_size = 0;
  bool per_head = false;
  ConstDynTensor key, value, slot_mapping, k_scale, v_scale;
  DynTensor key_cache, value_cache;
};

/// Indexed by [key's kind][the cache's kind]; nullptr = Unsupported.
using KvCacheAppendTable = KindPairTable<KvCacheAppendFn>;

/// key's and value's kinds.
using KvCacheTypes = type_list<__half, __nv_bfloat16, float>;
/// The quantized caches' kinds.
using KvCacheQuantTypes = type_list<__nv_fp8_e4m3, int8_t>;

/// The table of `fn<T, C>`: (T, T) copies and (T, C) for the quantized kinds C, for every T.
template <class Make>
constexpr KvCacheAppendTable make_kv_cache_table(Make make) {
  KvCacheAppendTable t{};
  for_each_type(KvCacheTypes{}, [&]<class T>() {
    t[kind_index(kind_of<T>)][kind_index(kind_of<T>)] = make(std::type_identity<T>{}, std::type_identity<T>{});
  });
  add_kind_pair_fns(t, KvCacheTypes{}, KvCacheQuantTypes{}, make);
  return t;
}

}  // namespace baracuda::detail

// reference: host.cpp; sim and cuda: the kernel unit device.cu
BARACUDA_DECLARE_DEVICE_TABLE(detail::KvCacheAppendTable, kv_cache_append_table)
