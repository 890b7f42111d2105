#include "devices.hpp"

namespace baracuda::test {

std::optional<Stream> stream_for(DeviceKind device, std::string* why_not) {
  if (device != DeviceKind::Cuda) return *Stream::for_device(device);
  const CudaAvailability& a = cuda_availability();
  if (!a.usable) {
    *why_not = "no usable CUDA device: " + a.reason;
    return std::nullopt;
  }
  auto s = Stream::cuda(0, nullptr);
  if (!s) {
    *why_not = s.error().to_string();
    return std::nullopt;
  }
  return *s;
}

}  // namespace baracuda::test
