#include "timing.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <string>
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

Result<double> time_once_cuda(const Stream& stream, const std::function<Status()>& launch, EventPair& ev) {
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
  if (cuda) {
    BARACUDA_TRY(cuda_check(cudaSetDevice(stream.device_index()), "cudaSetDevice"));
    BARACUDA_TRY(cuda_check(cudaEventCreate(&ev.start), "cudaEventCreate"));
    BARACUDA_TRY(cuda_check(cudaEventCreate(&ev.stop), "cudaEventCreate"));
  }
  for (int i = 0; i < warmup; ++i) BARACUDA_TRY(launch());
  BARACUDA_TRY(stream.synchronize());

  std::vector<double> samples;
  for (int i = 0; i < repeat; ++i) {
    Result<double> t = cuda ? time_once_cuda(stream, launch, ev) : time_once_host(launch);
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
