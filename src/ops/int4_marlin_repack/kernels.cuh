// Device code of the int4_marlin_repack family: GPTQ / AWQ checkpoint tensors → Marlin's weight, scales and
// zero points (include/baracuda/ops/int4_marlin_repack.hpp), as one gather kernel. Instantiated for the cuda
// and sim devices by the kernel unit device.cu; tables.hpp documents the launch record.
//
// One thread assembles one output word (or one scale) from the checkpoint values its Marlin position maps to;
// the index maps are those of src/ops/int4_weights/marlin_layout.cpp written as arithmetic:
// - weight word (kt, 128·nb + 4t + j), nibble p: element e = [0,2,4,6,1,3,5,7][p] of lane t's mma.m16n8k16 B
//   fragments for the n8 blocks 16j and 16j + 8: Marlin row 16kt + 2(t % 4) + [0,1,8,9][e % 4], column
//   64nb + 16j + t/4 + 8(e / 4); the checkpoint row is perm[row] with act-order;
// - scale i of a run of 64 (grouped) takes column i/8 + 8(i % 8); of a run of 32 (per channel) 2(i/8) +
//   [0,1,8,9,16,17,24,25][i % 8];
// - zero word w of a group row, nibble i: the run-of-8 element [0,2,4,6,1,3,5,7][i] after the grouped scale
//   permutation of its 64-column run.
// GPTQ packs 8 rows per word along K (nibble = row % 8); AWQ packs 8 columns per word along N with element e
// in nibble [0,4,1,5,2,6,3,7][e] (the inverse of the interleave).
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <cstdint>
#include <string>

#include "device/convert.cuh"
#include "ops/int4_marlin_repack/tables.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace int4_marlin_repack {

/// Element of a run of 8 that nibble p holds (the 0x6400 dequantization interleave).
__host__ __device__ constexpr int interleave(int p) { return p < 4 ? 2 * p : 2 * (p - 4) + 1; }
/// The nibble holding element e of a run of 8 under the interleave (its inverse).
__host__ __device__ constexpr int interleave_slot(int e) { return e % 2 == 0 ? e / 2 : 4 + e / 2; }
/// Row offsets {0, 1, 8, 9} of an mma.m16n8k16 B fragment's four values.
__host__ __device__ constexpr int frag_row(int i) { return i % 2 + 8 * (i / 2); }
__host__ __device__ constexpr int scale_perm_grouped(int i) { return i / 8 + 8 * (i % 8); }
__host__ __device__ constexpr int scale_perm_single(int i) { return 2 * (i / 8) + i % 8 % 2 + 8 * (i % 8 / 2); }

struct Params {
  int64_t k = 0, n = 0, groups = 0;
  bool awq = false, grouped = false;
  const uint32_t* qweight = nullptr;
  const uint32_t* qzeros = nullptr;
  const __half* scales = nullptr;
  const int32_t* perm = nullptr;  // null without act-order
  uint32_t* out_qweight = nullptr;
  void* out_scales = nullptr;
  uint32_t* out_zeros = nullptr;  // null for GPTQ
};

/// The 4-bit weight at checkpoint (row, col).
__device__ inline uint32_t weight_nibble(const Params& p, int64_t row, int64_t col) {
  // lint: shift < width: interleave_slot maps [0, 7] to [0, 7] (col >= 0)
  if (p.awq) return (p.qweight[row * (p.n / 8) + col / 8] >> (4 * interleave_slot(static_cast<int>(col % 8)))) & 0xFu;
  return (p.qweight[(row / 8) * p.n + col] >> (4 * (row % 8))) & 0xFu;  // lint: shift < width: row >= 0
}

/// Marlin weight word `w` of [K/16, 2N].
__device__ inline uint32_t marlin_weight_word(const Params& p, int64_t w) {
  const int64_t kt = w / (2 * p.n), r = w % (2 * p.n);
  const int64_t nb = r / 128;
  const int t = static_cast<int>(r % 128) / 4, j = static_cast<int>(r % 4);
  uint32_t word = 0;
  for (int nib = 0; nib < 8; ++nib) {
    const int e = interleave(nib);
    const int64_t row = 16 * kt + 2 * (t % 4) + frag_row(e % 4);
    const int64_t col = 64 * nb + 16 * j + t / 4 + 8 * (e / 4);
    const int64_t src = p.perm != nullptr ? p.perm[row] : row;
    word |= weight_nibble(p, src, col) << (4 * nib);  // lint: shift < width: nib < 8
  }
  return word;
}

