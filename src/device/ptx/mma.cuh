/// \file
/// \brief mma.sync wrappers: m16n8k32 s8/u8 x s8/u8 -> s32 and m16n8k16 f16/bf16 -> f32 (sm_80+), m16n8k32
/// e4m3/e5m2 x e4m3/e5m2 -> f32 (sm_89+), row.col.
/// Real inline PTX under nvcc; under sim an emulation over warp_collective (sim/emu/ptx_emulation.hpp).
/// Fragment layouts and the emulation's guarantees: docs/ptx.md. All 32 lanes of the warp must execute the
/// call with converged control flow.
#pragma once

#include <cuda_fp8.h>

#include <cstdint>
#include <type_traits>

#include "sim/compat.cuh"
#if BARACUDA_SIM
#include "sim/emu/ptx_emulation.hpp"
#endif

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace ptx {

#define BARACUDA_PTX_MMA_I8(TA, TB)                                                                   \
  asm volatile("mma.sync.aligned.m16n8k32.row.col.s32." TA "." TB                                  \
               ".s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"         \
               : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])                                     \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), \
                 "r"(c[2]), "r"(c[3]))

/// D = A * B + C, A 16x32 (row), B 32x8 (col), 8-bit integers (TA, TB each std::int8_t or std::uint8_t),
/// exact s32 accumulate with wrap-around. a: 4 registers of 4 elements, b: 2 registers, c/d: 4 s32.
/// `d` may alias `c`.
template <class TA, class TB>
__device__ __forceinline__ void mma_m16n8k32(int (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2],
                                             const int (&c)[4]) {
  static_assert(std::is_same_v<TA, std::int8_t> || std::is_same_v<TA, std::uint8_t>, "TA: int8_t or uint8_t");
  static_assert(std::is_same_v<TB, std::int8_t> || std::is_same_v<TB, std::uint8_t>, "TB: int8_t or uint8_t");
  constexpr bool kAs = std::is_same_v<TA, std::int8_t>, kBs = std::is_same_v<TB, std::int8_t>;
#if BARACUDA_SIM
  ::baracuda::simt::ptx::mma_m16n8k32<kAs, kBs>(d, a, b, c);
#elif BARACUDA_ARCH >= 800
  if constexpr (kAs && kBs) {
    BARACUDA_PTX_MMA_I8("s8", "s8");
  } else if constexpr (kAs && !kBs) {
    BARACUDA_PTX_MMA_I8("s8", "u8");
  } else if constexpr (!kAs && kBs) {
    BARACUDA_PTX_MMA_I8("u8", "s8");
  } else {
    BARACUDA_PTX_MMA_I8("u8", "u8");
  }
#elif BARACUDA_ARCH > 0
  (void)kAs, (void)kBs, (void)d, (void)a, (void)b, (void)c;
  __trap();  // mma.sync.m16n8k32 with 8-bit integers needs sm_80
#endif
}
#undef BARACUDA_PTX_MMA_I8

#define BARACUDA_PTX_MMA_F16(T)                                                                       \
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." T "." T                                    \
               ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"         \
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])                                     \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), \
                 "f"(c[2]), "f"(c[3]))

/// D = A * B + C, A 16x16 (row), B 16x8 (col), T = __half or __nv_bfloat16 for both, f32 accumulate.
/// a: 4 registers of 2 elements, b: 2 registers, c/d: 4 f32. `d` may alias `c`.
template <class T>
__device__ __forceinline__ void mma_m16n8k16(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2],
                                             const float (&c)[4]) {
  static_assert(std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>, "T: __half or __nv_bfloat16");
  constexpr bool kBf16 = std::is_same_v<T, __nv_bfloat16>;
#if BARACUDA_SIM
  ::baracuda::simt::ptx::mma_m16n8k16<kBf16>(d, a, b, c);
#elif BARACUDA_ARCH >= 800
  if constexpr (kBf16) {
    BARACUDA_PTX_MMA_F16("bf16");
  } else {
    BARACUDA_PTX_MMA_F16("f16");
  }
#elif BARACUDA_ARCH > 0
  (void)kBf16, (void)d, (void)a, (void)b, (void)c;
  __trap();  // mma.sync.m16n8k16 with f32 accumulate needs sm_80
#endif
}
#undef BARACUDA_PTX_MMA_F16

#define BARACUDA_PTX_MMA_FP8(TA, TB)                                                                  \
  asm volatile("mma.sync.aligned.m16n8k32.row.col.f32." TA "." TB                                  \
               ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"         \
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])                                     \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), \
                 "f"(c[2]), "f"(c[3]))

/// D = A * B + C, A 16x32 (row), B 32x8 (col), FP8 (TA, TB each __nv_fp8_e4m3 or __nv_fp8_e5m2, mixed pairs
/// allowed), f32 accumulate. a: 4 registers of 4 elements, b: 2 registers, c/d: 4 f32; the fragment layout is
/// the 8-bit integer m16n8k32's. `d` may alias `c`. Needs sm_89+: the hardware accumulates with fewer bits
/// than f32 (docs/ptx.md), so a caller's tolerance must allow for it.
template <class TA, class TB>
__device__ __forceinline__ void mma_m16n8k32_fp8(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2],
                                                 const float (&c)[4]) {
  static_assert(std::is_same_v<TA, __nv_fp8_e4m3> || std::is_same_v<TA, __nv_fp8_e5m2>,
                "TA: __nv_fp8_e4m3 or __nv_fp8_e5m2");
  static_assert(std::is_same_v<TB, __nv_fp8_e4m3> || std::is_same_v<TB, __nv_fp8_e5m2>,
                "TB: __nv_fp8_e4m3 or __nv_fp8_e5m2");
  constexpr bool kA5 = std::is_same_v<TA, __nv_fp8_e5m2>, kB5 = std::is_same_v<TB, __nv_fp8_e5m2>;
#if BARACUDA_SIM
  ::baracuda::simt::ptx::mma_m16n8k32_fp8<kA5, kB5>(d, a, b, c);
#elif BARACUDA_ARCH >= 890
  if constexpr (!kA5 && !kB5) {
    BARACUDA_PTX_MMA_FP8("e4m3", "e4m3");
  } else if constexpr (!kA5 && kB5) {
    BARACUDA_PTX_MMA_FP8("e4m3", "e5m2");
  } else if constexpr (kA5 && !kB5) {
    BARACUDA_PTX_MMA_FP8("e5m2", "e4m3");
  } else {
    BARACUDA_PTX_MMA_FP8("e5m2", "e5m2");
  }
#elif BARACUDA_ARCH > 0
  (void)kA5, (void)kB5, (void)d, (void)a, (void)b, (void)c;
  __trap();  // mma.sync.m16n8k32 with e4m3/e5m2 needs sm_89; an sm_80/sm_86 pass traps
#endif
}
#undef BARACUDA_PTX_MMA_FP8

}  // namespace ptx
BARACUDA_DEVICE_NAMESPACE_END
