/// \file
/// \brief Shared-memory barriers with transaction counts (sm_90): mbarrier.init, arrive, arrive.expect_tx,
/// try_wait.parity, and fence.mbarrier_init — the handshake between a TMA producer and its consumers.
///
/// A barrier is 8 bytes of shared memory (8-byte aligned; under sim it must be dynamic shared memory). Each
/// phase completes when its `count` arrivals are in and the bulk copies it tracks have delivered the bytes
/// announced by arrive.expect_tx; the phase parity then flips. mbarrier_wait_parity(bar, P) returns once the
/// phase of parity P has completed: a consumer of stage s waits on parity (round & 1) of its "full" barrier;
/// a producer waits on parity ((round & 1) ^ 1) of its "empty" barrier, which a fresh barrier passes at once.
///
/// Real inline PTX under nvcc for sm_90 and newer (older targets trap); under sim an exact emulation
/// (sim/emu/tma_emulation.hpp, which also defers the tracked copies to the latest moment).
#pragma once

#include <cstdint>

#include "device/ptx/ldmatrix.cuh"  // smem_address
#include "sim/compat.cuh"
#if BARACUDA_SIM
#include "sim/emu/tma_emulation.hpp"
#endif

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace ptx {

/// mbarrier.init.shared::cta.b64: `count` arrivals per phase (1 ≤ count < 2^20), phase 0.
__device__ __forceinline__ void mbarrier_init(std::uint64_t* bar, unsigned count) {
#if BARACUDA_SIM
  ::baracuda::simt::ptx::mbarrier_init(bar, count);
#elif BARACUDA_ARCH >= 900
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_address(bar)), "r"(count) : "memory");
#elif BARACUDA_ARCH > 0
  (void)bar, (void)count;
  __trap();  // the transaction-count barriers need sm_90
#else
  (void)bar, (void)count;
#endif
}

/// fence.mbarrier_init.release.cluster: makes this thread's mbarrier.init visible to the other threads and
/// to the async proxy (bulk copies); follow it with a barrier before the first use. No-op under sim.
__device__ __forceinline__ void fence_mbarrier_init() {
#if BARACUDA_SIM
#elif BARACUDA_ARCH >= 900
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#elif BARACUDA_ARCH > 0
  __trap();
#endif
}

/// mbarrier.arrive.shared::cta.b64: one arrival (release semantics: this thread's earlier accesses, e.g. its
/// reads of the stage the barrier guards, happen before the phase completes).
__device__ __forceinline__ void mbarrier_arrive(std::uint64_t* bar) {
#if BARACUDA_SIM
  ::baracuda::simt::ptx::mbarrier_arrive(bar, 0);
#elif BARACUDA_ARCH >= 900
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_address(bar)) : "memory");
#elif BARACUDA_ARCH > 0
  (void)bar;
  __trap();
#else
  (void)bar;
#endif
}

/// mbarrier.arrive.expect_tx.shared::cta.b64: announces `bytes` more bytes of bulk copies for the current
/// phase, then arrives once.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(std::uint64_t* bar, unsigned bytes) {
#if BARACUDA_SIM
  ::baracuda::simt::ptx::mbarrier_arrive(bar, bytes);
#elif BARACUDA_ARCH >= 900
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_address(bar)), "r"(bytes)
               : "memory");
#elif BARACUDA_ARCH > 0
  (void)bar, (void)bytes;
  __trap();
#else
  (void)bar, (void)bytes;
#endif
}

/// mbarrier.try_wait.parity.shared::cta.b64: whether the phase of parity `parity` has completed (acquire
/// semantics: the data the phase tracked is then visible). May wait a while before returning false.
__device__ __forceinline__ bool mbarrier_try_wait_parity(std::uint64_t* bar, unsigned parity) {
#if BARACUDA_SIM
  return ::baracuda::simt::ptx::mbarrier_try_wait_parity(bar, parity);
#elif BARACUDA_ARCH >= 900
  unsigned done;
  asm volatile(
      "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(done)
      : "r"(smem_address(bar)), "r"(parity)
      : "memory");
  return done != 0;
#elif BARACUDA_ARCH > 0
  (void)bar, (void)parity;
  __trap();
  return false;
#else
  (void)bar, (void)parity;
  return false;
#endif
}

/// Waits until the phase of parity `parity` has completed (yielding under sim, where threads are fibers).
__device__ __forceinline__ void mbarrier_wait_parity(std::uint64_t* bar, unsigned parity) {
  while (!mbarrier_try_wait_parity(bar, parity)) {
#if BARACUDA_SIM
    __nanosleep(0);
#endif
  }
}

}  // namespace ptx
BARACUDA_DEVICE_NAMESPACE_END
