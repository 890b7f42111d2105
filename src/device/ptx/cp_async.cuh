/// \file
/// \brief cp.async (sm_80+): asynchronous global -> shared copies of 4, 8 or 16 bytes, with the src-size
/// zero-fill form, and the commit/wait group operations. Real inline PTX under nvcc; under sim a copy lands at
/// the wait_group that retires it (so a missing wait shows there: docs/sim.md).
#pragma once

#include "device/ptx/ldmatrix.cuh"  // smem_address
#include "sim/compat.cuh"
#if BARACUDA_SIM
#include "sim/emu/ptx_emulation.hpp"
#endif

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace ptx {

/// cp.async.ca.shared.global [smem], [gmem], Bytes: copies Bytes (4, 8 or 16) bytes, both addresses
/// aligned to Bytes; cached in L1 and L2.
template <int Bytes>
__device__ __forceinline__ void cp_async_ca(void* smem, const void* gmem) {
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "cp.async: cp-size 4, 8 or 16");
#if BARACUDA_SIM
  ::baracuda::simt::ptx::cp_async(smem, gmem, Bytes, Bytes);
#elif BARACUDA_ARCH >= 800
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(smem_address(smem)), "l"(gmem), "n"(Bytes)
               : "memory");
#elif BARACUDA_ARCH > 0
  (void)smem, (void)gmem;
  __trap();
#endif
}

/// cp.async with src-size, cached in L1 and L2 (`.ca`) or in L2 only (`.cg`, `kL2Only`, Bytes = 16 only):
/// copies the first src_bytes (0..Bytes) bytes and zero-fills the rest of the Bytes destination bytes
/// (src_bytes = 0 reads nothing: a predicated-off load that zero-fills).
template <bool kL2Only, int Bytes>
__device__ __forceinline__ void cp_async_zfill(void* smem, const void* gmem, int src_bytes) {
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "cp.async: cp-size 4, 8 or 16");
  static_assert(!kL2Only || Bytes == 16, "cp.async.cg: cp-size 16 only");
#if BARACUDA_SIM
  ::baracuda::simt::ptx::cp_async(smem, gmem, Bytes, src_bytes);
#elif BARACUDA_ARCH >= 800
  if constexpr (kL2Only)
    asm volatile("cp.async.cg.shared.global [%0], [%1], %2, %3;\n" ::"r"(smem_address(smem)), "l"(gmem), "n"(Bytes),
                 "r"(src_bytes)
                 : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(smem_address(smem)), "l"(gmem), "n"(Bytes),
                 "r"(src_bytes)
                 : "memory");
#elif BARACUDA_ARCH > 0
  (void)smem, (void)gmem, (void)src_bytes;
  __trap();
#endif
}

/// cp.async.ca with src-size (cp_async_zfill): Bytes = 4, 8 or 16.
template <int Bytes>
__device__ __forceinline__ void cp_async_ca_zfill(void* smem, const void* gmem, int src_bytes) {
  cp_async_zfill<false, Bytes>(smem, gmem, src_bytes);
}

/// cp.async.cg.shared.global [smem], [gmem], 16: 16 bytes, 16-byte aligned, cached in L2 only (.cg
/// supports cp-size 16 only).
__device__ __forceinline__ void cp_async_cg(void* smem, const void* gmem) {
#if BARACUDA_SIM
  ::baracuda::simt::ptx::cp_async(smem, gmem, 16, 16);
#elif BARACUDA_ARCH >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_address(smem)), "l"(gmem) : "memory");
#elif BARACUDA_ARCH > 0
  (void)smem, (void)gmem;
  __trap();
#endif
}

/// cp.async.cg with src-size (0..16), cp_async_zfill: zero-fills the destination bytes past src_bytes.
__device__ __forceinline__ void cp_async_cg_zfill(void* smem, const void* gmem, int src_bytes) {
  cp_async_zfill<true, 16>(smem, gmem, src_bytes);
}

/// cp.async.commit_group: closes the calling thread's pending cp.async operations into a group.
__device__ __forceinline__ void cp_async_commit() {
#if BARACUDA_SIM
  ::baracuda::simt::detail::cp_async_commit();
#elif BARACUDA_ARCH >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#elif BARACUDA_ARCH > 0
  __trap();
#endif
}

/// cp.async.wait_group N: waits until at most N of the calling thread's most recent groups are pending.
/// The copies are visible to the calling thread only: other threads need a __syncthreads() after it.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  static_assert(N >= 0, "cp.async.wait_group: N >= 0");
#if BARACUDA_SIM
  ::baracuda::simt::detail::cp_async_wait(N);
#elif BARACUDA_ARCH >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#elif BARACUDA_ARCH > 0
  __trap();
#endif
}

/// cp.async.wait_all: waits for every pending cp.async of the calling thread (committed or not).
__device__ __forceinline__ void cp_async_wait_all() {
#if BARACUDA_SIM
  ::baracuda::simt::detail::cp_async_wait(-1);
#elif BARACUDA_ARCH >= 800
  asm volatile("cp.async.wait_all;\n" ::: "memory");
#elif BARACUDA_ARCH > 0
  __trap();
#endif
}

}  // namespace ptx
BARACUDA_DEVICE_NAMESPACE_END
