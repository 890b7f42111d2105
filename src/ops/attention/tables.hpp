// Internal: the attention family's launch record (the one contract between plan.cpp, which validates the
// operands and fills it, and every backend) and its dispatch table (one per device: the host reference, sim,
// cuda), indexed by element kind and head dimension.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "baracuda/core/element.hpp"
#include "baracuda/ops/attention.hpp"
#include "core/exec_context.hpp"
#include "device/dispatch_table.hpp"
#include "ops/paged_decode/tables.hpp"  // paged_effective_len: the paged cache's rule, shared

namespace baracuda::detail {

/// The attention forward of attention.hpp. Element strides: q (t, h, c) at `q + t·q_tok + h·q_head + c`, k and
/// v alike with their own strides, o like q, lse (b, h, i) at `lse + b·lse_batch + h·lse_head + i·lse_tok` (varlen:
/// b = 0 and i the token). Padded batches: cu_seqlens are null and batch b's tokens start at b·seqlen. Validated by
/// the plan (kinds, shapes, strides, o and lse overlap nothing); the cu_seqlens values are data and are not.
struct FlashAttentionLaunch {
  ElementKind element = ElementKind::F16;
  int batch = 0, seqlen_q = 0, seqlen_k = 0, heads = 0, kv_heads = 0, head_dim = 0;
  int total_q = 0, total_k = 0;  ///< tokens of q and k (T_q, T_k)
  /// Window bounds, −1 unbounded (causal already folded into window_right = 0); at most 2^30.
  int window_left = -1, window_right = -1;
  float scale = 0;  ///< τ in f32, > 0
  const void* q = nullptr;
  int64_t q_tok = 0, q_head = 0;
  const void* k = nullptr;
  int64_t k_tok = 0, k_head = 0;
  const void* v = nullptr;
  int64_t v_tok = 0, v_head = 0;
  const int32_t* cu_q = nullptr;  ///< nullptr: padded batches
  const int32_t* cu_k = nullptr;
  void* o = nullptr;
  int64_t o_tok = 0, o_head = 0;
  float* lse = nullptr;  ///< nullptr: not written
  int64_t lse_batch = 0, lse_head = 0, lse_tok = 0;
  /// Paged K/V (PagedPrefillPlan, paged_prefill.hpp), when `block_tables` is set: key j of sequence b at
  /// `k + page·k_block + (j % block_size)·k_tok + hk·k_head` with page = `block_tables[b·bt_seq + (j / block_size)·
  /// bt_page]` (masked when outside [0, num_blocks)), v alike; s_k the effective `context_lens[b·cl_stride]`; q
  /// varlen through cu_q, cu_k unused.
  const int32_t* block_tables = nullptr;
  int64_t bt_seq = 0, bt_page = 0;
  ElementKind cache_kind = ElementKind::F16;  ///< k and v: `element`, or an FP8/int8 cache (paged only)
  const float* k_scale = nullptr;             ///< nullptr: the cache holds `element`; else `k_scale[hk·stride]`
  const float* v_scale = nullptr;
  int64_t k_scale_stride = 0, v_scale_stride = 0;  ///< 0: per tensor
  const int32_t* context_lens = nullptr;
  int64_t cl_stride = 0;
  int64_t k_block = 0, v_block = 0, num_blocks = 0;
  int block_size = 0, max_blocks = 0;
};

/// The table slot of a head dimension with kernels (64, 96, 128, 256), or −1.
constexpr int attention_head_dim_slot(int64_t d) {
  return d == 64 ? 0 : d == 96 ? 1 : d == 128 ? 2 : d == 256 ? 3 : -1;
}

struct FlashAttentionTables {
  KindTable<std::array<FlashAttentionFn, 4>> fwd{};
  std::string_view variant;
};

/// The chunked prefill's kernels (paged_prefill.hpp): the forward with paged K/V, by [element][cache kind] and head
/// dimension.
struct PagedPrefillTables {
  KindPairTable<std::array<FlashAttentionFn, 4>> fwd{};
  std::string_view variant;
};

/// The effective offset of sequence boundary b from the running maximum so far (attention.hpp): `raw` clamped to
/// [0, total], then at least `running`.
constexpr int64_t attention_effective(int64_t raw, int64_t running, int64_t total) {
  const int64_t c = raw < 0 ? 0 : (raw > total ? total : raw);
  return c > running ? c : running;
}

/// The effective boundaries c'[0..B] of cu_seqlens (attention.hpp), or the padded ones b·S: the host references'.
inline std::vector<int64_t> attention_boundaries(const int32_t* cu, int batch, int seqlen, int total) {
  std::vector<int64_t> c(static_cast<size_t>(batch) + 1);
  int64_t run = 0;
  for (int b = 0; b <= batch; ++b) {
    c[b] = cu != nullptr ? attention_effective(cu[b], run, total) : int64_t{b} * seqlen;
    run = c[b];
  }
  return c;
}

}  // namespace baracuda::detail

// reference: host.cpp; sim and cuda: the kernel units device.cu and device_paged.cu
BARACUDA_DECLARE_DEVICE_TABLE(detail::FlashAttentionTables, attention_tables)
BARACUDA_DECLARE_DEVICE_TABLE(detail::PagedPrefillTables, paged_prefill_tables)
// The 128-row query tile (FlashAttentionTile::Rows128), sim and cuda: the kernel units device_wide.cu and
// device_paged_wide.cu
BARACUDA_DECLARE_KERNEL_TABLE(detail::FlashAttentionTables, attention_wide_tables)
BARACUDA_DECLARE_KERNEL_TABLE(detail::PagedPrefillTables, paged_prefill_wide_tables)
