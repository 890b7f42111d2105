/// \file
/// \brief Warpgroup MMA (sm_90a): wgmma.mma_async.sync.aligned.m64nNk32.s32.{s8,u8}.{s8,u8} with A and B
/// in shared memory (K-major, the only layout the ISA allows for 8-bit operands), the shared-memory matrix
/// descriptor, wgmma.fence / commit_group / wait_group, fence.proxy.async.shared::cta, and setmaxnreg (the
/// register split between a producer warpgroup and its consumers).
///
/// Real inline PTX under nvcc for sm_90a (compute_90a: __CUDA_ARCH_FEAT_SM90_ALL); any other nvcc target
/// traps. Under sim an exact emulation (sim/emu/wgmma_emulation.hpp: an mma_async is recorded, and each
/// thread computes its accumulator fragment from the shared memory the descriptors address when a
/// wait_group retires it — the latest moment the hardware may read; exact for every correct program, see
/// there).
///
/// Shapes and layouts (PTX ISA "Asynchronous Warpgroup Level Matrix" sections):
/// - the 4 consecutive warps 4j..4j+3 of the block form a warpgroup; all 128 threads execute every call;
/// - A is 64×32 (M×K), B is N×32 (N×K; the instruction computes D = A·Bᵀ in these terms), 8-bit integers,
///   each K-major in shared memory as a descriptor describes it (wgmma_desc);
/// - D: N/2 s32 per thread. Warp w of the warpgroup owns rows 16w..16w+15; lane l (g = l/4, q = l%4) holds
///   d[i] at row 16w + g + 8·((i >> 1) & 1), column 8·(i >> 2) + 2q + (i & 1) (the m16n8 accumulator
///   fragment of mma.sync repeated over N/8). scale_d = false: D = A·Bᵀ; true: D += A·Bᵀ (s32 wrap-around).
///
/// Protocol (as the ISA requires): wgmma_fence() before the first mma_async and whenever the accumulator
/// registers were touched since; mma_async ...; wgmma_commit(); wgmma_wait<n>() before reading the
/// accumulators (after wgmma_fence_operand(d), which stops the compiler from moving their reads above the
/// wait) or overwriting the shared memory the retired operations read. Shared memory written by ordinary
/// stores or cp.async needs fence_proxy_async_shared() in the writing threads, then a barrier, before a
/// wgmma reads it.
#pragma once

#include <cstdint>
#include <type_traits>

#include "device/ptx/ldmatrix.cuh"  // smem_address
#include "sim/compat.cuh"
#if BARACUDA_SIM
#include "sim/emu/wgmma_emulation.hpp"
#endif

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace ptx {

/// Swizzle modes of a matrix descriptor (bits 63:62), named by the width of the swizzled row.
enum class WgmmaSwizzle : unsigned { None = 0, B128 = 1, B64 = 2, B32 = 3 };

/// The 64-bit shared-memory matrix descriptor (PTX ISA "Matrix Descriptor Format"):
///   bits 13:0  (start address & 0x3FFFF) >> 4      bits 29:16 (leading dimension byte offset) >> 4
///   bits 45:32 (stride dimension byte offset) >> 4 bits 51:49 base offset   bits 63:62 swizzle mode
/// `start` is a shared-window address (smem_address). K-major operands: SBO is the byte distance between
/// consecutive groups of 8 rows; LBO, only with no swizzle, the distance between the two 16-byte halves of
/// the 32 K bytes (with a swizzle it is unused, and set to 16 bytes, encoded 1, as the ISA assumes). Base
/// offset 0: the swizzle pattern repeats on 1024-byte (128B mode), 512-byte (64B) or 256-byte (32B)
/// boundaries of the address, i.e. a swizzled tile starts on such a boundary (the start may then be
/// advanced within the row, e.g. by 32 bytes per k-step).
__host__ __device__ constexpr std::uint64_t wgmma_desc(unsigned start, unsigned lbo, unsigned sbo, WgmmaSwizzle swizzle,
                                                       unsigned base_offset = 0) {
  return static_cast<std::uint64_t>((start & 0x3ffffu) >> 4) |
         (static_cast<std::uint64_t>((lbo & 0x3ffffu) >> 4) << 16) |
         (static_cast<std::uint64_t>((sbo & 0x3ffffu) >> 4) << 32) |
         (static_cast<std::uint64_t>(base_offset & 7u) << 49) | (static_cast<std::uint64_t>(swizzle) << 62);
}

/// A dynamic shared buffer's first byte on a 1024-byte boundary of the shared window (where the 128B swizzle
/// of wgmma descriptors and TMA boxes repeats), as a pointer and as its window address. Allocate 1 KiB of
/// slack: the buffer is only promised 16-byte alignment.
struct SharedAligned1024 {
  unsigned char* ptr;
  unsigned addr;
};
__device__ __forceinline__ SharedAligned1024 align_shared_1024(unsigned char* raw) {
  const unsigned a = smem_address(raw);
  const unsigned pad = (1024u - (a & 1023u)) & 1023u;
  return {raw + pad, a + pad};
}

/// The descriptor with its start address advanced by `bytes` (a multiple of 16; no carry out of bits 13:0
/// for addresses within the 256 KiB window).
__host__ __device__ constexpr std::uint64_t wgmma_desc_advance(std::uint64_t desc, unsigned bytes) {
  return desc + (bytes >> 4);
}

/// wgmma.fence.sync.aligned: orders the warpgroup's earlier register accesses (accumulators) and shared
/// memory accesses before the following wgmma.mma_async.
__device__ __forceinline__ void wgmma_fence() {
#if BARACUDA_SIM
#elif defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#elif BARACUDA_ARCH > 0
  __trap();  // wgmma needs sm_90a
#endif
}

/// wgmma.commit_group.sync.aligned: closes the warpgroup's pending wgmma.mma_async operations into a group.
__device__ __forceinline__ void wgmma_commit() {
#if BARACUDA_SIM
  ::baracuda::simt::ptx::wgmma_commit_group();
#elif defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#elif BARACUDA_ARCH > 0
  __trap();
#endif
}

/// wgmma.wait_group.sync.aligned N: waits until at most N of the warpgroup's most recent groups are pending.
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  static_assert(N >= 0 && N <= 7, "wgmma.wait_group: N in [0, 7]");
#if BARACUDA_SIM
  ::baracuda::simt::ptx::wgmma_wait_group(N);
#elif defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#elif BARACUDA_ARCH > 0
  __trap();
#endif
}

