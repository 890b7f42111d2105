/// \file
/// \brief The tensor memory accelerator (sm_90): 2-D tiled tensor maps built on the host, and
/// cp.async.bulk.tensor.2d loads of one box into shared memory, completing on an mbarrier (mbarrier.cuh).
///
/// A tensor map describes a row-major 2-D tensor in global memory — `cols` elements of `elem_bytes` along the
/// inner dimension, `rows` rows `row_bytes` apart — and the box one copy moves: `box_cols` × `box_rows`
/// elements, stored in shared memory as box_rows rows of box_cols·elem_bytes bytes, each row's 16-byte chunks
/// permuted by the swizzle (TmaSwizzle; the same pattern the wgmma descriptors of that swizzle read, when
/// the destination is aligned to the swizzle's repeat: 1024 bytes for 128B). Elements outside the tensor
/// (the ragged M, N and K edges) are written as zeros, and count towards the copy's bytes.
///
/// Rules, checked by encode_tensor_map_2d on both devices: base 16-byte aligned; row_bytes a multiple of 16
/// below 2^40; 1 ≤ cols, rows ≤ 2^32; 1 ≤ box_cols, box_rows ≤ 256; box_cols·elem_bytes a multiple of 16 and,
/// with a swizzle, at most its width; elem_bytes 1, 2 or 4. The shared destination is 128-byte aligned.
///
/// The map travels as a kernel parameter declared `const BARACUDA_GRID_CONSTANT ptx::TensorMap` (the copy
/// reads it through its parameter-space address). On cuda the map is the driver's CUtensorMap, encoded with
/// cuTensorMapEncodeTiled reached through the runtime's driver entry point (the library does not link
/// libcuda); under sim it is simt::ptx::TensorMap2d, and the copy is emulated (sim/emu/tma_emulation.hpp).
#pragma once

#include <cstdint>
#include <string>

#include "device/ptx/mbarrier.cuh"
#include "sim/compat.cuh"
#if !BARACUDA_SIM
#include <cuda.h>
#endif

