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

/// cvt.rn.f16x2.f32 d, hi, lo: `lo` rounded to f16 in bits [15:0], `hi` in bits [31:16].
__device__ __forceinline__ unsigned cvt_rn_f16x2_bits(float lo, float hi) {
#if BARACUDA_SIM
  return static_cast<unsigned>(::baracuda::simt::ptx::cvt_rn_f16_f32(lo)) |
         (static_cast<unsigned>(::baracuda::simt::ptx::cvt_rn_f16_f32(hi)) << 16);
#elif BARACUDA_ARCH >= 800
  unsigned d;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(d) : "f"(hi), "f"(lo));
  return d;
#else
  (void)lo, (void)hi;
#if BARACUDA_ARCH > 0
  __trap();
#endif
  return 0;
#endif
}

/// cvt.rn.bf16x2.f32 d, hi, lo: `lo` rounded to bf16 in bits [15:0], `hi` in bits [31:16].
__device__ __forceinline__ unsigned cvt_rn_bf16x2_bits(float lo, float hi) {
#if BARACUDA_SIM
  return static_cast<unsigned>(::baracuda::simt::ptx::cvt_rn_bf16_f32(lo)) |
         (static_cast<unsigned>(::baracuda::simt::ptx::cvt_rn_bf16_f32(hi)) << 16);
#elif BARACUDA_ARCH >= 800
  unsigned d;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(d) : "f"(hi), "f"(lo));
  return d;
#else
  (void)lo, (void)hi;
#if BARACUDA_ARCH > 0
  __trap();
#endif
  return 0;
#endif
}

/// The same conversions as typed pairs: .x = lo, .y = hi.
__device__ __forceinline__ __half2 cvt_rn_f16x2(float lo, float hi) {
  const unsigned u = cvt_rn_f16x2_bits(lo, hi);
  __half2_raw r;
  r.x = static_cast<unsigned short>(u & 0xffffu);
  r.y = static_cast<unsigned short>(u >> 16);
  return __half2(r);
}
__device__ __forceinline__ __nv_bfloat162 cvt_rn_bf16x2(float lo, float hi) {
  const unsigned u = cvt_rn_bf16x2_bits(lo, hi);
  __nv_bfloat162_raw r;
  r.x = static_cast<unsigned short>(u & 0xffffu);
  r.y = static_cast<unsigned short>(u >> 16);
  return __nv_bfloat162(r);
}

}  // namespace ptx
BARACUDA_DEVICE_NAMESPACE_END