/// A compiler barrier on each accumulator register: call after wgmma_wait (before reading them) and before
/// wgmma_fence, so that the compiler neither reads them early nor moves them between wgmmas.
template <int R>
__device__ __forceinline__ void wgmma_fence_operand(int (&d)[R]) {
#if BARACUDA_SIM
  (void)d;
#elif BARACUDA_ARCH > 0
BARACUDA_UNROLL
  for (int i = 0; i < R; ++i) asm volatile("" : "+r"(d[i])::"memory");
#else
  (void)d;
#endif
}

/// fence.proxy.async.shared::cta: makes this thread's earlier generic-proxy writes to shared memory (plain
/// stores, cp.async once waited for) visible to the async proxy (wgmma operand reads, bulk copies). Follow
/// it with a barrier so that the whole block's writes are covered. No-op under sim.
__device__ __forceinline__ void fence_proxy_async_shared() {
#if BARACUDA_SIM
#elif BARACUDA_ARCH >= 900
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#elif BARACUDA_ARCH > 0
  __trap();  // fence.proxy.async needs sm_90
#endif
}

/// setmaxnreg.dec / .inc.sync.aligned.u32 N (sm_90a): the warpgroup gives back registers (a producer that
/// only issues copies) or takes them (consumers holding large accumulators), N a multiple of 8 in [24, 256].
/// Every thread of the warpgroup executes it. No-op under sim.
template <int N, bool kClaim>
__device__ __forceinline__ void setmaxnreg() {
  static_assert(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg: a multiple of 8 in [24, 256]");
#if BARACUDA_SIM
#elif defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if constexpr (kClaim) asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
  else asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
#elif BARACUDA_ARCH > 0
  __trap();
#endif
}
template <int N>
__device__ __forceinline__ void warpgroup_release_registers() {
  setmaxnreg<N, false>();
}
template <int N>
__device__ __forceinline__ void warpgroup_claim_registers() {
  setmaxnreg<N, true>();
}

#define BARACUDA_WGMMA_D64_REGS \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"

#define BARACUDA_WGMMA_D128_REGS \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"

#define BARACUDA_WGMMA_D256_REGS \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, " \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}"

#define BARACUDA_WGMMA_OPS4(i) "+r"(d[i]), "+r"(d[(i) + 1]), "+r"(d[(i) + 2]), "+r"(d[(i) + 3])
#define BARACUDA_WGMMA_OPS16(i) \
  BARACUDA_WGMMA_OPS4(i), BARACUDA_WGMMA_OPS4((i) + 4), BARACUDA_WGMMA_OPS4((i) + 8), BARACUDA_WGMMA_OPS4((i) + 12)
#define BARACUDA_WGMMA_OPS32(i) BARACUDA_WGMMA_OPS16(i), BARACUDA_WGMMA_OPS16((i) + 16)
#define BARACUDA_WGMMA_OPS64(i) BARACUDA_WGMMA_OPS32(i), BARACUDA_WGMMA_OPS32((i) + 32)
#define BARACUDA_WGMMA_OPS128(i) BARACUDA_WGMMA_OPS64(i), BARACUDA_WGMMA_OPS64((i) + 64)

// The accumulator operands come first (%0 .. %N/2-1), then desc-a, desc-b and the scale-d flag.
#define BARACUDA_PTX_WGMMA_I8(NN, IA, IB, IS, TA, TB, ...)                                                  \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" IS ", 0;\n"                                          \
               "wgmma.mma_async.sync.aligned.m64n" #NN "k32.s32." TA "." TB " " BARACUDA_WGMMA_D##NN##_REGS \
               ", %" IA ", %" IB ", p;\n}\n"                                                               \
               : __VA_ARGS__                                                                              \
               : "l"(desc_a), "l"(desc_b), "r"(scale)                                                     \
               : "memory")

