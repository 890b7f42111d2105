// The stack-overflow probe's kernel (stack_kernels.hpp). Plain CUDA: compiles with nvcc and against the emulator.
#include "sim/compat.cuh"

#include "finish_launch.hpp"
#include "stack_kernels.hpp"

#if BARACUDA_SIM
#define SIMTEST_NOINLINE __attribute__((noinline))
#else
#define SIMTEST_NOINLINE __noinline__
#endif

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace stack_probe {

constexpr int kThreads = 64;
constexpr int kPatternWords = 10 * 1024;  // 40 KiB

__device__ __forceinline__ unsigned pattern_word(unsigned t, int i) {
  return (t * 0x9E3779B9u) ^ static_cast<unsigned>(i);
}

// A local array larger than what is left of the stack, of which only the first KiB (the frame's lowest
// addresses, the farthest from the caller) is written.
template <int kBytes>
SIMTEST_NOINLINE __device__ unsigned overflow_stack() {
  volatile unsigned char big[kBytes];
  for (int i = 0; i < 1024; ++i) big[i] = 0xEE;
  return big[1000];
}

template <int kBytes>
SIMTEST_NOINLINE __device__ int hold_pattern(unsigned long long* where) {
  volatile unsigned pattern[kPatternWords];
  const unsigned t = threadIdx.x;
  for (int i = 0; i < kPatternWords; ++i) pattern[i] = pattern_word(t, i);
  where[t] = reinterpret_cast<unsigned long long>(&pattern[0]);
  __syncthreads();
  // The overflowing thread: the one closest above another thread's stack (on the emulator, stacks whose
  // mappings are adjacent), so that what lies below its stack is that thread's stack.
  int chosen = 0;
  unsigned long long closest = ~0ull;
  for (int a = 0; a < kThreads; ++a)
    for (int b = 0; b < kThreads; ++b)
      if (where[a] > where[b] && where[a] - where[b] < closest) closest = where[a] - where[b], chosen = a;
  __syncthreads();  // every thread has read `where` before the chosen one may change it
  if (static_cast<int>(t) == chosen && overflow_stack<kBytes>() != 0xEE) where[t] = 0;
  __syncthreads();
  int damaged = 0;
  for (int i = 0; i < kPatternWords; ++i) damaged += pattern[i] != pattern_word(t, i);
  return damaged;
}

template <int kBytes>
__global__ void stack_overflow_kernel(unsigned long long* where, int* damaged) {
  damaged[threadIdx.x] = hold_pattern<kBytes>(where);
}

}  // namespace stack_probe
BARACUDA_DEVICE_NAMESPACE_END

namespace simtest {
namespace k = baracuda::stack_probe;

LaunchError stack_overflow(int array_kib, unsigned long long* where, int* damaged) {
  switch (array_kib) {
    case 48: return launch(1, k::kThreads, k::stack_overflow_kernel<48 * 1024>, where, damaged);
    case 160: return launch(1, k::kThreads, k::stack_overflow_kernel<160 * 1024>, where, damaged);
    case 240: return launch(1, k::kThreads, k::stack_overflow_kernel<240 * 1024>, where, damaged);
    case 352: return launch(1, k::kThreads, k::stack_overflow_kernel<352 * 1024>, where, damaged);
    default: return {true, cudaErrorInvalidValue, "stack_overflow: unsupported array size"};
  }
}

}  // namespace simtest
