/// \file
/// \brief ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{,.trans}.shared.b16 (sm_75+). Real inline PTX under nvcc;
/// under sim an emulation over warp_collective that gathers the rows from each lane's address (the
/// emulator's shared memory is ordinary memory). Layout: docs/ptx.md. All 32 lanes must execute the call.
#pragma once

#include "sim/compat.cuh"
#if BARACUDA_SIM
#include "sim/emu/ptx_emulation.hpp"
#include "sim/emu/wgmma_emulation.hpp"
#endif

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace ptx {

/// Shared-window address of a generic pointer to shared memory (the operand form of .shared instructions,
/// and the start address of a wgmma descriptor). Under sim only dynamic shared memory has one (window
/// addresses from simt::ptx::kSharedWindowBase, see sim/emu/wgmma_emulation.hpp); other pointers trap.
__device__ __forceinline__ unsigned smem_address(const void* p) {
#if BARACUDA_SIM
  return ::baracuda::simt::ptx::shared_window_address(p);
#else
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
#endif
}

/// Loads N (1, 2 or 4) 8x8 matrices of 16-bit elements. Lanes 8j..8j+7 give the addresses of the 8 rows of
/// matrix j (16 bytes each, 16-byte aligned, in shared memory); the other lanes' addresses are ignored.
/// r[j] of lane l holds row l/4, columns 2(l%4) and 2(l%4)+1 of matrix j (the first in the low half);
/// with Trans, column l/4 of rows 2(l%4) and 2(l%4)+1 instead.
template <int N, bool Trans = false>
__device__ __forceinline__ void ldmatrix(unsigned (&r)[N], const void* smem_row) {
  static_assert(N == 1 || N == 2 || N == 4, "ldmatrix: .x1, .x2 or .x4");
#if BARACUDA_SIM
  ::baracuda::simt::ptx::ldmatrix<N, Trans>(r, smem_row);
#elif BARACUDA_ARCH >= 750
  const unsigned s = smem_address(smem_row);
  if constexpr (N == 1 && !Trans) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n" : "=r"(r[0]) : "r"(s) : "memory");
  } else if constexpr (N == 1 && Trans) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\n" : "=r"(r[0]) : "r"(s) : "memory");
  } else if constexpr (N == 2 && !Trans) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(s)
                 : "memory");
  } else if constexpr (N == 2 && Trans) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(s)
                 : "memory");
  } else if constexpr (N == 4 && !Trans) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(s)
                 : "memory");
  } else {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(s)
                 : "memory");
  }
#elif BARACUDA_ARCH > 0
  (void)r, (void)smem_row;
  __trap();  // ldmatrix needs sm_75
#endif
}

}  // namespace ptx
BARACUDA_DEVICE_NAMESPACE_END
