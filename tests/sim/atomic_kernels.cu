// Atomics under contention, for the emulator self-test. Plain CUDA: compiles with nvcc too.
#include "sim/compat.cuh"

#include "selftest_kernels.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace selftest {

__global__ void atomics_kernel(simtest::AtomicCounters* c) {
  const int g = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const unsigned ug = static_cast<unsigned>(g);
  atomicAdd(&c->i_add, 1);
  atomicSub(&c->i_sub, 2);
  atomicMax(&c->i_max, g);
  atomicMin(&c->i_min, -g);
  atomicAnd(&c->i_and, ~(1 << (g % 31)));
  atomicOr(&c->i_or, 1 << (g % 31));
  atomicXor(&c->i_xor, g);
  const int old = atomicExch(&c->exch_slot, g);
  atomicAdd(&c->i_exch_sum, old);
  atomicAdd(&c->u_add, 3u);
  atomicInc(&c->u_inc, 9u);
  atomicDec(&c->u_dec, 9u);
  atomicMax(&c->u_max, ug * 2654435761u);
  atomicMin(&c->u_min, ug * 2654435761u + 12345u);
  atomicAdd(&c->ull_add, static_cast<unsigned long long>(g) << 20);
  atomicMax(&c->ull_max, static_cast<unsigned long long>(ug * 2654435761u) << 16);
  atomicMin(&c->ll_min, -static_cast<long long>(g) * 1000000007LL);
  atomicMax(&c->ll_max, static_cast<long long>(g % 1000) * 1000000007LL);
  // A compare-and-swap loop: multiply by 3 modulo 2^64.
  unsigned long long seen = c->ull_cas_mul, assumed;
  do {
    assumed = seen;
    seen = atomicCAS(&c->ull_cas_mul, assumed, assumed * 3ull);
  } while (seen != assumed);
  int iseen = c->i_cas_add, iassumed;
  do {
    iassumed = iseen;
    iseen = atomicCAS(&c->i_cas_add, iassumed, iassumed + 1);
  } while (iseen != iassumed);
  atomicAdd(&c->f_add, 1.0f);
  atomicAdd(&c->d_add, 0.5);
  if (g < 64) {  // 16-bit sums stay exact up to here
    atomicAdd(&c->h_add, __float2half(1.0f));
    atomicAdd(&c->h2_add, __floats2half2_rn(1.0f, 2.0f));
    atomicAdd(&c->bf_add, __float2bfloat16(1.0f));
    atomicAdd(&c->bf2_add, __floats2bfloat162_rn(1.0f, 2.0f));
  }
}

}  // namespace selftest
BARACUDA_DEVICE_NAMESPACE_END

namespace simtest {

LaunchError atomics_contention(AtomicCounters* c, int blocks, int threads) {
  BARACUDA_LAUNCH(blocks, threads, 0, 0, baracuda::selftest::atomics_kernel)(c);
#if !BARACUDA_SIM
  cudaDeviceSynchronize();
#endif
  return baracuda::launch::take_last_error();
}

}  // namespace simtest
