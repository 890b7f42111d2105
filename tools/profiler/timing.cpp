#include "timing.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace baracuda::profiler {
namespace {

Status cuda_check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return {};
  return Error::device(std::string("profiler: ") + what + ": " + cudaGetErrorString(e), e);
}

/// Two CUDA events, destroyed on scope exit.
struct EventPair {
  cudaEvent_t start = nullptr, stop = nullptr;
  ~EventPair() {
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
  }
};

/// A device buffer twice the size of the L2 cache, written before each timed run so that no run finds its
/// operands (a GEMM's weight, a small tensor) left in L2 by the previous one. Allocated once per process.
Result<std::pair<void*, size_t>> l2_flush_buffer(int device) {
  static void* buffer = nullptr;
  static size_t bytes = 0;
  if (buffer) return std::pair{buffer, bytes};
  int l2 = 0;
  BARACUDA_TRY(cuda_check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device), "cudaDeviceGetAttribute"));
  bytes = 2 * static_cast<size_t>(std::max(l2, 1 << 20));
  BARACUDA_TRY(cuda_check(cudaMalloc(&buffer, bytes), "cudaMalloc (L2 flush buffer)"));
  return std::pair{buffer, bytes};
}

Result<double> time_once_cuda(const Stream& stream, const std::function<Status()>& launch, EventPair& ev,
                              std::pair<void*, size_t> flush, int round) {
  BARACUDA_TRY(cuda_check(cudaMemsetAsync(flush.first, round & 0xff, flush.second, stream.cuda_stream()),
                          "cudaMemsetAsync (L2 flush)"));
  BARACUDA_TRY(cuda_check(cudaEventRecord(ev.start, stream.cuda_stream()), "cudaEventRecord"));
  BARACUDA_TRY(launch());
  BARACUDA_TRY(cuda_check(cudaEventRecord(ev.stop, stream.cuda_stream()), "cudaEventRecord"));
  BARACUDA_TRY(cuda_check(cudaEventSynchronize(ev.stop), "cudaEventSynchronize"));
  float ms = 0;
  BARACUDA_TRY(cuda_check(cudaEventElapsedTime(&ms, ev.start, ev.stop), "cudaEventElapsedTime"));
  return ms * 1e-3;
}

Result<double> time_once_host(const std::function<Status()>& launch) {
  const auto t0 = std::chrono::steady_clock::now();
  BARACUDA_TRY(launch());
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(t1 - t0).count();
}

}  // namespace

Result<Timing> measure(const Stream& stream, const std::function<Status()>& launch, int warmup, int repeat) {
  const bool cuda = stream.device() == DeviceKind::Cuda;
  EventPair ev;
  std::pair<void*, size_t> flush{nullptr, 0};
  if (cuda) {
    auto f = l2_flush_buffer(stream.device_index());
    if (!f) return f.error();
    flush = *f;
    BARACUDA_TRY(cuda_check(cudaSetDevice(stream.device_index()), "cudaSetDevice"));
    BARACUDA_TRY(cuda_check(cudaEventCreate(&ev.start), "cudaEventCreate"));
    BARACUDA_TRY(cuda_check(cudaEventCreate(&ev.stop), "cudaEventCreate"));
  }
  for (int i = 0; i < warmup; ++i) BARACUDA_TRY(launch());
  BARACUDA_TRY(stream.synchronize());

  std::vector<double> samples;
  for (int i = 0; i < repeat; ++i) {
    Result<double> t = cuda ? time_once_cuda(stream, launch, ev, flush, i) : time_once_host(launch);
    if (!t) return t.error();
    samples.push_back(*t);
  }
  Timing r;
  r.repeats = static_cast<int>(samples.size());
  if (samples.empty()) return r;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  r.median_s = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  r.min_s = samples.front();
  return r;
}

}  // namespace baracuda::profiler
