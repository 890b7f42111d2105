// Internal: the paged_decode family's launch record (the one contract between plan.cpp, which validates the
// operands and fills it, and every backend) and its dispatch table (one per device: the host reference, sim, cuda),
// indexed by [element][cache kind] and head dimension.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "baracuda/core/element.hpp"
#include "baracuda/ops/paged_attention.hpp"
#include "core/exec_context.hpp"
#include "device/dispatch_table.hpp"

namespace baracuda::detail {

/// The problem of paged_attention.hpp with element strides. q (t, h, c) at `q + t·q_tok + h·q_head + c`, o alike;
/// cache (page, offset, hk, c) at `cache + page·c_block + offset·c_offset + hk·c_head + c` (K and V each with their
/// own strides); block_tables (b, p) at `bt + b·bt_seq + p·bt_page`; context_lens b at `cl + b·cl_stride`; lse (t, h)
/// at `lse + t·lse_tok + h·lse_head`; the scales at `k_scale[hk·k_scale_stride]` and `v_scale[hk·v_scale_stride]`
/// (strides 0 for per tensor). The workspace holds `splits` partials: o_part (f32 [splits, B·q_len, H, d], dense) then
/// lse_part (f32 [splits, B·q_len, H]).
struct PagedDecodeLaunch {
  ElementKind element = ElementKind::F16, cache_kind = ElementKind::F16;
  int batch = 0, q_len = 0, heads = 0, kv_heads = 0, head_dim = 0;
  int64_t num_blocks = 0;
  int block_size = 0, max_blocks = 0;
  int window_left = -1;  ///< −1 unbounded, else at most 2^30
  int splits = 1;
  float scale = 0;  ///< τ in f32, > 0
  const void* q = nullptr;
  int64_t q_tok = 0, q_head = 0;
  const void* k = nullptr;
  int64_t k_block = 0, k_offset = 0, k_head = 0;
  const void* v = nullptr;
  int64_t v_block = 0, v_offset = 0, v_head = 0;
  const int32_t* block_tables = nullptr;
  int64_t bt_seq = 0, bt_page = 0;
  const int32_t* context_lens = nullptr;
  int64_t cl_stride = 0;
  const float* k_scale = nullptr;  ///< nullptr: the cache holds `element`
  const float* v_scale = nullptr;
  int64_t k_scale_stride = 0, v_scale_stride = 0;  ///< 0: per tensor
  void* o = nullptr;
  int64_t o_tok = 0, o_head = 0;
  float* lse = nullptr;  ///< nullptr: not written
  int64_t lse_tok = 0, lse_head = 0;
  float* o_part = nullptr;  ///< the workspace (splits > 1)
  float* lse_part = nullptr;
};

/// The table slot of a head dimension with kernels (64, 96, 128, 256), or −1.
constexpr int paged_head_dim_slot(int64_t d) { return d == 64 ? 0 : d == 96 ? 1 : d == 128 ? 2 : d == 256 ? 3 : -1; }

struct PagedDecodeTables {
  KindPairTable<std::array<PagedDecodeFn, 4>> fwd{};
  std::string_view variant;
};

/// The split kernel's resident blocks per SM, which its register budget is held to (`__launch_bounds__`: at most
/// 65536 / (128 threads · blocks) registers): 3 (≤ 168 registers), or 2 where 168 would spill: a 2-byte cache at
/// d = 256, and a 2-byte cache loaded element by element (rows not 8-element aligned) at d ≥ 96. plan.cpp sizes its
/// grid by the aligned case. Why it matters: a grid one wave larger than the residency takes twice as long
/// (docs/perf/2026-11-27-h100, runs 10 and 12).
constexpr int paged_split_blocks_per_sm(int64_t head_dim, int cache_bytes, bool vec) {
  return cache_bytes == 2 && (head_dim == 256 || (!vec && head_dim >= 96)) ? 2 : 3;
}

/// The tensor-core split kernel (tc_kernels.cuh): query rows per block (one m16 tile), keys per K/V tile, cp.async
/// stages, and its dynamic shared memory for head dimension d (the Q tile and the stages' K and V tiles, rows padded
/// to 128 elements at d = 96).
inline constexpr int kPagedTcRows = 16, kPagedTcKeys = 32, kPagedTcStages = 2;
constexpr int paged_tc_smem_bytes(int64_t head_dim) {
  const int row_bytes = (head_dim == 96 ? 128 : static_cast<int>(head_dim)) * 2;
  return (kPagedTcRows + 2 * kPagedTcStages * kPagedTcKeys) * row_bytes;
}
/// Its resident blocks (one warp each) per SM, as shared memory allows on an H100 (228 KiB, 1 KiB reserved per block):
/// 6 at d = 96 and 128, 11 at d = 64. The plan's split rule sizes the grid by it.
constexpr int paged_tc_blocks_per_sm(int64_t head_dim) { return 227 * 1024 / (paged_tc_smem_bytes(head_dim) + 1024); }

/// The effective context length of paged_attention.hpp: the raw value clamped to [0, max_blocks·block_size].
constexpr int64_t paged_effective_len(int64_t raw, int64_t max_blocks, int64_t block_size) {
  const int64_t cap = max_blocks * block_size;
  return raw < 0 ? 0 : raw > cap ? cap : raw;
}

}  // namespace baracuda::detail

// reference: host.cpp; sim and cuda: the kernel unit device.cu
BARACUDA_DECLARE_DEVICE_TABLE(detail::PagedDecodeTables, paged_decode_tables)
// The tensor-core kernel (PagedDecodeKernel::TensorCores), sim and cuda: the kernel unit device_tc.cu
BARACUDA_DECLARE_KERNEL_TABLE(detail::PagedDecodeTables, paged_decode_tc_tables)
