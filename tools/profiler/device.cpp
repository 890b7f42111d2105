#include "device.hpp"

#include <string>

namespace baracuda::profiler {

Result<DeviceChoice> choose_device(std::string_view name) {
  DeviceChoice c;
  const CudaAvailability& cuda = cuda_availability();
  if (name == "auto") {
    c.stream = Stream::default_stream();
    if (c.stream.device() != DeviceKind::Cuda)
      c.info.note = "--device auto chose host: CUDA is not usable (" +
                    (cuda.reason.empty() ? std::string("no usable stream") : cuda.reason) + ")";
  } else {
    DeviceKind kind;
    if (!parse_device_kind(name, &kind)) return Error::invalid("unknown device '" + std::string(name) + "'");
    auto s = Stream::for_device(kind);
    if (!s) return s.error();
    c.stream = *s;
  }
  c.info.device = std::string(to_string(c.stream.device()));
  if (c.stream.device() == DeviceKind::Cuda) {
    auto props = cuda_device_info(c.stream.device_index());
    if (props) c.info.device_name = props->name + ", sm" + std::to_string(props->sm);
  }
  return c;
}

}  // namespace baracuda::profiler