/// Marlin zero-point word `w` of [G, N/8] from AWQ's raw zero points (same packing as AWQ's qweight).
__device__ inline uint32_t marlin_zero_word(const Params& p, int64_t w) {
  const int64_t words_per_row = p.n / 8;
  const int64_t g = w / words_per_row, c = w % words_per_row;
  const int64_t run = (8 * c) / 64;
  uint32_t word = 0;
  for (int nib = 0; nib < 8; ++nib) {
    const int pos = static_cast<int>((8 * c) % 64) + interleave(nib);
    const int64_t col = 64 * run + scale_perm_grouped(pos);
    const int slot = interleave_slot(static_cast<int>(col % 8));  // in [0, 7]: col >= 0
    const uint32_t z = (p.qzeros[g * words_per_row + col / 8] >> (4 * slot)) & 0xFu;  // lint: shift < width: slot <= 7
    word |= z << (4 * nib);  // lint: shift < width: nib < 8
  }
  return word;
}

/// Grid-stride over the concatenation [weight words | scales | zero words].
template <class TS>
__global__ void repack_kernel(Params p) {
  const int64_t weight_words = p.k / 16 * 2 * p.n;
  const int64_t scale_count = p.groups * p.n;
  const int64_t zero_words = p.out_zeros != nullptr ? p.groups * p.n / 8 : 0;
  const int64_t total = weight_words + scale_count + zero_words;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if (i < weight_words) {
      p.out_qweight[i] = marlin_weight_word(p, i);
    } else if (i < weight_words + scale_count) {
      const int64_t s = i - weight_words;
      const int64_t g = s / p.n, col = s % p.n;
      const int run = p.grouped ? 64 : 32;
      const int at = static_cast<int>(col % run);
      const int64_t src = col - at + (p.grouped ? scale_perm_grouped(at) : scale_perm_single(at));
      static_cast<TS*>(p.out_scales)[s] = convert::cast<TS>(p.scales[g * p.n + src], false);
    } else {
      const int64_t z = i - weight_words - scale_count;
      p.out_zeros[z] = marlin_zero_word(p, z);
    }
  }
}

template <class TS>
Status repack_fn(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::Int4RepackLaunch& l) {
  Params p;
  p.k = l.k, p.n = l.n, p.groups = l.groups, p.awq = l.awq, p.grouped = l.grouped;
  p.qweight = static_cast<const uint32_t*>(l.qweight.data);
  p.qzeros = static_cast<const uint32_t*>(l.qzeros.data);
  p.scales = static_cast<const __half*>(l.scales.data);
  p.perm = static_cast<const int32_t*>(l.perm.data);
  p.out_qweight = static_cast<uint32_t*>(l.out_qweight.data);
  p.out_scales = l.out_scales.data;
  p.out_zeros = l.awq ? static_cast<uint32_t*>(l.out_zeros.data) : nullptr;
  const int64_t total = l.k / 16 * 2 * l.n + l.groups * l.n + (l.awq ? l.groups * l.n / 8 : 0);
  if (total == 0) return {};
  const int64_t blocks = (total + 255) / 256;
  const dim3 grid(static_cast<unsigned>(blocks < 65535 * 8 ? blocks : 65535 * 8));
  BARACUDA_LAUNCH(grid, dim3(256), 0, ctx.stream, repack_kernel<TS>)(p);
  const auto e = launch::take_last_error();
  if (!e.failed) return {};
  return Error::device(std::string("Int4MarlinRepackPlan: kernel launch failed: ") + e.message, e.code);
}

constexpr ::baracuda::detail::Int4RepackTables make_tables() {
  return ::baracuda::detail::make_int4_repack_tables([]<class T>(std::type_identity<T>) { return &repack_fn<T>; });
}

}  // namespace int4_marlin_repack
BARACUDA_DEVICE_NAMESPACE_END
