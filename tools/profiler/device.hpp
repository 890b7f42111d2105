// Choosing the device the profiler runs on.
#pragma once

#include <string_view>

#include <baracuda/baracuda.hpp>

#include "report.hpp"

namespace baracuda::profiler {

struct DeviceChoice {
  Stream stream = Stream::host();
  RunInfo info;
};

/// "auto": cuda when usable, else host (the note then says why cuda was not used); "cuda" fails with the
/// CUDA runtime's reason when no GPU is usable; "sim" and "host" always succeed.
Result<DeviceChoice> choose_device(std::string_view name);

}  // namespace baracuda::profiler
