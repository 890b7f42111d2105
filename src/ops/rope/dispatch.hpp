// Internal: the rope family's launch record, its dispatch-table type and the
// three tables' accessors.
#pragma once

#include <cstdint>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/ops/rope.hpp"
#include "core/exec_context.hpp"
#include "device/dispatch_table.hpp"

namespace baracuda::detail {

/// What a rope function receives: the validated operands (k and k_out empty
/// without kv heads, the cache empty when computed), the problem's sizes and
/// the frequencies select computed. The functions skip the pass-through dims of
/// an output that is exactly its input (in place: nothing to copy).
struct RopeLaunch {
  RopeStyle style = RopeStyle::NeoX;
  bool inverse = false;
  bool cached = false;
  int64_t tokens = 0, heads = 0, kv_heads = 0, head_dim = 0, rot_dim = 0,
          max_position = 0;
  ConstDynTensor positions, cache, q, k;
  DynTensor q_out, k_out;
  const RopeFrequencies *freq = nullptr;
};

/// Indexed by q's ElementKind; nullptr = Unsupported.
using RopeTable = KindTable<RopeFn>;

/// q's and k's kinds.
using RopeTypes = type_list<__half, __nv_bfloat16, float>;

} // namespace baracuda::detail

// reference: host.cpp; sim and cuda: the kernel unit device.cu
BARACUDA_DECLARE_DEVICE_TABLE(detail::RopeTable, rope_table)