#define BARACUDA_PTX_WGMMA_I8_N(TA, TB)                                                      \
  if constexpr (N == 64) {                                                                   \
    BARACUDA_PTX_WGMMA_I8(64, "32", "33", "34", TA, TB, BARACUDA_WGMMA_OPS32(0));            \
  } else if constexpr (N == 128) {                                                           \
    BARACUDA_PTX_WGMMA_I8(128, "64", "65", "66", TA, TB, BARACUDA_WGMMA_OPS64(0));           \
  } else {                                                                                   \
    BARACUDA_PTX_WGMMA_I8(256, "128", "129", "130", TA, TB, BARACUDA_WGMMA_OPS128(0));       \
  }

/// wgmma.mma_async.sync.aligned.m64nNk32.s32.TA.TB d, desc_a, desc_b, scale_d (N ∈ {64, 128, 256};
/// TA, TB each std::int8_t or std::uint8_t). Asynchronous: see the file comment for the protocol.
template <int N, class TA, class TB>
__device__ __forceinline__ void wgmma_m64nNk32(int (&d)[N / 2], std::uint64_t desc_a, std::uint64_t desc_b,
                                               bool scale_d) {
  static_assert(N == 64 || N == 128 || N == 256, "wgmma m64nNk32 wrapper: N in {64, 128, 256}");
  static_assert(std::is_same_v<TA, std::int8_t> || std::is_same_v<TA, std::uint8_t>, "TA: int8_t or uint8_t");
  static_assert(std::is_same_v<TB, std::int8_t> || std::is_same_v<TB, std::uint8_t>, "TB: int8_t or uint8_t");
  constexpr bool kAs = std::is_same_v<TA, std::int8_t>, kBs = std::is_same_v<TB, std::int8_t>;
#if BARACUDA_SIM
  ::baracuda::simt::ptx::wgmma_m64nNk32<N, kAs, kBs>(d, desc_a, desc_b, scale_d);
#elif defined(__CUDA_ARCH_FEAT_SM90_ALL)
  const int scale = scale_d ? 1 : 0;
  if constexpr (kAs && kBs) {
    BARACUDA_PTX_WGMMA_I8_N("s8", "s8")
  } else if constexpr (kAs && !kBs) {
    BARACUDA_PTX_WGMMA_I8_N("s8", "u8")
  } else if constexpr (!kAs && kBs) {
    BARACUDA_PTX_WGMMA_I8_N("u8", "s8")
  } else {
    BARACUDA_PTX_WGMMA_I8_N("u8", "u8")
  }
#elif BARACUDA_ARCH > 0
  (void)kAs, (void)kBs, (void)d, (void)desc_a, (void)desc_b, (void)scale_d;
  __trap();  // wgmma needs sm_90a (compile with -gencode=arch=compute_90a,code=sm_90a)
#else
  (void)kAs, (void)kBs, (void)d, (void)desc_a, (void)desc_b, (void)scale_d;
#endif
}

#undef BARACUDA_PTX_WGMMA_I8_N
#undef BARACUDA_PTX_WGMMA_I8
#undef BARACUDA_WGMMA_OPS128
#undef BARACUDA_WGMMA_OPS64
#undef BARACUDA_WGMMA_OPS32
#undef BARACUDA_WGMMA_OPS16
#undef BARACUDA_WGMMA_OPS4
#undef BARACUDA_WGMMA_D64_REGS
#undef BARACUDA_WGMMA_D128_REGS
#undef BARACUDA_WGMMA_D256_REGS

}  // namespace ptx
BARACUDA_DEVICE_NAMESPACE_END
