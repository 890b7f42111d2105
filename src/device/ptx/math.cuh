/// \file
/// \brief Approximate math instructions: ex2.approx.ftz.f32, the base-2 exponential of the attention kernels'
/// online softmax. Real inline PTX under nvcc; under sim the correctly rounded value with the same flushing, which
/// can differ from the hardware's approximation in the last bits (docs/ptx.md).
#pragma once

#include "sim/compat.cuh"
#if BARACUDA_SIM
#include "sim/emu/ptx_emulation.hpp"
#endif

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace ptx {

/// ex2.approx.ftz.f32: 2^x, subnormal inputs read as zero and subnormal results flushed to +0. One MUFU.EX2: exp2f,
/// which keeps subnormal results, adds a compare and two multiplications around it (docs/perf/2026-11-29-sass).
__device__ __forceinline__ float ex2_approx_ftz(float x) {
#if BARACUDA_SIM
  return ::baracuda::simt::ptx::ex2_approx_ftz(x);
#elif BARACUDA_ARCH > 0
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
#else
  return x;  // the nvcc host pass: never called
#endif
}

}  // namespace ptx
BARACUDA_DEVICE_NAMESPACE_END
