// Internal: the attention backward's launch record (between backward_plan.cpp, which validates the operands and
// fills it, and every backend) and its dispatch table (host reference, sim, cuda), by element kind and head dim.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "baracuda/ops/attention_backward.hpp"
#include "ops/attention/tables.hpp"

namespace baracuda::detail {

/// The backward of attention_backward.hpp. `f` is the forward's record with o and lse as inputs (lse required);
/// dO, dq, dk, dv are addressed like q (dO, dq) and k (dk, dv) with their own strides; `dsum` is the workspace's D,
/// f32 `[H, T_q]` (h·total_q + token). Validated by the plan; the cu_seqlens values are data.
struct FlashAttentionBackwardLaunch {
  FlashAttentionLaunch f;
  const void* d_o = nullptr;
  int64_t do_tok = 0, do_head = 0;
  void* dq = nullptr;
  int64_t dq_tok = 0, dq_head = 0;
  void* dk = nullptr;
  int64_t dk_tok = 0, dk_head = 0;
  void* dv = nullptr;
  int64_t dv_tok = 0, dv_head = 0;
  float* dsum = nullptr;
};

/// The table slot of a head dimension with backward kernels (64, 96, 128), or −1.
constexpr int attention_backward_head_dim_slot(int64_t d) { return d == 64 ? 0 : d == 96 ? 1 : d == 128 ? 2 : -1; }

/// D's bytes in the workspace: f32 [H, T_q], rounded up to 16 bytes.
constexpr size_t attention_backward_workspace_bytes(int64_t heads, int64_t tokens_q) {
  return (static_cast<size_t>(heads) * static_cast<size_t>(tokens_q) * 4 + 15) / 16 * 16;
}

struct FlashAttentionBackwardTables {
  KindTable<std::array<FlashAttentionBackwardFn, 3>> bwd{};
  std::string_view variant;
};

}  // namespace baracuda::detail

// reference: backward_host.cpp; sim and cuda: the kernel unit device_backward.cu
BARACUDA_DECLARE_DEVICE_TABLE(detail::FlashAttentionBackwardTables, attention_backward_tables)
