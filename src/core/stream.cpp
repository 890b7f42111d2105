#include "baracuda/core/stream.hpp"

#include <cuda_runtime_api.h>

#include <map>
#include <mutex>
#include <string>

#include "core/enum_names.hpp"
#include "core/exec_context.hpp"

namespace baracuda {

std::string_view to_string(DeviceKind d) {
  static constexpr std::string_view kNames[] = {"host", "sim", "cuda"};
  static_assert(std::size(kNames) == static_cast<size_t>(DeviceKind::Cuda) + 1);
  return detail::enum_name(d, kNames);
}

bool parse_device_kind(std::string_view name, DeviceKind* out) {
  for (DeviceKind d : {DeviceKind::Host, DeviceKind::Sim, DeviceKind::Cuda})
    if (to_string(d) == name) {
      *out = d;
      return true;
    }
  return false;
}

const CudaAvailability& cuda_availability() {
  static const CudaAvailability a = [] {
    CudaAvailability r;
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      r.reason = std::string("cudaGetDeviceCount failed: ") + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
      (void)cudaGetLastError();  // clear the sticky error so later queries are not confused
      return r;
    }
    if (n == 0) {
      r.reason = "the CUDA runtime reports no CUDA device";
      return r;
    }
    r.usable = true;
    r.device_count = n;
    return r;
  }();
  return a;
}

Result<CudaDeviceInfo> cuda_device_info(int device) {
  const CudaAvailability& a = cuda_availability();
  if (!a.usable) return Error::unsupported("CUDA is not usable: " + a.reason);
  if (device < 0 || device >= a.device_count)
    return Error::invalid("CUDA device " + std::to_string(device) + " does not exist (" +
                          std::to_string(a.device_count) + " present)");
  static std::mutex mu;
  static std::map<int, CudaDeviceInfo> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(device);
  if (it != cache.end()) return it->second;
  cudaDeviceProp p{};
  cudaError_t e = cudaGetDeviceProperties(&p, device);
  if (e != cudaSuccess) return Error::device(std::string("cudaGetDeviceProperties: ") + cudaGetErrorString(e), e);
  CudaDeviceInfo info;
  info.index = device;
  info.sm = p.major * 10 + p.minor;
  info.multiprocessor_count = p.multiProcessorCount;
  info.shared_memory_per_block_optin = p.sharedMemPerBlockOptin;
  info.name = p.name;
  cache[device] = info;
  return info;
}

Result<Stream> Stream::cuda(int device, cudaStream_t stream) {
  auto info = cuda_device_info(device);
  if (!info) return info.error();
  return Stream(DeviceKind::Cuda, device, stream, info->sm);
}

Stream Stream::default_stream() {
  if (cuda_availability().usable) {
    auto s = cuda(0, nullptr);
    if (s) return *s;
  }
  return host();
}

Result<Stream> Stream::for_device(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::Host: return host();
    case DeviceKind::Sim: return sim();
    case DeviceKind::Cuda: return cuda(0, nullptr);
  }
  return Error::internal("Stream::for_device: unknown device kind");
}

Status Stream::synchronize() const {
  if (device_ != DeviceKind::Cuda) return {};
  cudaError_t e = cudaSetDevice(index_);
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream_);
  if (e != cudaSuccess) return Error::device(std::string("cudaStreamSynchronize: ") + cudaGetErrorString(e), e);
  return {};
}

namespace detail {

Result<ExecContext> make_exec_context(const Stream& stream) {
  ExecContext c;
  c.device = stream.device();
  c.device_index = stream.device_index();
  c.stream = stream.cuda_stream();
  if (c.device == DeviceKind::Cuda) {
    auto info = cuda_device_info(c.device_index);
    if (!info) return info.error();
    c.sm = info->sm;
    c.multiprocessor_count = info->multiprocessor_count;
    cudaError_t e = cudaSetDevice(c.device_index);
    if (e != cudaSuccess) return Error::device(std::string("cudaSetDevice: ") + cudaGetErrorString(e), e);
  }
  return c;
}

Result<BackendKind> resolve_bespoke_backend(std::string_view plan, const Stream& stream, const PlanPreference& pref) {
  BackendKind b = BackendKind::Host;
  switch (stream.device()) {
    case DeviceKind::Host: b = BackendKind::Host; break;
    case DeviceKind::Sim: b = BackendKind::Sim; break;
    case DeviceKind::Cuda: b = BackendKind::Bespoke; break;
  }
  if (pref.prefer_backend && *pref.prefer_backend != b)
    return Error::unsupported(std::string(plan) + ": the preferred backend " +
                              std::string(to_string(*pref.prefer_backend)) + " cannot serve this plan on the " +
                              std::string(to_string(stream.device())) + " device (it offers " +
                              std::string(to_string(b)) + ")");
  return b;
}

Status check_same_device(std::string_view plan, DeviceKind selected, int selected_index, const Stream& stream) {
  if (stream.device() == selected && (selected != DeviceKind::Cuda || stream.device_index() == selected_index))
    return {};
  return Error::invalid(std::string(plan) + ": the plan was selected for the " + std::string(to_string(selected)) +
                        " device but run on " + std::string(to_string(stream.device())));
}

}  // namespace detail
}  // namespace baracuda