#if BARACUDA_SIM
#define BARACUDA_GRID_CONSTANT
#else
#define BARACUDA_GRID_CONSTANT __grid_constant__
#endif

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace ptx {

#if BARACUDA_SIM
using TensorMap = ::baracuda::simt::ptx::TensorMap2d;
#else
using TensorMap = CUtensorMap;
#endif

/// The shared-memory swizzle of a box row (its width in bytes; None: rows stored as they are).
enum class TmaSwizzle : unsigned { None = 0, B32 = 32, B64 = 64, B128 = 128 };

/// What a 2-D tile tensor map describes (see the file comment).
struct TensorMapSpec2d {
  const void* base = nullptr;
  std::uint64_t cols = 0, rows = 0;
  std::uint64_t row_bytes = 0;
  unsigned box_cols = 0, box_rows = 0;
  unsigned elem_bytes = 1;
  TmaSwizzle swizzle = TmaSwizzle::None;
};

/// Why `s` cannot be a tensor map, or "" when it can.
inline std::string tensor_map_problem(const TensorMapSpec2d& s) {
  const std::uint64_t box_row = static_cast<std::uint64_t>(s.box_cols) * s.elem_bytes;
  if (s.elem_bytes != 1 && s.elem_bytes != 2 && s.elem_bytes != 4) return "elements of 1, 2 or 4 bytes";
  if (s.base == nullptr || reinterpret_cast<std::uintptr_t>(s.base) % 16 != 0) return "a 16-byte aligned base";
  if (s.row_bytes % 16 != 0 || s.row_bytes >= (std::uint64_t{1} << 40)) return "a row stride of a multiple of 16 bytes below 2^40";
  if (s.cols < 1 || s.rows < 1 || s.cols > (std::uint64_t{1} << 32) || s.rows > (std::uint64_t{1} << 32))
    return "1 to 2^32 columns and rows";
  if (s.box_cols < 1 || s.box_rows < 1 || s.box_cols > 256 || s.box_rows > 256) return "box sides of 1 to 256";
  if (box_row % 16 != 0) return "a box row of a multiple of 16 bytes";
  if (s.swizzle != TmaSwizzle::None && box_row > static_cast<unsigned>(s.swizzle)) return "a box row within the swizzle width";
  return {};
}

/// Builds the tensor map of `s` into `out`; returns "" or why it could not.
inline std::string encode_tensor_map_2d(TensorMap& out, const TensorMapSpec2d& s) {
  if (std::string why = tensor_map_problem(s); !why.empty()) return "tensor map: needs " + why;
#if BARACUDA_SIM
  out = {static_cast<const unsigned char*>(s.base), s.cols, s.rows, s.row_bytes, s.box_cols, s.box_rows, s.elem_bytes,
         static_cast<unsigned>(s.swizzle)};
  return {};
#else
  using Encode = decltype(&cuTensorMapEncodeTiled);
  static const Encode encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      fn = nullptr;
    return reinterpret_cast<Encode>(fn);
  }();
  if (encode == nullptr) return "tensor map: the driver has no cuTensorMapEncodeTiled";
  const CUtensorMapDataType type = s.elem_bytes == 1   ? CU_TENSOR_MAP_DATA_TYPE_UINT8
                                   : s.elem_bytes == 2 ? CU_TENSOR_MAP_DATA_TYPE_UINT16
                                                       : CU_TENSOR_MAP_DATA_TYPE_UINT32;
  const cuuint64_t dims[2] = {s.cols, s.rows};
  const cuuint64_t strides[1] = {s.row_bytes};
  const cuuint32_t box[2] = {s.box_cols, s.box_rows};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUtensorMapSwizzle swizzle = s.swizzle == TmaSwizzle::B128  ? CU_TENSOR_MAP_SWIZZLE_128B
                                     : s.swizzle == TmaSwizzle::B64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                     : s.swizzle == TmaSwizzle::B32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                                                    : CU_TENSOR_MAP_SWIZZLE_NONE;
  const CUresult r = encode(&out, type, 2, const_cast<void*>(s.base), dims, strides, box, element_strides,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) return "tensor map: cuTensorMapEncodeTiled failed with CUresult " + std::to_string(static_cast<int>(r));
  return {};
#endif
}

/// cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes: the box whose first
/// element is (column c0, row c1) of `map` into `dst` (shared, 128-byte aligned; 1024 for the 128B swizzle
/// to line up with the wgmma layout), its bytes counted off `bar`'s current phase. One thread issues it.
__device__ __forceinline__ void tma_load_2d(void* dst, const TensorMap& map, std::uint64_t* bar, int c0, int c1) {
#if BARACUDA_SIM
  ::baracuda::simt::ptx::tma_load_2d(dst, map, bar, c0, c1);
#elif BARACUDA_ARCH >= 900
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n" ::"r"(
          smem_address(dst)),
      "l"(reinterpret_cast<std::uint64_t>(&map)), "r"(smem_address(bar)), "r"(c0), "r"(c1)
      : "memory");
#elif BARACUDA_ARCH > 0
  (void)dst, (void)map, (void)bar, (void)c0, (void)c1;
  __trap();  // TMA needs sm_90
#else
  (void)dst, (void)map, (void)bar, (void)c0, (void)c1;
#endif
}

/// prefetch.tensormap: brings the map (a kernel parameter) into the cache ahead of the first copy.
__device__ __forceinline__ void prefetch_tensor_map(const TensorMap& map) {
#if BARACUDA_SIM
  (void)map;
#elif BARACUDA_ARCH >= 900
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(&map)) : "memory");
#else
  (void)map;
#endif
}

}  // namespace ptx
BARACUDA_DEVICE_NAMESPACE_END
