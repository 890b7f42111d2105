// Test support: the devices every op test runs on, and how a test gets a stream for one (or skips).
#pragma once

#include <array>
#include <optional>
#include <string>

#include "baracuda/core/sku.hpp"
#include "baracuda/core/stream.hpp"

namespace baracuda::test {

/// Every test case runs on each of these: host (the reference), sim (the kernels under the emulator) and
/// cuda (the kernels on a GPU, skipped with the reason when none is usable).
inline constexpr std::array<DeviceKind, 3> kTestDevices = {DeviceKind::Host, DeviceKind::Sim, DeviceKind::Cuda};

/// The backend a plan selected on `device` reports in its SKU (the bespoke kernels on cuda).
inline BackendKind backend_of(DeviceKind d) {
  return d == DeviceKind::Host ? BackendKind::Host : d == DeviceKind::Sim ? BackendKind::Sim : BackendKind::Bespoke;
}

/// A stream on `device`, or nullopt with `why_not` set (cuda without a usable GPU).
std::optional<Stream> stream_for(DeviceKind device, std::string* why_not);

}  // namespace baracuda::test

/// Declares `Stream NAME` on `DEVICE`, or skips the test with the reason.
#define BARACUDA_TEST_STREAM(NAME, DEVICE)                                     \
  std::string NAME##_why_not_;                                                 \
  auto NAME##_opt_ = ::baracuda::test::stream_for((DEVICE), &NAME##_why_not_); \
  if (!NAME##_opt_) GTEST_SKIP() << NAME##_why_not_;                           \
  const ::baracuda::Stream NAME = *NAME##_opt_

/// Skips the test when `RESULT` (a select result) is the cuda device's "built without CUDA kernels".
#define BARACUDA_SKIP_IF_NO_CUDA_KERNELS(RESULT, DEVICE)                          \
  if ((DEVICE) == ::baracuda::DeviceKind::Cuda && !(RESULT) &&                    \
      (RESULT).error().code == ::baracuda::ErrorCode::Unsupported &&              \
      (RESULT).error().message.find("without CUDA kernels") != std::string::npos) \
  GTEST_SKIP() << (RESULT).error().message
