// Internal: the int4_gemm family's launch record and dispatch tables (one per device: host reference, sim,
// cuda). The W4A16 GEMM over the Marlin layout (include/baracuda/ops/int4_weights.hpp for the layout).
#pragma once

#include <array>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/element.hpp"
#include "baracuda/core/status.hpp"
#include "core/exec_context.hpp"
#include "core/split_k.hpp"
#include "device/dispatch_table.hpp"
#include "ops/int4_gemm/tuning.hpp"

namespace baracuda::detail {

/// One validated launch: C[M, N] = A[M, K] · dequant(B)[K, N] (+ bias[N]), f32 accumulation.
/// - `a`: [M, K] of the activation kind (f16 or bf16), K-contiguous (innermost stride 1), rows 16-byte
///   aligned; already permuted into the weight's row order when the weight has act-order (the plan permutes
///   it into its workspace first).
/// - `b`: the Marlin weight, s32 [K/16, 2N] dense.
/// - `scales`: [G, N] of the activation kind, dense, Marlin-permuted (grouped: the 64-entry permutation when
///   `grouped`, else the 32-entry one). Row k of the (sorted) weight uses scale row k / group_rows.
/// - `zeros`: the Marlin zero points, s32 [G, N/8] dense, or empty (symmetric: z = 8).
/// - `bias`: [N] of the activation kind (any stride), or empty.
/// - `c`: [M, N] of the activation kind, innermost stride 1.
/// Each weight is dequantized as `round_T((q − z) · s)` (one rounding to the activation kind T, as the
/// tensor-core kernels' half2 multiply does), products accumulate in f32, the bias is added in f32 and the
/// result rounded once to T.
/// With `splits` > 1 the K range is cut into that many parts, each block accumulates one part and writes
/// its f32 sums to `partial` (f32 [splits, M, N], dense, workspace), and a second kernel adds the parts in
/// order (deterministic), adds the bias and rounds.
struct Int4GemmLaunch {
  int64_t m = 0, n = 0, k = 0;
  int64_t group_rows = 0;  ///< K rows per scale group (K for per-channel)
  bool grouped = false;    ///< Marlin's grouped scale permutation (G > 1)
  int splits = 1;
  ConstDynTensor a, b, scales, zeros, bias;  ///< read
  DynTensor c, partial;                      ///< written
};

/// Rows of C per block of the tensor-core kernel: one 16-row slab for a decode step, up to four for more.
constexpr int64_t int4_gemm_block_rows(int64_t m) { return m <= 16 ? 16 : m <= 32 ? 32 : 64; }

/// The largest M, N and K the plan takes (on every device, so that a plan made on one runs on the others):
/// the kernel launches ceil(M / 64) row blocks on grid.y (at most 65535) and keeps M, N and K in 32-bit
/// integers.
inline constexpr int64_t kInt4GemmMaxM = int64_t{65535} * 64;
inline constexpr int64_t kInt4GemmMaxNK = int64_t{0x7fffffff};

/// How many parts the devices cut K into: enough blocks for the largest GPUs (2 per SM of a 132-SM H100:
/// N/128 column blocks × row blocks alone give 32 blocks at M ≤ 16, N = 4096), with at least 4 K slices
/// per part, and the partial sums' round trip (2·splits·M·N·4 bytes) within the weight's own bytes.
/// A function of the problem only, so every device computes the same sums in the same order.
/// `block_cols` and `slice_rows` are the kernel's block shape (tuning.hpp; by default the library's): the
/// same rule for a candidate shape counts its blocks and its slices.
constexpr int int4_gemm_splits(int64_t m, int64_t n, int64_t k, int block_cols = kInt4GemmDefault.block_cols,
                               int slice_rows = kInt4GemmDefault.slice_rows) {
  if (m <= 0 || n <= 0 || k <= 0) return 1;
  const int64_t blocks = ((n + block_cols - 1) / block_cols) *
                         ((m + int4_gemm_block_rows(m) - 1) / int4_gemm_block_rows(m));
  const int64_t by_slices = k / (4 * slice_rows), by_traffic = k / (16 * m);
  return split_k_parts(blocks, by_slices < by_traffic ? by_slices : by_traffic);
}
using Int4GemmFn = Status (*)(const ExecContext&, const Int4GemmLaunch&);

/// out[m, j] = a[m, perm[j]] for the act-order activation permutation (a and out [M, K], perm s32 [K]).
struct PermuteColumnsLaunch {
  int64_t m = 0, k = 0;
  ConstDynTensor a, perm;  ///< read
  DynTensor out;           ///< written
};
using PermuteColumnsFn = Status (*)(const ExecContext&, const PermuteColumnsLaunch&);

/// Both by the activation kind (Int4GemmTypes; other slots empty).
struct Int4GemmTables {
  std::array<Int4GemmFn, kNumElementKinds> gemm{};
  std::array<PermuteColumnsFn, kNumElementKinds> permute_columns{};
};

/// The activation (and output) kinds of the W4A16 GEMM.
using Int4GemmTypes = type_list<__half, __nv_bfloat16>;

/// A device's tables: `gemm(std::type_identity<T>{})` and `permute(...)` for each T of Int4GemmTypes (generic
/// lambdas naming the device's function templates, as add_kind_fns takes).
template <class Gemm, class Permute>
constexpr Int4GemmTables make_int4_gemm_tables(Gemm gemm, Permute permute) {
  Int4GemmTables t{};
  add_kind_fns(t.gemm, Int4GemmTypes{}, gemm);
  add_kind_fns(t.permute_columns, Int4GemmTypes{}, permute);
  return t;
}

}  // namespace baracuda::detail

// reference: host.cpp; sim and cuda: the kernel unit device.cu
BARACUDA_DECLARE_DEVICE_TABLE(detail::Int4GemmTables, int4_gemm_tables)
