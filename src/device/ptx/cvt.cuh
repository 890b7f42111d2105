/// \file
/// \brief Packing conversions for epilogues: two f32 to __half2 / __nv_bfloat162 in one instruction
/// (cvt.rn.f16x2.f32, cvt.rn.bf16x2.f32; sm_80+). Round to nearest even, overflow to infinity, NaN to the
/// canonical NaN 0x7fff. Real inline PTX under nvcc, exact emulation under sim.
#pragma once

#include "sim/compat.cuh"
#if BARACUDA_SIM
#include "sim/emu/ptx_emulation.hpp"
#endif

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace ptx {

/// The two 16-bit float formats a pair packs into.
enum class Pack16 { F16, Bf16 };

/// cvt.rn.{f16,bf16}x2.f32 d, hi, lo: `lo` rounded to the format in bits [15:0], `hi` in bits [31:16].
template <Pack16 F>
__device__ __forceinline__ unsigned cvt_rn_x2_bits(float lo, float hi) {
#if BARACUDA_SIM
  const auto round = [](float v) -> unsigned {
    if constexpr (F == Pack16::F16) return ::baracuda::simt::ptx::cvt_rn_f16_f32(v);
    else return ::baracuda::simt::ptx::cvt_rn_bf16_f32(v);
  };
  return round(lo) | (round(hi) << 16);
#elif BARACUDA_ARCH >= 800
  unsigned d;
  if constexpr (F == Pack16::F16) asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(d) : "f"(hi), "f"(lo));
  else asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(d) : "f"(hi), "f"(lo));
  return d;
#else
  (void)lo, (void)hi;
#if BARACUDA_ARCH > 0
  __trap();
#endif
  return 0;
#endif
}
__device__ __forceinline__ unsigned cvt_rn_f16x2_bits(float lo, float hi) {
  return cvt_rn_x2_bits<Pack16::F16>(lo, hi);
}
__device__ __forceinline__ unsigned cvt_rn_bf16x2_bits(float lo, float hi) {
  return cvt_rn_x2_bits<Pack16::Bf16>(lo, hi);
}

/// The same conversions as typed pairs (`Pair` built from its raw struct `Raw`): .x = lo, .y = hi.
template <Pack16 F, class Pair, class Raw>
__device__ __forceinline__ Pair cvt_rn_x2(float lo, float hi) {
  const unsigned u = cvt_rn_x2_bits<F>(lo, hi);
  Raw r;
  r.x = static_cast<unsigned short>(u & 0xffffu);
  r.y = static_cast<unsigned short>(u >> 16);
  return Pair(r);
}
__device__ __forceinline__ __half2 cvt_rn_f16x2(float lo, float hi) {
  return cvt_rn_x2<Pack16::F16, __half2, __half2_raw>(lo, hi);
}
__device__ __forceinline__ __nv_bfloat162 cvt_rn_bf16x2(float lo, float hi) {
  return cvt_rn_x2<Pack16::Bf16, __nv_bfloat162, __nv_bfloat162_raw>(lo, hi);
}

}  // namespace ptx
BARACUDA_DEVICE_NAMESPACE_END
