/// \file
/// \brief The one header every kernel source includes. The same kernel code then compiles in two modes:
///
///  * nvcc mode (__CUDACC__ defined): plain CUDA.
///  * sim mode (a host C++ compiler; .cu files are compiled with -x c++): the kernels run on the SIMT
///    emulator in src/sim/emu (fibers for CUDA threads, exact warp-collective semantics, synchronous
///    launches). See docs/sim.md.
///
/// Macros (both modes):
///   BARACUDA_LAUNCH(grid, block, smem_bytes, stream, kernel...)(args...)
///       launches `kernel` (last, so that template commas are fine: my_kernel<T, 4>). In sim mode the grid
///       runs synchronously on the CPU and the stream is ignored.
///   BARACUDA_DYNAMIC_SHARED(T, name)
///       declares `T* name` pointing at the block's dynamic shared memory (16-byte aligned).
///   BARACUDA_SHARED(T, name[, extents])
///       declares a static shared variable at function scope: `BARACUDA_SHARED(float, tile, [32][33]);` is
///       `__shared__ float tile[32][33];`. In sim mode it is poisoned (0xCD bytes) at the start of every
///       block; a bare `__shared__` does not compile there.
///   BARACUDA_DEVICE_NAMESPACE_BEGIN / BARACUDA_DEVICE_NAMESPACE_END
///       wrap all device code: namespace baracuda { inline namespace BARACUDA_DEVICE_ABI { ... } }, so the
///       cuda and sim compilations of the same kernels can be linked into one library.
///   BARACUDA_DEVICE_ABI   device_cuda | device_sim
///   BARACUDA_ARCH         __CUDA_ARCH__ in nvcc device passes, 0 in the nvcc host pass, 900 in sim mode
///   BARACUDA_SIM          0 | 1
/// Function (both modes):
///   baracuda::launch::LaunchError baracuda::launch::take_last_error();
///       returns and clears the last launch error of this host thread (cudaGetLastError() in nvcc mode;
///       the emulator's error in sim mode: deadlock, strict-mode violation, __trap(), bad configuration).
#pragma once

#include "launch_error.hpp"

#if defined(__CUDACC__)

#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#define BARACUDA_SIM 0
#if defined(__CUDA_ARCH__)
#define BARACUDA_ARCH __CUDA_ARCH__
#else
#define BARACUDA_ARCH 0
#endif
#define BARACUDA_DEVICE_ABI device_cuda

#define BARACUDA_LAUNCH(grid, block, smem_bytes, stream, ...) __VA_ARGS__<<<(grid), (block), (smem_bytes), (stream)>>>
#define BARACUDA_DYNAMIC_SHARED(T, name)                                   \
  extern __shared__ __align__(16) unsigned char baracuda_dynamic_smem_[]; \
  T* name = reinterpret_cast<T*>(baracuda_dynamic_smem_)
#define BARACUDA_SHARED(T, name, ...) __shared__ T name __VA_ARGS__

namespace baracuda::launch {
inline namespace BARACUDA_DEVICE_ABI {
inline LaunchError take_last_error() {
  const cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) return {};
  return {true, static_cast<int>(e), cudaGetErrorString(e)};
}
}  // namespace BARACUDA_DEVICE_ABI
}  // namespace baracuda::launch

#else  // sim mode

// The CUDA headers first (they are host-includable), then the emulator, then the keyword macros: the
// headers define __shared__ & co. as attributes that a host compiler ignores.
#include "emu/emulator.hpp"

#undef __shared__
#undef __device__
#undef __host__
#undef __global__
#undef __constant__
#undef __managed__
#undef __grid_constant__
#undef __launch_bounds__
#undef __maxnreg__
#undef __cluster_dims__
#undef __forceinline__
// Static shared memory is declared with BARACUDA_SHARED: every fiber of a block runs on one worker thread
// and blocks on different workers get different copies, so thread_local storage is exactly per-block shared
// memory; the registration (once per worker, when control first passes the declaration) lets the scheduler
// poison it before every block. A bare __shared__ could not be poisoned: it does not compile.
#define __shared__ \
  static_assert(false, "sim: declare static shared memory with BARACUDA_SHARED(type, name[, extents])");
#define __device__
#define __host__
#define __global__
#define __constant__
#define __managed__
#define __grid_constant__
#define __launch_bounds__(...)
#define __maxnreg__(...)
#define __cluster_dims__(...)
#define __forceinline__ inline __attribute__((always_inline))

#define BARACUDA_SIM 1
#define BARACUDA_ARCH 900
#define BARACUDA_DEVICE_ABI device_sim

#define BARACUDA_LAUNCH(grid, block, smem_bytes, stream, ...) \
  ::baracuda::simt::launcher((grid), (block), (smem_bytes), (stream), __VA_ARGS__)
#define BARACUDA_DYNAMIC_SHARED(T, name) \
  T* name = reinterpret_cast<T*>(::baracuda::simt::detail::dynamic_smem())
#define BARACUDA_SHARED(T, name, ...)      \
  static thread_local T name __VA_ARGS__; \
  [[maybe_unused]] static thread_local const bool baracuda_shared_##name =      \
      ::baracuda::simt::detail::register_shared(&name, sizeof(name))

namespace baracuda::launch {
inline namespace BARACUDA_DEVICE_ABI {
inline LaunchError take_last_error() { return ::baracuda::simt::take_last_error(); }
}  // namespace BARACUDA_DEVICE_ABI
}  // namespace baracuda::launch

#endif

/// `#pragma unroll` for nvcc; nothing for host compilers (which would warn about an unknown pragma).
/// BARACUDA_UNROLL_BY(n): `#pragma unroll n`, n an integral constant expression (a template argument may be).
#if defined(__CUDACC__)
#define BARACUDA_UNROLL _Pragma("unroll")
#define BARACUDA_PRAGMA_(x) _Pragma(#x)
#define BARACUDA_UNROLL_BY(n) BARACUDA_PRAGMA_(unroll n)
#else
#define BARACUDA_UNROLL
#define BARACUDA_UNROLL_BY(n)
#endif

#define BARACUDA_DEVICE_NAMESPACE_BEGIN \
  namespace baracuda {                  \
  inline namespace BARACUDA_DEVICE_ABI {
#define BARACUDA_DEVICE_NAMESPACE_END \
  }                                   \
  }
