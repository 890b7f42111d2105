#include "baracuda/core/status.hpp"

namespace baracuda {

std::string Error::to_string() const {
  std::string s(baracuda::to_string(code));
  s += ": ";
  s += message;
  if (code == ErrorCode::WorkspaceTooSmall || code == ErrorCode::BufferTooSmall)
    s += " (needed " + std::to_string(needed) + " bytes, got " + std::to_string(got) + ")";
  if (code == ErrorCode::DeviceError) s += " (device code " + std::to_string(device_code) + ")";
  return s;
}

}  // namespace baracuda
