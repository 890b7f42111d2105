// What the tuning programs share: a CUDA-call check that exits with the failing call's location, device 0's
// properties and launch context, and the
// timing rule of the profiler (3 warm-up launches, then the median of `repeat` CUDA-event-timed launches,
// the L2 flushed by a memset of twice its size before each, outside the timed region).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/exec_context.hpp"

#define TUNING_CHECK(x)                                                                       \
  do {                                                                                        \
    const cudaError_t e_ = (x);                                                               \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

namespace tuning {

/// Device 0: its properties, L2 size in bytes, and the launch context the kernels take.
struct GpuDevice {
  cudaDeviceProp prop{};
  int l2_bytes = 0;
  baracuda::detail::ExecContext ctx;
};

inline GpuDevice gpu_device() {
  GpuDevice d;
  TUNING_CHECK(cudaSetDevice(0));
  TUNING_CHECK(cudaGetDeviceProperties(&d.prop, 0));
  TUNING_CHECK(cudaDeviceGetAttribute(&d.l2_bytes, cudaDevAttrL2CacheSize, 0));
  d.ctx.device = baracuda::DeviceKind::Cuda;
  d.ctx.sm = d.prop.major * 10 + d.prop.minor;
  d.ctx.multiprocessor_count = d.prop.multiProcessorCount;
  return d;
}

/// Median time in µs of `launch()` on the default stream; `flush` is a device buffer of `flush_bytes`.
template <class F>
double median_us(void* flush, size_t flush_bytes, F&& launch, int repeat) {
  cudaEvent_t e0, e1;
  TUNING_CHECK(cudaEventCreate(&e0));
  TUNING_CHECK(cudaEventCreate(&e1));
  for (int i = 0; i < 3; ++i) launch();
  TUNING_CHECK(cudaDeviceSynchronize());
  std::vector<double> t;
  for (int i = 0; i < repeat; ++i) {
    TUNING_CHECK(cudaMemsetAsync(flush, i & 0xff, flush_bytes));
    TUNING_CHECK(cudaEventRecord(e0));
    launch();
    TUNING_CHECK(cudaEventRecord(e1));
    TUNING_CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    TUNING_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    t.push_back(ms * 1e3);
  }
  TUNING_CHECK(cudaEventDestroy(e0));
  TUNING_CHECK(cudaEventDestroy(e1));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace tuning
