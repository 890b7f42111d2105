/// \file
/// \brief Byte permute and three-input logic (prmt.b32, lop3.b32), as the 4-bit dequantization uses them
/// (e.g. lop3 (x & 0x000f000f) | 0x64006400 to build f16 magic numbers, prmt to spread or sign-extend
/// bytes). Real inline PTX under nvcc, exact emulation under sim.
#pragma once

#include "sim/compat.cuh"
#if BARACUDA_SIM
#include "sim/emu/ptx_emulation.hpp"
#endif

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace ptx {

/// prmt.b32 d, a, b, c (default mode): byte i of d is chosen by nibble i of c: bits [2:0] index the 8 bytes
/// {a.b0..a.b3, b.b0..b.b3}; bit 3 set replicates the sign (bit 7) of that byte into all 8 bits.
__device__ __forceinline__ unsigned prmt(unsigned a, unsigned b, unsigned c) {
#if BARACUDA_SIM
  return ::baracuda::simt::ptx::prmt(a, b, c);
#else
  unsigned d;
  asm("prmt.b32 %0, %1, %2, %3;\n" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
#endif
}

/// lop3.b32 d, a, b, c, Lut: any bitwise function of three inputs. Build Lut by applying the function to
/// the constants a = 0xF0, b = 0xCC, c = 0xAA: e.g. (a & b) | c is Lut (0xF0 & 0xCC) | 0xAA = 0xEA.
template <unsigned char Lut>
__device__ __forceinline__ unsigned lop3(unsigned a, unsigned b, unsigned c) {
#if BARACUDA_SIM
  return ::baracuda::simt::ptx::lop3(a, b, c, Lut);
#else
  unsigned d;
  asm("lop3.b32 %0, %1, %2, %3, %4;\n" : "=r"(d) : "r"(a), "r"(b), "r"(c), "n"(static_cast<int>(Lut)));
  return d;
#endif
}

/// The Lut operand of lop3 for a function given as an expression of a, b, c (the constants 0xF0, 0xCC, 0xAA).
inline constexpr unsigned char kLop3A = 0xF0, kLop3B = 0xCC, kLop3C = 0xAA;

}  // namespace ptx
BARACUDA_DEVICE_NAMESPACE_END
